"""Raw antenna sweeps -> clean ``present`` transitions, without flapping. Pure logic, no I/O.

The reader reports, after each antenna's dwell, every tag that antenna saw; it sometimes misses a
tag that is there, reports one twice, and an antenna sometimes hears a tag lying on its
neighbour's zone (crosstalk, with a much weaker signal). The tracker assigns each tag to at most
one antenna (a card lies in one place) and reports a change only when the evidence is clear:

- **arrival**: a read at or above ``min_rssi`` dBm on an antenna puts an unassigned tag there
  (weaker reads are crosstalk and never create presence on their own);
- **departure**: a tag leaves its antenna when it has been unseen there for more than ``hold_s``
  *and* that antenna has swept at least ``min_missed_dwells`` times without it (so a hold time
  shorter than a few sweeps cannot make a missed read look like a departure);
- **move**: a tag read on another antenna moves there at once when that read is clearly stronger
  (by ``switch_margin_db``) than its current antenna's, or as strong while its current antenna has
  just swept without it; otherwise it moves when it departs from the current antenna;
- **face**: a changed orientation is reported (as a new ``present`` transition with the new face)
  once two reads in a row agree on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from drivers.rfid.protocol import Inventory

DEFAULT_MIN_RSSI: Final = -60
DEFAULT_SWITCH_MARGIN_DB: Final = 6.0
DEFAULT_MIN_MISSED_DWELLS: Final = 4
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
    ) -> None:
        self.hold_s = hold_s
        self.min_rssi = min_rssi
        self.switch_margin_db = switch_margin_db
        self.min_missed_dwells = min_missed_dwells
        self._tags: dict[str, _Tag] = {}

    @property
    def present(self) -> dict[str, int]:
        """Tags present now: UID -> antenna."""
        return {uid: tag.antenna for uid, tag in self._tags.items() if tag.antenna is not None}

    def clear(self) -> None:
        """Forget everything (a new session: the driver reports what it sees afresh)."""
        self._tags.clear()

    def observe(self, inventory: Inventory, now: float) -> list[Transition]:
        """Take one antenna's inventory; return the transitions it causes, in order."""
        antenna = inventory.antenna
        best: dict[str, tuple[int, str | None]] = {}
        for read in inventory.reads:
            face = read.orientation.face
            if read.uid not in best or read.rssi > best[read.uid][0]:
                best[read.uid] = (read.rssi, face)
        # The antenna swept: every tag it had seen but not this time missed one dwell.
        for uid, tag in self._tags.items():
            sighting = tag.sightings.get(antenna)
            if sighting is not None and uid not in best:
                sighting.missed += 1
        out: list[Transition] = []
        for uid, (rssi, face) in best.items():
            tag = self._tags.setdefault(uid, _Tag())
            sighting = tag.sightings.get(antenna)
            if sighting is None or now - sighting.last_seen > self.hold_s:
                tag.sightings[antenna] = _Sighting(now, float(rssi))
            else:
                sighting.last_seen, sighting.missed = now, 0
                sighting.rssi = (sighting.rssi + rssi) / 2
            out.extend(self._assign(uid, tag, antenna, rssi, face))
        out.extend(self.expire(now))
        return out

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

    def _gone(self, sighting: _Sighting, now: float) -> bool:
        unseen = now - sighting.last_seen
        # Without sweeps of that antenna (removed from the sweep) time alone decides, later.
        return unseen > self.hold_s and (
            sighting.missed >= self.min_missed_dwells or unseen > 4 * self.hold_s
        )

    def expire(self, now: float) -> list[Transition]:
        """Departures due by ``now`` (call it regularly, also when no frame arrives)."""
        out: list[Transition] = []
        for uid in list(self._tags):
            tag = self._tags[uid]
            for antenna in [a for a, s in tag.sightings.items() if self._gone(s, now)]:
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
