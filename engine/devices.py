"""The devices: their health (status, faults, bad payloads, the sequence findings reported),
who may say what, lost dealer inputs, and whether the hand is tracked. The sequence policy and
the gap fill are :mod:`engine.sequences`; the sensors' and the shuffler's events are rules of the
hand (:mod:`engine.hands`, :mod:`engine.dealing`).

The concern is :class:`Devices`, over its part :class:`DeviceState`; the dispatcher
(:mod:`engine.dispatcher`) calls it explicitly, and it raises its alerts through the table it is
attached to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from contract.models import (
    DealerInput,
    FaultEvent,
    Status,
)
from contract.text import bounded, identifier
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    PayloadRejected,
)
from engine.kinds import EVENT_KIND, KIND_NAMES, Learnt, learns
from engine.seqtrack import REPORT_EVERY, SEQ_AHEAD
from engine.sequences import Lost

if TYPE_CHECKING:
    from engine.dispatcher import Machine
    from engine.table import Table


@dataclass(slots=True)
class DeviceState:
    """What the engine knows of the devices. Its dicts are replaced, never updated, when they
    change, and its sets are frozen: a copy shares them."""

    #: The last status state of each device (``online``, ``offline``, ``fault``).
    states: dict[str, str] = field(default_factory=dict)
    #: Who may say what (engine.kinds): the kind each undeclared device showed in its session.
    kinds: dict[str, Learnt] = field(default_factory=dict)
    #: The messages refused so far, per alert key.
    refused: dict[str, int] = field(default_factory=dict)
    #: The highest dealer input seq taken per source ("": inputs that name none).
    input_seqs: dict[str, int] = field(default_factory=dict)
    #: Devices that sent tag events, and devices that sent only other events.
    readers: frozenset[str] = frozenset()
    others: frozenset[str] = frozenset()
    #: Events were lost this hand: it is not tracked until the next hand begins.
    untracked: bool = False
    #: The hand is tracked: no reader offline, no events of it lost.
    tracking: bool = True

    def copy(self) -> DeviceState:
        return DeviceState(
            self.states,
            self.kinds,
            self.refused,
            self.input_seqs,
            self.readers,
            self.others,
            self.untracked,
            self.tracking,
        )


#: What :attr:`Devices.tag_sessions` gives for a device none of whose tag reads was admitted
#: yet (sessions count from 0).
NOT_ADMITTED: Final = -1


class Devices:
    """Device health, who may say what, lost inputs, tracking (see the module docstring)."""

    __slots__ = ("machine", "state", "table", "tag_sessions")

    def __init__(self, state: DeviceState, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table  # the time, the settings, the alerts
        self.machine = machine  # the sequences' findings, the hand marked untracked
        #: Device -> the session (an event's ``session``, None included) in which its tag reads
        #: were admitted: the next ones of that session are too, until the device's learnt kind
        #: changes (:meth:`admitted` forgets it then; a declared kind never changes). Derived
        #: from the state, never part of it: a new concern (each working copy) starts empty.
        #: The dispatcher looks here first and asks :meth:`admitted` only on a miss (a tag read
        #: is nearly every message).
        self.tag_sessions: dict[str, int | None] = {}

    # -- tracking ------------------------------------------------------------------------------

    def update_tracking(self) -> None:
        """The hand is tracked unless a reader (a device that sent tags) is offline, or events
        of this hand were lost."""
        state = self.state
        state.tracking = not state.untracked and not any(
            status == "offline" and self.may_read(device) for device, status in state.states.items()
        )

    def may_read(self, device: str) -> bool:
        """A reader, or a device that never sent an event (it may be one)."""
        return device in self.state.readers or device not in self.state.others

    def tag_from(self, device: str) -> None:
        """``device`` sent a tag read: it is a reader."""
        if device not in self.state.readers:
            self.state.readers |= {device}
            self.update_tracking()

    def other_from(self, device: str) -> None:
        """``device`` sent an event other than a tag read or a fault."""
        if device not in self.state.others:
            self.state.others |= {device}
            self.update_tracking()

    def resume(self) -> None:
        """The hand whose events were lost is over: the next one is tracked again."""
        self.state.untracked = False
        self.update_tracking()

    # -- health and trust ------------------------------------------------------------------------

    def sequence_findings(self) -> None:
        """Report what the sequence policy found (engine.sequences), in order."""
        findings = self.machine.sequences.findings
        for finding in findings:
            if isinstance(finding, Lost):
                self._lost(finding.device, finding.what)
            else:
                self._far_report(finding.device, finding.high, finding.far)
        findings.clear()

    def _far_report(self, device: str, high: int, far: int) -> None:
        """Events with a seq far from the device's were ignored (updated at most once a second)."""
        table = self.table
        key = f"{device}#far"
        message = (
            f"Device {bounded(device, 64)} sent {far} event(s) with a sequence number far from "
            f"its last one ({high}): they were ignored."
        )
        existing = table.book.find("bad_payload", key)
        if existing is None:
            table.raise_alert("bad_payload", message, scope="device", key=key, device=device)
        elif table.ts - table.book.active[existing].ts >= REPORT_EVERY:
            table.book.update(existing, table.ts, message=message)

    def _lost(self, device: str, what: str) -> None:
        """Events of ``device`` are lost for good: say so; this hand is not tracked."""
        table = self.table
        machine = self.machine
        message = (
            f"Device {bounded(device, 64)} {what}: they were lost, so this hand is not tracked; "
            "tracking resumes with the next shuffle or new hand."
        )
        key = f"{device}#seq"
        existing = table.book.find("device_fault", key)
        if existing is None:
            table.raise_alert("device_fault", message, scope="hand", key=key, device=device)
        else:
            table.book.update(existing, table.ts, message=message)
        self.state.untracked = True
        machine.hands.evidence_lost()
        self.update_tracking()

    def status(self, device: str, status: Status) -> None:
        table = self.table
        machine = self.machine
        machine.sequences.status(device, status)
        self.state.states = {**self.state.states, device: status.state}
        self.update_tracking()
        # only a short identifier ("lost", "stopped"): a status' free text is not for the dealer
        known = identifier(status.detail or "")
        detail = f" ({known})" if known else ""
        if status.state == "online":
            table.book.resolve_scope("device", table.ts, device)
            table.book.resolve_scope("device", table.ts, f"{device}#fault")
            table.book.resolve_scope("device", table.ts, f"{device}#far")
            # events lost stay lost: that alert lasts until the hand is over
            return
        code = "device_offline" if status.state == "offline" else "device_fault"
        if table.book.find(code, device) is not None:
            return
        if status.state == "offline":
            tail = ": the hand is not being tracked until it is back." if self.may_read(device) else "."
            message = f"Device {bounded(device, 64)} is offline{detail}{tail}"
        else:
            message = f"Device {bounded(device, 64)} reports a fault{detail}."
        table.raise_alert(code, message, scope="device", key=device, device=device)

    def fault(self, device: str, event: FaultEvent) -> None:
        table = self.table
        key = f"{device}#fault"
        # The code when it is a plain identifier (jam, door_open); the device's free text stays
        # in the journal: payload text never reaches the dealer's screen.
        code = identifier(event.code) or "with a code that is not a plain name"
        message = f"Device {bounded(device, 64)} reports fault {code}."
        existing = table.book.find("device_fault", key)
        if existing is None:
            table.raise_alert("device_fault", message, scope="device", key=key, device=device)
        else:
            table.book.update(existing, table.ts, message=message)

    def rejected(self, rejected: PayloadRejected) -> None:
        """One alert per topic, counting its rejected payloads (the shell reports at most once
        a second); the latest reason, bounded and escaped."""
        table = self.table
        count = max(1, rejected.count)
        what = "A message" if count == 1 else f"{count} messages"
        message = (
            f"{what} on {bounded(rejected.topic, 120)} did not match the contract and "
            f"{'was' if count == 1 else 'were'} not taken; the latest: "
            f"{bounded(rejected.error, 200)}"
        )
        key = rejected.topic
        existing = table.book.find("bad_payload", key)
        device = bounded(rejected.device, 60) if rejected.device is not None else None
        if existing is None:
            table.raise_alert("bad_payload", message, scope="hand", key=key, device=device)
        else:
            table.book.update(existing, table.ts, message=message)

    def admitted(self, received: DeviceEventReceived | DeviceStatusReceived) -> bool:
        """Who may say what (docs/engine.md): whether a device's message is taken. A device
        sends only the events of its kind (declared, or shown by its first event accepted in
        its session; ``fault`` from any); with ``declared_only`` an undeclared device is not
        listened to. What is refused is reported as ``bad_payload`` naming the device, never
        taken as evidence (nor sequenced: it is not one of the device's events).

        (On the path of every event: the common cases first, with the fewest lookups.)"""
        device = received.device
        settings = self.table.settings
        kind = settings.device_kinds.get(device)
        if kind is None and settings.declared_only:
            self._refuse(
                received,
                "undeclared",
                "Messages from devices not declared in the configuration were ignored "
                "({count} so far; the latest from {device}).",
            )
            return False
        if type(received) is DeviceStatusReceived:
            return True
        event = received.event  # type: ignore[union-attr]
        wanted = EVENT_KIND[event.type]
        if kind is None:
            learnt = self.state.kinds.get(device)
            session = event.session
            if learnt is not None and wanted == learnt[1] and (session is None or session == learnt[0]):
                if event.type == "tag":
                    self.tag_sessions[device] = event.session
                return True  # an undeclared device's event of its kind, in its session
            if wanted is None:
                return True  # a fault: from any kind, says nothing of the device's own
            if session is None:
                session = self.machine.device_seqs.sessions.get(device)
            if learns(learnt, session):
                self.state.kinds = {**self.state.kinds, device: Learnt(session, wanted)}
                self.tag_sessions.pop(device, None)  # (its tags are admitted as its kind says now)
                if event.type == "tag":
                    self.tag_sessions[device] = event.session
                return True
            kind = learnt.kind  # type: ignore[union-attr]  # (learns() is true without one)
        if wanted == kind or wanted is None:
            if event.type == "tag":
                self.tag_sessions[device] = event.session
            return True
        self._refuse(
            received,
            f"{device}#kind",
            f"Device {{device}} sent events a {KIND_NAMES.get(kind, kind)} does not send "
            f"({event.type}): {{count}} were ignored, none taken as evidence.",
        )
        return False

    def _refuse(self, received: DeviceEventReceived | DeviceStatusReceived, key: str, text: str) -> None:
        """One ``bad_payload`` per key, counting the messages refused (``text`` names them:
        ``{count}``, ``{device}``; updated at most once a second); timed like a rejected
        payload, by the shell's clock."""
        table = self.table
        table.ts = received.received
        table.clock = max(table.clock, table.ts)
        count = self.state.refused.get(key, 0) + 1
        self.state.refused = {**self.state.refused, key: count}
        device = bounded(received.device, 64)
        message = text.format(count=count, device=device)
        existing = table.book.find("bad_payload", key)
        if existing is None:
            table.raise_alert("bad_payload", message, scope="hand", key=key, device=device)
        elif table.ts - table.book.active[existing].ts >= REPORT_EVERY:
            table.book.update(existing, table.ts, message=message, device=device)

    def input_seen(self, item: DealerInput) -> None:
        """A dealer input's ``seq`` (per source): inputs missing in between were lost on the
        way, and no one can send them again: told at once, the hand's result marked."""
        table = self.table
        machine = self.machine
        seq = item.seq
        if seq is None:
            return
        source = item.source or ""
        high = self.state.input_seqs.get(source)
        if high is not None and seq <= high and seq != 1:
            return  # a repeat, or a late one: taken as before
        self.state.input_seqs = {**self.state.input_seqs, source: seq}
        if high is None or seq <= high or seq == high + 1:
            return  # the first one seen, a sender restarted at 1, or the next one
        sender = f" from {bounded(source, 64)}" if source else ""
        if seq - high - 1 > SEQ_AHEAD:
            what = f"Dealer inputs{sender} jumped from {high} to {seq}"
        elif seq - high == 2:
            what = f"Dealer input {high + 1}{sender} was lost on the way"
        else:
            what = f"Dealer inputs {high + 1} to {seq - 1}{sender} were lost on the way"
        message = f"{what}: keys or actions may be missing from this hand."
        key = f"input#{source}"
        existing = table.book.find("device_fault", key)
        remedy = ("Check the last keys and actions entered; enter again those that mattered.",)
        if existing is None:
            table.raise_alert("device_fault", message, scope="hand", key=key, remedy=remedy)
        else:
            table.book.update(existing, table.ts, message=message)
        machine.hands.evidence_lost()
