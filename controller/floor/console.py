"""The floor console: the board of every table, its history, the pages, live updates.

:class:`FloorConsole` runs in any asyncio program (``tablectl floor``, the demo): ``start()``
opens the store, serves the pages and subscribes; ``stop()`` undoes it. Messages of the live feed
(no session: the retained topics give the whole floor at once) update the :class:`FloorBoard` at
once; the tables they changed are pushed to the open pages at most every ``PUSH_S`` (one summary
per table however many messages arrived).

What goes into the history depends on the store (``record``): with a SQLite file of its own
(``live``, the default there) the console records what its live feed receives, as it always did;
with a PostgreSQL store shared by the floor (``session``, the default there) it runs a
:class:`~controller.floor.recorder.Recorder`, which takes the tables' messages from a persistent
session and acknowledges each once stored; ``none`` records nothing (a console that only reads).
No console holds anything another needs: killing one leaves the others serving.

Given several brokers (the nodes of one cluster), the live view is two connections on two
nodes, each taking every message (:class:`LiveViews`): the death of either node leaves the view
whole, where a single connection would show nothing until it is taken up on another node (on a
NATS cluster that can take 4-9 s, while the stream of the MQTT sessions elects a new leader, if
the dead node led it). Each message is handled once, the first copy to arrive.

The first picture of the floor comes from the store (every table's latest state and status, kept
by the recorders and the recording consoles' live views), then from the live view: a NATS floor's
bridges send nothing retained (``controller.deploy.bridge``), and a single broker's retained
messages, newer, take over from the store's. The store is asked again whenever the live view
comes back after every connection of it was lost (what changed meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from config.models import MqttSection
from contract.models import (
    PayloadError,
    PublicState,
    Status,
    parse_alert,
    parse_hand,
    parse_state,
    parse_status,
)
from contract.topics import parse_floor_topic
from controller.floor.board import FloorBoard, iso
from controller.floor.feed import Connection, FloorFeed, Handle
from controller.floor.recorder import Recorder, epoch_ms
from controller.floor.store import FloorStore, StoreError, change_json
from controller.floor.stores import store_for
from controller.web.channel import Channel
from controller.web.server import WebServer

log = logging.getLogger(__name__)

#: Changed tables are pushed to the pages this often at most (their lag budget is 1 s).
PUSH_S: Final = 0.05

#: How long the live views remember a message to drop its copy from the other view (seconds).
SEEN_S: Final = 30.0

#: How many alert changes and hand results a console remembers having shown (about 100 minutes
#: of 500 busy tables): a copy of one that comes later by another path is not shown again.
SHOWN_KEPT: Final = 100_000

#: Who records the history: the live feed (a console's own SQLite file), a recorder's persistent
#: session (a shared PostgreSQL store), or nobody.
Recording: TypeAlias = Literal["live", "session", "none"]


def _newer(known: Status | PublicState | None, found: Status | PublicState) -> bool:
    return known is None or found.ts > known.ts


def compact(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"))


class ShownOnce:
    """Which alert changes and hand results the console has shown, by the keys the store uses
    (an alert change: table, alert id, status, ts; a hand: table, hand, ts), the newest
    ``kept``. A table's bridge sends each of them twice to a cluster (a QoS 0 copy for the pages
    and the session's QoS 1 copy, which can come seconds later, ``controller.deploy.bridge``),
    and the live views' own check (``LiveViews``: the same bytes within ``SEEN_S``) neither
    covers a console with one connection nor a copy that comes later than that."""

    def __init__(self, kept: int = SHOWN_KEPT) -> None:
        self.kept = kept
        self.copies = 0
        self._keys: set[tuple[Any, ...]] = set()
        self._order: deque[tuple[Any, ...]] = deque()

    def first(self, key: tuple[Any, ...]) -> bool:
        """Whether ``key`` is new (it is remembered from now on); a copy is counted."""
        if key in self._keys:
            self.copies += 1
            return False
        self._keys.add(key)
        self._order.append(key)
        if len(self._order) > self.kept:
            self._keys.discard(self._order.popleft())
        return True


class LiveViews:
    """The console's live view: one :class:`FloorFeed`, or two on different nodes of a cluster.

    ``handle`` gets each message once: the first copy, from either connection; the other copy is
    dropped by its topic and payload (every public payload carries its time, so two different
    messages on one topic never look alike). ``connection`` hears whether the view is up (either
    connection) and why not."""

    def __init__(
        self,
        brokers: Sequence[MqttSection],
        handle: Handle,
        connection: Connection,
        *,
        client_id: str | None,
        qos: int,
    ) -> None:
        self.handle = handle
        self.connection = connection
        self.feeds = [FloorFeed(brokers, self._arrived, self._changed, client_id=client_id, qos=qos)]
        if len(brokers) > 1:
            second = FloorFeed(
                brokers,
                self._arrived,
                self._changed,
                client_id=f"{client_id}-2" if client_id else None,
                qos=qos,
                first=1,
            )
            second.avoid, self.feeds[0].avoid = self.feeds[0].brokers, second.brokers
            self.feeds.append(second)
        self.filters = self.feeds[0].filters
        self.duplicates = 0
        self._seen: set[tuple[str, bytes]] = set()
        self._order: deque[tuple[float, tuple[str, bytes]]] = deque()

    async def run(self, stop: asyncio.Event) -> None:
        await asyncio.gather(*(feed.run(stop) for feed in self.feeds))

    def _arrived(self, topic: str, payload: bytes, received_ms: float) -> None:
        if len(self.feeds) == 1:
            self.handle(topic, payload, received_ms)
            return
        now = time.monotonic()
        while self._order and now - self._order[0][0] > SEEN_S:
            _, old = self._order.popleft()  # each remembered message has one entry here
            self._seen.discard(old)
        key = (topic, payload)
        if key in self._seen:
            self.duplicates += 1
            return
        self._seen.add(key)
        self._order.append((now, key))
        self.handle(topic, payload, received_ms)

    def _changed(self, up: bool, detail: str | None) -> None:
        if any(feed.connected for feed in self.feeds):
            self.connection(True, None)
        else:
            self.connection(False, detail)


@dataclass
class ConsoleHealth:
    """The console's own state, shown on its pages."""

    connected: bool = False
    detail: str | None = "connecting to the broker"
    messages: int = 0
    rejected: int = 0
    last_rejected: str | None = None
    ignored: int = 0
    warned: set[str] = field(default_factory=set)


