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
  missing 20 % of reads, 4 for a good one);
- **move**: a tag read on another antenna moves there at once when that read is clearly stronger
  (by ``switch_margin_db``) than its current antenna's, or as strong while its current antenna has
  just swept without it; otherwise it moves when it departs from the current antenna;
- **face**: a changed orientation is reported (as a new ``present`` transition with the new face)
  once two reads in a row agree on it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from drivers.rfid.protocol import Inventory

DEFAULT_MIN_RSSI: Final = -60
DEFAULT_SWITCH_MARGIN_DB: Final = 6.0
DEFAULT_MIN_MISSED_DWELLS: Final = 4
#: Accepted chance that a present tag is missed so many sweeps in a row that it seems to leave.
DEFAULT_FLAP_PROBABILITY: Final = 1e-6
#: The miss rate assumed before the tracker has seen the reader at work (pessimistic).
DEFAULT_INITIAL_MISS_RATE: Final = 0.2
MAX_MISSED_DWELLS: Final = 20
_MISS_RATE_WEIGHT: Final = 0.01
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


class PresenceTracker:
    """Turns Inventory messages into present/absent transitions per tag."""

    def __init__(
        self,
        hold_s: float,
        *,
        min_rssi: int = DEFAULT_MIN_RSSI,
        switch_margin_db: float = DEFAULT_SWITCH_MARGIN_DB,
        min_missed_dwells: int = DEFAULT_MIN_MISSED_DWELLS,
        flap_probability: float = DEFAULT_FLAP_PROBABILITY,
        initial_miss_rate: float = DEFAULT_INITIAL_MISS_RATE,
    ) -> None:
        self.hold_s = hold_s
        self.min_rssi = min_rssi
        self.switch_margin_db = switch_margin_db
        self.min_missed_dwells = min_missed_dwells
        self.flap_probability = flap_probability
        #: Estimated share of dwells in which the reader misses a tag that is there.
        self.miss_rate = initial_miss_rate
        self._tags: dict[str, _Tag] = {}
        # Counted in inventories received, not in time: a driver starved of CPU for a while
        # receives the backlog later and must not take that pause for missing antennas.
        self._dwells = 0
        self._last_swept: dict[int, int] = {}  # antenna -> dwell count when last swept
        self._period: dict[int, int] = {}  # antenna -> dwells between two of its sweeps

    @property
    def missed_dwells_to_leave(self) -> int:
        """Sweeps in a row without a tag after which it has left (given the miss rate)."""
        # Half as much again as estimated: the estimate wanders, a flap costs more than a delay.
        p = min(max(1.5 * self.miss_rate, 1e-3), 0.9)
        needed = math.ceil(math.log(self.flap_probability) / math.log(p))
        return max(self.min_missed_dwells, min(needed, MAX_MISSED_DWELLS))

    @property
    def present(self) -> dict[str, int]:
        """Tags present now: UID -> antenna."""
        return {uid: tag.antenna for uid, tag in self._tags.items() if tag.antenna is not None}

    def clear(self) -> None:
        """Forget the tags (a new session: the driver reports what it sees afresh)."""
        self._tags.clear()
        self._dwells = 0
        self._last_swept.clear()
        self._period.clear()

    def observe(self, inventory: Inventory, now: float) -> list[Transition]:
        """Take one antenna's inventory; return the transitions it causes, in order."""
        antenna = inventory.antenna
        best: dict[str, tuple[int, str | None]] = {}
        for read in inventory.reads:
            face = read.orientation.face
            if read.uid not in best or read.rssi > best[read.uid][0]:
                best[read.uid] = (read.rssi, face)
        # The antenna swept: every tag it had seen but not this time missed one dwell.
        self._dwells += 1
        last = self._last_swept.get(antenna)
        if last is not None:
            self._period[antenna] = self._dwells - last
        self._last_swept[antenna] = self._dwells
        for uid, tag in self._tags.items():
            sighting = tag.sightings.get(antenna)
            if sighting is not None and uid not in best:
                sighting.missed += 1
        out: list[Transition] = []
        for uid, (rssi, face) in best.items():
            tag = self._tags.setdefault(uid, _Tag())
            sighting = tag.sightings.get(antenna)
            if sighting is None:
                tag.sightings[antenna] = _Sighting(now, float(rssi))
            else:
                if tag.antenna == antenna:
                    self._learn(sighting.missed)
                sighting.last_seen, sighting.missed = now, 0
                sighting.rssi = (sighting.rssi + rssi) / 2
            out.extend(self._assign(uid, tag, antenna, rssi, face))
        out.extend(self.expire(now))
        return out

    def _learn(self, missed: int) -> None:
        """A tag read again after ``missed`` dwells without it: those were missed reads.

        Only streaks that end in a read count, so cards really taken away do not make the
        reader look lossy.
        """
        for outcome in [1.0] * missed + [0.0]:
            self.miss_rate += _MISS_RATE_WEIGHT * (outcome - self.miss_rate)

    def _assign(
        self, uid: str, tag: _Tag, antenna: int, rssi: int, face: str | None
    ) -> Iterable[Transition]:
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
            old = tag.antenna
            yield Transition(old, uid, False, tag.face)
            tag.antenna, tag.face = antenna, face
            tag.face_candidate, tag.face_votes = None, 0
            yield Transition(antenna, uid, True, face)

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

    def _gone(self, antenna: int, sighting: _Sighting, now: float) -> bool:
        if now - sighting.last_seen <= self.hold_s:
            return False
        if sighting.missed >= self.missed_dwells_to_leave:
            return True
        # An antenna no longer swept (taken out of the sweep) cannot count misses: time decides.
        swept, period = self._last_swept.get(antenna), self._period.get(antenna)
        return swept is not None and period is not None and self._dwells - swept > 3 * period

    def expire(self, now: float) -> list[Transition]:
        """Departures due by ``now`` (call it regularly, also when no frame arrives)."""
        out: list[Transition] = []
        for uid in list(self._tags):
            tag = self._tags[uid]
            for antenna in [a for a, s in tag.sightings.items() if self._gone(a, s, now)]:
                del tag.sightings[antenna]
            if tag.antenna is not None and tag.antenna not in tag.sightings:
                out.append(Transition(tag.antenna, uid, False, tag.face))
                tag.antenna = None
                # Seen strongly elsewhere meanwhile: it moved there.
                elsewhere = [
                    (s.rssi, a)
                    for a, s in tag.sightings.items()
                    if s.missed == 0 and s.rssi >= self.min_rssi
                ]
                if elsewhere:
                    _, antenna = max(elsewhere)
                    tag.antenna = antenna
                    out.append(Transition(antenna, uid, True, tag.face))
            if not tag.sightings and tag.antenna is None:
                del self._tags[uid]
        return out
