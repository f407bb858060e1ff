"""The controller of one table, without the network: journal, engine, outputs to publish.

The service (``controller.serving``) feeds it every received message and publishes what it returns;
this class decides what that is. It also recovers from the journal at start-up: replaying the
received records through the deterministic engine rebuilds the hand state and alert ids, alerts
already published are not published again, and outputs a crash kept from the broker are.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, TypeVar

from config.models import SensorBoardDevice, TableConfig
from config.registry import DeckRegistry
from contract.models import Alert, DeviceCommand, PublicState, ResendCommand, TagEvent
from contract.text import bounded
from contract.topics import Topics
from controller.alerts_out import DealerSignals
from controller.inbox import Classified, Malformed, classify
from controller.journal import (
    Journal,
    JournalScan,
    PublishedRecord,
    PublishedWhat,
    ReceivedRecord,
    RejectedRecord,
    scan_journal,
)
from controller.malformed import SAMPLE_BYTES, MalformedTally, Report
from engine.api import DeviceEventReceived, EngineSettings, Outputs, PayloadRejected
from engine.core import Engine

log = logging.getLogger(__name__)
_T = TypeVar("_T")

#: Devices a table follows: the configured ones, and this many more that publish under ids of
#: their own; messages of further device ids are malformed input ("too many devices").
MAX_DEVICES: Final = 32


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One message to publish, and the received record (``cause``) whose processing produced it."""

    what: PublishedWhat
    cause: int
    topic: str
    payload: bytes
    retain: bool


@dataclass
class Recovery:
    """What start-up found in the journal."""

    session: int = 1
    received: int = 0
    replayed: int = 0
    #: Unreadable journal lines, ``file:line: why``.
    problems: list[str] = field(default_factory=list)
    #: Alerts whose replay differs from what the journal says was published, ``file:line: ...``.
    divergences: list[str] = field(default_factory=list)
    #: Outputs the replay produced that the journal does not show as published.
    pending: list[Outgoing] = field(default_factory=list)


