"""Device sequence numbers and the gap fill: which events to take, which to ask for again, what
waits meanwhile (docs/engine.md, "Sequence policy" and "Gap fill"). One concern in one file: the
policy and the fill share the tracks and decide together whether a message is taken, dropped or
held; the state they keep is :class:`SequenceState` (constants and tracks: engine.seqtrack).

The policy:

- A device's events are followed per (device, session, seq). An event names its session (our
  drivers always do); one that does not belongs to the session of the device's last status.
  The engine follows the device's current session and remembers its previous one, so that a
  repeat of either is dropped and a late event of either fills its place.
- A seq up to ``SEQ_AHEAD`` above the highest taken is taken (the seqs between are asked for
  again: the gap fill); a repeat (remembered for the last ``SEQ_MEMORY`` seqs) is dropped; a seq
  further ahead is ignored and reported, and becomes the device's count only after ``SEQ_RUN``
  such seqs in a row (a forged seq never blinds the reader). A session up to ``SESSION_AHEAD``
  above the device's is its restart (1 expected); a session further away is treated like a far
  seq.

The gap fill: when events of a session are missing (an event or a status shows it), the engine
asks the device's driver to send them again (a ``resend`` command in ``Outputs.commands``) and
holds that message and every message received after it, from every device, noting the gaps each
one shows. A driver's status said again after it reconnected to the broker starts the same hold.
Once every gap is filled and every device followed has been heard from (or ``SETTLE`` has
passed), the held messages are released in their order (:func:`engine.seqtrack.release_order`)
for the machine to apply. What is still missing after ``gap_wait`` (``[table] gap_wait_s``,
``GAP_WAIT`` by default; or once ``HOLD_LIMIT`` messages wait) is lost. Events that name no
session are followed in the session of the device's status: a status naming a seq beyond them
shows a gap all the same (the end of a stream), which their late copies fill.

What this concern finds (events lost, far seqs ignored) it does not report itself: it lists
them in :attr:`Sequences.findings`, in order, and the machine reports them (device health)
before it applies anything else. Time here is event time: ``now`` is the latest ``ts`` of what
arrived (a resent event carries its old ``ts``); the engine reads no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import NamedTuple, TypeAlias

from contract.models import MAX_RESEND, DeviceCommand, ResendCommand, Status, StatusCommand
from engine.api import DeviceEventReceived, DeviceStatusReceived, Received
from engine.seqtrack import (
    EPOCH,
    GAP_WAIT,
    HOLD_LIMIT,
    RESEND_EVERY,
    SEQ_AHEAD,
    SEQ_MASK,
    SEQ_MEMORY,
    SEQ_RUN,
    SESSION_AHEAD,
    SETTLE,
    Gap,
    SeqTrack,
    given_up,
    received_ts,
    release_order,
)


class Lost(NamedTuple):
    """Events of ``device`` lost for good (``what`` says which)."""

    device: str
    what: str


class FarIgnored(NamedTuple):
    """An event with a seq far from the device's was ignored."""

    device: str
    high: int  # the device's highest seq
    far: int  # far seqs ignored so far


#: What the policy found (in order).
Finding: TypeAlias = Lost | FarIgnored


