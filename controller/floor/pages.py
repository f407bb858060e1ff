"""The floor console's web pages and their JSON: the grid, a table's page, the history query, a
table's hands and one hand in full."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, Protocol

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller.display.view import hand_json
from controller.floor.board import FloorBoard
from controller.floor.store import Filters, FloorStore
from controller.floor.times import time_ms
from controller.web.channel import Channel, event_stream

STATIC: Final = Path(__file__).resolve().parent / "static"
COMMON: Final = Path(__file__).resolve().parent.parent / "web" / "static"
NO_CACHE: Final = {"Cache-Control": "no-store"}
SEVERITIES: Final = ("info", "warning", "critical")
MAX_LIMIT: Final = 5000
MAX_HANDS: Final = 500


class Console(Protocol):
    """What the pages read of the floor console (``controller.floor.console.FloorConsole``)."""

    @property
    def channel(self) -> Channel: ...

    @property
    def board(self) -> FloorBoard: ...

    @property
    def store(self) -> FloorStore: ...

    @property
    def history(self) -> FloorStore: ...

    def console_json(self) -> dict[str, Any]: ...

    def snapshot(self, table: str | None = None) -> Iterable[tuple[str, str]]: ...


class BadParameter(ValueError):
    """A query parameter that cannot be used; the message names it."""


def _time_ms(name: str, text: str | None) -> int | None:
    try:
        return time_ms(name, text)
    except ValueError as error:
        raise BadParameter(str(error)) from None


def filters_of(request: Request) -> Filters:
    """The history filters of a request (``code``, ``severity``, ``since``, ``until``, ``limit``)."""
    params = request.query_params
    severity = params.get("severity") or None
    if severity is not None and severity not in SEVERITIES:
        raise BadParameter(f"severity: {severity!r} is not one of {', '.join(SEVERITIES)}")
    limit_text = params.get("limit") or "500"
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIMIT:
        raise BadParameter(f"limit: {limit_text!r} is not a number within 1..{MAX_LIMIT}")
    return Filters(
        code=params.get("code") or None,
        severity=severity,
        since_ms=_time_ms("since", params.get("since")),
        until_ms=_time_ms("until", params.get("until")),
        limit=int(limit_text),
    )


def floor_app(console: Console) -> Starlette:
    """The console's routes."""

    async def grid(request: Request) -> Response:
        return FileResponse(STATIC / "floor.html", headers=NO_CACHE)

    async def table_page(request: Request) -> Response:
        return FileResponse(STATIC / "table.html", headers=NO_CACHE)

    async def grid_events(request: Request) -> Response:
        subscription = console.channel.subscribe(
            first=console.snapshot(), accepts=lambda key: key.startswith(("table:", "console"))
        )
        return event_stream(subscription)

    async def table_events(request: Request) -> Response:
        table = request.path_params["table_id"]
        own = (f"table:{table}", f"change:{table}:", "console")
        subscription = console.channel.subscribe(
            first=console.snapshot(table),
            accepts=lambda key: key == own[0] or key.startswith(own[1:]),
        )
        return event_stream(subscription)

    async def tables(request: Request) -> Response:
        return JSONResponse(
            {
                "console": console.console_json(),
                "tables": [t.to_json() for t in console.board.ordered()],
            },
            headers=NO_CACHE,
        )

    async def table(request: Request) -> Response:
        found = console.board.tables.get(request.path_params["table_id"])
        if found is None:
            return JSONResponse({"error": "no such table"}, status_code=404)
        return JSONResponse(found.to_json(), headers=NO_CACHE)

    async def history(request: Request) -> Response:
        table_id = request.path_params["table_id"]
        try:
            filters = filters_of(request)
        except BadParameter as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        await console.history.flush()  # what arrived before this request is in the answer
        rows = await console.history.query(table_id, filters)
        codes = await console.history.codes(table_id)
        return JSONResponse(
            {"table": table_id, "codes": codes, "rows": rows, "error": console.history.error},
            headers=NO_CACHE,
        )

    async def hands(request: Request) -> Response:
        table_id = request.path_params["table_id"]
        limit_text = request.query_params.get("limit") or "50"
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_HANDS:
            message = f"limit: {limit_text!r} is not a number within 1..{MAX_HANDS}"
            return JSONResponse({"error": message}, status_code=400)
        await console.history.flush()
        found = await console.history.hands(table_id, int(limit_text))
        return JSONResponse(
            {
                "table": table_id,
                "hands": [hand_json(result, alerts) for result, alerts in found],
                "error": console.history.error,
            },
            headers=NO_CACHE,
        )

    async def hand(request: Request) -> Response:
        table_id = request.path_params["table_id"]
        await console.history.flush()
        found = await console.history.hand(table_id, request.path_params["hand"])
        if found is None:
            return JSONResponse({"error": "no such hand"}, status_code=404)
        return JSONResponse(hand_json(*found), headers=NO_CACHE)

    from controller.floor.questions import question_routes

    return Starlette(
        routes=[
            *question_routes(console.store, console.board),
            Route("/", grid),
            Route("/events", grid_events),
            Route("/tables/{table_id}", table_page),
            Route("/tables/{table_id}/events", table_events),
            Route("/api/tables", tables),
            Route("/api/tables/{table_id}", table),
            Route("/api/tables/{table_id}/history", history),
            Route("/api/tables/{table_id}/hands", hands),
            Route("/api/tables/{table_id}/hands/{hand:int}", hand),
            Mount("/assets", StaticFiles(directory=STATIC), name="assets"),
            Mount("/common", StaticFiles(directory=COMMON), name="common"),
        ]
    )
