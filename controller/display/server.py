"""The dealer's display server: the page, its live update stream and the Acknowledge button.

:class:`DealerDisplay` is a :class:`controller.service.network.Listener`: the service hands it what it
receives and produces, it keeps a :class:`DealerView` and pushes the whole picture to every open
page (server-sent events, coalesced within one turn of the event loop). **Acknowledge** publishes
``KeyInput(key="ack", alert=ID)`` on the table's ``input`` topic through the service, the same
journaled path as a keypad or a tablet.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import aiomqtt
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from config.models import TableConfig
from contract.models import (
    Alert,
    DealerInput,
    HandResult,
    KeyInput,
    PayloadError,
    PublicState,
    Status,
    parse_alert,
    parse_hand,
    parse_state,
    parse_status,
)
from contract.topics import Topics
from controller.display.view import DealerView
from controller.service.table import Outgoing
from controller.web.channel import Channel, event_stream
from controller.web.server import WebServer

log = logging.getLogger(__name__)

STATIC: Final = Path(__file__).resolve().parent / "static"
COMMON: Final = Path(__file__).resolve().parent.parent / "web" / "static"
NO_CACHE: Final = {"Cache-Control": "no-store"}

Submit = Callable[[DealerInput], Awaitable[None]]


class DealerDisplay:
    """The dealer's page of one table, served on ``[display] listen``."""

    def __init__(self, config: TableConfig, state: PublicState, *, submit: Submit) -> None:
        self.config = config
        self.topics = Topics(config.mqtt.root, config.table.id)
        self.submit = submit
        self.view = DealerView(
            table=config.table.id,
            seats=config.table.seats,
            name=config.table.name,
            profile=config.table.profile,
            configured=tuple(d.id for d in config.devices if d.enabled),
        )
        self.view.on_state(state)
        self.channel = Channel()
        self.server = WebServer(self.app())
        self.url = ""
        self._scheduled = False
        #: The newest state of the current burst, parsed only when the picture is pushed (it
        #: supersedes the ones before it, and holds every alert change before it).
        self._state: bytes | None = None

    # ------------------------------------------------------------------ the service's side

    def received(self, topic: str, payload: bytes) -> None:
        """Device statuses (device health); every other message reaches us as what it caused."""
        parsed = self.topics.parse_device_topic(topic)
        if parsed is None or parsed.kind != "status":
            return
        try:
            self.view.on_device(parsed.device, parse_status(topic, payload))
        except PayloadError:
            return  # the engine raises bad_payload for it, which the page shows
        self._changed()

    def produced(self, items: Sequence[Outgoing]) -> None:
        for item in items:
            if item.topic == self.topics.alerts:
                self.view.on_alert(parse_alert(item.topic, item.payload))
            elif item.topic == self.topics.state:
                self._state = item.payload
            elif item.topic == self.topics.hands:
                self.view.on_hand(parse_hand(item.topic, item.payload))
            else:
                continue
            self._changed()

    def controller(self, status: Status) -> None:
        self.view.on_controller(status)
        self._changed()

    def recall(self, result: HandResult | None, alerts: Sequence[Alert]) -> None:
        """The table's last hand and its recent hands' alert changes from the journal, at
        start-up (before any page connects)."""
        self.view.recall(result, alerts)

    def _changed(self) -> None:
        """Push the new picture once the current burst of messages is processed."""
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._push)

    def _push(self) -> None:
        self._scheduled = False
        self.channel.publish("view", self.current())

    def current(self) -> str:
        """The whole picture as JSON text (a few kilobytes)."""
        if self._state is not None:
            self.view.on_state(parse_state(self.topics.state, self._state))
            self._state = None
        return json.dumps(self.view.to_json(), separators=(",", ":"))

    # ------------------------------------------------------------------ serving

    async def start(self) -> str:
        listen = self.config.display.listen_address
        assert listen is not None, "start() needs [display] listen"
        self.url = await self.server.start(*listen)
        return self.url

    async def stop(self) -> None:
        self.channel.close()
        await self.server.stop()

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/", self._page),
                Route("/events", self._events),
                Route("/api/view", self._view),
                Route("/api/alerts/{alert_id}/ack", self._acknowledge, methods=["POST"]),
                Mount("/assets", StaticFiles(directory=STATIC), name="assets"),
                Mount("/common", StaticFiles(directory=COMMON), name="common"),
            ]
        )

    async def _page(self, request: Request) -> Response:
        return FileResponse(STATIC / "dealer.html", headers=NO_CACHE)

    async def _events(self, request: Request) -> Response:
        return event_stream(self.channel.subscribe(first=[("view", self.current())]))

    async def _view(self, request: Request) -> Response:
        return Response(self.current(), media_type="application/json", headers=NO_CACHE)

    async def _acknowledge(self, request: Request) -> Response:
        """Acknowledge one alert: exactly the keypad's ``ack``, for this alert only."""
        origin = request.headers.get("origin")
        if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host"):
            return JSONResponse({"error": "cross-origin request refused"}, status_code=403)
        alert_id = request.path_params["alert_id"]
        if alert_id not in self.view.alerts:
            return JSONResponse({"error": f"no active alert {alert_id}"}, status_code=404)
        item = KeyInput(ts=datetime.now(UTC), key="ack", alert=alert_id)
        try:
            await self.submit(item)
        except (ConnectionError, aiomqtt.MqttError) as error:  # the service is not connected
            log.warning("dealer display: acknowledge %s not sent: %s", alert_id, error)
            return JSONResponse({"error": f"not sent: {error}"}, status_code=503)
        log.info("dealer display: acknowledge alert %s sent", alert_id)
        return JSONResponse({"sent": alert_id}, status_code=202)
