"""What the sequence policy and the gap fill keep, and their pure helpers (no rules here).

The constants of the policy (docs/engine.md, "Sequence policy", "Gap fill"), a device's
:class:`SeqTrack` per session, an open :class:`Gap`, the event time of a received message and
the order in which held messages are applied.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Final, NamedTuple

from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    InputReceived,
    Received,
    TimeReached,
)

#: The time before any event (a fresh engine's clock).
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
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
#: many messages. A driver that lost its broker reconnects within a second (link.device), so
#: 10 s covers a broker restart with room to spare; a driver process that died cannot answer.
RESEND_EVERY: Final = timedelta(seconds=1)
GAP_WAIT: Final = timedelta(seconds=10)
HOLD_LIMIT: Final = 5000
#: After a broker crash every driver reconnects (within a second: link.device) and says its
#: status again, naming its last seq: a filled gap is released once every device followed has
#: been heard from (each one's own losses are known then), or after this long.
SETTLE: Final = timedelta(seconds=2)


@dataclass(slots=True)
class SeqTrack:
    """Where a device's sequence stands in one session.

    The next event of the session followed (nearly every event) moves ``high`` and ``seen`` in
    place; any other change replaces the track (``dataclasses.replace``). A state's copy copies
    its tracks (:meth:`copy`, engine.sequences.SequenceState), and a track never stands in two
    places (the previous session's is another object), so a state handed out never changes.
    (Mutable: a new immutable track on every event was about 2,500 instructions, against about
    150 for the two fields set; callgrind.)"""

    high: int  # the highest seq taken (0: none yet in this session, 1 expected)
    seen: int  # bit i set: seq ``high - i`` was taken (or given up as lost)
    run: int = 0  # far seqs in a row so far
    run_last: int = 0  # the last of them
    far: int = 0  # far seqs ignored in all
    session: int | None = None  # the session followed (None: events that name none)
    run_session: int | None = None  # the session of the far run

    def copy(self) -> SeqTrack:
        return SeqTrack(
            self.high, self.seen, self.run, self.run_last, self.far, self.session, self.run_session
        )


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
    if isinstance(received, TimeReached):
        return received.now
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
            by_seq = sorted(arrived, key=lambda pair: seq_of(pair[1]))
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
    return _statuses_after_their_events(out)


def _statuses_after_their_events(out: list[Received]) -> list[Received]:
    """A status naming a seq says its device's events up to that seq were published: it goes
    after those of them released with it. (Put before one that arrived later with the same
    time, as a lost end of a stream sent again does, it showed the same gap again when applied,
    and the gap was filled, released and opened again for ever.)"""
    for index in range(len(out) - 1, -1, -1):
        item = out[index]
        if not isinstance(item, DeviceStatusReceived) or item.status.seq is None:
            continue
        device, seq, session = item.device, item.status.seq, item.status.session
        last = index
        for later in range(index + 1, len(out)):
            event = out[later]
            if (
                isinstance(event, DeviceEventReceived)
                and event.device == device
                and event.event.session in (session, None)
                and event.event.seq <= seq
            ):
                last = later
        if last != index:
            out.insert(last, out.pop(index))
    return out


def given_up(track: SeqTrack, upto: int, missing: list[int]) -> SeqTrack:
    """``track`` with the seqs ``missing`` (up to ``upto``) marked taken: a late copy of one is
    a repeat."""
    high, seen = track.high, track.seen
    if upto > high:
        seen, high = (seen << (upto - high)) & SEQ_MASK, upto
    for seq in missing:
        if high - seq < SEQ_MEMORY:
            seen |= 1 << (high - seq)
    return replace(track, high=high, seen=seen)


def seq_of(item: Received) -> int:
    return item.event.seq if isinstance(item, DeviceEventReceived) else 0
