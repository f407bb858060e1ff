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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from datetime import UTC, datetime
from typing import Final

import aiomqtt

from config.models import TableConfig
from config.registry import DeckRegistry
from contract.models import Status, StatusState
from controller.acks import Acknowledgements
from controller.mqtt import (
    Backoff,
    arrived_on,
    client_id,
    connection_tagged_queue,
    enable_manual_acks,
    make_client,
)
from controller.table import Outgoing, TableController

log = logging.getLogger("controller.service")

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
#: Publish at least this often while messages keep arriving (the state is published once per
#: batch when messages queue up).
PROCESS_BATCH: Final = 10
#: Publishes awaited together (paho keeps at most 20 in flight, the rest queue in order).
PUBLISH_BATCH: Final = 100
OFFLINE_TIMEOUT_S: Final = 2.0


def utc_now() -> datetime:
    return datetime.now(UTC)


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
        #: The journal problem the retained status last reported (None: it said ``online``).
        self._reported_error: str | None = None
        self.acks = Acknowledgements(self.controller.journal)
        self._flushing = asyncio.Lock()

    @property
    def idle(self) -> bool:
        """Nothing waits to be published or journaled, nothing is being published."""
        return not self.outbox and self._publishing == 0 and self.acks.settled()

    def _status(self, state: StatusState, detail: str | None = None) -> bytes:
        return Status(
            state=state, ts=utc_now(), session=self.controller.session, detail=detail
        ).to_json()

    async def run(self) -> int:
        """Recover from the journal, then serve until ``stop`` is set."""
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
        try:
            await self._broker_loop()
        finally:
            # Writes what is queued and stops the journal's threads (it may wait for the disk).
            await asyncio.to_thread(self.controller.close)
        log.info("table %s: stopped", self.config.table.id)
        return EXIT_OK

    # ----------------------------------------------------------------------------------------

    async def _broker_loop(self) -> None:
        mqtt = self.config.mqtt
        will = aiomqtt.Will(
            self.topics.controller_status, self._status("offline", "lost"), qos=1, retain=True
        )
        client = make_client(
            mqtt,
            client_id(mqtt, self.config.table.id),
            will,
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
        self.outbox.extend(self.controller.on_connect(utc_now()))
        await self._flush(client)
        await self._publish_status(client)
        log.info("online: subscribed to %s/dev/+/event, dev/+/status, input", self.topics.base)
        self.ready.set()
        tasks = {
            asyncio.create_task(self._receive(client)),
            asyncio.create_task(self._watch_journal(client)),
        }
        stopper = asyncio.create_task(self.stop.wait())
        try:
            await asyncio.wait({*tasks, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (*tasks, stopper):
                task.cancel()
            await asyncio.gather(stopper, *tasks, return_exceptions=True)
        for task in tasks:
            if not task.cancelled():
                task.result()  # re-raises the MqttError of a lost connection

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
            handled = self.controller.receive(str(message.topic), bytes(payload), utc_now())
            self.outbox.extend(handled.outgoing)
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
            self.outbox.extend(self.controller.journal_changed(utc_now()))
            await self._flush(client)

    async def _flush(self, client: aiomqtt.Client) -> None:
        """Publish the outbox in order; a state followed by a newer one is skipped.

        Publishes are pipelined (paho writes them in call order; the acknowledgements are awaited
        together, a batch at a time). An item is journaled as published and leaves the outbox
        only once the broker has acknowledged it; after a lost connection the rest waits, in
        order, for the next one.
        """
        async with self._flushing:
            # Write-ahead: what caused these outputs is in the journal before they leave (written
            # to the operating system: a crash of the process loses none; see docs/journal.md).
            await self.acks.written(max((o.cause for o in self.outbox), default=0))
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
        await client.publish(
            self.topics.controller_status, self._status(state, error), qos=1, retain=True
        )
        self._reported_error = error

    async def _say_offline(self, client: aiomqtt.Client) -> None:
        """Publish ``offline`` before a clean disconnect (which suppresses the last will)."""
        try:
            await client.publish(
                self.topics.controller_status,
                self._status("offline", "stopped"),
                qos=1,
                retain=True,
                timeout=OFFLINE_TIMEOUT_S,
            )
        except aiomqtt.MqttError as error:
            log.warning("could not publish offline: %s", error)