@dataclass(slots=True)
class SequenceState:
    """Where each device's events stand, and the gap fill's hold.

    Invariants: ``tracks`` (and the tracks in it: engine.seqtrack.SeqTrack) and ``taken`` are
    updated in place (a copy copies them); ``previous``,
    ``sessions`` and ``hold_next`` are replaced, never updated, when they change (a copy shares
    them); ``held`` is empty exactly when no gap is open and nothing waits for a device.
    """

    #: Each device's current session: its track (engine.seqtrack.SeqTrack).
    tracks: dict[str, SeqTrack] = field(default_factory=dict)
    #: The track of each device's previous session.
    previous: dict[str, SeqTrack] = field(default_factory=dict)
    #: Events taken per device, every session: exactly-once checks.
    taken: dict[str, int] = field(default_factory=dict)
    #: The session of each device's last status.
    sessions: dict[str, int] = field(default_factory=dict)
    #: Missing events asked for again, and the messages held meanwhile, in the order they arrived.
    gaps: tuple[Gap, ...] = ()
    held: tuple[Received, ...] = ()
    #: While holding: the highest seq each (device, session) has among what is taken, held or
    #: asked for (a held event beyond it shows a gap at once).
    hold_next: dict[tuple[str, int], int] = field(default_factory=dict)
    #: When the hold began (event time), and the devices heard from since.
    hold_since: datetime = EPOCH
    checked_in: frozenset[str] = frozenset()
    #: While holding after a device said its status again (the broker was away): the devices
    #: asked to say how far their events went that have not answered yet, those of them whose
    #: one status since the ask may be the one the broker kept (retained, older than what it
    #: dropped), and when they were asked or answered last (before hold_since: not in this hold).
    asking: frozenset[str] = frozenset()
    heard: frozenset[str] = frozenset()
    asked: datetime = EPOCH
    #: The devices whose last status said they answer a ``status`` command (``Status.answers``):
    #: only they are asked and waited for (a publisher that does not know the command would
    #: hold the table for ``gap_wait_s`` at every reconnection).
    answering: frozenset[str] = frozenset()
    #: The devices whose answers to that ask name it (``Status.asked``): a status of theirs that
    #: does not is never an answer (a driver that does not name the ask is judged by time: a
    #: status within ``SETTLE`` of the engine's ask is taken for the answer).
    echoing: frozenset[str] = frozenset()

    def copy(self) -> SequenceState:
        """A copy for the next step (the dicts updated in place are copied)."""
        return SequenceState(
            {device: track.copy() for device, track in self.tracks.items()},
            self.previous,
            self.taken.copy(),
            self.sessions,
            self.gaps,
            self.held,
            self.hold_next,
            self.hold_since,
            self.checked_in,
            self.asking,
            self.heard,
            self.asked,
            self.answering,
            self.echoing,
        )


