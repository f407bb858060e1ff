"""Raw antenna sweeps -> clean ``present`` transitions, without flapping. Pure logic, no I/O.

The reader reports, after each antenna's dwell, every tag that antenna saw; it sometimes misses a
tag that is there, reports one twice, and an antenna sometimes hears a tag lying on its
neighbour's zone (crosstalk, with a much weaker signal). The tracker assigns each tag to at most
one antenna (a card lies in one place) and reports a change only when the evidence is clear:

- **arrival**: a read at or above ``min_rssi`` dBm on an antenna puts an unassigned tag there
  (weaker reads are crosstalk and never create presence on their own);
- **departure**: a tag leaves its antenna when it has been unseen there for more than ``hold_s``
  *and* that antenna has swept enough times in a row without it that missed reads cannot
  explain it: at least ``min_missed_dwells``, and more on a reader that misses often (the tracker
  estimates the reader's miss rate p from the tags it holds and requires K misses in a row with
  p**K below ``flap_probability``, with p taken 1.5 times the estimate: 12 sweeps for a reader
  missing 20 % of reads, 4 for a good one). The estimate learns a miss when the tag is read
  again (so tags taken away do not count) and a read one dwell late (so both lag alike); one
  dwell adds its outcomes without forgetting more than ten reads' worth of what came before (a
  pot of 300 chips must not replace the estimate with one dwell's luck);
- **move**: a tag read on another antenna moves there at once when that read is clearly stronger
  (by ``switch_margin_db``) than its current antenna's, or as strong while its current antenna has
  just swept without it, or when its current antenna sweeps without it after such a read
  elsewhere; otherwise it moves when it departs from the current antenna. A move is reported as
  two transitions: the departure first, then the arrival; into an ``arrive_first`` antenna (the
  driver names the chip zones) the arrival first, so that chips swept from a betting area into
  the pot are never seen leaving for nowhere;
- **face**: a changed orientation is reported (as a new ``present`` transition with the new face)
  once two reads in a row agree on it.

Sweeps are counted in inventories, never in time, so an antenna whose inventory takes seconds
(a pot of 300 chips) makes nobody absent: only its own completed dwells count misses. Such an
antenna reports its reads in pages (:class:`~drivers.rfid.protocol.InventoryPage`) as its
anti-collision finds them: every page's reads count at once (arrivals, moves), and the misses of
the dwell are counted when its last page arrives. A dwell with a page lost on the line (a gap in
the page numbers, or no last page before the next dwell begins) counts as swept but counts no
misses, and teaches nothing about the miss rate: a tag must not seem gone because the frame
carrying it was. ``expire`` visits only tags with missed dwells, so ticks stay cheap with
hundreds of chips on the table.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from drivers.rfid.protocol import Inventory, InventoryPage, TagRead

DEFAULT_MIN_RSSI: Final = -60
DEFAULT_SWITCH_MARGIN_DB: Final = 6.0
DEFAULT_MIN_MISSED_DWELLS: Final = 4
#: Accepted chance that a present tag is missed so many sweeps in a row that it seems to leave.
DEFAULT_FLAP_PROBABILITY: Final = 1e-6
#: The miss rate assumed before the tracker has seen the reader at work (pessimistic).
DEFAULT_INITIAL_MISS_RATE: Final = 0.2
MAX_MISSED_DWELLS: Final = 20
#: The miss-rate estimate forgets 1 % of what it knew per observation (a memory of about 100
#: reads, the initial guess counting as 100)...
_MISS_RATE_WEIGHT: Final = 0.01
#: ...but at most as much per dwell as 10 observations make it forget: a pot of 300 chips read
#: at once adds its 300 outcomes to what was known instead of replacing it (a memory of about 10
#: dwells of that antenna).
_MAX_FORGET_READS: Final = 10
FACE_CONFIRMATIONS: Final = 2


@dataclass(frozen=True, slots=True)
class Transition:
    """A tag arrived at (``present``) or left an antenna."""

    antenna: int
    uid: str
    present: bool
    face: str | None


@dataclass(slots=True)
class _Sighting:
    last_seen: float
    rssi: float
    missed: int = 0


@dataclass(slots=True)
class _Tag:
    antenna: int | None = None
    face: str | None = None
    face_candidate: str | None = None
    face_votes: int = 0
    sightings: dict[int, _Sighting] = field(default_factory=dict)


@dataclass(slots=True)
class _Dwell:
    """A paged dwell still open: which pages came, which tags it read."""

    antenna: int
    round: int
    next_page: int
    complete: bool
    seen: set[str] = field(default_factory=set)


class PresenceTracker:
    """Turns Inventory and InventoryPage messages into present/absent transitions per tag."""

    def __init__(
        self,
        hold_s: float,
        *,
        min_rssi: int = DEFAULT_MIN_RSSI,
        switch_margin_db: float = DEFAULT_SWITCH_MARGIN_DB,
        min_missed_dwells: int = DEFAULT_MIN_MISSED_DWELLS,
        flap_probability: float = DEFAULT_FLAP_PROBABILITY,
        initial_miss_rate: float = DEFAULT_INITIAL_MISS_RATE,
        arrive_first: Iterable[int] = (),
    ) -> None:
        self.hold_s = hold_s
        self.min_rssi = min_rssi
        self.switch_margin_db = switch_margin_db
        self.min_missed_dwells = min_missed_dwells
        self.flap_probability = flap_probability
        #: Antennas where a tag moving in is reported there before it is reported gone from
        #: its old antenna.
        self.arrive_first = frozenset(arrive_first)
        # The miss-rate estimate: outcomes (1 a missed dwell, 0 a read), summed with decay.
        self._misses_seen = 0.0
        self._outcomes_seen = 0.0
        self.miss_rate = initial_miss_rate
        #: Paged dwells that lost a page (counted as swept, without misses).
        self.broken_dwells = 0
        self._tags: dict[str, _Tag] = {}
        # Counted in inventories received, not in time: a driver starved of CPU for a while
        # receives the backlog later and must not take that pause for missing antennas.
        self._dwells = 0
        self._last_swept: dict[int, int] = {}  # antenna -> dwell count when last swept
        self._period: dict[int, int] = {}  # antenna -> dwells between two of its sweeps
        self._open: _Dwell | None = None
        # Tags with a sighting that has missed dwells: only they can depart by misses, so a
        # tick need not visit the hundreds of chips read every sweep. Pruned by expire.
        self._missing: set[str] = set()
        # Antenna -> the tags with a sighting there (in the order they were first seen there):
        # a dwell's end visits the tags its antenna knows, not every tag on the table.
        self._sighted: dict[int, dict[str, None]] = {}
        # Worked out once per dwell, not per tick: the antennas no longer swept, and the missed
        # sweeps after which a tag has left (it changes only when the miss rate is learnt).
        self._unswept_at = -1
        self._unswept_cache: frozenset[int] = frozenset()
        self._needed: int | None = None
        # What the current dwell taught about the miss rate, applied when the dwell ends, and
        # each antenna's reads of its previous dwell, counted one dwell late (see _swept).
        self._dwell_misses = 0
        self._dwell_reads = 0
        self._unconfirmed_reads: dict[int, int] = {}

    @property
    def miss_rate(self) -> float:
        """Estimated share of dwells in which the reader misses a tag that is there."""
        return self._misses_seen / self._outcomes_seen

    @miss_rate.setter
    def miss_rate(self, rate: float) -> None:
        """Start the estimate afresh from ``rate``, weighing as much as 100 observations."""
        self._outcomes_seen = 1 / _MISS_RATE_WEIGHT
        self._misses_seen = rate * self._outcomes_seen
        self._needed = None

    @property
    def missed_dwells_to_leave(self) -> int:
        """Sweeps in a row without a tag after which it has left (given the miss rate)."""
        if self._needed is None:
            # Half as much again as estimated: the estimate wanders, a flap costs more than a
            # delay.
            p = min(max(1.5 * self.miss_rate, 1e-3), 0.9)
            needed = math.ceil(math.log(self.flap_probability) / math.log(p))
            self._needed = max(self.min_missed_dwells, min(needed, MAX_MISSED_DWELLS))
        return self._needed

    @property
    def present(self) -> dict[str, int]:
        """Tags present now: UID -> antenna."""
        return {uid: tag.antenna for uid, tag in self._tags.items() if tag.antenna is not None}

    def clear(self) -> None:
        """Forget the tags (a new session: the driver reports what it sees afresh)."""
        self._tags.clear()
        self._sighted.clear()
        self._unswept_at = -1
        self._dwells = 0
        self._last_swept.clear()
        self._period.clear()
        self._open = None
        self._missing.clear()
        self._dwell_misses = self._dwell_reads = 0
        self._unconfirmed_reads.clear()

    # ------------------------------------------------------------------ what the reader sends

    def observe(self, inventory: Inventory, now: float) -> list[Transition]:
        """Take one antenna's whole inventory; return the transitions it causes, in order."""
        out = self._close_broken(now)
        seen: set[str] = set()
        out += self._read(inventory.antenna, inventory.reads, now, seen)
        out += self._swept(inventory.antenna, seen, now, complete=True)
        return out

    def observe_page(self, page: InventoryPage, now: float) -> list[Transition]:
        """Take one page of an antenna's dwell; the last page closes the dwell."""
        out: list[Transition] = []
        dwell = self._open
        same = dwell is not None and (dwell.antenna, dwell.round) == (page.antenna, page.round)
        if dwell is None or not same or page.page == 0:
            out += self._close_broken(now)
            # A dwell seen from its first page on is whole so far; one joined later lost pages.
            dwell = self._open = _Dwell(page.antenna, page.round, 0, complete=page.page == 0)
        if page.page != dwell.next_page:
            dwell.complete = False
        dwell.next_page = page.page + 1
        out += self._read(page.antenna, page.reads, now, dwell.seen)
        if page.last:
            self._open = None
            out += self._swept(page.antenna, dwell.seen, now, complete=dwell.complete)
        return out

    def _close_broken(self, now: float) -> list[Transition]:
        """A paged dwell whose last page never came ends when the next dwell begins."""
        dwell, self._open = self._open, None
        if dwell is None:
            return []
        return self._swept(dwell.antenna, dwell.seen, now, complete=False)

    def _read(self, antenna: int, reads: Iterable[TagRead], now: float, seen: set[str]) -> list[Transition]:
        """Reads of ``antenna`` in the current dwell (``seen``: its tags read so far)."""
        best: dict[str, tuple[int, str | None]] = {}
        for read in reads:
            if read.uid in seen:
                continue  # read twice in one dwell: once is evidence enough
            if read.uid not in best or read.rssi > best[read.uid][0]:
                best[read.uid] = (read.rssi, read.orientation.face)
        out: list[Transition] = []
        for uid, (rssi, face) in best.items():
            seen.add(uid)
            tag = self._tags.setdefault(uid, _Tag())
            sighting = tag.sightings.get(antenna)
            if sighting is None:
                tag.sightings[antenna] = _Sighting(now, float(rssi))
                self._sighted.setdefault(antenna, {})[uid] = None
            else:
                if tag.antenna == antenna:
                    # Those dwells without it were missed reads. Only streaks that end in a read
                    # count, so tags really taken away do not make the reader look lossy.
                    self._dwell_misses += sighting.missed
                    self._dwell_reads += 1
                sighting.last_seen, sighting.missed = now, 0
                sighting.rssi = (sighting.rssi + rssi) / 2
            out.extend(self._assign(uid, tag, antenna, rssi, face))
        return out

    def _swept(self, antenna: int, seen: set[str], now: float, *, complete: bool) -> list[Transition]:
        """``antenna`` finished a dwell that read ``seen``; count its misses if it is whole."""
        # A miss is learnt when the tag is read again (a dwell or more later); a read is learnt
        # one dwell late too, so that both sides of the estimate lag alike: otherwise 300 chips
        # placed at once would make the reader look perfect for a dwell. A dwell that lost a
        # page knows none of its misses, so its reads are not learnt at all.
        previous_reads = self._unconfirmed_reads.pop(antenna, 0)
        if complete:
            self._unconfirmed_reads[antenna] = self._dwell_reads
        self._learn(self._dwell_misses, previous_reads)
        self._dwell_misses = self._dwell_reads = 0
        self._dwells += 1
        last = self._last_swept.get(antenna)
        if last is not None:
            self._period[antenna] = self._dwells - last
        self._last_swept[antenna] = self._dwells
        out: list[Transition] = []
        if not complete:
            self.broken_dwells += 1
        else:
            tags = self._tags
            for uid in self._sighted.get(antenna, ()):
                if uid in seen:
                    continue
                tag = tags[uid]
                sighting = tag.sightings[antenna]
                sighting.missed += 1
                self._missing.add(uid)
                if tag.antenna == antenna:
                    out.extend(self._moved_away(uid, tag, sighting))
        out.extend(self.expire(now))
        return out

    # ------------------------------------------------------------------ the rules

    def _learn(self, misses: int, reads: int) -> None:
        """Fold outcomes into the miss-rate estimate (see ``_MAX_FORGET_READS``)."""
        total = misses + reads
        if total:
            keep = (1 - _MISS_RATE_WEIGHT) ** min(total, _MAX_FORGET_READS)
            self._misses_seen = self._misses_seen * keep + misses
            self._outcomes_seen = self._outcomes_seen * keep + total
            self._needed = None

    def _assign(self, uid: str, tag: _Tag, antenna: int, rssi: int, face: str | None) -> Iterable[Transition]:
        if tag.antenna is None:
            if rssi >= self.min_rssi:
                tag.antenna, tag.face = antenna, face
                tag.face_candidate, tag.face_votes = None, 0
                yield Transition(antenna, uid, True, face)
            return
        if tag.antenna == antenna:
            yield from self._face(uid, tag, face)
            return
        current = tag.sightings.get(tag.antenna)
        if current is None or self._clearly_better(rssi, current):
            yield from self._move(uid, tag, antenna, face)

    def _moved_away(self, uid: str, tag: _Tag, own: _Sighting) -> list[Transition]:
        """Its antenna just swept without it: read as strongly elsewhere since, it moved there."""
        candidates = [
            (sighting.rssi, antenna)
            for antenna, sighting in tag.sightings.items()
            if antenna != tag.antenna
            and sighting.missed == 0
            and sighting.last_seen > own.last_seen
            and sighting.rssi >= self.min_rssi
            and sighting.rssi >= own.rssi - self.switch_margin_db / 2
        ]
        if not candidates:
            return []
        _, antenna = max(candidates)
        return self._move(uid, tag, antenna, tag.face)

    def _move(self, uid: str, tag: _Tag, antenna: int, face: str | None) -> list[Transition]:
        """Reassign a tag to ``antenna``: its departure and its arrival, in the reported order."""
        leave = Transition(tag.antenna, uid, False, tag.face) if tag.antenna is not None else None
        tag.antenna, tag.face = antenna, face
        tag.face_candidate, tag.face_votes = None, 0
        arrive = Transition(antenna, uid, True, face)
        if leave is None:
            return [arrive]
        return [arrive, leave] if antenna in self.arrive_first else [leave, arrive]

    def _clearly_better(self, rssi: int, current: _Sighting) -> bool:
        if rssi < self.min_rssi:
            return False
        if rssi > current.rssi + self.switch_margin_db:
            return True
        return current.missed >= 1 and rssi >= current.rssi - self.switch_margin_db / 2

    def _face(self, uid: str, tag: _Tag, face: str | None) -> Iterable[Transition]:
        if face is None or face == tag.face:
            tag.face_candidate, tag.face_votes = None, 0
            return
        if face == tag.face_candidate:
            tag.face_votes += 1
        else:
            tag.face_candidate, tag.face_votes = face, 1
        if tag.face_votes >= FACE_CONFIRMATIONS and tag.antenna is not None:
            tag.face = face
            tag.face_candidate, tag.face_votes = None, 0
            yield Transition(tag.antenna, uid, True, face)

    def _unswept(self) -> frozenset[int]:
        """Antennas no longer swept (taken out of the sweep): they cannot count misses, so time
        decides for their tags."""
        if self._unswept_at != self._dwells:  # it changes only when a dwell ends
            self._unswept_at = self._dwells
            self._unswept_cache = frozenset(
                antenna
                for antenna, swept in self._last_swept.items()
                if antenna in self._period and self._dwells - swept > 3 * self._period[antenna]
            )
        return self._unswept_cache

    def expire(self, now: float) -> list[Transition]:
        """Departures due by ``now`` (call it regularly, also when no frame arrives)."""
        out: list[Transition] = []
        # Worked out once per call, and the loop kept plain: it visits every tag on the table
        # (hundreds of chips) on every tick.
        needed = self.missed_dwells_to_leave
        unswept = self._unswept()
        held_since = now - self.hold_s
        # A tag on an antenna no longer swept can go without a miss: then every tag is visited.
        for uid in list(self._tags if unswept else self._missing):
            tag = self._tags.get(uid)
            if tag is None:
                self._missing.discard(uid)
                continue
            gone = [
                antenna
                for antenna, s in tag.sightings.items()
                if s.last_seen < held_since and (s.missed >= needed or antenna in unswept)
            ]
            if not gone:
                if not any(s.missed for s in tag.sightings.values()):
                    self._missing.discard(uid)
                continue
            for antenna in gone:
                del tag.sightings[antenna]
                self._sighted[antenna].pop(uid, None)
            if tag.antenna is not None and tag.antenna not in tag.sightings:
                # Seen strongly elsewhere meanwhile: it moved there.
                elsewhere = [
                    (s.rssi, a) for a, s in tag.sightings.items() if s.missed == 0 and s.rssi >= self.min_rssi
                ]
                if elsewhere:
                    _, antenna = max(elsewhere)
                    out.extend(self._move(uid, tag, antenna, tag.face))
                else:
                    out.append(Transition(tag.antenna, uid, False, tag.face))
                    tag.antenna = None
            if not tag.sightings and tag.antenna is None:
                del self._tags[uid]
                self._missing.discard(uid)
        return out
