"""The table controller service over MQTT (``tablectl run``; the demo runs it in its process).

It holds its journal's lock (one writer), checks that no other controller of the table is on the
broker, connects, subscribes to the table's device events, device statuses and dealer inputs,
feeds them through the engine and publishes alerts (QoS 1), the retained public state and device
commands (lamp, buzzer). Four tasks per connection: the receiver (takes messages from the
bounded intake from the moment the connection is up, never waits for the network; it hands what
a message caused to the socket itself when it can), the publisher (the outbox, in order,
pipelined), the lander (the PUBACKs, ``controller.service.flights``) and the announcer
(subscribe; the state and ``online``, at once with a kept session, after the SUBACK with a new
one). The last will says ``offline``, and so does the service itself before a clean disconnect.
After a lost connection it reconnects with backoff, resubscribes and republishes its status and
the state. Every message is journaled; a restart recovers from the journal (see ``controller.service.table``).

The journal writes in threads of its own (``controller.journal.writer``): what a message caused is
published once its record is written (in the operating system), the message is acknowledged to
the broker once its record is durable (fsynced), and while the journal cannot be written the
table goes on from memory, acknowledging what the journal holds in its bounded tail (see
``controller.service.acks``).

With ``[display] listen`` it also serves the dealer's display (``controller.display``), fed in
this process through the :class:`Listener` interface; the web stack is imported only then.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Final, Protocol, TypeAlias

import aiomqtt

from config.models import TableConfig
from config.registry import DeckRegistry
from contract.models import DealerInput, PayloadError, Status, StatusState, parse_status
from contract.timestamps import utc_now
from controller.history.last import alerts_from, last_hand, read_recent
from controller.history.query import History
from controller.journal.lock import JournalLock, JournalLocked
from controller.service.acks import Acknowledgements
from controller.service.flights import Flight, Flights
from controller.service.inbox import Classified, Malformed
from controller.service.table import Outgoing, TableController
from link.aiomqtt_adapter import Intake, Received, drop_unacknowledged, enable_manual_acks, publish_now
from link.backoff import Backoff
from link.client import client_id, make_client
from link.reconnect import reconnecting

log = logging.getLogger(__name__)

#: A message taken from the intake, its time of arrival and its classification.
_Taken: TypeAlias = tuple[Received, datetime, Classified | Malformed | None]

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
#: Publish at least this often while messages keep arriving (the state is built and published
#: once per batch when messages queue up; a batch ends sooner when no message is left after the
#: socket's reader ran, or with a message that caused an alert or a command).
PROCESS_BATCH: Final = 200
#: Messages waiting in the intake are classified (their payloads parsed) this many at a time,
#: then taken in order: parsing, journaling and the engine step taken in turn for each message
#: cost more CPU than the same work in two passes (each stage's code and data pushed out of the
#: caches by the others'; the same holds for the journal's replay, controller.journal.recovery).
CLASSIFY_BATCH: Final = 50
#: Publishes awaited together (a flight's next batch is handed once this one's PUBACKs came).
PUBLISH_BATCH: Final = 100
#: A batch that carries the status reaches as far as the status (``Service._hand``), over at
#: most this many outputs: paho numbers what it has in flight with MQTT's 65,535 packet ids, and
#: keeps what a lost connection left unacknowledged until a later connection's PUBACKs (a drain
#: of a million messages, killed, left 15,090 hand results owed).
STATUS_BATCH_MAX: Final = 20_000
OFFLINE_TIMEOUT_S: Final = 2.0
#: A clean stop waits this long for the broker to take what is still to publish.
STOP_FLUSH_S: Final = 2.0
#: How often reports of malformed input that are due go out (each topic at most once a second).
TICK_S: Final = 0.5
#: Time records at most this often (each one moves the engine's next deadline on: a guard).
TIME_GAP_S: Final = 0.05
#: The check for another controller of the table: at most this long, and this long for a
#: retained status after the SUBACK (none: nobody has run this table on this broker).
CHECK_S: Final = 3.0
RETAINED_WAIT_S: Final = 0.3


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


class NotConnected(ConnectionError):
    """The service has no broker connection at the moment (a ``ConnectionError``: what the
    dealer's display catches, without importing the service)."""


class Service:
    """The running service of one table; ``run()`` returns when ``stop`` is set."""

    def __init__(
        self,
        config: TableConfig,
        registry: DeckRegistry,
        *,
        stop: asyncio.Event | None = None,
        take_over: bool = False,
    ) -> None:
        self.config = config
        #: Start even when another controller's retained status says it is on the broker.
        self.take_over = take_over
        #: The journal's instance id, named in the status (see ``controller.journal.lock``).
        self.instance: str | None = None
        self.registry = registry
        self.stop = stop or asyncio.Event()
        self.controller = TableController(config, registry)
        self.topics = self.controller.topics
        self.outbox: deque[Outgoing] = deque()
        self.connections = 0
        #: Set once the service is first online (subscribed): drivers may start publishing.
        self.ready = asyncio.Event()
        #: One flush at a time: the receive loop and the ticker both publish, in outbox order.
        self._flush_lock = asyncio.Lock()
        #: What was handed to paho and awaits its PUBACKs (at most twice a batch of publishes).
        self._flights = Flights(2 * PUBLISH_BATCH)
        #: The journal problem the retained status last reported (None: it said ``online``).
        self._reported_error: str | None = None
        self.acks = Acknowledgements(self.controller.journal)
        self.listeners: list[Listener] = []
        self.display: Display | None = None
        #: The client while it is connected (inputs may be submitted through it).
        self._client: aiomqtt.Client | None = None
        #: Received messages, bounded: a backlog waits in the broker, not in this heap.
        self.intake = Intake(lambda: self.connections)
        #: Messages taken from the intake and classified, not yet processed (at most
        #: ``CLASSIFY_BATCH``; kept across a lost connection, like those still in the intake).
        self._classified: deque[_Taken] = deque()
        #: Set when the outbox has something for the publisher.
        self._publish_wanted = asyncio.Event()
        #: The status must be said again (a new connection).
        self._status_due = True
        #: The status may be said on this connection: the subscriptions are in place (a new
        #: session's SUBACK came, or the broker kept them with the session). Before that a
        #: status, ``fault`` as much as ``online``, would tell the drivers to publish into
        #: subscriptions not made yet: their events lost.
        self._may_announce = False
        #: Set when messages moved the engine's time on (its next deadline may have changed).
        self._time_moved = asyncio.Event()

    @property
    def idle(self) -> bool:
        """Nothing waits to be published or journaled, nothing is being published."""
        return not self.outbox and not self._flights and self.acks.settled()

    def _status(self, state: StatusState, detail: str | None = None) -> Status:
        return Status(
            state=state,
            ts=utc_now(),
            session=self.controller.session,
            detail=detail,
            area=self.config.table.area,
            instance=self.instance,
        )

    async def run(self) -> int:
        """Take the journal's lock, recover from the journal, then serve until ``stop`` is set."""
        lock = JournalLock(self.config.journal.path)
        try:
            lock.acquire()
        except JournalLocked as error:
            log.error("%s", error)
            return EXIT_ERROR
        self.instance = lock.instance
        try:
            return await self._run()
        finally:
            lock.release()

    async def _run(self) -> int:
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
        # From now on the devices have [table] startup_grace_s to come up (controller.service.grace).
        self.controller.start_grace(utc_now())
        try:
            if self.config.display.listen_address is not None and not await self._start_display(
                recent, recovery.pending
            ):
                return EXIT_ERROR
            if not await self._broker_loop():
                return EXIT_ERROR
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

    async def _broker_loop(self) -> bool:
        """Serve through every connection until ``stop``; False when another controller of
        this table is on the broker (this one refuses to fight it for the client id)."""
        mqtt = self.config.mqtt
        will = aiomqtt.Will(
            self.topics.controller_status, self._status("offline", "lost").to_json(), qos=1, retain=True
        )
        client = make_client(
            mqtt,
            client_id(mqtt, self.config.table.id),
            will=will,
            persistent=True,  # the broker keeps the events for a controller that restarts
            queue_type=self.intake.queue_type(),
            # No limit in paho (0): what the service hands it is bounded by ``Flights`` and
            # written at once. Behind a backlog the broker's PUBACKs come after the backlog (read
            # at the engine's pace), and a publish paho held back waited for them: with its 20
            # in flight ``online`` waited behind the outputs owed from the journal until the
            # backlog was drained (42 s behind 60,000), with 200 behind a restart's 200-300.
            # (A limit also costs paho a scan of every message it holds at each PUBACK. The
            # broker takes any number: mosquitto acknowledges a QoS 1 publish as it reads it, and
            # MQTT 3.1.1 has no receive maximum.)
            max_inflight=0,
        )
        client.pending_calls_threshold = 10 * PUBLISH_BATCH  # a pipelined batch is no warning
        enable_manual_acks(client)
        self.intake.bind(client)
        self.acks.client = client
        backoff = Backoff()

        async def attempt() -> bool:
            other = await self._other_controller()
            if other is not None:
                log.error(
                    "table %s: another controller is %s on %s:%d (session %d, since %s); "
                    "this one stops instead of taking its client id (stop the other first; --take-over "
                    "if it is gone for good)",
                    self.config.table.id,
                    other.state,
                    mqtt.host,
                    mqtt.port,
                    other.session or 0,
                    other.ts.isoformat(timespec="seconds"),
                )
                return False
            # Messages from here on arrive on the next connection.
            self.connections += 1
            self.acks.connection = self.connections
            async with client:
                log.info(
                    "connected to %s:%d (%s)",
                    mqtt.host,
                    mqtt.port,
                    "session kept" if self.intake.session_present else "new session",
                )
                backoff.reset()
                await self._serve(client)
                await self._say_offline(client)
            return True

        def lost(error: Exception) -> float:
            log.warning("broker %s:%d: %s", mqtt.host, mqtt.port, error)
            self._tell(self._status("offline", f"no broker connection: {error}"))
            delay = backoff.next()
            log.info("reconnecting in %.1f s", delay)
            return delay

        done = await reconnecting(attempt, lost, stop=self.stop)
        return True if done is None else done

    async def _other_controller(self) -> Status | None:
        """The retained status of another controller of this table that says it is there
        (``online`` or ``fault``), read through a client of its own before this one takes the
        table's client id (taking it would disconnect the other, which would take it back).

        A status naming this journal's instance id is this controller's own (or its
        predecessor's: this process holds the journal's lock, so that one is gone, whatever its
        retained status says); without instance ids (a journal directory where the lock file
        could not be made, an older controller) the sessions tell: this run's and the one
        before. None also when the broker cannot be asked (the connection loop then tries again).

        Asked at the first connection only: at a reconnection this controller held the table a
        moment ago (one that started meanwhile found it there and refused), and every moment
        spent asking widens the window in which a broker that lost its sessions (restarted
        without persistence) drops what devices and dealer inputs publish before the controller
        is subscribed again: the demo's broker-crash test lost dealer inputs that way.
        ``--take-over`` is for a controller gone for good, so no fight follows it either.
        """
        if self.connections > 0 or self.take_over:
            return None
        mqtt = self.config.mqtt
        own = {self.controller.session, self.controller.session - 1}
        topic = self.topics.controller_status
        try:
            async with (
                asyncio.timeout(CHECK_S),
                make_client(mqtt, client_id(mqtt, self.config.table.id, "check")) as check,
            ):
                await check.subscribe(topic, qos=1)
                # A retained status comes right after the SUBACK; none at all: a new table.
                async with asyncio.timeout(RETAINED_WAIT_S):
                    async for message in check.messages:
                        if str(message.topic) != topic or not isinstance(message.payload, bytes):
                            continue
                        status = parse_status(topic, message.payload)
                        if status.state == "offline":
                            return None
                        if status.instance is not None and self.instance is not None:
                            return None if status.instance == self.instance else status
                        return None if status.session in own else status
        except (aiomqtt.MqttError, TimeoutError, PayloadError):
            return None
        return None

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Process messages from the moment the connection is up, announce, until ``stop`` (or a
        lost connection).

        A kept session's messages come before the SUBACK (the broker sends its backlog first):
        they are taken at once, and ``online`` goes out without waiting for the SUBACK (the
        broker kept the subscriptions with the session). A new session has nothing queued: its
        SUBACK comes at once, and ``online`` waits for it (a driver that sees ``online`` may
        publish). The SUBACK is awaited without a time limit: a connection that breaks meanwhile
        is lost like any other, a slow backlog never throws the session away.
        """
        self._client = client
        self._status_due = True
        self._may_announce = False
        # Time without a connection is not counted: the broker may hold the messages of that time.
        self.controller.anchor_time(utc_now())
        receiver = asyncio.create_task(self._receive(client), name="receive")
        tasks = {
            receiver,
            asyncio.create_task(self._publisher(client), name="publish"),
            asyncio.create_task(self._land(client), name="land"),
            asyncio.create_task(self._watch_journal(), name="journal-health"),
            asyncio.create_task(self._tick(), name="tick"),
            asyncio.create_task(self._keep_time(), name="time"),
        }
        announce = asyncio.create_task(self._announce(client), name="announce")
        stopper = asyncio.create_task(self.stop.wait())
        waiting = {*tasks, announce, stopper}
        try:
            while True:
                done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if done != {announce} or announce.exception() is not None:
                    break
            if stopper in done:
                await self._finish_publishing(client, receiver, announce)
        finally:
            self._client = None
            for task in (*tasks, announce, stopper):
                task.cancel()
            await asyncio.gather(stopper, announce, *tasks, return_exceptions=True)
            # What is not acknowledged waits, in order, for the next connection (published again
            # by the service, in its place: not by paho, which would send its copies first).
            unacknowledged, announced = self._flights.abandon()
            drop_unacknowledged(client)
            self.outbox.extendleft(reversed(unacknowledged))
            if announced:
                self._status_due = True
        for task in (*tasks, announce):
            if task.done() and not task.cancelled():
                task.result()  # re-raises the MqttError of a lost connection

    async def _finish_publishing(
        self, client: aiomqtt.Client, receiver: asyncio.Task[None], announce: asyncio.Task[None]
    ) -> None:
        """A clean stop: what the messages taken so far caused goes out, and is journaled as
        published, before ``offline`` (instead of being owed to the next start). Nothing new is
        taken meanwhile; a broker that does not answer within ``STOP_FLUSH_S`` leaves the rest
        owed, as after a crash. A subscription still unanswered (a stop in the first moments)
        is awaited too: its SUBACK, come after the subscribe was given up, would be logged by
        aiomqtt as an error with a traceback."""
        receiver.cancel()
        await asyncio.gather(receiver, return_exceptions=True)
        self._emit(self.controller.take_state())
        try:
            async with asyncio.timeout(STOP_FLUSH_S):
                if not announce.done():
                    await asyncio.wait({announce})
                await self._flush(client)  # after the publisher's (the flush lock)
                while self.outbox:  # (a flush takes what was written when it looked)
                    await self._flush(client)
                await self._flights.empty()
        except (TimeoutError, aiomqtt.MqttError) as error:
            log.warning(
                "stopping with %d messages not yet published: %s",
                len(self.outbox) + len(self._flights),
                error or "timeout",
            )

    async def _announce(self, client: aiomqtt.Client) -> None:
        """Subscribe; the retained state, the lamp and ``online`` (see :meth:`_serve`)."""
        subscribing = asyncio.ensure_future(
            client.subscribe(
                [
                    (self.topics.all_device_events, 1),
                    (self.topics.all_device_status, 1),
                    (self.topics.input, 1),
                ],
                timeout=math.inf,
            )
        )
        try:
            if not self.intake.session_present:
                await subscribing
            self._emit(self.controller.on_connect(utc_now()))
            self._status_due = True
            self._may_announce = True
            self._wake()
            granted = await subscribing
        finally:
            subscribing.cancel()
        refused = [code for code in granted if getattr(code, "is_failure", False)]
        if refused:
            raise aiomqtt.MqttError(f"the broker refused the subscriptions: {refused}")
        log.debug("SUBACK: subscribed to %s/dev/+/event, dev/+/status, input", self.topics.base)

    def _wake(self) -> None:
        """Something waits to be published: the publisher takes it."""
        self._publish_wanted.set()

    async def _publisher(self, client: aiomqtt.Client) -> None:
        """Publish the outbox whenever something was queued (never on the receiving path: the
        receiver must not wait for a PUBACK while the intake holds the socket unread)."""
        while True:
            await self._publish_wanted.wait()
            self._publish_wanted.clear()
            await self._flush(client)

    async def _tick(self) -> None:
        """Publish the reports of malformed input as they fall due (a flood is reported once a
        second per topic, whether or not anything else arrives)."""
        while True:
            await asyncio.sleep(TICK_S)
            due = self.controller.tick(utc_now())
            if due:
                self._emit(due)
                self._wake()
                self._time_moved.set()  # (the grace's held statuses may have moved it)

    async def _keep_time(self) -> None:
        """Give the engine the time when its next deadline passes with no message to bring it
        (a quiet table: a lost end of a stream, a seat away too long; docs/service.md, "Time on
        a quiet table"). One timer, armed again whenever messages move the engine's time on;
        while messages wait in the intake they bring their own time first.

        After a reconnection nothing is judged by time alone within ``[table] startup_grace_s``:
        a broker that went away cut the devices' links too, and what they held meanwhile (the
        card that was moving, the resent events a gap waits for) comes only once they are back.
        A deadline that fell due in that moment was a false alarm (seen in the demo's broker
        crashes). Messages go on meanwhile and bring their own time."""
        if self.connections > 1:
            await asyncio.sleep(self.config.table.startup_grace_s)
        while True:
            self._time_moved.clear()
            at = self.controller.time_due()
            delay = None if at is None else (at - utc_now()).total_seconds()
            waiting = self.intake.waiting or self._classified
            if delay is None or delay > 0 or waiting:
                try:
                    async with asyncio.timeout(None if waiting else delay):
                        await self._time_moved.wait()
                except TimeoutError:
                    pass
                continue
            handled = self.controller.time_passes(utc_now())
            if handled.outgoing:
                self._emit(handled.outgoing)
                self._wake()
            await asyncio.sleep(TIME_GAP_S)

    async def _receive(self, client: aiomqtt.Client) -> None:
        """Journal and process every message; what it caused goes to the publisher.

        The broker hears PUBACK once the message's record is durable (``controller.service.acks``): a
        crash before that leaves it with the broker, which delivers it again to the restarted
        controller (and the controller recognises it). This loop never waits for the network.
        """
        processed = 0
        intake = self.intake
        taken = self._classified
        if taken:
            # Classified on a connection since lost: their time is now, as for those still in the
            # intake (time without a connection is not counted, ``anchor_time``: a message stamped
            # before it would move the engine's deadlines back).
            left = [item[0] for item in taken]
            taken.clear()
            now = utc_now()
            for message in left:
                self._classify(message, now)
        while True:
            if not taken:
                first = await intake.get()
                # The messages waiting were all received by now: one time for the pass.
                now = utc_now()
                self._classify(first, now)
                while len(taken) < CLASSIFY_BATCH and (more := intake.get_nowait()) is not None:
                    self._classify(more, now)
            message, received, classified = taken.popleft()
            topic, data = message.topic, message.payload
            if self.listeners:
                self._listen(lambda listener: listener.received(topic, data))  # noqa: B023 - called at once
            handled = self.controller.receive_classified(topic, data, received, classified, defer_state=True)
            if handled.outgoing:
                # An alert or a command: out now, whatever else waits (the batch ends here), before
                # the message's acknowledgement and the state (which follows in the next flush).
                self._emit(handled.outgoing)
                if not self._flush_at_once(client):
                    self._wake()
                processed = PROCESS_BATCH
            # A message of a previous connection is not acknowledged: its id belonged there (a
            # persistent session delivers it again, and the controller recognises the repeat).
            self.acks.add(handled.record, message)
            processed += 1
            if intake.waiting == 0 and not taken and processed < PROCESS_BATCH:
                # The intake ran dry within a batch: the socket's reader (and the publisher) run
                # once, and what it read continues the batch. A backlog's messages arrive a
                # socket read at a time (about 40): a state built at the end of each read was
                # built, published and journaled as published some 500 times per 20,000.
                await asyncio.sleep(0)
            # Catch up first when messages queue up (the state is then built and published
            # once); let the publisher and the socket's reader run now and then.
            if (intake.waiting == 0 and not taken) or processed >= PROCESS_BATCH:
                processed = 0
                self._emit(self.controller.take_state())
                if self.outbox:
                    self._wake()
                self._time_moved.set()
                await asyncio.sleep(0)

    def _classify(self, message: Received, received: datetime) -> None:
        """Take ``message``, received by ``received``, into the batch to process, classified."""
        classified = self.controller.inbox.classify(message.topic, message.payload, received)
        self._classified.append((message, received, classified))

    async def _watch_journal(self) -> None:
        """Publish the alert, state and status a change of the journal's health calls for."""
        while True:
            await self.acks.health_changed.wait()
            self.acks.health_changed.clear()
            self._emit(self.controller.journal_changed(utc_now()))
            self._wake()

    async def _flush(self, client: aiomqtt.Client) -> None:
        """Hand the outbox to paho in order (a state followed by a newer one is skipped); the
        lander awaits the acknowledgements (``controller.service.flights``).

        Publishes are pipelined (paho writes them in call order). An item is journaled as
        published and leaves its flight only once the broker has acknowledged it; after a lost
        connection what is not acknowledged waits, in order, for the next one.
        """
        async with self._flush_lock:
            await self._flights.room()
            # Write-ahead: what caused these outputs is in the journal before they leave (written
            # to the operating system: a crash of the process loses none; see docs/journal.md).
            # One wait, for what is queued now: what the receiver queues meanwhile leaves as far
            # as its records are written, the rest with the next flush, in order. Waiting again
            # for each newer output chased a receiver running ahead of the journal's writer
            # through a backlog (29 waits, 0.76 s before a restart's ``online`` behind 60,000).
            waited = max((o.cause for o in self.outbox), default=0)
            # A status owed now follows a state queued now (``_announce`` queues both at once);
            # one owed only later goes with the next flush, after its state.
            announce = self._status_owed()
            await self.acks.written(waited)
            # (the receiver may have handed the outbox meanwhile, and a flight may be boarding)
            await self._flights.room()
            if self.outbox or (announce and self._status_owed()):
                self._take_off(client, self.acks.publishable(waited), announce=announce)
            if self.outbox:
                self._wake()

    def _flush_at_once(self, client: aiomqtt.Client) -> bool:
        """The receiver's flush of what a message caused (an alert, a command): handed to paho,
        and so written to the socket, before anything else is done. False when the publisher
        must do it (a flight is boarding or too many await their PUBACKs, or the record is not
        written within the journal's hand-off: ``Acknowledgements.written_at_once``).

        Through the publisher, an alert waited for a turn of the loop, whose ``select`` let the
        journal's and the log's threads take the GIL in between, and behind the PUBACKs the
        receiver queues (another write, to the loop's self-pipe): 0.3-0.5 ms of its latency.
        """
        # (a status owed follows the newest state, which the receiver builds afterwards)
        if self._client is not client or self._status_owed() or not self._flights.may_take_off():
            return False
        if not self.acks.written_at_once(max((o.cause for o in self.outbox), default=0)):
            return False
        self._take_off(client)
        return True

    def _status_owed(self) -> bool:
        if not self._may_announce:
            return False
        return self._status_due or self.controller.journal_error != self._reported_error

    def _take_off(self, client: aiomqtt.Client, written: int | None = None, *, announce: bool = True) -> None:
        """Take the outbox into a flight (with ``written``, only as far as the first output of a
        later record: ``Flight.from_outbox``) and hand its first batch to paho (synchronously);
        the status too if one is owed, unless not ``announce``."""
        flight = Flight.from_outbox(self.outbox, written)
        if announce and self._status_owed():
            error = self.controller.journal_error
            flight.status = self._status("fault" if error is not None else "online", error)
        self._hand(client, flight)
        self._flights.add(flight)

    def _hand(self, client: aiomqtt.Client, flight: Flight) -> None:
        """Hand the flight's next batch to paho: each one written to the socket as it is handed,
        in order (``link.aiomqtt_adapter.publish_now``).

        A batch that carries the status reaches as far as the status, whatever its size (up to
        ``STATUS_BATCH_MAX``): behind a backlog each batch's PUBACKs come after the backlog, and
        a status behind a restart's 100-300 owed outputs waited for the first batch's until the
        backlog was drained (1.5-2.0 s instead of 0.3 s behind 60,000 queued, one restart in six).
        """
        size = PUBLISH_BATCH
        if flight.status is not None:
            size = max(size, min(flight.status_after - flight.sent, STATUS_BATCH_MAX))
        flight.batch, flight.pending = flight.pending[:size], flight.pending[size:]
        flight.sent += len(flight.batch)
        flight.publishes = [_publish(client, o.topic, o.payload, retain=o.retain) for o in flight.batch]
        status = flight.status
        flight.announced = status if status is not None and flight.sent >= flight.status_after else None
        if flight.announced is not None:
            flight.publishes.append(
                _publish(client, self.topics.controller_status, flight.announced.to_json(), retain=True)
            )
            flight.status = None
            # ``online`` is on its way behind the state, without waiting for the PUBACKs
            # (which come behind whatever backlog the broker is sending).
            self._announced(flight.announced)

    async def _land(self, client: aiomqtt.Client) -> None:
        """Await the flights' acknowledgements (``Flights.land``)."""
        await self._flights.land(
            lambda flight: self._hand(client, flight),
            lambda out: self.controller.published(out, utc_now()),
        )

    def _announced(self, status: Status) -> None:
        """The status is on its way to the broker."""
        self._status_due = False
        self._reported_error = status.detail if status.state == "fault" else None
        self._tell(status)
        log.info(
            "%s: subscribed to %s/dev/+/event, dev/+/status, input%s",
            status.state,
            self.topics.base,
            f" ({status.detail})" if status.detail else "",
        )
        self.ready.set()

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


def _publish(client: aiomqtt.Client, topic: str, payload: bytes, *, retain: bool) -> asyncio.Future[None]:
    """Publish at QoS 1, written to the socket now; the future is done on the broker's PUBACK
    (no time limit: behind a backlog it comes after every message the broker sent before it),
    or failed when paho refused the message (no connection)."""
    try:
        return asyncio.ensure_future(publish_now(client, topic, payload, qos=1, retain=retain))
    except aiomqtt.MqttError as error:
        refused: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        refused.set_exception(error)
        return refused