class Sequences:
    """The sequence policy and the gap fill over one :class:`SequenceState` (module docstring).

    ``commands``: where resend commands go (the machine's outputs of the step); ``gap_wait``:
    how long (event time) missing events are waited for before they are lost (``[table]
    gap_wait_s``).
    """

    __slots__ = ("commands", "findings", "gap_wait", "state")

    def __init__(
        self,
        state: SequenceState,
        commands: list[tuple[str, DeviceCommand]],
        gap_wait: timedelta = GAP_WAIT,
    ) -> None:
        self.state = state
        self.commands = commands
        self.gap_wait = gap_wait
        self.findings: list[Finding] = []

    # ------------------------------------------------------------------ taking events

    def take(self, device: str, seq: int, session: int | None, now: datetime) -> bool | None:
        """Whether to apply a device's event (its ``seq`` and ``session``): True, False (a
        repeat, a far seq), or None: it shows a gap that is being filled, the event is held (the
        caller holds it). An event taken is counted (``taken``: exactly-once checks count them)."""
        state = self.state
        track = state.tracks.get(device)
        if track is not None and seq == track.high + 1 and session == track.session and not track.run:
            # the next one of the session followed (nearly every event): the track is this
            # state's own (SequenceState.copy), moved on in place
            track.high = seq
            track.seen = ((track.seen << 1) | 1) & SEQ_MASK
            track.run_last = 0
            track.run_session = None
            taken = state.taken
            taken[device] = taken.get(device, 0) + 1
            return True
        found = self._take(device, track, seq, session, now)
        if found:
            taken = state.taken
            taken[device] = taken.get(device, 0) + 1
        return found

    def _take(
        self, device: str, track: SeqTrack | None, seq: int, session: int | None, now: datetime
    ) -> bool | None:
        """:meth:`take` of an event that is not the next of its session (not counted here)."""
        tracks = self.state.tracks
        if session is None:
            return self._legacy(device, track, seq)
        current = track.session if track is not None and track.session is not None else None
        if current is None:
            current = self.state.sessions.get(device)
        if track is None or current is None:
            if current is not None and session > current:
                track = SeqTrack(0, 0, session=session)  # a new session: 1 expected
            else:
                tracks[device] = SeqTrack(seq, 1, session=session)  # the baseline
                return True
        elif session > current:
            if session - current > SESSION_AHEAD:
                return self._far(device, track, seq, session)
            self.state.previous = {**self.state.previous, device: track}
            track = SeqTrack(0, 0, session=session)  # restarted without a status first
        elif session < current:
            return self._previous_session(device, seq, session)
        elif track.session is None:
            track = replace(track, session=session)
        return self._window(device, track, seq, session, now)

    def status(self, device: str, status: Status) -> None:
        """A status (not held): a new session restarts the device's count."""
        state = self.state
        self.answers(device, status)
        previous = state.sessions.get(device)
        track = state.tracks.get(device)
        if track is not None and track.session is not None:
            if status.session > track.session:
                # a new session (its events name it): seq restarts at 1
                state.previous = {**state.previous, device: track}
                state.tracks[device] = SeqTrack(0, 0, session=status.session)
            # else: its events came first (or this is an older status): nothing to restart
        elif previous != status.session:
            # seq restarts at 1 with a new session; the first status of a device that already
            # sent events may or may not be a restart: its next event sets the count
            if previous is None:
                state.tracks.pop(device, None)
            else:
                state.tracks[device] = SeqTrack(0, 0)
        state.sessions = {**state.sessions, device: status.session}

    def _window(self, device: str, track: SeqTrack, seq: int, session: int, now: datetime) -> bool | None:
        high = track.high
        if seq > high:
            if seq - high > SEQ_AHEAD:
                return self._far(device, track, seq, session)
            if seq > high + 1:
                if seq - high - 1 <= MAX_RESEND:
                    self.state.tracks[device] = track  # the session is followed, the seq not yet
                    self._open_gap(device, session, high + 1, seq - 1, seq, now)
                    return None
                self.findings.append(Lost(device, f"skipped events {high + 1} to {seq - 1}"))
            self.state.tracks[device] = replace(
                track, high=seq, seen=((track.seen << (seq - high)) | 1) & SEQ_MASK, run=0
            )
            return True
        return self._behind(device, track, seq, session, current=True)

    def _behind(self, device: str, track: SeqTrack, seq: int, session: int | None, *, current: bool) -> bool:
        age = track.high - seq
        if age == 0:
            return False  # a repeat (QoS 1 redelivery)
        if age >= SEQ_MEMORY:
            if session is not None:
                # Within a session a device only counts up: an event this far behind is a late
                # repeat (a resend asked for twice), not a restart (that is a new session).
                return False
            if current:
                return self._far(device, track, seq, session)
            self._far_ignored(device)
            return False
        bit = 1 << age
        if track.seen & bit:
            return False  # a repeat
        updated = replace(track, seen=track.seen | bit)
        if current:
            self.state.tracks[device] = updated
        else:
            self.state.previous = {**self.state.previous, device: updated}
        return True  # a late event filling its place

    def _previous_session(self, device: str, seq: int, session: int) -> bool:
        """An event of an earlier session: taken once if it is the previous session's and new."""
        prev = self.state.previous.get(device)
        if prev is None or prev.session != session:
            self._far_ignored(device)
            return False
        if seq > prev.high:
            if seq - prev.high > SEQ_AHEAD:
                self._far_ignored(device)
                return False
            if seq > prev.high + 1:
                what = f"skipped events {prev.high + 1} to {seq - 1} of session {session}"
                self.findings.append(Lost(device, what))
            seen = ((prev.seen << (seq - prev.high)) | 1) & SEQ_MASK
            self.state.previous = {**self.state.previous, device: replace(prev, high=seq, seen=seen)}
            return True
        return self._behind(device, prev, seq, session, current=False)

    def _legacy(self, device: str, track: SeqTrack | None, seq: int) -> bool:
        """Events that name no session: followed in the session of the device's status."""
        tracks = self.state.tracks
        if track is None:
            tracks[device] = SeqTrack(seq, 1)
            return True
        high = track.high
        if seq > high:
            if seq - high > SEQ_AHEAD:
                return self._far(device, track, seq, None)
            if seq > high + 1:
                self.findings.append(Lost(device, f"skipped events {high + 1} to {seq - 1}"))
            tracks[device] = replace(
                track, high=seq, seen=((track.seen << (seq - high)) | 1) & SEQ_MASK, run=0
            )
            return True
        if seq == 1 and high > 1:
            tracks[device] = SeqTrack(1, 1)  # restarted without a new status session
            return True
        return self._behind(device, track, seq, None, current=True)

    def _far(self, device: str, track: SeqTrack, seq: int, session: int | None) -> bool:
        """A seq far from the device's: ignored, unless it continues a run of such seqs."""
        continues = track.run and seq == track.run_last + 1 and session == track.run_session
        run = track.run + 1 if continues else 1
        far = track.far + 1
        if run >= SEQ_RUN:
            # the device itself jumped (a restart without status, a long loss): follow it
            where = f"event {seq}" if session is None else f"event {seq} of session {session}"
            self.findings.append(Lost(device, f"jumped from event {track.high} to {where}"))
            if session is not None and session != track.session:
                self.state.previous = {**self.state.previous, device: track}
            self.state.tracks[device] = SeqTrack(seq, 1, far=far, session=session)
            return True
        self.state.tracks[device] = replace(track, run=run, run_last=seq, far=far, run_session=session)
        self.findings.append(FarIgnored(device, track.high, far))
        return False

    def _far_ignored(self, device: str) -> None:
        """An event of an old session, or far behind the previous one: ignored, reported."""
        track = self.state.tracks[device]
        self.state.tracks[device] = replace(track, far=track.far + 1)
        self.findings.append(FarIgnored(device, track.high, track.far + 1))

    # ------------------------------------------------------------------ the gap fill

    def answers(self, device: str, status: Status) -> None:
        """Note whether ``device`` answers a ``status`` command, as its status says, and whether
        its answers name the ask."""
        state = self.state
        says = status.answers is not None and "status" in status.answers
        if says != (device in state.answering):
            state.answering = state.answering | {device} if says else state.answering - {device}
        if status.asked is not None and device not in state.echoing:
            state.echoing = state.echoing | {device}

    def wait(self, received: Received) -> None:
        """Hold ``received``: it shows a gap (or announces events) being waited for."""
        self.state.held = (*self.state.held, received)

    def reconnected(
        self, device: str, status: Status, newer: bool, state_was: str | None, now: datetime
    ) -> bool:
        """Whether a status is a driver's announcement after it connected to the broker again
        (the same session and state said again, newer than anything seen; ``state_was``: the
        device's state before it): the broker was away, and what waited in every driver is
        coming, each driver's as a block. The caller holds the status, and what follows waits
        until every device was heard from (or ``SETTLE``), to be applied in its order."""
        self.answers(device, status)
        track = self.state.tracks.get(device)
        if not newer or status.seq is None or track is None or track.session != status.session:
            return False
        if state_was != status.state or status.asked is not None:
            return False  # (a status said on the engine's own ask is no news of the broker)
        if device not in self.state.echoing and now - self.state.asked < SETTLE:
            # a driver whose answers do not name the ask: one said soon after it is taken for
            # its answer (a reconnection within SETTLE of an ask goes unnoticed then: the loss
            # shows at the device's next event; ours name it, see docs/engine.md)
            return False
        self._start_hold(device, now)
        self._ask_status(device, now)
        return True

    def status_gap(self, device: str, status: Status, now: datetime) -> bool:
        """Whether a status shows events of its session not yet here (it names the seq of the
        driver's last event): if so they are waited for (asked for if they do not come) and
        the caller holds the status."""
        seq, session = status.seq, status.session
        track = self.state.tracks.get(device)
        if seq is None or track is None:
            return False
        if track.session is None:
            # events that name no session: followed in the session of the status before
            if self.state.sessions.get(device) != session:
                return False
            high = track.high
        elif session == track.session:
            high = track.high
        elif 0 < session - track.session <= SESSION_AHEAD:
            high = 0  # a new session: its events 1 to seq came before this status
        else:
            prev = self.state.previous.get(device)
            if prev is None or prev.session != session:
                return False
            high = prev.high  # the end of the previous session
        if not high < seq <= high + SEQ_AHEAD:
            return False
        # The status goes out before the events that waited for the broker: they are on their
        # way, unless the broker lost them. Asked for at once all the same (a quiet table
        # brings no event time to wait on); what comes twice is a repeat.
        self._open_gap(device, session, high + 1, seq, seq, now)
        self._ask_status(device, now)
        return True

    def hold(self, received: Received, now: datetime) -> list[Received]:
        """While gaps are open: keep the message, note what it fills or what it shows missing,
        ask again or give up; once every gap is closed, return what waited, in the order to
        apply it (then the caller applies it, and gives back with :meth:`hold_back` what
        follows a message that opened a new gap)."""
        state = self.state
        state.held = (*state.held, received)
        self._note(received, now)
        return self.review(now)

    def review(self, now: datetime) -> list[Received]:
        """What event time ``now`` makes due while gaps are open (the end of :meth:`hold`; on
        its own when time passes with no message: engine.api.TimeReached): ask again, give up,
        and once every gap is closed and the devices settled, what waited, in its order."""
        state = self.state
        open_gaps = []
        gave_up = False
        if state.asking:
            if now - state.hold_since >= self.gap_wait or len(state.held) >= HOLD_LIMIT:
                # no answer (a driver gone, or one that does not know the command): what it
                # sent, if the broker lost any, shows as a gap at its next event or status
                state.asking = frozenset()
            elif now - state.asked >= RESEND_EVERY:
                self._ask_status_again(now)
        for gap in state.gaps:
            if len(gap.got) == gap.high - gap.low + 1:
                continue  # filled
            if now - gap.opened >= self.gap_wait or len(state.held) >= HOLD_LIMIT:
                self._give_up(gap)
                gave_up = True
                continue
            if now - gap.asked < RESEND_EVERY:
                open_gaps.append(gap)
            elif len(gap.got) > gap.got_when_asked:
                # the driver is answering: give it another while before asking again
                open_gaps.append(gap._replace(asked=now, got_when_asked=len(gap.got)))
            else:
                missing = gap.missing()
                self._ask(gap.device, gap.session, missing[0], missing[-1], now)
                open_gaps.append(gap._replace(asked=now, got_when_asked=len(gap.got)))
        state.gaps = tuple(open_gaps)
        if (
            not state.gaps
            and not state.asking
            and (gave_up or len(state.held) >= HOLD_LIMIT or self._settled(now))
        ):
            items = release_order(state.held)
            state.held = ()
            state.hold_next = {}
            state.heard = frozenset()
            return items
        return []

    def next_due(self) -> datetime | None:
        """The earliest event time at which :meth:`review` would do something while messages
        are held: a gap asked for again or given up, the devices' settling time over (None:
        nothing is held)."""
        state = self.state
        if not state.held:
            return None
        due: datetime | None = None
        if state.asking:
            due = min(state.asked + RESEND_EVERY, state.hold_since + self.gap_wait)
        for gap in state.gaps:
            if len(gap.got) == gap.high - gap.low + 1:
                continue  # filled: closed at the next review, with whatever comes due first
            at = min(gap.opened + self.gap_wait, gap.asked + RESEND_EVERY)
            due = at if due is None else min(due, at)
        if due is None:
            due = state.hold_since + SETTLE  # every gap filled, every answer in: released once settled
        return due

    def hold_back(self, rest: list[Received], now: datetime) -> None:
        """Messages released but not applied: one before them opened a new gap, they wait."""
        for item in rest:
            self.state.held = (*self.state.held, item)
            self._note(item, now)

    def _open_gap(self, device: str, session: int, low: int, high: int, known: int, now: datetime) -> None:
        """Events ``low`` to ``high`` are missing; ``known``: the highest seq of the session
        the caller knows of (it holds what showed the gap)."""
        self._start_hold(device, now)
        state = self.state
        state.gaps = (*state.gaps, Gap(device, session, low, high, now, now))
        state.hold_next = {**state.hold_next, (device, session): known}
        self._ask(device, session, low, high, now)

    def _start_hold(self, device: str, now: datetime) -> None:
        if not self.state.held:
            self.state.hold_since = now
            self.state.checked_in = frozenset({device})

    def _ask_status(self, device: str, now: datetime, *, news: bool = False) -> None:
        """A device said its status again while messages are held: the broker was away (a
        driver says it at every connection). A broker restarted without its sessions dropped
        what the drivers published before the controller was subscribed again, and the status
        it hands over (retained) names their seq before that: every device followed is asked to
        say how far its events went (a ``status`` command), once per hold, and what is held
        waits for each answer, so that what they lost is asked for and applied in its place
        before anything after it, once per hold and again after each new outage within it
        (``news``: the status names no ask). ``device``'s status is noted as heard."""
        state = self.state
        # ``news``, from a device that answered this hold's ask: it says its status again
        # unasked (it names no ask): the broker went away again while the table was held, and
        # what every driver published meanwhile may be lost too: all are asked again. (Before,
        # a second broker outage within one hold asked only the devices that had not answered
        # yet, and the others' losses were applied out of order: the demo's broker-crash test.)
        again = news and device not in state.asking
        if state.asked >= state.hold_since and not again:  # asked in this hold already
            self._heard(device, now)
            return
        following = frozenset(
            d for d, track in state.tracks.items() if track.session is not None and d in state.answering
        )
        state.asking = following
        state.heard = following & {device}
        self._ask_status_again(now)

    def _ask_status_again(self, now: datetime) -> None:
        state = self.state
        state.asked = now
        for device in sorted(state.asking):
            self.commands.append((device, StatusCommand(ts=now)))

    def _heard(self, device: str, now: datetime) -> None:
        """A status of ``device`` while the devices are asked to say theirs: its first may be
        the one the broker kept; the next one (said live, the controller being subscribed) is
        its answer, and whatever it published after it reaches the controller. An answer gives
        the others another while before they are asked again (the answers bring their own
        time: asked late, behind a busy controller, they all come at once a second later)."""
        state = self.state
        if device not in state.asking:
            return
        if device in state.heard:
            state.asking -= {device}
            state.checked_in |= {device}  # (whatever its clock says)
            state.asked = now
        else:
            state.heard |= {device}

    def _ask(self, device: str, session: int, low: int, high: int, now: datetime) -> None:
        # a driver keeps its last MAX_RESEND events: the older ones cannot come again
        low = max(low, high - MAX_RESEND + 1)
        command = ResendCommand(ts=now, session=session, from_seq=low, to_seq=high)
        self.commands.append((device, command))

    def _settled(self, now: datetime) -> bool:
        """Whether every device whose sessions the engine follows has been heard from since the
        hold began (its own losses, if any, are known then), or ``SETTLE`` has passed."""
        state = self.state
        if now - state.hold_since >= SETTLE:
            return True
        following = {device for device, track in state.tracks.items() if track.session is not None}
        return following <= state.checked_in

    def _note(self, received: Received, now: datetime) -> None:
        """A held event fills its gap, or shows a gap of its own device (asked for at once, so
        that every device's missing events are applied in their place before anything after
        them)."""
        state = self.state
        fresh = received_ts(received) >= state.hold_since  # not an old one, delivered late
        if fresh and isinstance(received, DeviceEventReceived | DeviceStatusReceived):
            state.checked_in |= {received.device}
        limit = MAX_RESEND
        if isinstance(received, DeviceStatusReceived):
            self.answers(received.device, received.status)
            status = received.status
            # (said unasked by a driver whose answers name the ask: the broker was away again)
            news = status.asked is None and received.device in state.echoing
            self._ask_status(received.device, now, news=news)
        if isinstance(received, DeviceStatusReceived) and received.status.seq is not None:
            # every event up to its seq was published: what is not here is on its way
            device, seq, session = received.device, received.status.seq, received.status.session
            upto = seq
            seq += 1
            limit = SEQ_AHEAD
        elif isinstance(received, DeviceEventReceived) and (
            received.event.session is not None or received.device in state.sessions
        ):
            # (an event that names no session belongs to the session of its device's status)
            device, seq = received.device, received.event.seq
            named = received.event.session
            session = named if named is not None else state.sessions[device]
            upto = seq
            gaps = list(state.gaps)
            for index, gap in enumerate(gaps):
                if gap.device == device and gap.session == session and gap.low <= seq <= gap.high:
                    gaps[index] = gap._replace(got=gap.got | {seq})
                    state.gaps = tuple(gaps)
                    return
            if named is None:
                # (only a status shows their gap: held, they are applied as they arrived, and
                # a seq they skip is reported lost then, as before)
                return
        else:
            return
        key = (device, session)
        last = state.hold_next.get(key)
        if last is None:
            track = state.tracks.get(device)
            if track is None or track.session is None:
                last = upto  # nothing to compare with: its place is decided on release
            elif track.session == session:
                last = track.high
            elif 0 < session - track.session <= SESSION_AHEAD:
                last = 0  # a new session starts at 1
            else:
                return  # an old session's, or a far one: decided on release
        if last + 1 < seq <= last + 1 + limit:
            state.gaps = (*state.gaps, Gap(device, session, last + 1, seq - 1, now, now))
            self._ask(device, session, last + 1, seq - 1, now)
        if upto > last:
            state.hold_next = {**state.hold_next, key: upto}

    def _give_up(self, gap: Gap) -> None:
        """What a gap still misses is lost: marked taken (a late copy is dropped), reported."""
        state = self.state
        missing = gap.missing()
        device = gap.device
        track = state.tracks.get(device)
        prev = state.previous.get(device)
        if track is not None and track.session is not None and gap.session > track.session:
            # the gap is at the start of a session not followed yet: follow it from here
            state.previous = {**state.previous, device: track}
            track = SeqTrack(0, 0, session=gap.session)
        if track is not None and track.session in (gap.session, None):
            state.tracks[device] = given_up(track, gap.high, missing)
        elif prev is not None and prev.session == gap.session:
            state.previous = {**state.previous, device: given_up(prev, gap.high, missing)}
        if len(missing) == missing[-1] - missing[0] + 1:
            what = f"did not send events {missing[0]} to {missing[-1]} again"
        else:
            what = f"did not send {len(missing)} events between {missing[0]} and {missing[-1]} again"
        self.findings.append(Lost(gap.device, what))
