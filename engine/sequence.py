"""Device sequence numbers: repeats, late events, forged seqs, and the gap fill.

The policy (docs/engine.md, "Sequence policy" and "Gap fill"):

- A device's events are followed per (device, session, seq). An event names its session (our
  drivers always do); one that does not belongs to the session of the device's last status.
  The engine follows the device's current session and remembers its previous one, so that a
  repeat of either is dropped and a late event of either fills its place.
- A seq up to ``SEQ_AHEAD`` above the highest taken is taken; a repeat (remembered for the last
  ``SEQ_MEMORY`` seqs) is dropped; a seq further away is ignored and reported, and becomes the
  device's count only after ``SEQ_RUN`` such seqs in a row (a forged seq never blinds the reader).
  A session up to ``SESSION_AHEAD`` above the device's is its restart (1 expected); a session
  further away is treated like a far seq.
- **Gap fill.** When events of a session are missing (at most ``MAX_RESEND`` of them), the event
  that shows the gap is *held*, and so is every message received after it, while the engine asks
  the device's driver to send the missing ones again (a ``resend`` command in
  ``Outputs.commands``, asked again after ``RESEND_EVERY`` of event time without an answer). Once every gap is
  filled, and every device followed has been heard from since (or ``SETTLE`` has passed), the
  held messages are applied in their order (a device's by seq, the devices merged by their
  timestamps): the hand is followed as if nothing had been lost. What is still missing
  after ``GAP_WAIT`` of event time (or once ``HOLD_LIMIT`` messages wait) is lost: reported
  (``device_fault``), never applied later, and the hand is not tracked until the next hand.

Time here is event time: the latest ``ts`` of what arrived (a resent event carries its old
``ts``, so the clock is the latest, not the last); the engine reads no clock.
"""

from __future__ import annotations

import heapq
from datetime import datetime, timedelta
from typing import Final, NamedTuple

from contract.models import MAX_RESEND, DeviceEvent, ResendCommand, Status
from contract.text import bounded
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    InputReceived,
    Received,
)
from engine.memory import Memory

#: How far ahead of a device's highest seq an event is still taken, how far back a missing one
#: still fills its gap, how many far seqs in a row make the device's new count, how far ahead
#: a session is still the device's restart, and how often the alert about ignored far seqs is
#: updated.
SEQ_AHEAD: Final = 10_000
SEQ_MEMORY: Final = 1024
SEQ_MASK: Final = (1 << SEQ_MEMORY) - 1
SEQ_RUN: Final = 4
SESSION_AHEAD: Final = 1000
REPORT_EVERY: Final = timedelta(seconds=1)
#: Gap fill: ask again this often, give up after this long (event time), hold at most this
#: many messages. A driver that lost its broker reconnects within its backoff (at most 5 s),
#: so 10 s covers a broker restart; a driver process that died cannot answer at all.
RESEND_EVERY: Final = timedelta(seconds=1)
GAP_WAIT: Final = timedelta(seconds=10)
HOLD_LIMIT: Final = 5000
#: After a broker crash every driver reconnects (within a second: link.device) and says its
#: status again, naming its last seq: a filled gap is released once every device followed has
#: been heard from (each one's own losses are known then), or after this long.
SETTLE: Final = timedelta(seconds=2)


class SeqTrack(NamedTuple):
    """Where a device's sequence stands in one session (immutable, replaced on every event)."""

    high: int  # the highest seq taken (0: none yet in this session, 1 expected)
    seen: int  # bit i set: seq ``high - i`` was taken (or given up as lost)
    run: int = 0  # far seqs in a row so far
    run_last: int = 0  # the last of them
    far: int = 0  # far seqs ignored in all
    session: int | None = None  # the session followed (None: events that name none)
    run_session: int | None = None  # the session of the far run


class Gap(NamedTuple):
    """Missing events ``low`` to ``high`` of a device's session, asked for again."""

    device: str
    session: int
    low: int
    high: int
    opened: datetime  # event time the gap was seen
    asked: datetime  # event time of the latest resend command
    got: frozenset[int] = frozenset()  # seqs of the gap received since (held)
    got_when_asked: int = 0  # how many of them had come at the latest resend command

    def missing(self) -> list[int]:
        return [seq for seq in range(self.low, self.high + 1) if seq not in self.got]


def received_ts(received: Received) -> datetime:
    """The event time of a received message."""
    if isinstance(received, DeviceEventReceived):
        return received.event.ts
    if isinstance(received, DeviceStatusReceived):
        return received.status.ts
    if isinstance(received, InputReceived):
        return received.input.ts
    return received.received


