"""The floor's recorder: every table's ``hands``, ``alerts`` and ``controller/status``, stored once.

It takes them from a persistent MQTT session (``clean_session`` false, QoS 1), so that what the
tables publish while it is away (restarting, its node lost, the database down) waits in the
broker, and acknowledges a message only once its row is committed (manual PUBACK,
``link.aiomqtt_adapter``). It handles what the broker sends from the moment the connection is up:
a persistent session's queued messages may come before the SUBACK. The rows are keyed so that a
redelivered message is stored once (``controller.floor.store``).

A witness beside the session makes up for what the broker's session may lose: a second
connection without a session, subscribed at QoS 0 (plain routing in a NATS cluster, no JetStream
consumer), to another node than the session's first. What it receives is recorded too (stored
once, like everything). It exists because NATS 2.9's MQTT sessions were seen to skip a message
published moments before a node's death or around a recorder's reconnection (one in a few
hundred, in ``tests/floor_cluster``): the session's consumer moving to another node. The witness
is on another node, so one node's death never costs both.

When the store cannot write, the recorder closes its MQTT connection (the backlog waits in the
broker, not in its memory) and comes back once the store answers again; the messages it had not
acknowledged are delivered again. A malformed payload is counted, logged at WARNING once per
topic, and acknowledged in its turn (it will never be stored; the table's journal has it).

Each status it takes is also kept as the table's latest (``FloorStore.note_latest``), and a
cleared one (the table taken out of service) removes the table's latest: a console's first
picture where retained messages are not to be had. A recorder running alone (``states``) has its
witness follow the tables' states too and keeps the latest of each; in a console, the console's
live view does that.

Any number of recorders may run (each console runs one unless told not to, ``tablectl floor
record`` runs one alone): they write the same rows, stored once. Each takes a slot of the store
(the lowest free one), and its session is ``tablectl-floor-recorder-{root}-{slot}``: a restarted
recorder finds its session again, and two never share one. See ``docs/floor.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Final

import aiomqtt

from config.models import MqttSection
from contract.models import PayloadError, parse_alert, parse_hand, parse_state, parse_status
from contract.topics import check_segment, parse_floor_topic
from controller.floor.feed import (
    Brokers,
    FloorFeed,
    floor_client,
    floor_client_id,
    payload_bytes,
    subscribe,
    where,
)
from controller.floor.store import DatabaseUnavailable, FloorStore
from link.aiomqtt_adapter import acknowledge, arrived_on, connection_tagged_queue, enable_manual_acks
from link.reconnect import pause, reconnecting

log = logging.getLogger(__name__)

#: What the recorder stores (the public state is the live view's, not history).
RECORDED: Final = ("hands", "alerts", "controller/status")
SLOT_NAME: Final = "recorder"
#: Messages the witness keeps while the store cannot write (about 30 minutes of 500 busy tables).
WITNESS_BACKLOG: Final = 100_000
#: How often the recorder asks a store that failed whether it answers again.
STORE_RETRY_S: Final = 1.0


def recorder_filters(root: str) -> tuple[str, ...]:
    for part in root.split("/"):
        check_segment("topic root", part)
    return tuple(f"{root}/+/{kind}" for kind in RECORDED)


def epoch_ms(moment: datetime) -> int:
    """A payload's time as integer milliseconds since the epoch (the store's ``ts_ms``)."""
    return int(moment.timestamp() * 1000)


def recorder_client_id(root: str, slot: int) -> str:
    return f"tablectl-floor-recorder-{root.replace('/', '-')}-{slot}"


@dataclass
class RecorderHealth:
    """What the recorder says of itself (the console's pages, its log)."""

    connected: bool = False
    broker: str | None = None
    client_id: str | None = None
    detail: str | None = "starting"
    received: int = 0
    stored: int = 0
    rejected: int = 0
    #: Messages received but not yet acknowledged (their rows are on their way to the store).
    pending: int = 0
    #: Messages the witness received (each stored once with the session's).
    witnessed: int = 0
    witness_connected: bool = False
    #: Witnessed messages dropped from a full backlog while the store could not write.
    witness_dropped: int = 0
    warned: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, object]:
        return {
            "connected": self.connected,
            "broker": self.broker,
            "client_id": self.client_id,
            "detail": self.detail,
            "received": self.received,
            "stored": self.stored,
            "rejected": self.rejected,
            "pending": self.pending,
            "witnessed": self.witnessed,
            "witness_connected": self.witness_connected,
            "witness_dropped": self.witness_dropped,
        }


