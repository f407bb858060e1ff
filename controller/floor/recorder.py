"""The floor's recorder: every table's ``hands``, ``alerts`` and ``controller/status``, stored once.

It takes them from a persistent MQTT session (``clean_session`` false, QoS 1), so that what the
tables publish while it is away (restarting, its node lost, the database down) waits in the
broker, and acknowledges a message only once its row is committed (manual PUBACK,
``link.aiomqtt_adapter``). It handles what the broker sends from the moment the connection is up:
a persistent session's queued messages may come before the SUBACK. The rows are keyed so that a
redelivered message is stored once (``controller.floor.store``).

When the store cannot write, the recorder closes its MQTT connection (the backlog waits in the
broker, not in its memory) and comes back once the store answers again; the messages it had not
acknowledged are delivered again. A malformed payload is counted, logged at WARNING once per
topic, and acknowledged in its turn (it will never be stored; the table's journal has it).

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Final

import aiomqtt

from config.models import MqttSection
from contract.models import PayloadError, parse_alert, parse_hand, parse_status
from contract.topics import check_segment, parse_floor_topic
from controller.floor.feed import Brokers, pause, payload_bytes, where
from controller.floor.store import DatabaseUnavailable, FloorStore
from link.aiomqtt_adapter import acknowledge, arrived_on, connection_tagged_queue, enable_manual_acks
from link.client import make_client

log = logging.getLogger(__name__)

#: What the recorder stores (the public state is the live view's, not history).
RECORDED: Final = ("hands", "alerts", "controller/status")
SLOT_NAME: Final = "recorder"
#: How often the recorder asks a store that failed whether it answers again.
STORE_RETRY_S: Final = 1.0


def recorder_filters(root: str) -> tuple[str, ...]:
    for part in root.split("/"):
        check_segment("topic root", part)
    return tuple(f"{root}/+/{kind}" for kind in RECORDED)


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
    warned: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, object]:
        return {
            "connected": self.connected, "broker": self.broker, "client_id": self.client_id,
            "detail": self.detail, "received": self.received, "stored": self.stored,
            "rejected": self.rejected, "pending": self.pending,
        }


class Recorder:
    """See the module docstring; ``await recorder.run(stop)`` until ``stop`` is set."""

    def __init__(
        self, brokers: Sequence[MqttSection], store: FloorStore, *, client_id: str | None = None
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

    async def _client_id(self) -> str:
        if self.fixed_id is not None:
            return self.fixed_id
        slot = await self.store.database.claim(SLOT_NAME, prefer=self.slot)
        if self.slot is not None and slot != self.slot:
            log.warning("floor recorder: slot %d was taken meanwhile; now slot %d (a new session)",
                        self.slot, slot)
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
        while not stop.is_set():
            identifier = await self._wait_for_store(stop)
            if identifier is None:
                return
            self.health.client_id = identifier
            mqtt = self.brokers.current
            self._store_failed.clear()
            self._connection += 1
            number = self._connection
            client = make_client(
                mqtt, identifier, persistent=True, queue_type=connection_tagged_queue(partial(int, number))
            )
            enable_manual_acks(client)
            try:
                async with client:
                    self.health.connected, self.health.broker, self.health.detail = True, where(mqtt), None
                    self.brokers.connected()
                    await self._serve(client, number, stop)
                    if stop.is_set():
                        return
            except aiomqtt.MqttError as error:
                log.warning("floor recorder: broker %s: %s", where(mqtt), error)
                self.health.detail = f"no broker connection ({where(mqtt)}): {error}"
                self.health.connected = False
                await pause(stop, self.brokers.failed())
                continue
            finally:
                self.health.connected = False
                self.health.pending = 0
            # The store failed: the connection was closed on purpose; what was not acknowledged
            # comes again once the store answers.
            self.health.detail = f"store {self.store.name}: {self.store.error}; waiting for it"
            log.warning("floor recorder: %s", self.health.detail)

    async def _serve(self, client: aiomqtt.Client, number: int, stop: asyncio.Event) -> None:
        """Receive (from the start: a persistent session's messages may precede the SUBACK),
        subscribe, and go on until stopped, the connection lost or the store failing."""
        receiver = asyncio.create_task(self._receive(client, number), name="floor-recorder-receive")
        try:
            await client.subscribe([(topic, 1) for topic in self.filters])
            log.info("floor recorder: %s on %s, subscribed to %s", self.health.client_id,
                     self.health.broker, ", ".join(self.filters))
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
        self.health.pending += 1

        def done(ok: bool) -> None:
            self.health.pending = max(0, self.health.pending - 1)
            if not ok:
                self._store_failed.set()
                return
            if arrived_on(message) == number == self._connection:
                acknowledge(client, message)

        parsed = parse_floor_topic(self.root, topic)
        payload = payload_bytes(message)
        if parsed is None or not payload:
            # Not ours (a broker may send more than asked), or a retained status cleared.
            self.store.after(done)
            return
        table, kind = parsed
        try:
            if kind == "alerts":
                self.store.record(table, parse_alert(topic, payload), received_ms, self._stored(done))
            elif kind == "hands":
                self.store.record_hand(table, parse_hand(topic, payload), received_ms, self._stored(done))
            elif kind == "controller/status":
                self.store.record_status(table, parse_status(topic, payload), received_ms,
                                         self._stored(done))
            else:
                self.store.after(done)
        except PayloadError as error:
            self.health.rejected += 1
            if topic not in self.health.warned:
                self.health.warned.add(topic)
                log.warning("floor recorder: rejected payload: %s (further ones on this topic are "
                            "counted)", error)
            self.store.after(done)

    def _stored(self, done: Callable[[bool], None]) -> Callable[[bool], None]:
        def stored(ok: bool) -> None:
            if ok:
                self.health.stored += 1
            done(ok)

        return stored
