"""Turn the dealer's physical steps into the contract device events the drivers would publish.

For tests that drive the engine without simulators: the RFID reader (``tag``), the shuffler
(``shuffling`` / ``shuffle_complete``) and the sensor board (``seat``, ``button``, ``blind``,
``key``), each with its own ``seq`` from 1 and ``ts`` advancing by each step's ``pause_s``;
:func:`to_stream` adds the dealer inputs (a badge read, the tournament clock started) in their
place, numbered by their own source (:data:`INPUT_SOURCE`).
With ``noise`` the reader also misbehaves the harmless ways a real one does around hole cards:
a tag reported twice, a neighbouring seat's antenna hearing a card for a moment (crosstalk), a
card unseen for a moment (lifted and put back).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from config.layout import standard_antennas
from contract.cards import stack_zone
from contract.models import (
    BlindEvent,
    ButtonEvent,
    DealerBadgeInput,
    DealerInput,
    DeviceEvent,
    KeyEvent,
    LevelStartInput,
    SeatEvent,
    ShuffleCompleteEvent,
    ShufflingEvent,
    TagEvent,
)
from simulators.dealer.steps import (
    AwaitShuffle,
    DealerBadge,
    DeviceIds,
    FailDeckCheck,
    LevelStart,
    Marker,
    Move,
    MoveButton,
    MoveChips,
    Place,
    PlaceChips,
    Press,
    Remove,
    SetBlind,
    SetOccupied,
    Shuffle,
    Step,
    TakeChips,
    Wait,
)

#: Antennas of a reader that covers a table of ten seats (the standard layout, chip zones too,
#: and the players' stacks after them).
DEFAULT_ANTENNAS: Final[dict[int, str]] = {
    **standard_antennas(10, chips=True),
    **{len(standard_antennas(10, chips=True)) + seat: stack_zone(seat) for seat in range(1, 11)},
}
DEFAULT_START: Final = datetime(2026, 1, 1, 20, 0, tzinfo=UTC)
#: The ``source`` of the dealer inputs: the badge reader's (and the floor's clock) terminal.
INPUT_SOURCE: Final = "badges"


@dataclass(frozen=True, slots=True)
class SourcedEvent:
    """One device event, the device that published it and the index of the step behind it."""

    device: str
    event: DeviceEvent
    step: int


@dataclass(frozen=True, slots=True)
class SourcedInput:
    """One dealer input (published on the table's ``input`` topic) and its step's index."""

    input: DealerInput
    step: int


class ZoneAntennas:
    """Which antenna a card placed on a zone lands on; the board fills its first antenna first."""

    def __init__(self, antennas: Mapping[int, str]) -> None:
        self.by_zone: dict[str, list[int]] = {}
        for antenna, zone in sorted(antennas.items()):
            self.by_zone.setdefault(zone, []).append(antenna)
        self.where: dict[str, int] = {}  # uid -> antenna it lies on

    def place(self, uid: str, zone: str) -> int:
        choices = self.by_zone.get(zone)
        if not choices:
            raise KeyError(f"no antenna covers zone {zone!r}")
        antenna = choices[0]
        if zone == "board" and len(choices) > 1:
            on_board = sum(1 for a in self.where.values() if a in choices)
            antenna = choices[0] if on_board < 3 else choices[1]
        self.where[uid] = antenna
        return antenna

    def remove(self, uid: str) -> int:
        return self.where.pop(uid)


@dataclass
class _Clock:
    now: datetime
    seqs: dict[str, int] = field(default_factory=dict)

    def next(self, device: str) -> tuple[int, datetime]:
        seq = self.seqs.get(device, 0) + 1
        self.seqs[device] = seq
        self.now += timedelta(milliseconds=1)
        return seq, self.now


def to_events(
    steps: Iterable[Step],
    *,
    antennas: Mapping[int, str] | None = None,
    devices: DeviceIds | None = None,
    start: datetime = DEFAULT_START,
    noise: random.Random | None = None,
) -> list[SourcedEvent]:
    """The device events a table would publish while the dealer carries out ``steps``.

    A moved card is reported present in its new zone, then absent from the old one (the reader
    sees the arrival at once and the departure after its hold time). Call it once per session
    (the sequence numbers start at 1), or pass every hand's steps in one iterable. The dealer
    inputs are left out (see :func:`to_stream`).
    """
    return [
        item
        for item in to_stream(steps, antennas=antennas, devices=devices, start=start, noise=noise)
        if isinstance(item, SourcedEvent)
    ]


def to_stream(
    steps: Iterable[Step],
    *,
    antennas: Mapping[int, str] | None = None,
    devices: DeviceIds | None = None,
    start: datetime = DEFAULT_START,
    noise: random.Random | None = None,
) -> list[SourcedEvent | SourcedInput]:
    """What the table sends while the dealer carries out ``steps``: the device events of
    :func:`to_events` and, in their place, the dealer inputs (``seq`` from 1, source
    :data:`INPUT_SOURCE`)."""
    ids = devices or DeviceIds()
    zones = ZoneAntennas(antennas or DEFAULT_ANTENNAS)
    zone_of = dict((antennas or DEFAULT_ANTENNAS).items())
    clock = _Clock(start)
    out: list[SourcedEvent | SourcedInput] = []

    def emit(device: str, index: int, build: type[DeviceEvent], **fields: object) -> None:
        seq, ts = clock.next(device)
        out.append(SourcedEvent(device, build(seq=seq, ts=ts, **fields), index))

    for index, step in enumerate(steps):
        clock.now += timedelta(seconds=step.pause_s)
        match step:
            case Place(uid=uid, zone=zone, face=face) | Move(uid=uid, zone=zone, face=face):
                old = zones.where.get(uid)
                if isinstance(step, Move) and old is not None and zone_of[old] == zone:
                    # Turned over where it lies: the reader reports the new face only.
                    emit(
                        ids.reader, index, TagEvent, antenna=old, zone=zone, uid=uid, present=True, face=face
                    )
                    continue
                if isinstance(step, Move) and old is not None:
                    zones.remove(uid)
                antenna = zones.place(uid, zone)
                emit(
                    ids.reader, index, TagEvent, antenna=antenna, zone=zone, uid=uid, present=True, face=face
                )
                if isinstance(step, Move) and old is not None:
                    emit(
                        ids.reader,
                        index,
                        TagEvent,
                        antenna=old,
                        zone=zone_of[old],
                        uid=uid,
                        present=False,
                        face=None,
                    )
                if noise is not None and zone.startswith("seat:"):
                    for ghost in _reader_noise(noise, antenna, zone, face, zone_of):
                        emit(ids.reader, index, TagEvent, uid=uid, **ghost)
            case Remove(uid=uid):
                antenna = zones.remove(uid)
                emit(
                    ids.reader,
                    index,
                    TagEvent,
                    antenna=antenna,
                    zone=zone_of[antenna],
                    uid=uid,
                    present=False,
                    face=None,
                )
            case Shuffle(deck=deck):
                emit(ids.shuffler, index, ShufflingEvent, deck=deck)
                emit(ids.shuffler, index, ShuffleCompleteEvent, deck=deck, count=52, ok=True)
            case FailDeckCheck(deck=deck, count=count, missing=missing, duplicates=duplicates):
                emit(ids.shuffler, index, ShufflingEvent, deck=deck)
                emit(
                    ids.shuffler,
                    index,
                    ShuffleCompleteEvent,
                    deck=deck,
                    count=count,
                    ok=False,
                    missing=list(missing),
                    duplicates=list(duplicates),
                )
            case Press(key=key, seat=seat):
                emit(ids.sensors, index, KeyEvent, key=key, seat=seat)
            case MoveButton(seat=seat):
                emit(ids.sensors, index, ButtonEvent, seat=seat)
            case SetBlind(seat=seat, present=present):
                emit(ids.sensors, index, BlindEvent, seat=seat, present=present)
            case SetOccupied(seat=seat, occupied=occupied):
                emit(ids.sensors, index, SeatEvent, seat=seat, occupied=occupied)
            case PlaceChips(uids=uids, zone=zone) | MoveChips(uids=uids, zone=zone):
                # A handful of chips is read in its new zone, then (after the hold time) no
                # longer where it lay.
                moved = isinstance(step, MoveChips)
                left = [(uid, zones.where.get(uid)) for uid in uids] if moved else []
                for uid in uids:
                    if moved and uid in zones.where:
                        zones.remove(uid)
                    antenna = zones.place(uid, zone)
                    emit(
                        ids.reader,
                        index,
                        TagEvent,
                        antenna=antenna,
                        zone=zone,
                        uid=uid,
                        present=True,
                        face=None,
                    )
                for uid, old in left:
                    if old is not None:
                        emit(
                            ids.reader,
                            index,
                            TagEvent,
                            antenna=old,
                            zone=zone_of[old],
                            uid=uid,
                            present=False,
                            face=None,
                        )
            case TakeChips(uids=uids):
                for uid in uids:
                    if uid in zones.where:
                        antenna = zones.remove(uid)
                        emit(
                            ids.reader,
                            index,
                            TagEvent,
                            antenna=antenna,
                            zone=zone_of[antenna],
                            uid=uid,
                            present=False,
                            face=None,
                        )
            case DealerBadge(badge=badge):
                seq, ts = clock.next(INPUT_SOURCE)
                out.append(
                    SourcedInput(DealerBadgeInput(ts=ts, dealer=badge, seq=seq, source=INPUT_SOURCE), index)
                )
            case LevelStart():
                seq, ts = clock.next(INPUT_SOURCE)
                out.append(SourcedInput(LevelStartInput(ts=ts, seq=seq, source=INPUT_SOURCE), index))
            case Wait(seconds=seconds):
                clock.now += timedelta(seconds=seconds)
            case AwaitShuffle() | Marker():
                pass
    return out


def _reader_noise(
    rng: random.Random, antenna: int, zone: str, face: str | None, zone_of: Mapping[int, str]
) -> list[dict[str, object]]:
    """Harmless misreads of a card just placed at a seat (the fields of extra tag events)."""
    here = {"antenna": antenna, "zone": zone}
    out: list[dict[str, object]] = []
    # About one misread a hand at a full table, as the table script's legal hands had.
    roll = rng.random()
    if roll < 0.04:  # reported again
        out.append({**here, "present": True, "face": face})
    elif roll < 0.06:  # a neighbouring seat's antenna hears it for a moment
        seats = [(a, z) for a, z in sorted(zone_of.items()) if z.startswith("seat:") and z != zone]
        other, other_zone = rng.choice(seats)
        out.append({"antenna": other, "zone": other_zone, "present": True, "face": face})
        out.append({"antenna": other, "zone": other_zone, "present": False, "face": None})
    elif roll < 0.08:  # unseen for a moment: lifted and put back
        out.append({**here, "present": False, "face": None})
        out.append({**here, "present": True, "face": face})
    return out
