"""A device driver's side of the broker: last will, outbox, status slot, command queue.

:class:`DeviceLink` keeps an aiomqtt client connected to the broker for one device id and
serves three topics under ``{root}/{table}/dev/{id}/``:

- ``event``: every event passed to :meth:`DeviceLink.publish_event`, in order, QoS 1, through the
  bounded :class:`~link.outbox.Outbox` (events produced while the broker is away wait there);
- ``status``: the retained status passed to :meth:`DeviceLink.set_status` (last value wins; an
  overflow never drops it). The last will is ``offline`` naming the current session; when the
  session changes, the link reconnects (a clean disconnect, then a connection whose will names
  the new session) before it publishes anything more, so that a driver killed at any moment
  leaves a retained ``offline`` with its latest session. On cancellation the link publishes
  ``offline`` itself (a clean disconnect suppresses the will);
- ``cmd``: commands are validated and queued in order in :attr:`DeviceLink.commands`.

On its first connection the link reads the status it left on the broker before (a previous run of
the driver): :meth:`DeviceLink.previous_status` lets a driver number its sessions on from there.
After a lost connection it reconnects with backoff, resubscribes and republishes the status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Final

import aiomqtt

from config.models import MqttSection
from contract.models import EventBase, PayloadError, Status, parse_status
from contract.timestamps import utc_now
from contract.topics import Topics
from link.backoff import Backoff
from link.client import make_client
from link.commands import CommandQueue
from link.outbox import Outbox, OutboxMessage
from link.reconnect import reconnecting

#: How long the first connection waits for the driver's own retained status.
RETAINED_STATUS_WAIT_S: Final = 0.5
OFFLINE_PUBLISH_TIMEOUT_S: Final = 1.0
#: Events published at once, their acknowledgements awaited together.
PUBLISH_PIPELINE: Final = 16
#: The longest wait between two connection attempts. A table PC's broker is on the same
#: machine: trying every second costs nothing, and every driver is back (its status said
#: again, naming its last seq) within a second of the broker, which keeps the engine's gap
#: fill short (engine.sequences, SETTLE).
BROKER_BACKOFF_MAX_S: Final = 1.0


class _WillOutdated(Exception):
    """A new session started: reconnect so that the last will names it."""


class DeviceLink:
    """The MQTT link of one device; ``await link.run()`` until cancelled."""

    def __init__(
        self,
        mqtt: MqttSection,
        topics: Topics,
        device_id: str,
        *,
        identifier: str,
        outbox_limit: int = 10_000,
        command_limit: int = 100,
        log: logging.Logger | None = None,
    ) -> None:
        self.mqtt = mqtt
        self.device_id = device_id
        self.identifier = identifier
        self.log = log or logging.getLogger("link.device")
        self.event_topic = topics.device_event(device_id)
        self.status_topic = topics.device_status(device_id)
        self.cmd_topic = topics.device_cmd(device_id)
        self.outbox = Outbox(outbox_limit, on_drop=self._dropped)
        self.commands = CommandQueue(command_limit, self.log, device_id)
        #: Set while connected and subscribed with a last will naming the current session.
        self.ready = asyncio.Event()
        #: The client of the current connection (diagnostics: its socket, its options).
        self.client: aiomqtt.Client | None = None
        self.session = 0
        self._status: Status | None = None
        #: The highest seq of the events given to publish, and its session.
        self._last_event: tuple[int | None, int] = (None, 0)
        self._previous: Status | None = None
        self._first_contact = asyncio.Event()
        self._retained_seen = asyncio.Event()

    # ------------------------------------------------------------------ what the driver calls

    def publish_event(self, event: EventBase, on_published: Callable[[], None] | None = None) -> None:
        """Queue one event for the ``event`` topic; ``on_published`` is called after the
        broker's PUBACK (never, if an overflow drops the event first)."""
        session, seq = self._last_event
        newer_session = event.session is not None and (session is None or event.session > session)
        if newer_session or (event.session == session and event.seq > seq):
            self._last_event = (event.session, event.seq)  # (a resent event is not newer)
        self.outbox.put(OutboxMessage(self.event_topic, event.to_json(), on_published=on_published))

    def set_status(self, status: Status, *, first: bool = False) -> None:
        """The retained status to publish (it replaces one not yet published). It names the
        seq of the last event of its session given so far: they go out before it, or with
        ``first`` (said again after a reconnection) right after it, the events that waited
        for the broker."""
        if status.seq is None:
            session, seq = self._last_event
            status = status.model_copy(update={"seq": seq if session == status.session else 0})
        if status.session != self.session:
            self.session = status.session
            self.ready.clear()  # the connection reconnects for this session's will
        self._status = status
        self.outbox.set_status(OutboxMessage(self.status_topic, status.to_json(), retain=True), first=first)

    async def previous_status(self, wait_s: float) -> Status | None:
        """The status this device's driver left retained on the broker, if the broker says so
        within ``wait_s`` (None: there was none, or no broker answered)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait_s):
                await self._first_contact.wait()
        return self._previous

    @property
    def contacted(self) -> bool:
        """True once a broker answered and the previous status is known."""
        return self._first_contact.is_set()

    @property
    def dropped(self) -> int:
        """Events dropped because the outbox overflowed."""
        return self.outbox.dropped

    def _dropped(self, lost: OutboxMessage) -> None:
        self.log.error(
            "%s: outbox full (%d messages while the broker is away): dropped the oldest, for %s",
            self.device_id,
            self.outbox.limit,
            lost.topic,
        )

    # ------------------------------------------------------------------ the connection loop

    async def run(self) -> None:
        """Stay connected until cancelled; say ``offline`` on the way out."""
        backoff = Backoff(ceiling=BROKER_BACKOFF_MAX_S)

        async def attempt() -> None:
            try:
                will_session = self.session
                client = self.client = make_client(self.mqtt, self.identifier, will=self._will())
                client.pending_calls_threshold = 2 * PUBLISH_PIPELINE  # a run is no warning
                async with client:
                    backoff.reset()
                    try:
                        await self._serve(client, will_session)
                    except asyncio.CancelledError:
                        await self._say_offline(client)
                        raise
            except _WillOutdated:
                self.log.debug("%s: reconnecting for session %d's will", self.device_id, self.session)
            finally:
                self.ready.clear()

        def lost(error: Exception) -> float:
            if isinstance(error, aiomqtt.MqttError):
                self.log.warning("%s: broker connection lost (%s); reconnecting", self.device_id, error)
            else:
                # Whatever broke, the table keeps its driver: log it loudly and reconnect.
                self.log.error("%s: broker connection failed: %s", self.device_id, error, exc_info=error)
            return backoff.next()

        await reconnecting(attempt, lost, errors=(Exception,))

    def _will(self) -> aiomqtt.Will:
        status = Status(state="offline", ts=utc_now(), session=self.session, detail="driver gone")
        return aiomqtt.Will(self.status_topic, status.to_json(), qos=1, retain=True)

    async def _serve(self, client: aiomqtt.Client, will_session: int) -> None:
        """Serve one connection until it fails (MqttError) or its will is outdated."""
        tasks = {asyncio.create_task(self._receive(client))}
        try:
            if not self._first_contact.is_set():
                await self._read_previous(client)
            await client.subscribe(self.cmd_topic, qos=1)
            # Said again at every connection (also when one waits): the broker may have lost
            # the retained one, and it announces the events that waited.
            self._republish_status()
            if self.session == will_session:
                self.ready.set()
            self.log.info("%s: connected to the broker %s", self.device_id, self.mqtt.url)
            tasks.add(asyncio.create_task(self._flush(client, will_session)))
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
            if self.session != will_session:
                raise _WillOutdated
            raise aiomqtt.MqttError("message stream ended")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=1.0)
            for task in tasks:
                if task.done() and not task.cancelled():
                    task.exception()  # retrieved: the connection error is reported by the caller

    def _republish_status(self) -> None:
        if self._status is not None:
            # First: it tells the controller how far this driver's events go before the ones
            # that waited for the broker arrive (it holds what comes until every driver said so,
            # and puts what waited in its order: engine.sequences).
            # (said again on a connection: an answer's ask is not answered again)
            status = self._status.model_copy(update={"ts": utc_now(), "seq": None, "asked": None})
            self.set_status(status, first=True)

    async def _read_previous(self, client: aiomqtt.Client) -> None:
        await client.subscribe(self.status_topic, qos=1)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RETAINED_STATUS_WAIT_S):
                await self._retained_seen.wait()
        await client.unsubscribe(self.status_topic)
        self._first_contact.set()

    async def _flush(self, client: aiomqtt.Client, will_session: int) -> None:
        me = asyncio.current_task()
        while True:
            await self.outbox.ready.wait()
            while run := self.outbox.peek_run(PUBLISH_PIPELINE):
                if self.session != will_session:
                    return  # reconnect first: see _serve
                # Pipelined: paho writes them in call order and the broker keeps it; waiting for
                # each acknowledgement in turn would cap a pot's chips at one broker round trip
                # each.
                results = await asyncio.gather(
                    *(client.publish(i.topic, i.payload, qos=1, retain=i.retain) for i in run),
                    return_exceptions=True,
                )
                for item, result in zip(run, results, strict=True):
                    if isinstance(result, BaseException):
                        raise result  # the rest stays, in order, for the next connection
                    # Only dropped once the broker took it: a broker lost mid-publish resends it.
                    self.outbox.done(item)
                    if item.on_published is not None:
                        item.on_published()
                # asyncio.wait_for in Python 3.11 (inside aiomqtt's publish) can swallow a
                # cancellation that races with the PUBACK: honour it here.
                if me is not None and me.cancelling():
                    raise asyncio.CancelledError

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            topic = message.topic.value
            payload = message.payload
            if not isinstance(payload, bytes | str):
                self.log.error("%s: %s: payload is not text", self.device_id, topic)
                continue
            if topic == self.status_topic:
                self._on_previous_status(topic, payload)
            elif topic == self.cmd_topic:
                self.commands.deliver(topic, payload)
            # Anything else is another session's retained message (amqtt): not ours.

    def _on_previous_status(self, topic: str, payload: bytes | str) -> None:
        if self._first_contact.is_set():
            return
        try:
            self._previous = parse_status(topic, payload)
        except PayloadError as error:
            self.log.error("%s: ignoring unreadable retained status: %s", self.device_id, error)
        self._retained_seen.set()

    async def _say_offline(self, client: aiomqtt.Client) -> None:
        """Before a clean disconnect: publish ``offline`` ourselves (the will would not fire)."""
        status = Status(state="offline", ts=utc_now(), session=self.session, detail="driver stopped")
        with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
            async with asyncio.timeout(OFFLINE_PUBLISH_TIMEOUT_S):
                await client.publish(self.status_topic, status.to_json(), qos=1, retain=True)