class FloorConsole:
    """Every table under ``mqtt.root``: subscribe, keep the history, serve the pages.

    ``mqtt``: one broker or the nodes of one cluster (taken in turn when one is lost); ``store``:
    a store, or the ``--store`` naming one (a SQLite path or ``postgresql://...``); ``record``:
    see the module docstring (None: ``live`` for SQLite, ``session`` for PostgreSQL)."""

    def __init__(
        self,
        mqtt: MqttSection | Sequence[MqttSection],
        store: FloorStore | Path | str,
        *,
        client_id: str | None = None,
        retain_days: float = 0,
        record: Recording | None = None,
        recorder_id: str | None = None,
    ) -> None:
        brokers = [mqtt] if isinstance(mqtt, MqttSection) else list(mqtt)
        self.mqtt = brokers[0]
        self.root = self.mqtt.root
        self.board = FloorBoard()
        self.shown = ShownOnce()
        if not isinstance(store, FloorStore):
            store = store_for(str(store), retain_days=retain_days)
        self.store = store
        #: The pages' name for the store.
        self.history = self.store
        if record is None:
            record = "session" if self.store.database.kind == "postgresql" else "live"
        self.recording: Recording = record
        self.recorder = Recorder(brokers, self.store, client_id=recorder_id) if record == "session" else None
        self.channel = Channel()
        self.health = ConsoleHealth()
        # The live view at QoS 1 where it records (its own SQLite history, as always); else at
        # QoS 0: on a NATS cluster plain routing, no JetStream consumer to create at every
        # (re)connection (the retained topics give the whole floor again, the recorder's
        # session keeps the history whole). On two nodes when there are several (LiveViews).
        self.feed = LiveViews(
            brokers, self.handle, self.connection, client_id=client_id, qos=1 if record == "live" else 0
        )
        self.url = ""
        self._changes = 0
        self._dirty: set[str] = set()
        self._push_at: asyncio.TimerHandle | None = None
        self._stop = asyncio.Event()
        self._feeding: asyncio.Task[None] | None = None
        #: The store asked again for the latest states (the live view back after an outage).
        self._catching_up: asyncio.Task[None] | None = None
        self._was_connected = False
        self._recording: asyncio.Task[None] | None = None
        self._server: WebServer | None = None

    # ------------------------------------------------------------------ lifetime

    async def start(self, host: str, port: int) -> str:
        """Open the store, serve on ``host:port`` and subscribe; returns the console's URL
        (StoreError, WebServerError)."""
        from controller.floor.pages import floor_app

        await self.store.open()
        try:
            self.board.recalled = await self.store.last_hands()
        except StoreError as error:
            # Only the "last hand" lines are at stake: the console starts without them.
            log.warning("floor: the tables' last hands not read from %s: %s", self.store.name, error)
        await self._load_latest()
        self._server = WebServer(floor_app(self))
        try:
            self.url = await self._server.start(host, port)
        except Exception:
            await self.store.close()
            raise
        self._feeding = asyncio.create_task(self.feed.run(self._stop), name="floor-feed")
        if self.recorder is not None:
            self._recording = asyncio.create_task(self.recorder.run(self._stop), name="floor-recorder")
        return self.url

    async def stop(self) -> None:
        self._stop.set()
        if self._catching_up is not None:
            self._catching_up.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._catching_up
        for task in (self._feeding, self._recording):
            if task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 5)
        if self._push_at is not None:
            self._push_at.cancel()
        self.channel.close()
        if self._server is not None:
            await self._server.stop()
        await self.store.close()

    # ------------------------------------------------------------------ the store's picture

    async def _load_latest(self) -> None:
        """Every table's latest status and state as the store keeps them, where newer than what
        the board has (at start it has nothing). A row that cannot be read is logged and skipped."""
        try:
            rows = await self.store.latest()
        except StoreError as error:
            log.warning("floor: the tables' latest states not read from %s: %s", self.store.name, error)
            return
        for table, kind, payload, received_ms in rows:
            topic = f"{self.root}/{table}/{kind}"
            known = self.board.tables.get(table)
            try:
                if kind == "controller/status":
                    status = parse_status(topic, payload)
                    if not _newer(known.controller if known else None, status):
                        continue
                    self.board.on_status(table, status, received_ms)
                else:
                    state = parse_state(topic, payload)
                    if not _newer(known.state if known else None, state):
                        continue
                    self.board.on_state(table, state, received_ms)
            except PayloadError as error:
                log.warning(
                    "floor: %s: the latest %s of table %s unreadable, skipped: %s",
                    self.store.name,
                    kind,
                    table,
                    error,
                )
                continue
            self._changed(table)

    def _catch_up(self) -> None:
        if self._catching_up is None or self._catching_up.done():
            self._catching_up = asyncio.create_task(self._load_latest(), name="floor-catch-up")

    # ------------------------------------------------------------------ messages

    def handle(self, topic: str, payload: bytes, received_ms: float) -> None:
        """One message from the broker (its topic checked again: brokers may send others)."""
        parsed = parse_floor_topic(self.root, topic)
        if parsed is None:
            self.health.ignored += 1
            log.debug("floor: ignored a message on %s", topic)
            return
        table, kind = parsed
        self.health.messages += 1
        if not payload and kind in ("controller/status", "state"):
            # A retained topic cleared: the table was taken out of service.
            if kind == "controller/status":
                self.board.tables.pop(table, None)
                self.channel.publish(f"table:{table}", compact({"kind": "gone", "id": table}))
            return
        try:
            if kind == "controller/status":
                status = parse_status(topic, payload)
                self.board.on_status(table, status, received_ms)
                if self.recording == "live":
                    self.store.record_status(table, status, received_ms)
                elif self.recording == "session":
                    self.store.note_latest(table, kind, epoch_ms(status.ts), received_ms, payload)
            elif kind == "state":
                state = parse_state(topic, payload)
                for alert in self.board.on_state(table, state, received_ms):
                    if self.recording == "live":
                        self.store.record(table, alert, received_ms)
                if self.recording == "session":
                    self.store.note_latest(table, kind, epoch_ms(state.ts), received_ms, payload)
            elif kind == "alerts":
                alert = parse_alert(topic, payload)
                if not self.shown.first(("alert", table, alert.id, alert.status, alert.ts)):
                    return
                self.board.on_alert(table, alert, received_ms)
                if self.recording == "live":
                    self.store.record(table, alert, received_ms)
                self._changes += 1
                self.channel.publish(f"change:{table}:{self._changes}", compact(change_json(table, alert)))
            else:
                result = parse_hand(topic, payload)
                if not self.shown.first(("hand", table, result.hand, result.ts)):
                    return
                self.board.on_hand(table, result, received_ms)
                if self.recording == "live":
                    self.store.record_hand(table, result, received_ms)
        except PayloadError as error:
            self._rejected(topic, error)
            return
        self._changed(table)

    def _rejected(self, topic: str, error: PayloadError) -> None:
        """Counted and shown; logged at WARNING once per topic (a broken publisher repeats)."""
        self.health.rejected += 1
        self.health.last_rejected = str(error)
        if topic not in self.health.warned:
            self.health.warned.add(topic)
            log.warning("floor: rejected payload: %s (further ones on this topic are counted)", error)
        self._changed(None)

    def connection(self, up: bool, detail: str | None) -> None:
        if up and not self.health.connected and self._was_connected:
            self._catch_up()  # the view was lost whole: what changed meanwhile is in the store
        self._was_connected = self._was_connected or up
        self.health.connected = up
        self.health.detail = detail
        self._changed(None)

    def _changed(self, table: str | None) -> None:
        if table is not None:
            self._dirty.add(table)
        else:
            self._dirty.add("")  # the console's own state
        if self._push_at is None:
            self._push_at = asyncio.get_running_loop().call_later(PUSH_S, self._push)

    def _push(self) -> None:
        self._push_at = None
        dirty, self._dirty = self._dirty, set()
        for table_id in dirty:
            if table_id == "":
                continue
            table = self.board.tables.get(table_id)
            if table is not None:
                self.channel.publish(f"table:{table_id}", compact(table.to_json()))
        self.channel.publish("console", compact(self.console_json()))

    # ------------------------------------------------------------------ pictures

    def console_json(self) -> dict[str, Any]:
        counts = {"critical": 0, "warning": 0, "offline": 0}
        for table in self.board.tables.values():
            if table.controller is None or table.controller.state != "online":
                counts["offline"] += 1
            for alert in table.alerts.values():
                if alert.severity in counts:
                    counts[alert.severity] += 1
        health = self.health
        return {
            "kind": "console",
            "root": self.root,
            "connected": health.connected,
            "detail": health.detail,
            "tables": len(self.board.tables),
            "counts": counts,
            "messages": health.messages,
            "rejected": health.rejected,
            "last_rejected": health.last_rejected,
            "history_error": self.store.error,
            "latest_waiting": self.store.latest_waiting,
            "latest_dropped": self.store.latest_dropped,
            "store": self.store.database.kind,
            "recording": self.recording,
            "recorder": self.recorder.health.to_json() if self.recorder is not None else None,
        }

    def snapshot(self, table: str | None = None) -> Iterable[tuple[str, str]]:
        """The first picture of a new page: the console, then every table (or one)."""
        yield "console", compact(self.console_json())
        if table is None:
            tables = self.board.ordered()
        else:
            tables = [self.board.tables[table]] if table in self.board.tables else []
        for summary in tables:
            yield f"table:{summary.id}", compact(summary.to_json())

    def heard(self, table: str) -> str | None:
        found = self.board.tables.get(table)
        return iso(found.heard_ms) if found is not None else None
