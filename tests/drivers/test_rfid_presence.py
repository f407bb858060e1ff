"""The presence tracker alone, on a simulated clock: arrivals, departures, moves, noise."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.rfid.presence import PresenceTracker, Transition
from drivers.rfid.protocol import Inventory, Orientation, TagRead

UID, OTHER = "E0040150654CC41C", "E00401501EE63A2D"
DWELL = 0.02


def read(uid: str = UID, rssi: int = -45, face: Orientation = Orientation.UNKNOWN) -> TagRead:
    return TagRead(uid, rssi, face)


class Sweeper:
    """Sweeps antennas 1..n on a fake clock, one dwell each."""

    def __init__(self, tracker: PresenceTracker, antennas: int = 4) -> None:
        self.tracker = tracker
        self.antennas = antennas
        self.now = 0.0
        self.out: list[Transition] = []

    def sweep(self, reads: dict[int, tuple[TagRead, ...]]) -> None:
        for antenna in range(1, self.antennas + 1):
            self.now += DWELL
            inventory = Inventory(antenna, 0, reads.get(antenna, ()))
            self.out += self.tracker.observe(inventory, self.now)


def test_arrival_then_departure_after_hold() -> None:
    sweeper = Sweeper(PresenceTracker(0.3, initial_miss_rate=0.0))
    sweeper.sweep({2: (read(face=Orientation.DOWN),)})
    assert sweeper.out == [Transition(2, UID, True, "down")]
    for _ in range(3):  # 3 sweeps = 0.24 s < hold: still there
        sweeper.sweep({})
    assert len(sweeper.out) == 1
    for _ in range(3):
        sweeper.sweep({})
    assert sweeper.out[1:] == [Transition(2, UID, False, "down")]


def test_departure_needs_missed_sweeps_even_with_a_short_hold() -> None:
    sweeper = Sweeper(PresenceTracker(0.05, min_missed_dwells=4, initial_miss_rate=0.0))
    sweeper.sweep({1: (read(),)})
    sweeps = 0
    while len(sweeper.out) == 1 and sweeps < 20:
        sweeper.sweep({})
        sweeps += 1
    # 0.05 s is less than one sweep (0.08 s), yet four sweeps without the tag are needed.
    assert sweeps == 4
    assert sweeper.out[-1] == Transition(1, UID, False, None)


def test_weak_crosstalk_never_creates_or_moves_presence() -> None:
    sweeper = Sweeper(PresenceTracker(0.3))
    sweeper.sweep({1: (read(rssi=-72),)})
    assert sweeper.out == []
    sweeper.sweep({2: (read(),), 3: (read(rssi=-70),), 1: (read(rssi=-74),)})
    assert sweeper.out == [Transition(2, UID, True, None)]


def test_a_reader_that_misses_often_needs_more_missed_sweeps() -> None:
    tracker = PresenceTracker(0.1, initial_miss_rate=0.0)
    assert tracker.missed_dwells_to_leave == 4
    tracker.miss_rate = 0.2
    assert tracker.missed_dwells_to_leave == 12
    tracker.miss_rate = 0.05
    assert tracker.missed_dwells_to_leave == 6
    tracker.miss_rate = 0.01
    assert tracker.missed_dwells_to_leave == 4


def test_antenna_taken_out_of_the_sweep_lets_its_tags_go() -> None:
    sweeper = Sweeper(PresenceTracker(0.1, initial_miss_rate=0.0), antennas=2)
    sweeper.sweep({2: (read(),)})
    sweeper.sweep({2: (read(),)})
    sweeper.antennas = 1  # antenna 2 is no longer swept: no misses are counted there
    for _ in range(8):
        sweeper.sweep({})
    assert sweeper.out[-1] == Transition(2, UID, False, None)


def test_move_is_reported_within_a_sweep() -> None:
    sweeper = Sweeper(PresenceTracker(0.4))
    sweeper.sweep({1: (read(),)})
    sweeper.sweep({4: (read(),)})  # antenna 1 swept without it first, then 4 sees it
    assert sweeper.out == [
        Transition(1, UID, True, None),
        Transition(1, UID, False, None),
        Transition(4, UID, True, None),
    ]


def test_face_change_needs_two_reads() -> None:
    sweeper = Sweeper(PresenceTracker(0.4))
    sweeper.sweep({1: (read(face=Orientation.DOWN),)})
    sweeper.sweep({1: (read(face=Orientation.UP),)})
    assert len(sweeper.out) == 1
    sweeper.sweep({1: (read(face=Orientation.UP),)})
    assert sweeper.out[-1] == Transition(1, UID, True, "up")


@given(st.integers(0, 2**32 - 1), st.sampled_from([0.4, 0.1]))
@settings(max_examples=80, deadline=None)
def test_twenty_percent_missed_reads_with_crosstalk_do_not_flap(seed: int, hold_s: float) -> None:
    # A hold of 0.1 s is shorter than two sweeps (0.16 s): one missed read outlasts it.
    rng = random.Random(seed)
    sweeper = Sweeper(PresenceTracker(hold_s), antennas=4)
    for _ in range(100):
        reads: dict[int, list[TagRead]] = {}
        for uid, antenna in ((UID, 2), (OTHER, 3)):
            if rng.random() >= 0.2:
                reads.setdefault(antenna, []).append(read(uid))
            if rng.random() < 0.3:
                neighbour = antenna + rng.choice((-1, 1))
                reads.setdefault(neighbour, []).append(read(uid, rssi=-72 + rng.randint(-4, 4)))
        sweeper.sweep({a: tuple(r) for a, r in reads.items()})
    # The tracker learnt the miss rate: about 12 misses in a row are needed to depart.
    assert sweeper.tracker.missed_dwells_to_leave >= 8
    assert sorted(sweeper.out, key=lambda t: t.antenna) == [
        Transition(2, UID, True, None),
        Transition(3, OTHER, True, None),
    ]


def test_a_pause_of_the_driver_is_not_a_departure() -> None:
    # The driver gets no CPU for two seconds; the reader kept sweeping and the backlog arrives.
    tracker = PresenceTracker(0.3, initial_miss_rate=0.0)
    sweeper = Sweeper(tracker)
    sweeper.sweep({3: (read(),)})
    sweeper.sweep({3: (read(),)})
    assert tracker.expire(sweeper.now + 2.0) == []
    sweeper.now += 2.0
    sweeper.sweep({3: (read(),)})
    assert sweeper.out == [Transition(3, UID, True, None)]