class Recorder:
    """See the module docstring; ``await recorder.run(stop)`` until ``stop`` is set."""

    def __init__(
        self,
        brokers: Sequence[MqttSection],
        store: FloorStore,
        *,
        client_id: str | None = None,
        witness: bool = True,
        states: bool = False,
    ) -> None:
        self.brokers = Brokers(brokers)
        self.root = self.brokers.current.root
        self.store = store
        self.filters = recorder_filters(self.root)
        self.fixed_id = client_id
        self.health = RecorderHealth()
        self.slot: int | None = None
        self._connection = 0
        self._store_failed = asyncio.Event()
        self._witness_backlog: deque[tuple[str, bytes, float]] = deque(maxlen=WITNESS_BACKLOG)
        self.witness = (
            FloorFeed(
                brokers,
                self._witnessed,
                self._witness_connection,
                client_id=floor_client_id(self.root).replace("floor", "floor-witness", 1),
                filters=(*self.filters, f"{self.root}/+/state") if states else self.filters,
                qos=0,
                first=1,
            )
            if witness
            else None
        )
        if self.witness is not None:
            # One node's death should not take both: each avoids the other's node.
            self.witness.avoid = self.brokers

    async def _client_id(self) -> str:
        if self.fixed_id is not None:
            return self.fixed_id
        slot = await self.store.database.claim(SLOT_NAME, prefer=self.slot)
        if self.slot is not None and slot != self.slot:
            log.warning(
                "floor recorder: slot %d was taken meanwhile; now slot %d (a new session)", self.slot, slot
            )
        self.slot = slot
        return recorder_client_id(self.root, slot)

    async def _wait_for_store(self, stop: asyncio.Event) -> str | None:
        """The client id once the store answers (None: stopped meanwhile)."""
        while not stop.is_set():
            if self.store.writable.is_set() or await self.store.database.reachable():
                try:
                    return await self._client_id()
                except DatabaseUnavailable as error:
                    self.health.detail = f"store {self.store.name}: {error}"
            await pause(stop, STORE_RETRY_S)
        return None

    async def run(self, stop: asyncio.Event) -> None:
        witness = (
            asyncio.create_task(self.witness.run(stop), name="floor-recorder-witness")
            if self.witness is not None
            else None
        )
        try:
            await self._run(stop)
        finally:
            if witness is not None:
                if not stop.is_set():
                    witness.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(witness, 5)

    def _witness_connection(self, up: bool, detail: str | None) -> None:
        self.health.witness_connected = up

    def _witnessed(self, topic: str, payload: bytes, received_ms: float) -> None:
        """A message of the witness: recorded (stored once), nothing to acknowledge. While the
        store cannot write, it waits in a bounded backlog (the oldest dropped first, counted)."""
        parsed = parse_floor_topic(self.root, topic)
        if parsed is None:
            return
        table, kind = parsed
        if not payload:
            if kind == "controller/status":
                self.store.forget_latest(table, received_ms)
            return
        if kind == "state":
            try:
                state = parse_state(topic, payload)
            except PayloadError:
                return  # a console's live view reports it
            self.store.note_latest(table, kind, epoch_ms(state.ts), received_ms, payload)
            return
        self.health.witnessed += 1
        if not self.store.writable.is_set():
            self._keep_witnessed(topic, payload, received_ms)
            return
        self._record_witnessed(topic, payload, received_ms)

    def _keep_witnessed(self, topic: str, payload: bytes, received_ms: float) -> None:
        if len(self._witness_backlog) == self._witness_backlog.maxlen:
            self.health.witness_dropped += 1
        self._witness_backlog.append((topic, payload, received_ms))

    def _record_witnessed(self, topic: str, payload: bytes, received_ms: float) -> None:
        parsed = parse_floor_topic(self.root, topic)
        if parsed is None:
            return
        table, kind = parsed

        def done(ok: bool) -> None:
            if not ok:
                self._keep_witnessed(topic, payload, received_ms)

        try:
            if kind == "alerts":
                self.store.record(table, parse_alert(topic, payload), received_ms, done)
            elif kind == "hands":
                self.store.record_hand(table, parse_hand(topic, payload), received_ms, done)
            elif kind == "controller/status":
                status = parse_status(topic, payload)
                self.store.record_status(table, status, received_ms, done)
                self.store.note_latest(table, kind, epoch_ms(status.ts), received_ms, payload)
        except PayloadError:
            return  # the session's copy counts and reports it

    def _replay_witnessed(self) -> None:
        """The store answers again: what the witness kept meanwhile goes to it."""
        kept = list(self._witness_backlog)
        self._witness_backlog.clear()
        for topic, payload, received_ms in kept:
            self._record_witnessed(topic, payload, received_ms)

    async def _run(self, stop: asyncio.Event) -> None:
        async def attempt() -> bool | None:
            identifier = await self._wait_for_store(stop)
            if identifier is None:
                return True
            self._replay_witnessed()
            self.health.client_id = identifier
            mqtt = self.brokers.current
            self._store_failed.clear()
            self._connection += 1
            number = self._connection
            client = floor_client(
                mqtt, identifier, persistent=True, queue_type=connection_tagged_queue(partial(int, number))
            )
            enable_manual_acks(client)
            try:
                async with client:
                    self.health.connected, self.health.broker, self.health.detail = True, where(mqtt), None
                    self.brokers.connected()
                    await self._serve(client, number, stop)
                    if stop.is_set():
                        return True
            finally:
                self.health.connected = False
                self.health.pending = 0
            # The store failed: the connection was closed on purpose; what was not acknowledged
            # comes again once the store answers.
            self.health.detail = f"store {self.store.name}: {self.store.error}; waiting for it"
            log.warning("floor recorder: %s", self.health.detail)
            return None

        def lost(error: Exception) -> float:
            mqtt = self.brokers.current
            log.warning("floor recorder: broker %s: %s", where(mqtt), error)
            self.health.detail = f"no broker connection ({where(mqtt)}): {error}"
            self.health.connected = False
            witness = self.witness.brokers.index if self.witness is not None else None
            return self.brokers.failed(avoid=witness)

        await reconnecting(attempt, lost, stop=stop)

    async def _serve(self, client: aiomqtt.Client, number: int, stop: asyncio.Event) -> None:
        """Receive (from the start: a persistent session's messages may precede the SUBACK),
        subscribe, and go on until stopped, the connection lost or the store failing."""
        receiver = asyncio.create_task(self._receive(client, number), name="floor-recorder-receive")
        try:
            await subscribe(client, self.filters, 1)
            log.info(
                "floor recorder: %s on %s, subscribed to %s",
                self.health.client_id,
                self.health.broker,
                ", ".join(self.filters),
            )
            waits = [asyncio.create_task(stop.wait()), asyncio.create_task(self._store_failed.wait())]
            try:
                await asyncio.wait([receiver, *waits], return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()
        finally:
            receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await receiver
        if receiver.done() and not receiver.cancelled() and receiver.exception() is not None:
            raise receiver.exception()  # type: ignore[misc]  # the MqttError of a lost connection

    async def _receive(self, client: aiomqtt.Client, number: int) -> None:
        async for message in client.messages:
            self.take(client, message, number)

    def take(self, client: aiomqtt.Client, message: aiomqtt.Message, number: int) -> None:
        """One message: its row queued for the store, its acknowledgement once committed."""
        topic = str(message.topic)
        received_ms = time.time() * 1000
        self.health.received += 1
        log.debug("floor recorder: %s (mid %d, connection %d)", topic, message.mid, number)
        self.health.pending += 1

        def done(ok: bool) -> None:
            self.health.pending = max(0, self.health.pending - 1)
            if not ok:
                self._store_failed.set()
                return
            if arrived_on(message) == number == self._connection:
                acknowledge(client, message)
                log.debug("floor recorder: acknowledged mid %d", message.mid)

        parsed = parse_floor_topic(self.root, topic)
        payload = payload_bytes(message)
        if parsed is None or not payload:
            # Not ours (a broker may send more than asked), or a retained status cleared.
            if parsed is not None and parsed[1] == "controller/status":
                self.store.forget_latest(parsed[0], received_ms)
            self.store.after(done)
            return
        table, kind = parsed
        try:
            if kind == "alerts":
                self.store.record(table, parse_alert(topic, payload), received_ms, self._stored(done))
            elif kind == "hands":
                self.store.record_hand(table, parse_hand(topic, payload), received_ms, self._stored(done))
            elif kind == "controller/status":
                status = parse_status(topic, payload)
                self.store.record_status(table, status, received_ms, self._stored(done))
                self.store.note_latest(table, kind, epoch_ms(status.ts), received_ms, payload)
            else:
                self.store.after(done)
        except PayloadError as error:
            self.health.rejected += 1
            if topic not in self.health.warned:
                self.health.warned.add(topic)
                log.warning(
                    "floor recorder: rejected payload: %s (further ones on this topic are counted)", error
                )
            self.store.after(done)

    def _stored(self, done: Callable[[bool], None]) -> Callable[[bool], None]:
        def stored(ok: bool) -> None:
            if ok:
                self.health.stored += 1
            done(ok)

        return stored
