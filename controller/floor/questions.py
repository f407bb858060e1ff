"""What a supervisor asks the floor's history, as JSON (and a minimal page of the figures).

- ``GET /api/hands?table=&since=&until=&code=&seat=&dealer=&limit=``: hand results across tables,
  each the published payload plus ``table``, oldest first;
- ``GET /api/alerts?table=&since=&until=&code=&severity=&seat=&status=&limit=``: alert changes
  across tables, likewise;
- ``GET /api/report?since=&until=``: per table and hour, per dealer and per area (pit): hands
  dealt, alerts raised per 100 hands, rake (``controller.floor.report``); default the last 24 h;
- ``GET /api/areas``: the tables of each area, as the live controller statuses say;
- ``GET /report``: the report as a plain page.

Times are ISO 8601 (UTC when no offset is given); a bad parameter is a 400 naming it.
"""

from __future__ import annotations

import html
import time
from collections import defaultdict
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from controller.floor.board import FloorBoard
from controller.floor.report import report
from controller.floor.store import AlertQuery, FloorStore, HandQuery, StoreError
from controller.floor.times import time_ms

NO_CACHE: Final = {"Cache-Control": "no-store"}
MAX_ROWS: Final = 10_000
DAY_MS: Final = 86_400_000


class BadQuery(ValueError):
    """A query parameter that cannot be used; the message names it."""


def _text(request: Request, name: str) -> str | None:
    return request.query_params.get(name) or None


def _int(request: Request, name: str, *, low: int, high: int, default: int | None = None) -> int | None:
    text = _text(request, name)
    if text is None:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise BadQuery(f"{name}: {text!r} is not a number within {low}..{high}")
    return int(text)


def _time(request: Request, name: str) -> int | None:
    try:
        return time_ms(name, _text(request, name))
    except ValueError as error:
        raise BadQuery(str(error)) from None


def _limit(request: Request) -> int:
    found = _int(request, "limit", low=1, high=MAX_ROWS, default=1000)
    assert found is not None
    return found


def question_routes(store: FloorStore, board: FloorBoard) -> list[Route]:
    """The routes of the questions, answered from ``store`` (the tables named: ``board``'s)."""

    async def answer(request: Request, ask: Any) -> Response:
        try:
            found = await ask(request)
        except BadQuery as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        except StoreError as error:
            return JSONResponse({"error": str(error)}, status_code=503)
        return JSONResponse(found, headers=NO_CACHE)

    async def hands(request: Request) -> Response:
        async def ask(request: Request) -> dict[str, Any]:
            query = HandQuery(
                table=_text(request, "table"),
                since_ms=_time(request, "since"),
                until_ms=_time(request, "until"),
                code=_text(request, "code"),
                seat=_int(request, "seat", low=1, high=10),
                dealer=_text(request, "dealer"),
                limit=_limit(request),
            )
            await store.flush()
            return {"hands": await store.find_hands(query)}

        return await answer(request, ask)

    async def alerts(request: Request) -> Response:
        async def ask(request: Request) -> dict[str, Any]:
            query = AlertQuery(
                table=_text(request, "table"),
                since_ms=_time(request, "since"),
                until_ms=_time(request, "until"),
                code=_text(request, "code"),
                severity=_text(request, "severity"),
                seat=_int(request, "seat", low=1, high=10),
                status=_text(request, "status"),
                limit=_limit(request),
            )
            await store.flush()
            return {"alerts": await store.find_alerts(query)}

        return await answer(request, ask)

    async def window(request: Request) -> tuple[int, int]:
        until_ms = _time(request, "until") or int(time.time() * 1000)
        since_ms = _time(request, "since")
        return (until_ms - DAY_MS if since_ms is None else since_ms), until_ms

    async def figures(request: Request) -> Response:
        async def ask(request: Request) -> dict[str, Any]:
            since_ms, until_ms = await window(request)
            await store.flush()
            return await report(store, since_ms, until_ms)

        return await answer(request, ask)

    async def areas(request: Request) -> Response:
        grouped: dict[str | None, list[str]] = defaultdict(list)
        for table in sorted(board.tables.values(), key=lambda t: t.id):
            grouped[table.controller.area if table.controller is not None else None].append(table.id)
        ordered = sorted(grouped, key=lambda area: (area is None, area or ""))
        return JSONResponse({"areas": [{"area": a, "tables": grouped[a]} for a in ordered]}, headers=NO_CACHE)

    async def page(request: Request) -> Response:
        try:
            since_ms, until_ms = await window(request)
            found = await report(store, since_ms, until_ms)
        except BadQuery as error:
            return HTMLResponse(f"<p>{html.escape(str(error))}</p>", status_code=400)
        except StoreError as error:
            return HTMLResponse(f"<p>{html.escape(str(error))}</p>", status_code=503)
        return HTMLResponse(report_page(found), headers=NO_CACHE)

    return [
        Route("/api/hands", hands),
        Route("/api/alerts", alerts),
        Route("/api/report", figures),
        Route("/api/areas", areas),
        Route("/report", page),
    ]


def _row(name: str, figures: dict[str, Any]) -> str:
    rate = figures["alerts_per_100_hands"]
    cells = [
        html.escape(name),
        figures["hands"],
        figures["alerts"],
        "-" if rate is None else rate,
        figures["rake"],
    ]
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


def report_page(found: dict[str, Any]) -> str:
    """The report as one plain HTML page (escaped; no script)."""
    head = "<tr><th></th><th>hands</th><th>alerts</th><th>alerts / 100 hands</th><th>rake</th></tr>"
    sections = [
        ("Per area (pit)", [_row(a["area"] or "(no area)", a) for a in found["areas"]]),
        ("Per table", [_row(t["table"], t) for t in found["tables"]]),
        ("Per dealer", [_row(d["dealer"] or "(no badge)", d) for d in found["dealers"]]),
        (
            "Per table and hour",
            [_row(f"{t['table']} {h['hour']}", h) for t in found["tables"] for h in t["hours"]],
        ),
    ]
    body = "".join(f"<h2>{title}</h2><table>{head}{''.join(rows)}</table>" for title, rows in sections)
    total = found["total"]
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>Floor report</title>"
        "<link rel=stylesheet href=/common/common.css></head><body>"
        f"<h1>Floor report</h1><p>{html.escape(found['since'])} to {html.escape(found['until'])}: "
        f"{total['hands']} hands, {total['alerts']} alerts, rake {total['rake']}</p>{body}</body></html>"
    )