def release_order(held: tuple[Received, ...]) -> list[Received]:
    """Held messages in the order to apply them: each (device, session)'s events by seq, the
    rest as they arrived, the streams merged by timestamp (ties: as they arrived)."""
    streams: dict[tuple[str, ...], list[tuple[int, Received]]] = {}
    sort_by_seq: set[tuple[str, ...]] = set()
    for index, item in enumerate(held):
        key: tuple[str, ...]
        if isinstance(item, DeviceEventReceived) and item.event.session is not None:
            key = ("event", item.device, str(item.event.session))
            sort_by_seq.add(key)
        elif isinstance(item, DeviceEventReceived):
            key = ("event", item.device)
        elif isinstance(item, DeviceStatusReceived):
            key = ("status", item.device)
        elif isinstance(item, InputReceived):
            key = ("input",)
        else:
            key = ("rejected",)
        streams.setdefault(key, []).append((index, item))
    ordered = []
    for key, arrived in streams.items():
        if key in sort_by_seq and len(arrived) > 1:
            # A device's events by seq. On a tie of timestamps an event goes where the first
            # one after it in seq order arrived: a missing event belongs before the event that
            # showed it was missing, and so before what arrived after that one.
            by_seq = sorted(arrived, key=lambda pair: _seq_of(pair[1]))
            slot = len(held)
            placed = []
            for index, item in reversed(by_seq):
                slot = min(slot, index)
                placed.append((slot, item))
            arrived = placed[::-1]  # noqa: PLW2901
        ordered.append(arrived)
    heap = [(received_ts(s[0][1]), s[0][0], n, 0) for n, s in enumerate(ordered)]
    heapq.heapify(heap)
    out: list[Received] = []
    while heap:
        _, _, n, position = heapq.heappop(heap)
        stream = ordered[n]
        out.append(stream[position][1])
        if position + 1 < len(stream):
            index, item = stream[position + 1]
            heapq.heappush(heap, (received_ts(item), index, n, position + 1))
    return out


def _given_up(track: SeqTrack, upto: int, missing: list[int]) -> SeqTrack:
    """``track`` with the seqs ``missing`` (up to ``upto``) marked taken: a late copy of one is
    a repeat."""
    high, seen = track.high, track.seen
    if upto > high:
        seen, high = (seen << (upto - high)) & SEQ_MASK, upto
    for seq in missing:
        if high - seq < SEQ_MEMORY:
            seen |= 1 << (high - seq)
    return track._replace(high=high, seen=seen)


def _seq_of(item: Received) -> int:
    return item.event.seq if isinstance(item, DeviceEventReceived) else 0


