"""The gap fill: missing events asked for again, what arrives meanwhile held, then applied in
its order (docs/engine.md, "Gap fill").

When events of a session are missing (an event or a status shows it), the engine asks the
device's driver to send them again (a ``resend`` command in ``Outputs.commands``) and holds that
message and every message received after it, from every device, noting the gaps each one
shows. A driver's status said again after it reconnected to the broker starts the same hold.
Once every gap is filled and every device followed has been heard from (or ``SETTLE`` has
passed), the held messages are applied in their order (:func:`engine.seqtrack.release_order`).
What is still missing after ``[table] gap_wait_s`` (``GAP_WAIT`` by default; or once
``HOLD_LIMIT`` messages wait) is lost. Events that name no session are followed in the session
of the device's status: a status naming a seq beyond them is a gap all the same.

Time here is event time: the latest ``ts`` of what arrived (a resent event carries its old
``ts``, so the clock is the latest, not the last); the engine reads no clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contract.models import MAX_RESEND, ResendCommand, Status
from engine.api import DeviceEventReceived, DeviceStatusReceived, Received
from engine.memory import Memory
from engine.seqtrack import (
    HOLD_LIMIT,
    RESEND_EVERY,
    SEQ_AHEAD,
    SESSION_AHEAD,
    SETTLE,
    Gap,
    SeqTrack,
    given_up,
    received_ts,
    release_order,
)


class GapFillRules(Memory):
    """The gap fill (see the module docstring)."""

    if TYPE_CHECKING:
        # Defined by the classes this rule set is mixed with; declared for the type checker
        # only, so that nothing here can stand in for them at run time.
        def _apply(self, received: Received) -> None:
            """Apply one message: :class:`engine.machine.Machine`."""

        def _lost(self, device: str, what: str) -> None:
            """Report events lost for good: :class:`engine.sequence.SequenceRules`."""

    def _open_gap(self, device: str, session: int, low: int, high: int, known: int) -> None:
        """Events ``low`` to ``high`` are missing; ``known``: the highest seq of the session
        the caller knows of (it holds what showed the gap)."""
        self._start_hold(device)
        self.gaps = (*self.gaps, Gap(device, session, low, high, self.clock, self.clock))
        self.hold_next = {**self.hold_next, (device, session): known}
        self._ask(device, session, low, high)

    def _start_hold(self, device: str) -> None:
        if not self.held:
            self.hold_since = self.clock
            self.checked_in = frozenset({device})

    def _reconnected(self, device: str, status: Status, newer: bool) -> bool:
        """Whether a status is a driver's announcement after it connected to the broker again
        (the same session and state said again, newer than anything seen): the broker was
        away, and what waited in every driver is coming, each driver's as a block. The caller
        holds the status, and what follows waits until every device was heard from (or
        ``SETTLE``), to be applied in its order."""
        track = self.dev_seq.get(device)
        if not newer or status.seq is None or track is None or track.session != status.session:
            return False
        if self.dev_state.get(device) != status.state:
            return False
        self._start_hold(device)
        return True

    def _status_gap(self, device: str, status: Status) -> bool:
        """Whether a status shows events of its session not yet here (it names the seq of the
        driver's last event): if so they are waited for (asked for if they do not come) and
        the caller holds the status."""
        seq, session = status.seq, status.session
        track = self.dev_seq.get(device)
        if seq is None or track is None:
            return False
        if track.session is None:
            # events that name no session: followed in the session of the status before
            if self.dev_session.get(device) != session:
                return False
            high = track.high
        elif session == track.session:
            high = track.high
        elif 0 < session - track.session <= SESSION_AHEAD:
            high = 0  # a new session: its events 1 to seq came before this status
        else:
            prev = self.dev_prev.get(device)
            if prev is None or prev.session != session:
                return False
            high = prev.high  # the end of the previous session
        if not high < seq <= high + SEQ_AHEAD:
            return False
        # The status goes out before the events that waited for the broker: they are on their
        # way, unless the broker lost them. Asked for at once all the same (a quiet table
        # brings no event time to wait on); what comes twice is a repeat.
        self._open_gap(device, session, high + 1, seq, seq)
        return True

    def _ask(self, device: str, session: int, low: int, high: int) -> None:
        # a driver keeps its last MAX_RESEND events: the older ones cannot come again
        low = max(low, high - MAX_RESEND + 1)
        command = ResendCommand(ts=self.clock, session=session, from_seq=low, to_seq=high)
        self.commands.append((device, command))

    def _hold(self, received: Received) -> None:
        """While gaps are open: keep the message, note what it fills or what it shows missing,
        ask again or give up; once every gap is closed, release what waits."""
        self.ts = received_ts(received)
        self.clock = max(self.clock, self.ts)
        self.held = (*self.held, received)
        self._note(received)
        open_gaps = []
        now = self.clock
        gave_up = False
        for gap in self.gaps:
            if len(gap.got) == gap.high - gap.low + 1:
                continue  # filled
            if now - gap.opened >= self.gap_wait or len(self.held) >= HOLD_LIMIT:
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
                self._ask(gap.device, gap.session, missing[0], missing[-1])
                open_gaps.append(gap._replace(asked=now, got_when_asked=len(gap.got)))
        self.gaps = tuple(open_gaps)
        if not self.gaps and (gave_up or len(self.held) >= HOLD_LIMIT or self._settled()):
            self._release()

    def _settled(self) -> bool:
        """Whether every device whose sessions the engine follows has been heard from since the
        hold began (its own losses, if any, are known then), or ``SETTLE`` has passed."""
        if self.clock - self.hold_since >= SETTLE:
            return True
        following = {device for device, track in self.dev_seq.items() if track.session is not None}
        return following <= self.checked_in

    def _note(self, received: Received) -> None:
        """A held event fills its gap, or shows a gap of its own device (asked for at once, so
        that every device's missing events are applied in their place before anything after
        them)."""
        fresh = received_ts(received) >= self.hold_since  # not an old one, delivered late
        if fresh and isinstance(received, DeviceEventReceived | DeviceStatusReceived):
            self.checked_in |= {received.device}
        limit = MAX_RESEND
        if isinstance(received, DeviceStatusReceived) and received.status.seq is not None:
            # every event up to its seq was published: what is not here is on its way
            device, seq, session = received.device, received.status.seq, received.status.session
            upto = seq
            seq += 1
            limit = SEQ_AHEAD
        elif isinstance(received, DeviceEventReceived) and (
            received.event.session is not None or received.device in self.dev_session
        ):
            # (an event that names no session belongs to the session of its device's status)
            device, seq = received.device, received.event.seq
            named = received.event.session
            session = named if named is not None else self.dev_session[device]
            upto = seq
            gaps = list(self.gaps)
            for index, gap in enumerate(gaps):
                if gap.device == device and gap.session == session and gap.low <= seq <= gap.high:
                    gaps[index] = gap._replace(got=gap.got | {seq})
                    self.gaps = tuple(gaps)
                    return
            if named is None:
                # (only a status shows their gap: held, they are applied as they arrived, and
                # a seq they skip is reported lost then, as before)
                return
        else:
            return
        key = (device, session)
        last = self.hold_next.get(key)
        if last is None:
            track = self.dev_seq.get(device)
            if track is None or track.session is None:
                last = upto  # nothing to compare with: its place is decided on release
            elif track.session == session:
                last = track.high
            elif 0 < session - track.session <= SESSION_AHEAD:
                last = 0  # a new session starts at 1
            else:
                return  # an old session's, or a far one: decided on release
        if last + 1 < seq <= last + 1 + limit:
            self.gaps = (*self.gaps, Gap(device, session, last + 1, seq - 1, self.clock, self.clock))
            self._ask(device, session, last + 1, seq - 1)
        if upto > last:
            self.hold_next = {**self.hold_next, key: upto}

    def _give_up(self, gap: Gap) -> None:
        """What a gap still misses is lost: marked taken (a late copy is dropped), reported."""
        missing = gap.missing()
        device = gap.device
        track = self.dev_seq.get(device)
        prev = self.dev_prev.get(device)
        if track is not None and track.session is not None and gap.session > track.session:
            # the gap is at the start of a session not followed yet: follow it from here
            self.dev_prev = {**self.dev_prev, device: track}
            track = SeqTrack(0, 0, session=gap.session)
        if track is not None and track.session in (gap.session, None):
            self.dev_seq[device] = given_up(track, gap.high, missing)
        elif prev is not None and prev.session == gap.session:
            self.dev_prev = {**self.dev_prev, device: given_up(prev, gap.high, missing)}
        if len(missing) == missing[-1] - missing[0] + 1:
            what = f"did not send events {missing[0]} to {missing[-1]} again"
        else:
            what = f"did not send {len(missing)} events between {missing[0]} and {missing[-1]} again"
        self._lost(gap.device, what)

    def _release(self) -> None:
        """Every gap is closed: apply the held messages in order (until one opens a new gap:
        the rest waits behind it)."""
        items = release_order(self.held)
        self.held = ()
        self.hold_next = {}
        for index, item in enumerate(items):
            self._apply(item)
            if self.gaps:
                for rest in items[index + 1 :]:
                    self.held = (*self.held, rest)
                    self._note(rest)
                return
