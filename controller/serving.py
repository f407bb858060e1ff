"""The table controller service over MQTT (``tablectl run``; the demo runs it in its process).

It connects to the broker, subscribes to the table's device events, device statuses and dealer
inputs, feeds them through the engine and publishes alerts (QoS 1), the retained public state and
device commands (lamp, buzzer). ``controller/status`` goes ``online`` only once the subscriptions
are in place; the last will says ``offline``, and so does the service itself before a clean
disconnect. After a lost connection it reconnects with backoff, resubscribes and republishes its
status and the state. Every message is journaled; a restart recovers from the journal (see
``controller.table``).

The journal writes in threads of its own (``controller.journal.writer``): what a message caused is
published once its record is written (in the operating system), the message is acknowledged to
the broker once its record is durable (fsynced), and while the journal cannot be written the
table goes on from memory, acknowledging nothing (see ``controller.acks``).

With ``[display] listen`` it also serves the dealer's display (``controller.display``), fed in
this process through the :class:`Listener` interface; the web stack is imported only then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Sequence
from typing import Final, Protocol

import aiomqtt

from config.models import TableConfig
from config.registry import DeckRegistry
from contract.models import DealerInput, Status, StatusState
from contract.timestamps import utc_now
from controller.acks import Acknowledgements
from controller.history.last import alerts_from, last_hand, read_recent
from controller.history.query import History
from controller.table import Outgoing, TableController
from link.aiomqtt_adapter import (
    arrived_on,
    connection_tagged_queue,
    enable_manual_acks,
)
from link.backoff import Backoff
from link.client import client_id, make_client

log = logging.getLogger(__name__)

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
#: Publish at least this often while messages keep arriving (the state is published once per
#: batch when messages queue up).
PROCESS_BATCH: Final = 10
#: Publishes awaited together (paho keeps at most 20 in flight, the rest queue in order).
PUBLISH_BATCH: Final = 100
OFFLINE_TIMEOUT_S: Final = 2.0
#: How often reports of malformed input that are due go out (each topic at most once a second).
TICK_S: Final = 0.5


class Listener(Protocol):
    """Follows the service in its own process (the dealer's display): what it receives, what it
    is about to publish (as soon as it is produced, before the broker round trip), and its own
    status (including ``offline`` while it has no broker connection)."""

    def received(self, topic: str, payload: bytes) -> None: ...

    def produced(self, items: Sequence[Outgoing]) -> None: ...

    def controller(self, status: Status) -> None: ...


class Display(Protocol):
    """The dealer's display as the service runs it."""

    url: str

    async def stop(self) -> None: ...


class NotConnected(RuntimeError):
    """The service has no broker connection at the moment."""


class Service:
    """The running service of one table; ``run()`` returns when ``stop`` is set."""

    def __init__(
        self,
        config: TableConfig,
        registry: DeckRegistry,
        *,
        stop: asyncio.Event | None = None,
    ) -> None:
        self.config = config
        self.registry = registry
        self.stop = stop or asyncio.Event()
        self.controller = TableController(config, registry)
        self.topics = self.controller.topics
        self.outbox: deque[Outgoing] = deque()
        self.connections = 0
        #: Set once the service is first online (subscribed): drivers may start publishing.
        self.ready = asyncio.Event()
        self._publishing = 0
        #: One flush at a time: the receive loop and the ticker both publish, in outbox order.
        self._flush_lock = asyncio.Lock()
        #: The journal problem the retained status last reported (None: it said ``online``).
        self._reported_error: str | None = None
        self.acks = Acknowledgements(self.controller.journal)
        self.listeners: list[Listener] = []
        self.display: Display | None = None
        #: The client while it is connected and subscribed (inputs may be submitted through it).
        self._client: aiomqtt.Client | None = None

    @property
    def idle(self) -> bool:
        """Nothing waits to be published or journaled, nothing is being published."""
        return not self.outbox and self._publishing == 0 and self.acks.settled()

    def _status(self, state: StatusState, detail: str | None = None) -> Status:
        return Status(
            state=state,
            ts=utc_now(),
            session=self.controller.session,
            detail=detail,
            area=self.config.table.area,
        )

    async def run(self) -> int:
        """Recover from the journal, then serve until ``stop`` is set."""
        recent = self._recent_hands()
        # The journal never stops the table: one that cannot be written is a fault (status, alert).
        recovery = self.controller.recover(utc_now(), self.acks.listener(asyncio.get_running_loop()))
        log.info(
            "table %s: session %d; journal %s: %s, %d received records replayed%s%s",
            self.config.table.id,
            recovery.session,
            self.config.journal.path,
            f"checkpoint {recovery.checkpoint}" if recovery.checkpoint else "no checkpoint",
            recovery.replayed,
            f", {len(recovery.problems)} unreadable lines" if recovery.problems else "",
            f", {len(recovery.pending)} outputs still to publish" if recovery.pending else "",
        )
        self.outbox.extend(recovery.pending)
        # From now on the devices have [table] startup_grace_s to come up (controller.grace).
        self.controller.start_grace(utc_now())
        try:
            if self.config.display.listen_address is not None and not await self._start_display(
                recent, recovery.pending
            ):
                return EXIT_ERROR
            await self._broker_loop()
        finally:
            self._tell(self._status("offline", "stopped"))
            if self.display is not None:
                await self.display.stop()
            # Writes what is queued and stops the journal's threads (it may wait for the disk).
            await asyncio.to_thread(self.controller.close)
        log.info("table %s: stopped", self.config.table.id)
        return EXIT_OK

    def _recent_hands(self) -> History:
        """The journal's newest hands, for the display's last hand (empty: no display).

        Read before recovery opens the journal for appending (no line is read half written).
        """
        files = self.controller.files
        if self.config.display.listen_address is None or files is None:
            return History()
        try:
            return read_recent(files)
        except Exception:
            # Only a display line is at stake: the table starts whatever the journal holds.
            log.exception("last hand: journal %s not read; the table goes on", files.active)
            return History()

    async def _start_display(self, recent: History, owed: Sequence[Outgoing]) -> bool:
        """Serve the dealer's display (``[display] listen``) with the table's last hand (the
        journal's newest result, or a newer one still owed to the broker); False when it cannot
        listen."""
        from controller.display.server import DealerDisplay
        from controller.web.server import WebServerError

        state = self.controller.state or self.controller.engine.public_state()
        display = DealerDisplay(self.config, state, submit=self.submit)
        try:
            entry = last_hand(recent, owed)
            display.recall(
                entry.result if entry is not None else None,
                alerts_from(recent, entry.hand if entry is not None else 0),
            )
        except Exception:
            log.exception("last hand: not recalled; the table goes on")
            entry = None
        if entry is not None:
            published = f"journal record {entry.record}" if entry.record else "not yet published"
            log.info("dealer display: last hand %d (%s)", entry.hand, published)
        try:
            url = await display.start()
        except WebServerError as error:
            log.error("dealer display: %s", error)
            return False
        self.display = display
        self.listeners.append(display)
        self._tell(self._status("offline", "connecting to the broker"))
        log.info("dealer display: %s", url)
        return True

    def _listen(self, call: Callable[[Listener], None]) -> None:
        """Tell every listener; a listener that fails is logged, never stops the table."""
        for listener in self.listeners:
            try:
                call(listener)
            except Exception:
                log.exception("%s failed; the table goes on", type(listener).__name__)

    def _tell(self, status: Status) -> None:
        self._listen(lambda listener: listener.controller(status))

    def _emit(self, items: Sequence[Outgoing]) -> None:
        """Queue items to publish; listeners see them at once."""
        self.outbox.extend(items)
        if items:
            self._listen(lambda listener: listener.produced(items))

    async def submit(self, item: DealerInput) -> None:
        """Publish a dealer input on this table's ``input`` topic, as a tablet would.

        It comes back through the subscription and is journaled and processed like any input
        (so a restart replays it). Raises :class:`NotConnected` without a broker connection, or
        the client's ``MqttError`` when the publish fails.
        """
        client = self._client
        if client is None:
            raise NotConnected("the controller is not connected to the broker")
        await client.publish(self.topics.input, item.to_json(), qos=1, timeout=OFFLINE_TIMEOUT_S)

    # ----------------------------------------------------------------------------------------

    async def _broker_loop(self) -> None:
        mqtt = self.config.mqtt
        will = aiomqtt.Will(
            self.topics.controller_status, self._status("offline", "lost").to_json(), qos=1, retain=True
        )
        client = make_client(
            mqtt,
            client_id(mqtt, self.config.table.id),
            will=will,
            persistent=True,  # the broker keeps the events for a controller that restarts
            queue_type=connection_tagged_queue(lambda: self.connections),
        )
        client.pending_calls_threshold = 10 * PUBLISH_BATCH  # a pipelined batch is no warning
        enable_manual_acks(client)
        self.acks.client = client
        backoff = Backoff()
        while not self.stop.is_set():
            try:
                # Messages from here on arrive on the next connection.
                self.connections += 1
                self.acks.connection = self.connections
                async with client:
                    log.info("connected to %s:%d", mqtt.host, mqtt.port)
                    backoff.reset()
                    await self._serve(client)
                    await self._say_offline(client)
                return
            except aiomqtt.MqttError as error:
                log.warning("broker %s:%d: %s", mqtt.host, mqtt.port, error)
                self._tell(self._status("offline", f"no broker connection: {error}"))
            delay = backoff.next()
            log.info("reconnecting in %.1f s", delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), delay)

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Subscribe, announce, then process messages until ``stop`` (or a lost connection)."""
        await client.subscribe(
            [
                (self.topics.all_device_events, 1),
                (self.topics.all_device_status, 1),
                (self.topics.input, 1),
            ]
        )
        self._emit(self.controller.on_connect(utc_now()))
        await self._flush(client)
        await self._publish_status(client)
        log.info("online: subscribed to %s/dev/+/event, dev/+/status, input", self.topics.base)
        self.ready.set()
        self._client = client
        tasks = {
            asyncio.create_task(self._receive(client)),
            asyncio.create_task(self._watch_journal(client)),
            asyncio.create_task(self._tick(client)),
        }
        stopper = asyncio.create_task(self.stop.wait())
        try:
            await asyncio.wait({*tasks, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._client = None
            for task in (*tasks, stopper):
                task.cancel()
            await asyncio.gather(stopper, *tasks, return_exceptions=True)
        for task in tasks:
            if not task.cancelled():
                task.result()  # re-raises the MqttError of a lost connection

    async def _tick(self, client: aiomqtt.Client) -> None:
        """Publish the reports of malformed input as they fall due (a flood is reported once a
        second per topic, whether or not anything else arrives)."""
        while True:
            await asyncio.sleep(TICK_S)
            due = self.controller.tick(utc_now())
            if due:
                self._emit(due)
                await self._flush(client)

    async def _receive(self, client: aiomqtt.Client) -> None:
        """Journal and process every message; publish what it caused once its record is written.

        The broker hears PUBACK once the message's record is durable (``controller.acks``): a
        crash before that leaves it with the broker, which delivers it again to the restarted
        controller (and the controller recognises it).
        """
        processed = 0
        async for message in client.messages:
            payload = message.payload
            if isinstance(payload, str):
                payload = payload.encode()
            elif not isinstance(payload, bytes | bytearray):
                payload = b"" if payload is None else str(payload).encode()
            topic, data = str(message.topic), bytes(payload)
            self._listen(lambda listener: listener.received(topic, data))  # noqa: B023 - called at once
            handled = self.controller.receive(topic, data, utc_now())
            self._emit(handled.outgoing)
            # A message of a previous connection is not acknowledged: its id belonged there (a
            # persistent session delivers it again, and the controller recognises the repeat).
            self.acks.add(handled.record, message, arrived_on(message))
            processed += 1
            # Catch up first when messages queue up (the state is then published once).
            if len(client.messages) == 0 or processed >= PROCESS_BATCH:
                processed = 0
                await self._flush(client)

    async def _watch_journal(self, client: aiomqtt.Client) -> None:
        """Publish the alert, state and status a change of the journal's health calls for."""
        while True:
            await self.acks.health_changed.wait()
            self.acks.health_changed.clear()
            self._emit(self.controller.journal_changed(utc_now()))
            await self._flush(client)

    async def _flush(self, client: aiomqtt.Client) -> None:
        """Publish the outbox in order; a state followed by a newer one is skipped.

        Publishes are pipelined (paho writes them in call order; the acknowledgements are awaited
        together, a batch at a time). An item is journaled as published and leaves the outbox
        only once the broker has acknowledged it; after a lost connection the rest waits, in
        order, for the next one.
        """
        async with self._flush_lock:
            # Write-ahead: what caused these outputs is in the journal before they leave (written
            # to the operating system: a crash of the process loses none; see docs/journal.md).
            # Again if the ticker or the journal watcher queued more while this one waited.
            waited = -1
            while (cause := max((o.cause for o in self.outbox), default=0)) > waited:
                await self.acks.written(cause)
                waited = cause
            await self._publish_outbox(client)

    async def _publish_outbox(self, client: aiomqtt.Client) -> None:
        last_state = max((i for i, o in enumerate(self.outbox) if o.what == "state"), default=-1)
        pending = [
            o for i, o in enumerate(self.outbox) if not (o.what == "state" and i < last_state)
        ]
        self.outbox.clear()
        self._publishing = len(pending)
        try:
            while pending:
                batch, pending = pending[:PUBLISH_BATCH], pending[PUBLISH_BATCH:]
                try:
                    results = await asyncio.gather(
                        *(
                            client.publish(o.topic, o.payload, qos=1, retain=o.retain)
                            for o in batch
                        ),
                        return_exceptions=True,
                    )
                except asyncio.CancelledError:
                    self.outbox.extend(batch + pending)
                    raise
                failed = []
                for out, result in zip(batch, results, strict=True):
                    if isinstance(result, BaseException):
                        failed.append((out, result))
                    else:
                        self.controller.published(out, utc_now())
                if failed:
                    self.outbox.extend([out for out, _ in failed] + pending)
                    raise failed[0][1]
        finally:
            self._publishing = 0
        if self.controller.journal_error != self._reported_error:
            await self._publish_status(client)

    async def _publish_status(self, client: aiomqtt.Client) -> None:
        """``online``, or ``fault`` naming the problem while the journal cannot be written."""
        error = self.controller.journal_error
        state: StatusState = "fault" if error is not None else "online"
        status = self._status(state, error)
        await client.publish(self.topics.controller_status, status.to_json(), qos=1, retain=True)
        self._reported_error = error
        self._tell(status)

    async def _say_offline(self, client: aiomqtt.Client) -> None:
        """Publish ``offline`` before a clean disconnect (which suppresses the last will)."""
        try:
            await client.publish(
                self.topics.controller_status,
                self._status("offline", "stopped").to_json(),
                qos=1,
                retain=True,
                timeout=OFFLINE_TIMEOUT_S,
            )
        except aiomqtt.MqttError as error:
            log.warning("could not publish offline: %s", error)