class SequenceRules(Memory):
    """The sequence policy and the gap fill (see the module docstring)."""

    def _apply(self, received: Received) -> None:
        """Apply one message (the machine's): defined by :class:`engine.machine.Machine`."""
        raise NotImplementedError

    # ------------------------------------------------------------------ taking events

    def _sequence(self, device: str, event: DeviceEvent) -> bool | None:
        """Whether to apply a device's event: True, False (a repeat, a far seq), or None: it
        shows a gap that is being filled, the event is held (the caller holds it)."""
        seq, session = event.seq, event.session
        track = self.dev_seq.get(device)
        if track is not None and seq == track[0] + 1 and session == track[5] and not track[2]:
            # the next one of the session followed (the hot path: one tuple, no lookups)
            self.dev_seq[device] = SeqTrack(
                seq, ((track[1] << 1) | 1) & SEQ_MASK, 0, 0, track[4], session
            )
            return True
        if session is None:
            return self._legacy(device, track, seq)
        current = track.session if track is not None and track.session is not None else None
        if current is None:
            current = self.dev_session.get(device)
        if track is None or current is None:
            if current is not None and session > current:
                track = SeqTrack(0, 0, session=session)  # a new session: 1 expected
            else:
                self.dev_seq[device] = SeqTrack(seq, 1, session=session)  # the baseline
                return True
        elif session > current:
            if session - current > SESSION_AHEAD:
                return self._far(device, track, seq, session)
            self.dev_prev = {**self.dev_prev, device: track}
            track = SeqTrack(0, 0, session=session)  # restarted without a status first
        elif session < current:
            return self._previous_session(device, seq, session)
        elif track.session is None:
            track = track._replace(session=session)
        return self._window(device, track, seq, session)

    def _window(self, device: str, track: SeqTrack, seq: int, session: int) -> bool | None:
        high = track.high
        if seq > high:
            if seq - high > SEQ_AHEAD:
                return self._far(device, track, seq, session)
            if seq > high + 1:
                if seq - high - 1 <= MAX_RESEND:
                    self.dev_seq[device] = track  # the session is followed, the seq not yet
                    self._open_gap(device, session, high + 1, seq - 1, seq)
                    return None
                self._lost(device, f"skipped events {high + 1} to {seq - 1}")
            self.dev_seq[device] = track._replace(
                high=seq, seen=((track.seen << (seq - high)) | 1) & SEQ_MASK, run=0
            )
            return True
        return self._behind(device, track, seq, session, current=True)

    def _behind(
        self, device: str, track: SeqTrack, seq: int, session: int | None, *, current: bool
    ) -> bool:
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
        updated = track._replace(seen=track.seen | bit)
        if current:
            self.dev_seq[device] = updated
        else:
            self.dev_prev = {**self.dev_prev, device: updated}
        return True  # a late event filling its place

    def _previous_session(self, device: str, seq: int, session: int) -> bool:
        """An event of an earlier session: taken once if it is the previous session's and new."""
        prev = self.dev_prev.get(device)
        if prev is None or prev.session != session:
            self._far_ignored(device)
            return False
        if seq > prev.high:
            if seq - prev.high > SEQ_AHEAD:
                self._far_ignored(device)
                return False
            if seq > prev.high + 1:
                self._lost(device, f"skipped events {prev.high + 1} to {seq - 1} of session {session}")
            seen = ((prev.seen << (seq - prev.high)) | 1) & SEQ_MASK
            self.dev_prev = {**self.dev_prev, device: prev._replace(high=seq, seen=seen)}
            return True
        return self._behind(device, prev, seq, session, current=False)

    def _legacy(self, device: str, track: SeqTrack | None, seq: int) -> bool:
        """Events that name no session: followed in the session of the device's status."""
        if track is None:
            self.dev_seq[device] = SeqTrack(seq, 1)
            return True
        high = track.high
        if seq > high:
            if seq - high > SEQ_AHEAD:
                return self._far(device, track, seq, None)
            if seq > high + 1:
                self._lost(device, f"skipped events {high + 1} to {seq - 1}")
            self.dev_seq[device] = track._replace(
                high=seq, seen=((track.seen << (seq - high)) | 1) & SEQ_MASK, run=0
            )
            return True
        if seq == 1 and high > 1:
            self.dev_seq[device] = SeqTrack(1, 1)  # restarted without a new status session
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
            self._lost(device, f"jumped from event {track.high} to {where}")
            if session is not None and session != track.session:
                self.dev_prev = {**self.dev_prev, device: track}
            self.dev_seq[device] = SeqTrack(seq, 1, far=far, session=session)
            return True
        self.dev_seq[device] = track._replace(
            run=run, run_last=seq, far=far, run_session=session
        )
        self._far_report(device, track, far)
        return False

    def _far_ignored(self, device: str) -> None:
        """An event of an old session, or far behind the previous one: ignored, reported."""
        track = self.dev_seq[device]
        self.dev_seq[device] = track._replace(far=track.far + 1)
        self._far_report(device, track, track.far + 1)

    def _far_report(self, device: str, track: SeqTrack, far: int) -> None:
        key = f"{device}#far"
        message = (
            f"Device {bounded(device, 64)} sent {far} event(s) with a sequence number far from "
            f"its last one ({track.high}): they were ignored."
        )
        existing = self.book.find("bad_payload", key)
        if existing is None:
            self._raise("bad_payload", message, scope="device", key=key, device=device)
        elif self.ts - self.book.active[existing].ts >= REPORT_EVERY:
            self.book.update(existing, self.ts, message=message)

    def _lost(self, device: str, what: str) -> None:
        """Events of ``device`` are lost for good: say so; this hand is not tracked."""
        message = (
            f"Device {bounded(device, 64)} {what}: they were lost, so this hand is not tracked; "
            "tracking resumes with the next shuffle or new hand."
        )
        key = f"{device}#seq"
        existing = self.book.find("device_fault", key)
        if existing is None:
            self._raise("device_fault", message, scope="hand", key=key, device=device)
        else:
            self.book.update(existing, self.ts, message=message)
        self.untracked = True
        self._update_tracking()

    # ------------------------------------------------------------------ the gap fill

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
        if seq is None or track is None or track.session is None:
            return False
        if session == track.session:
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
            if now - gap.opened >= GAP_WAIT or len(self.held) >= HOLD_LIMIT:
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
        elif isinstance(received, DeviceEventReceived) and received.event.session is not None:
            device, seq, session = received.device, received.event.seq, received.event.session
            upto = seq
            gaps = list(self.gaps)
            for index, gap in enumerate(gaps):
                if gap.device == device and gap.session == session and gap.low <= seq <= gap.high:
                    gaps[index] = gap._replace(got=gap.got | {seq})
                    self.gaps = tuple(gaps)
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
        if track is not None and track.session == gap.session:
            self.dev_seq[device] = _given_up(track, gap.high, missing)
        elif prev is not None and prev.session == gap.session:
            self.dev_prev = {**self.dev_prev, device: _given_up(prev, gap.high, missing)}
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
