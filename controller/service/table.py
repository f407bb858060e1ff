"""The controller of one table, without the network: journal, engine, outputs to publish.

The service (``controller.service.network``) feeds it every received message and publishes what it
returns; this class decides what that is. At start-up it recovers from the journal
(``controller.journal.recovery``: the newest checkpoint and the records after it); while running it takes a
checkpoint at every hand's end and every ``checkpoint_every`` records, so that recovery stays short.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Final, NamedTuple

from config.loader import table_chips
from config.models import JournalSection, SensorBoardDevice, TableConfig
from config.registry import DeckRegistry
from contract.models import (
    Alert,
    DeviceCommand,
    HandResult,
    PublicState,
    ResendCommand,
    TagEvent,
)
from contract.text import bounded
from contract.topics import Topics
from controller.journal import checkpoint
from controller.journal.files import JournalFiles
from controller.journal.records import ReceivedRecord
from controller.journal.recovery import Recovery, audit, recover
from controller.journal.writer import Journal, JournalOptions
from controller.service.grace import StartupGrace
from controller.service.inbox import Classified, Inbox, Malformed
from controller.service.journal_health import JournalHealth
from controller.service.malformed import SAMPLE_BYTES, MalformedTally, Report
from controller.service.outgoing import Outgoing
from controller.service.repeats import RecentMessages
from controller.service.signals import DealerSignals
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    EngineSettings,
    InputReceived,
    Outputs,
    PayloadRejected,
    TimeReached,
)
from engine.seqtrack import EPOCH
from engine.state import EngineState
from engine.step import Engine

__all__ = ["Handled", "Outgoing", "Recovery", "TableController", "journal_options"]

log = logging.getLogger(__name__)
#: Phases between hands: a hand has ended when the table gets back to one of them.
_BETWEEN_HANDS: Final = frozenset({"idle", "shuffled"})
#: Hand ends closer together than this share one checkpoint (a backlog being drained).
HAND_CHECKPOINT_GAP: Final = timedelta(seconds=1)
#: A checkpoint is built on the event loop, and its size grows with the outputs not yet
#: published: behind a backlog of a million messages, whose broker sends the PUBACKs after
#: them, tens of thousands (two thirds of the drain's time went into checkpoints, and the drain
#: ran at half the live rate). So the next checkpoint waits this many times as long as the last
#: one took: checkpoints cost at most about 5 % of the loop, whatever their size (live, a
#: checkpoint takes milliseconds and this changes nothing).
CHECKPOINT_COST_SHARE: Final = 20


def journal_options(section: JournalSection) -> JournalOptions:
    return JournalOptions(
        fsync=section.fsync,
        segment_bytes=max(1, int(section.segment_mb * (1 << 20))),
        backlog=section.backlog,
        retain_days=section.retain_days,
        fsync_delay_s=section.fsync_delay_ms / 1000,
    )


#: Devices a table follows: the configured ones, and this many more that publish under ids of
#: their own; messages of further device ids are malformed input ("too many devices").
MAX_DEVICES: Final = 32


class Handled(NamedTuple):
    """A received message: its record number (0: not journaled) and what it produced.

    ``repeat``: the broker delivered a message again that is already in the journal as ``record``;
    it was not applied a second time. (A named tuple: one is made for every message, and a
    frozen data class's constructor cost three times as much.)
    """

    record: int
    outgoing: list[Outgoing]
    repeat: bool = False


class TableController:
    """Journal, engine and dealer signals of one table."""

    def __init__(self, config: TableConfig, registry: DeckRegistry, *, journal: bool = True) -> None:
        self.config = config
        self.topics = Topics(config.mqtt.root, config.table.id)
        self.settings = EngineSettings.from_config(config, registry, table_chips(config, registry))
        self.engine = Engine(self.settings)
        self.signals = DealerSignals(buzzer_ms=config.display.buzzer_ms)
        self.files = JournalFiles(config.journal.path) if journal else None
        self.journal = (
            Journal(self.files, journal_options(config.journal)) if self.files is not None else None
        )
        boards = [d for d in config.devices if isinstance(d, SensorBoardDevice) and d.enabled]
        self.signal_device = boards[0].id if boards and config.display.lamp else None
        self.state: PublicState | None = None
        #: Device id -> kind, when ``[[devices]]`` names them (None: any device, any event).
        self.kinds = config.device_kinds() or None
        self.inbox = Inbox(self.topics, self.kinds)
        #: A journaled message as the engine would take it now (what the engine is given;
        #: anything else: it would not); changes nothing. The inbox's own method, not a method
        #: calling it: recovery prepares every record replayed with it.
        self.prepare = self.inbox.engine_input
        self.tally = MalformedTally()
        self._devices: set[str] = set(config.device_kinds())
        self.session = 1
        self.recent = RecentMessages()
        self.health = JournalHealth(config.table.profile)
        #: Alerts and commands produced and not yet journaled as published (for checkpoints).
        self._unpublished: dict[int, Outgoing] = {}
        #: Those a checkpoint turned into plain data, with their data (``checkpoint.output_data``:
        #: the next checkpoint reuses it; the output is kept beside it, so that a key reused by
        #: another object is never taken for it).
        self._unpublished_data: dict[int, tuple[Outgoing, Any]] = {}
        self._since_checkpoint = 0
        #: When the last checkpoint was taken (hand ends closer than a second share one).
        self._checkpointed: datetime | None = None
        #: How long after the last checkpoint the next may come (CHECKPOINT_COST_SHARE).
        self._checkpoint_gap = timedelta(0)
        #: While :meth:`receive` runs with ``defer_state``: the new state is owed, not built.
        self._defer_state = False
        #: The cause of a state change not yet handed out (:meth:`take_state`), if any.
        self._state_owed: int | None = None
        #: Alerts and hand results produced with ``defer_state``, logged by :meth:`take_state`.
        self._logs_owed: list[Alert | HandResult] = []
        #: The hand and phase before the last message (a hand's end is where a checkpoint goes).
        self._before: tuple[int, str] = (0, "idle")
        #: The record of the last message the engine took (what a checkpoint now would cover).
        self.last_record = 0
        #: Devices' time to come up at a start (:meth:`start_grace`; controller.service.grace).
        self.grace = StartupGrace()
        #: The lamp is to be sent once the sensor board is heard from (it came up in the grace).
        self._lamp_owed = False
        #: How the engine's event time maps onto this controller's clock: the engine's clock
        #: (the latest event time it saw) and this clock's time when it got there (docs/service.md,
        #: "Time on a quiet table"). None before anything reached the engine.
        self._anchor: tuple[datetime, datetime] | None = None

    # ----------------------------------------------------------------------------------------
    # Start-up
    # ----------------------------------------------------------------------------------------

    def recover(self, now: datetime, listener: Callable[[], None] | None = None) -> Recovery:
        """Rebuild from the journal, open it for appending and record this start (a new session).

        The journal is never a reason not to start: one that cannot be read is reported and the
        table starts afresh; one that cannot be written puts the journal in a fault (the status
        and a ``journal_fault`` alert say so) and the table goes on from memory.
        """
        try:
            recovery = recover(self, self.files) if self.files is not None else Recovery()
        except OSError as error:
            log.error(
                "journal %s: cannot be read (%s): the table starts without its history",
                self.config.journal.path,
                error.strerror or error,
            )
            recovery = Recovery()
        self._replayed_state()
        recovery.log()
        self.session = recovery.session
        self.last_record = recovery.position.next_n - 1
        self._before = (self.engine.hand, self.engine.phase)
        for out in recovery.pending:
            self._unpublished[id(out)] = out
        self.anchor_time(now)
        if self.journal is not None:
            self.journal.open(recovery.position, listener)
            self.journal.start(self.session, now, self.config.table.id)
        return recovery

    def replay(self) -> Recovery:
        """The audit: replay every retained record through a fresh engine (read only)."""
        recovery = audit(self, self.files) if self.files is not None else Recovery()
        self._replayed_state()
        recovery.log()
        self.session = recovery.session
        return recovery

    def _replayed_state(self) -> None:
        """The public state as the replay left it: built once, at its end (a replay builds none
        per change), as the last change would have published it."""
        state = self.engine.deferred_state()
        if state is not None:
            self.state = state

    def restore(self, snapshot: checkpoint.Snapshot) -> None:
        """Take over the state of a checkpoint."""
        self.engine.restore(snapshot.engine)
        self.state = snapshot.state
        self.signals = snapshot.signals
        self.recent.load(snapshot.recent)
        self.health.alert = snapshot.journal_alert
        self._devices |= snapshot.devices
        self.session = snapshot.session

    # What recovery replays through (``controller.journal.recovery.Replayable``): no logging, no journal.

    @property
    def engine_state(self) -> EngineState:
        return self.engine.state

    def replay_received(
        self, record: ReceivedRecord, prepared: object, *, remember: bool = True
    ) -> list[Outgoing] | None:
        """``record`` (:meth:`prepare` gave ``prepared``) through the engine again; None when it
        would not take it now."""
        if remember:
            self.recent.add(record.topic, record.payload, record.n)
        # Malformed by today's configuration (a device's kind changed), or a device beyond the
        # table's bound: not given to the engine, as it would not be now.
        if type(prepared) is DeviceEventReceived or type(prepared) is DeviceStatusReceived:
            device = prepared.device
            # (a device already followed, as for nearly every record, is admitted without a call)
            if device not in self._devices and not self.admit(Classified(prepared, device)):
                return None
        elif type(prepared) is not InputReceived:
            return None
        # (what _handle does for a replay, without its live-only steps: this runs for every
        # record of a replay, and each call and test cost a few per cent of the engine's step)
        try:
            outputs = self.engine.handle(prepared, build_state=False)
        except Exception:
            log.exception("engine failed on journal record %d (%s)", record.n, Classified(prepared).summary)
            return []
        if outputs.alerts or outputs.commands or outputs.hands or self.signal_device is not None:
            return self._outgoing(record.n, outputs, record.received, replay=True)
        return []  # (most records: no alert, command or result; a replay builds no state)

    def replay_rejected(self, n: int, rejected: PayloadRejected) -> list[Outgoing]:
        """Rejected record ``n`` (a report of malformed input) through the engine again."""
        return self._handle(n, Classified(rejected), rejected.received, replay=True)

    def replay_time(self, n: int, time: TimeReached, received: datetime) -> list[Outgoing]:
        """Time record ``n`` (time that came with no message) through the engine again."""
        return self._handle(n, Classified(time), received, replay=True)

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

    @property
    def journal_error(self) -> str | None:
        """Why the journal cannot be written, while it cannot (``journal PATH: why``)."""
        fault = self.journal.fault if self.journal is not None else None
        return None if fault is None else f"journal {self.config.journal.path}: {fault}"

    def checkpoint(self, covers: int, now: datetime) -> None:
        """Hand the journal a checkpoint of the state after record ``covers``."""
        if self.journal is None or covers == 0:
            return
        started = time.perf_counter()
        self._settle_state()  # (a checkpoint within a batch: the state as of ``covers``)
        snapshot = checkpoint.Snapshot(
            covers=covers,
            session=self.session,
            engine=self.engine.state,
            state=self.state,
            signals=self.signals,
            unpublished=list(self._unpublished.values()),
            recent=self.recent.export(),
            journal_alert=self.health.alert,
            devices=frozenset(self._devices),
        )
        outputs = [self._output_data(key, out) for key, out in self._unpublished.items()]
        self.journal.checkpoint(covers, checkpoint.dump(snapshot, outputs), self.session, now)
        self._since_checkpoint = 0
        self._checkpointed = now
        self._checkpoint_gap = timedelta(seconds=CHECKPOINT_COST_SHARE * (time.perf_counter() - started))

    # ----------------------------------------------------------------------------------------
    # Running
    # ----------------------------------------------------------------------------------------

    def receive(
        self, topic: str, payload: bytes, received: datetime, *, defer_state: bool = False
    ) -> Handled:
        """Journal a received message, run it through the engine and return what to publish.

        ``defer_state``: a new public state is not serialised here but owed, for
        :meth:`take_state` (the service takes it once per batch of messages: only the newest
        state is published anyway, and serialising each one cost more than the engine step), and
        so are the INFO lines of its alerts and hand results: the service hands an alert to the
        broker first (a line costs the event loop some 35 µs, and wakes the log's thread, which
        then competes for the interpreter's lock with the journal's writer the alert waits for).

        The record is handed to the journal's writer (it is not written yet when this returns:
        the service publishes what the message caused once it is written, and acknowledges the
        message once it is durable). A message on a topic that is not this table's input or
        device event/status is not journaled and produces nothing (logged at DEBUG). A message
        the broker delivers again is recognised and not applied twice.
        """
        return self.receive_classified(
            topic, payload, received, self.inbox.classify(topic, payload, received), defer_state=defer_state
        )

    def receive_classified(
        self,
        topic: str,
        payload: bytes,
        received: datetime,
        classified: Classified | Malformed | None,
        *,
        defer_state: bool = False,
    ) -> Handled:
        """:meth:`receive` of a message ``self.inbox.classify`` gave ``classified`` (the service
        classifies the messages waiting a batch at a time, before taking them in order)."""
        self._defer_state = defer_state
        try:
            return self._receive(topic, payload, received, classified)
        finally:
            self._defer_state = False

    def take_state(self) -> list[Outgoing]:
        """The public state owed since :meth:`receive` deferred it (nothing when none is); the
        log lines of the alerts and hand results produced meanwhile are written now."""
        if self._logs_owed:
            owed, self._logs_owed = self._logs_owed, []
            for item in owed:
                if isinstance(item, Alert):
                    _log_alert(item)
                else:
                    _log_hand(item)
        self._settle_state()
        cause, self._state_owed = self._state_owed, None
        if cause is None or self.state is None:
            return []
        return [Outgoing("state", cause, self.topics.state, self._public(self.state).to_json(), True)]

    def _settle_state(self) -> None:
        """:attr:`state` as the last message left it, when messages taken with ``defer_state``
        changed it (the engine builds it once, not at every change: ``Engine.deferred_state``)."""
        if self.engine.state_owed:
            state = self.engine.deferred_state()
            if state is not None:
                self.state = state

    def _receive(
        self, topic: str, payload: bytes, received: datetime, classified: Classified | Malformed | None
    ) -> Handled:
        if classified is None:
            log.debug("ignored a message on %s (not an engine topic of this table)", bounded(topic, 200))
            return Handled(0, [])
        if isinstance(classified, Malformed):
            return self._rejected(classified, payload, received)
        if not self.admit(classified):
            # (before the grace: what it holds stays bounded by the devices followed)
            too_many = Malformed(topic, classified.device, f"more than {MAX_DEVICES} devices")
            return self._rejected(too_many, payload, received)
        status = classified.received
        if isinstance(status, DeviceEventReceived) and status.device:
            self.grace.event(status.device)
        elif isinstance(status, DeviceStatusReceived) and status.device:
            offline = status.status.state == "offline"
            if self.grace.status(status.device, offline, topic, payload, received):
                log.info("%s: held, the device has until the start-up grace ends", classified.summary)
                return Handled(0, [])
            if not offline and self._lamp_owed and status.device == self.signal_device:
                handled = self._journal_and_run(topic, payload, classified, received)
                handled.outgoing.append(self._owed_lamp(received))
                return handled
        return self._journal_and_run(topic, payload, classified, received)

    def _journal_and_run(
        self, topic: str, payload: bytes, classified: Classified, received: datetime
    ) -> Handled:
        earlier = self.recent.find(topic, payload)
        if earlier is not None:
            log.info("%s: delivered again (record %d), not applied twice", classified.summary, earlier)
            return Handled(earlier, [], repeat=True)
        cause = self.journal.received(topic, payload, received) if self.journal is not None else 0
        self.recent.add(topic, payload, cause)
        return Handled(cause, self._input(cause, classified, received))

    def _rejected(self, item: Malformed, payload: bytes, received: datetime) -> Handled:
        """A malformed message: counted, sampled and reported (``controller.service.malformed``), never
        journaled whole; its acknowledgement waits only for the messages before it."""
        return Handled(0, self._malformed(item, payload, received))

    def _input(self, cause: int, classified: Classified, received: datetime) -> list[Outgoing]:
        """An input journaled as record ``cause`` through the engine; a checkpoint when due."""
        self.last_record = max(self.last_record, cause)
        outgoing = self._handle(cause, classified, received, replay=False)
        for out in outgoing:
            if out.what != "state":
                self._unpublished[id(out)] = out
        self._after(cause, received)
        return outgoing

    def _after(self, cause: int, now: datetime) -> None:
        """Take a checkpoint at a hand's end (a new hand, or back to idle) and every N records."""
        if self.journal is None or cause == 0:
            return
        self._since_checkpoint += 1
        # (the engine's hand and phase, not its state: reading that freezes it, see Engine)
        now_hand, now_phase = self.engine.hand, self.engine.phase
        hand, phase = self._before
        self._before = (now_hand, now_phase)
        # A hand ends back at idle, or (a misdeal) when the next one starts without passing there.
        ended = phase not in _BETWEEN_HANDS and (now_phase in _BETWEEN_HANDS or now_hand != hand)
        due = self._since_checkpoint >= self.config.journal.checkpoint_every
        if not (ended or due):
            return  # (most messages: no time arithmetic for them)
        # At most one hand-end checkpoint a second: live, hands end far apart; while a backlog
        # drains they end every few milliseconds, and a checkpoint costs many engine steps.
        since = None if self._checkpointed is None else now - self._checkpointed
        recent = since is not None and since < max(HAND_CHECKPOINT_GAP, self._checkpoint_gap)
        costly = since is not None and since < self._checkpoint_gap
        if (ended and not recent) or (due and not costly):
            self.checkpoint(cause, now)

    def tick(self, now: datetime) -> list[Outgoing]:
        """Reports of malformed input due by now, and the end of the start-up grace (the service
        calls this about twice a second)."""
        out: list[Outgoing] = []
        for report in self.tally.due(now):
            out += self._report(report, now)
        if self.health.alert is not None and self.journal is not None:
            # While the journal holds records in memory: how many, now and then.
            counted = self.health.count(self.journal.progress().held, now=now)
            if counted is not None:
                out += self._journal_alert(counted, now)
        held = self.grace.ended(now)
        if held is not None:
            still = ", ".join(bounded(device, 64) for device in held)
            log.info("start-up grace over: %s", f"still offline: {still}" if still else "none offline")
            # What the devices that did not come up said last goes to the engine now.
            for topic, payload in held.values():
                out += self.receive(topic, payload, now).outgoing
            if self._lamp_owed:
                out.append(self._owed_lamp(now))
        return out

    # -- time on a quiet table (docs/service.md) -------------------------------------------------

    def anchor_time(self, now: datetime) -> None:
        """Count the engine's time from its clock as of ``now`` (at a start, at each new broker
        connection: time spent without one is not counted, the broker may hold its messages)."""
        self._anchor = (self.engine.clock, now) if self.engine.clock > EPOCH else None

    def time_due(self) -> datetime | None:
        """When, by this controller's clock, the engine's next deadline (``next_due``) falls if
        no message brings its time first (None: nothing is due, or the engine has seen no time)."""
        due = self.engine.next_due()
        if due is None or self._anchor is None:
            return None
        clock, at = self._anchor
        return at + max(due - clock, timedelta(0))

    def time_passes(self, now: datetime) -> Handled:
        """Event time as of ``now`` by this clock, when a deadline has come with no message:
        journaled as a ``time`` record and given to the engine (``TimeReached``), whose outputs
        are returned like a message's. Nothing (record 0) when nothing is due by then."""
        due = self.engine.next_due()
        if due is None or self._anchor is None:
            return Handled(0, [])
        clock, at = self._anchor
        event_now = clock + (now - at)
        if event_now < due or event_now <= self.engine.clock:
            return Handled(0, [])
        cause = self.journal.time(event_now, now) if self.journal is not None else 0
        time = TimeReached(event_now)
        return Handled(cause, self._input(cause, Classified(time), now))

    def start_grace(self, now: datetime) -> None:
        """The service starts: its devices get ``[table] startup_grace_s`` to come up."""
        self.grace.start(now, self.config.table.startup_grace_s)

    def _owed_lamp(self, now: datetime) -> Outgoing:
        assert self.signal_device is not None
        self._lamp_owed = False
        return self._command(0, self.signal_device, self.signals.resend_lamp(now))

    def admit(self, classified: Classified) -> bool:
        """Whether the table follows this message's device (at most ``MAX_DEVICES`` besides
        the configured ones, so that its state cannot grow without bound)."""
        device = classified.device
        if device is None or device in self._devices:
            return True
        if len(self._devices) >= MAX_DEVICES + len(self.config.devices):
            return False
        self._devices.add(device)
        return True

    def _malformed(self, item: Malformed, payload: bytes, received: datetime) -> list[Outgoing]:
        """Count a malformed message; keep a sample; report the topic when it is due."""
        report, sample = self.tally.note(item, received)
        # (the reason is described only where it is shown: a report, a sample, a DEBUG line)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("malformed message on %s: %s", item.topic, item.reason)
        if sample and self.journal is not None:
            self.journal.sample(item.topic, payload, item.reason, received, keep=SAMPLE_BYTES)
        return self._report(report, received) if report is not None else []

    def _report(self, report: Report, now: datetime) -> list[Outgoing]:
        """Journal a report of malformed input (replayed like a message) and give it to the engine."""
        cause = 0
        if self.journal is not None:
            cause = self.journal.rejected(report.topic, report.device, report.count, report.reason, now)
        rejected = PayloadRejected(report.topic, report.device, report.reason, now, report.count)
        summary = f"{report.count} malformed message(s) on {report.topic}; the latest: {report.reason}"
        return self._input(cause, Classified(rejected, note=summary), now)

    def _output_data(self, key: int, out: Outgoing) -> Any:
        """``checkpoint.output_data(out)``, kept while ``out`` is owed."""
        kept = self._unpublished_data.get(key)
        if kept is not None and kept[0] is out:
            return kept[1]
        data = checkpoint.output_data(out)
        self._unpublished_data[key] = (out, data)
        return data

    def published(self, out: Outgoing, when: datetime) -> None:
        """Record that the broker accepted ``out``."""
        self._unpublished.pop(id(out), None)
        self._unpublished_data.pop(id(out), None)
        if self.journal is not None:
            self.journal.published(out.what, out.cause, out.topic, out.payload, retain=out.retain, when=when)

    def journal_changed(self, now: datetime) -> list[Outgoing]:
        """The alert (and state, lamp) a change of the journal's health calls for.

        Once the journal is written again after a fault, a checkpoint is taken at once: the state
        in memory is the truth (it saw messages whose records were lost), and a restart must not
        rebuild an older one.
        """
        progress = self.journal.progress() if self.journal is not None else None
        fault = progress.fault if progress is not None else None
        held = progress.held if progress is not None else 0
        alert = self.health.change(fault, hand=self.engine.hand, now=now, held=held)
        if alert is None:
            return []
        out = self._journal_alert(alert, now)
        if fault is None and self.journal is not None:
            self.recent.forget(self.journal.progress().lost)
            self.checkpoint(self.last_record, now)
        return out

    def _journal_alert(self, alert: Alert, now: datetime) -> list[Outgoing]:
        """The controller's own alert out, with the lamp and the state that lists it."""
        out = [Outgoing("alert", 0, self.topics.alerts, alert.to_json(), retain=False)]
        if self.signal_device is not None:
            out += [self._command(0, self.signal_device, c) for c in self.signals.commands((alert,), now)]
        else:
            self.signals.observe(alert)
        self._settle_state()
        state = self.state if self.state is not None else self.engine.public_state()
        out.append(Outgoing("state", 0, self.topics.state, self._public(state).to_json(), True))
        for item in out:
            if item.what != "state":
                self._unpublished[id(item)] = item
        return out

    def on_connect(self, now: datetime) -> list[Outgoing]:
        """What a fresh broker connection needs: the retained state, and the lamp."""
        out: list[Outgoing] = []
        self._settle_state()
        state = self.state if self.state is not None else self.engine.public_state()
        out.append(Outgoing("state", 0, self.topics.state, self._public(state).to_json(), retain=True))
        if self.signal_device is not None:
            if self.grace.waiting_for(self.signal_device, now):
                # the board's driver could not act on it yet: sent once the board is heard from
                self._lamp_owed = True
            else:
                out.append(self._owed_lamp(now))
        return out

    def _public(self, state: PublicState) -> PublicState:
        """The public state with the controller's own active alert among the engine's."""
        alert = self.health.alert
        if alert is None:
            return state
        return state.model_copy(update={"alerts": [*state.alerts, alert]})

    # ----------------------------------------------------------------------------------------

    def _handle(
        self, cause: int, classified: Classified, received: datetime, *, replay: bool
    ) -> list[Outgoing]:
        if not replay:
            if isinstance(classified.received, PayloadRejected):
                log.warning("%s", classified.summary)
            elif log.isEnabledFor(logging.DEBUG):
                # One line per message cost more than the engine step (and buried the alerts):
                # INFO keeps what happened to the table (alerts, hands, resends, reports).
                log.debug("%s", classified)
                message = classified.received
                if isinstance(message, DeviceEventReceived) and isinstance(message.event, TagEvent):
                    # Bench diagnostics only: a UID identifies a card, INFO must never show it.
                    log.debug("%s: tag uid %s", message.device, message.event.uid)
        engine = self.engine
        # A replay builds no public state per change (only the last is published), nor does a
        # batch of messages the service takes with ``defer_state``: the state it publishes at
        # the batch's end is built once (:meth:`take_state`), not at each change (the public
        # state cost 3-7 of the 18-24 us of an engine step, measured on 20,811 events).
        build_state = not replay and not self._defer_state
        if build_state and engine.state_owed:
            self._settle_state()  # (a message outside a batch: the state it builds is newer)
        try:
            outputs = engine.handle(classified.received, build_state=build_state)
        except Exception:
            # An engine bug must not stop the table: the message is in the journal, the engine
            # state is unchanged (the core is pure), the error is logged with where it happened.
            log.exception("engine failed on journal record %d (%s)", cause, classified.summary)
            return []
        if not replay:  # (a replay's anchor is set again when it ends: TableController.recover)
            anchor = self._anchor
            if anchor is None or engine.clock > anchor[0]:
                self._anchor = (engine.clock, received)  # (the event time this message brought)
        return self._outgoing(cause, outputs, received, replay=replay)

    def _outgoing(self, cause: int, outputs: Outputs, received: datetime, *, replay: bool) -> list[Outgoing]:
        out: list[Outgoing] = []
        for alert in outputs.alerts:
            if self._defer_state:
                self._logs_owed.append(alert)
            elif not replay:
                _log_alert(alert)
            out.append(Outgoing("alert", cause, self.topics.alerts, alert.to_json(), retain=False))
        for device, command in outputs.commands:
            if isinstance(command, ResendCommand) and not replay:
                log.info(
                    "asking %s to send again events %d to %d of its session %d (a gap)",
                    device,
                    command.from_seq,
                    command.to_seq,
                    command.session,
                )
            out.append(self._command(cause, device, command))
        if self.signal_device is not None:
            for command in self.signals.commands(outputs.alerts, received):
                out.append(self._command(cause, self.signal_device, command))
        else:
            for alert in outputs.alerts:
                self.signals.observe(alert)
        for result in outputs.hands:
            if self._defer_state:
                self._logs_owed.append(result)
            elif not replay:
                _log_hand(result)
            out.append(Outgoing("hand", cause, self.topics.hands, result.to_json(), retain=False))
        if self.engine.deferred_change and not replay:
            self._state_owed = cause  # (changed by this message, built by take_state)
        if outputs.state is not None:
            self.state = outputs.state
            if self._defer_state:
                self._state_owed = cause
            elif not replay:  # a replay's states are neither owed nor compared: only the last counts
                public = self._public(outputs.state)
                out.append(Outgoing("state", cause, self.topics.state, public.to_json(), True))
        return out

    def _command(self, cause: int, device: str, command: DeviceCommand) -> Outgoing:
        return Outgoing("command", cause, self.topics.device_cmd(device), command.to_json(), retain=False)


def _log_alert(alert: Alert) -> None:
    # The alert payload never names an unexposed hole card (engine's duty), so INFO may show it.
    seat = f" seat {alert.seat}" if alert.seat is not None else ""
    log.info(
        "alert %s %s %s%s (%s, hand %d): %s",
        alert.id,
        alert.status,
        alert.code,
        seat,
        alert.severity,
        alert.hand,
        alert.message,
    )


def _log_hand(result: HandResult) -> None:
    # Chips and seats only: even the cards tabled face up stay out of the log (the journal and
    # the hands topic have them).
    awarded = ", ".join(f"seat {a.seat} {a.amount}" for a in result.awarded) or "nothing"
    log.info(
        "hand %d ended (%s): %d action(s), %d pot(s), rake %d, awarded %s",
        result.hand,
        result.result,
        len(result.actions),
        len(result.pots),
        result.rake,
        awarded,
    )