class TableController:
    """Journal, engine and dealer signals of one table."""

    def __init__(self, config: TableConfig, registry: DeckRegistry, *, journal: bool = True) -> None:
        self.config = config
        self.topics = Topics(config.mqtt.root, config.table.id)
        self.engine = Engine(EngineSettings.from_config(config, registry))
        self.signals = DealerSignals(buzzer_ms=config.display.buzzer_ms)
        self.journal = (
            Journal(config.journal.path, fsync=config.journal.fsync) if journal else None
        )
        boards = [d for d in config.devices if isinstance(d, SensorBoardDevice) and d.enabled]
        self.signal_device = boards[0].id if boards and config.display.lamp else None
        self.state: PublicState | None = None
        #: Device id -> kind, when ``[[devices]]`` names them (None: any device, any event).
        self.kinds = config.device_kinds() or None
        self.tally = MalformedTally()
        self._devices: set[str] = set(config.device_kinds())
        self.session = 1
        self._torn_tail = False
        self._last_received = 0
        #: Why the journal cannot be written, while it cannot.
        self.journal_error: str | None = None

    # ----------------------------------------------------------------------------------------
    # Start-up
    # ----------------------------------------------------------------------------------------

    def recover(self, now: datetime) -> Recovery:
        """Replay the journal, open it for appending and record this start (a new session)."""
        recovery = self.replay()
        if self.journal is not None:
            self.journal.open(torn_tail=self._torn_tail, next_received=self._last_received + 1)
            self.journal.start(self.session, now, self.config.table.id)
        return recovery

    def replay(self) -> Recovery:
        """Replay the journal through the engine (read only): rebuild state, find what is unsent."""
        recovery = Recovery()
        if self.journal is None:
            return recovery
        path = self.journal.path
        # Pass 1: what reached the broker (alerts kept whole to compare, commands counted).
        sent_scan = JournalScan()
        alerts_published: dict[int, list[bytes]] = {}
        commands_published: Counter[int] = Counter()
        for sent in scan_journal(path, sent_scan, only=("published",)):
            if not isinstance(sent, PublishedRecord):
                continue
            if sent.what == "alert":
                alerts_published.setdefault(sent.cause, []).append(sent.payload)
            elif sent.what == "command":
                commands_published[sent.cause] += 1

        # Pass 2: the received messages through the engine, streamed (states are not kept).
        scan = JournalScan()
        for record in scan_journal(path, scan, skip=("published", "sample")):
            classified: Classified | Malformed | None
            if isinstance(record, RejectedRecord):
                classified = Classified(
                    PayloadRejected(
                        record.topic, record.device, record.error, record.received, record.count
                    ),
                    f"rejected {record.count} on {record.topic}",
                )
            elif isinstance(record, ReceivedRecord):
                classified = classify(
                    self.topics, record.topic, record.payload, record.received, self.kinds
                )
                if isinstance(classified, Classified) and not self._admit(classified):
                    classified = None
            else:
                continue
            recovery.received += 1
            if not isinstance(classified, Classified):
                continue
            recovery.replayed += 1
            outgoing = self._handle(record.n, classified, record.received, replay=True)
            sent_alerts = alerts_published.get(record.n, [])
            alerts = [o for o in outgoing if o.what == "alert"]
            for index, (replayed, payload) in enumerate(zip(alerts, sent_alerts, strict=False)):
                if replayed.payload != payload:
                    recovery.divergences.append(
                        f"{path}: received record {record.n} (line {record.line}): "
                        f"alert {index + 1} replays differently from what was published"
                    )
            commands = [o for o in outgoing if o.what == "command"]
            recovery.pending += alerts[len(sent_alerts) :]
            recovery.pending += commands[commands_published[record.n] :]

        self._torn_tail = scan.torn_tail
        self._last_received = scan.last_received
        recovery.problems = scan.problems + sent_scan.problems
        for problem in recovery.problems:
            log.warning("journal: %s; skipped", problem)
        for divergence in recovery.divergences:
            log.warning("journal replay: %s", divergence)

        self.session = scan.last_session + 1
        recovery.session = self.session
        return recovery

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

    def sync(self) -> None:
        """Make the journal durable up to here: call before publishing what it caused."""
        if self.journal is not None:
            # A successful fsync proves nothing about the next write (a full disk syncs fine).
            self._journaling(self.journal.sync, proves_writable=False)

    def _journaling(self, write: Callable[[], _T], *, proves_writable: bool = True) -> _T | None:
        """Run a journal write; on failure (disk full, I/O error) note it and go on.

        The table keeps working without its record rather than stop mid-hand; ``journal_error``
        says why the record has a hole (the service reports it as its status) until a write
        succeeds again.
        """
        try:
            result = write()
        except OSError as error:
            why = f"journal {self.config.journal.path}: {error.strerror or error}"
            if why != self.journal_error:
                log.error("%s; the table goes on, its record has a hole", why)
            self.journal_error = why
            return None
        if self.journal_error is not None and proves_writable:
            log.warning("journal %s: writable again", self.config.journal.path)
            self.journal_error = None
        return result

    # ----------------------------------------------------------------------------------------
    # Running
    # ----------------------------------------------------------------------------------------

    def receive(self, topic: str, payload: bytes, received: datetime) -> list[Outgoing]:
        """Journal a received message, run it through the engine and return what to publish.

        A message on a topic that is not this table's input or device event/status is not
        journaled and produces nothing (logged at DEBUG).
        """
        classified = classify(self.topics, topic, payload, received, self.kinds)
        if classified is None:
            log.debug("ignored a message on %s (not an engine topic of this table)", bounded(topic, 200))
            return []
        if isinstance(classified, Classified) and not self._admit(classified):
            classified = Malformed(topic, classified.device, f"more than {MAX_DEVICES} devices")
        if isinstance(classified, Malformed):
            return self._malformed(classified, payload, received)
        cause = 0
        if self.journal is not None:
            journal = self.journal
            cause = self._journaling(lambda: journal.received(topic, payload, received)) or 0
        return self._handle(cause, classified, received, replay=False)

    def tick(self, now: datetime) -> list[Outgoing]:
        """Reports of malformed input due by now (the service calls this about twice a second)."""
        out: list[Outgoing] = []
        for report in self.tally.due(now):
            out += self._report(report, now)
        return out

    def _admit(self, classified: Classified) -> bool:
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
        log.debug("malformed message on %s: %s", item.topic, item.reason)
        if sample and self.journal is not None:
            journal = self.journal
            self._journaling(
                lambda: journal.sample(item.topic, payload, item.reason, received, keep=SAMPLE_BYTES)
            )
        return self._report(report, received) if report is not None else []

    def _report(self, report: Report, now: datetime) -> list[Outgoing]:
        """Journal a report of malformed input and give it to the engine."""
        cause = 0
        if self.journal is not None:
            journal = self.journal
            cause = (
                self._journaling(
                    lambda: journal.rejected(
                        report.topic, report.device, report.count, report.reason, now
                    )
                )
                or 0
            )
        rejected = PayloadRejected(report.topic, report.device, report.reason, now, report.count)
        summary = f"{report.count} malformed message(s) on {report.topic}; the latest: {report.reason}"
        return self._handle(cause, Classified(rejected, summary), now, replay=False)

    def published(self, out: Outgoing, when: datetime) -> None:
        """Record that the broker accepted ``out``."""
        if self.journal is not None:
            journal = self.journal
            self._journaling(
                lambda: journal.published(
                    out.what, out.cause, out.topic, out.payload, retain=out.retain, when=when
                )
            )

    def on_connect(self, now: datetime) -> list[Outgoing]:
        """What a fresh broker connection needs: the retained state, and the lamp."""
        out: list[Outgoing] = []
        state = self.state if self.state is not None else self.engine.public_state()
        out.append(Outgoing("state", 0, self.topics.state, state.to_json(), retain=True))
        if self.signal_device is not None:
            lamp = self.signals.resend_lamp(now)
            out.append(self._command(0, self.signal_device, lamp))
        return out

    # ----------------------------------------------------------------------------------------

    def _handle(
        self, cause: int, classified: Classified, received: datetime, *, replay: bool
    ) -> list[Outgoing]:
        if not replay:
            if isinstance(classified.received, PayloadRejected):
                log.warning("%s", classified.summary)
            else:
                log.info("%s", classified.summary)
            message = classified.received
            if isinstance(message, DeviceEventReceived) and isinstance(message.event, TagEvent):
                # Bench diagnostics only: a UID identifies a card, INFO must never show it.
                log.debug("%s: tag uid %s", message.device, message.event.uid)
        try:
            outputs = self.engine.handle(classified.received)
        except Exception:
            # An engine bug must not stop the table: the message is in the journal, the engine
            # state is unchanged (the core is pure), the error is logged with where it happened.
            log.exception("engine failed on journal record %d (%s)", cause, classified.summary)
            return []
        return self._outgoing(cause, outputs, received, replay=replay)

    def _outgoing(
        self, cause: int, outputs: Outputs, received: datetime, *, replay: bool
    ) -> list[Outgoing]:
        out: list[Outgoing] = []
        for alert in outputs.alerts:
            if not replay:
                _log_alert(alert)
            out.append(Outgoing("alert", cause, self.topics.alerts, alert.to_json(), retain=False))
        for device, command in outputs.commands:
            if isinstance(command, ResendCommand) and not replay:
                log.info(
                    "asking %s to send again events %d to %d of its session %d (a gap)",
                    device, command.from_seq, command.to_seq, command.session,
                )
            out.append(self._command(cause, device, command))
        if self.signal_device is not None:
            for command in self.signals.commands(outputs.alerts, received):
                out.append(self._command(cause, self.signal_device, command))
        else:
            for alert in outputs.alerts:
                self.signals.observe(alert)
        if outputs.state is not None:
            self.state = outputs.state
            out.append(Outgoing("state", cause, self.topics.state, outputs.state.to_json(), True))
        return out

    def _command(self, cause: int, device: str, command: DeviceCommand) -> Outgoing:
        return Outgoing(
            "command", cause, self.topics.device_cmd(device), command.to_json(), retain=False
        )


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
