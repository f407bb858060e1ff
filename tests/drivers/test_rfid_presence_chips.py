"""The presence tracker with a chip load, on a simulated clock: 300 tags on one antenna, paged
dwells that last seconds, lost pages, chips swept from betting areas into the pot."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.rfid.presence import PresenceTracker, Transition
from drivers.rfid.protocol import Inventory, InventoryPage, TagRead

CARD = "E0040150654CC41C"
PAGE = 32
#: Seconds per tag of the anti-collision (docs/protocols/rfid.md) and per empty antenna.
PER_TAG_S, EMPTY_S = 0.009, 0.0098
TICK_S = 0.05


def chips(count: int, first: int = 1) -> list[str]:
    return [f"E0070000{n:08X}" for n in range(first, first + count)]


@dataclass
class Table:
    """Antennas 1..n swept in ``order``; each dwell lasts the anti-collision time of its tags.

    The tracker gets what the driver would: pages as they fill, the last page (or one plain
    Inventory) when the dwell ends, and ``expire`` every tick in between.
    """

    tracker: PresenceTracker
    order: list[int]
    where: dict[str, int] = field(default_factory=dict)  # uid -> antenna
    now: float = 0.0
    round: int = 0
    out: list[Transition] = field(default_factory=list)
    rng: random.Random = field(default_factory=lambda: random.Random(3))
    miss_rate: float = 0.0
    page_loss: float = 0.0
    #: Transitions per sweep, to check bounds in sweeps.
    sweep_marks: list[int] = field(default_factory=list)

    def _advance(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now + TICK_S < end:
            self.now += TICK_S
            self.out += self.tracker.expire(self.now)
        self.now = end

    def _send(self, message: Inventory | InventoryPage) -> None:
        if isinstance(message, InventoryPage) and self.rng.random() < self.page_loss:
            return  # lost on the line
        if isinstance(message, Inventory):
            self.out += self.tracker.observe(message, self.now)
        else:
            self.out += self.tracker.observe_page(message, self.now)

    def dwell(self, antenna: int) -> None:
        tags = [uid for uid, a in self.where.items() if a == antenna]
        self.rng.shuffle(tags)  # the anti-collision's order
        reads = [TagRead(uid, -45) for uid in tags if self.rng.random() >= self.miss_rate]
        if len(tags) <= PAGE:
            self._advance(EMPTY_S + PER_TAG_S * len(tags))
            self._send(Inventory(antenna, self.round, tuple(reads)))
            return
        page = 0
        while len(reads) > PAGE:
            self._advance(PER_TAG_S * PAGE)
            self._send(InventoryPage(antenna, self.round, page, False, tuple(reads[:PAGE])))
            reads, page = reads[PAGE:], page + 1
        self._advance(EMPTY_S + PER_TAG_S * (len(tags) - PAGE * page))
        self._send(InventoryPage(antenna, self.round, page, True, tuple(reads)))

    def sweep(self, count: int = 1) -> None:
        for _ in range(count):
            for antenna in self.order:
                self.dwell(antenna)
            self.round = (self.round + 1) & 0xFF
            self.sweep_marks.append(len(self.out))

    def sweeps_until(self, index: int) -> int:
        """How many sweeps it took until transition ``index`` was reported."""
        return next(n for n, mark in enumerate(self.sweep_marks, 1) if mark > index)


POT, BET1, BET2, SEAT1 = 5, 3, 4, 1


def test_three_hundred_chips_and_a_card_stay_present_however_long_the_pot_takes() -> None:
    # Hold 0.1 s; the pot's inventory lasts 2.7 s and the seat is not swept meanwhile.
    table = Table(PresenceTracker(0.1, initial_miss_rate=0.0), order=[1, 2, 3, 4, 5, 6])
    pot = chips(300)
    table.where = dict.fromkeys(pot, POT) | {CARD: SEAT1}
    table.sweep(30)
    assert sorted(table.out, key=lambda t: t.uid) == sorted(
        [Transition(POT, uid, True, None) for uid in pot] + [Transition(SEAT1, CARD, True, None)],
        key=lambda t: t.uid,
    )
    assert table.now > 30 * 2.7
    # The card is reported gone by missed sweeps, not by the time the pot took.
    del table.where[CARD]
    before = len(table.out)
    table.sweep(table.tracker.missed_dwells_to_leave)
    assert table.out[before:] == [Transition(SEAT1, CARD, False, None)]


def test_misses_of_a_paged_dwell_count_when_its_last_page_arrives() -> None:
    tracker = PresenceTracker(0.0, min_missed_dwells=4, initial_miss_rate=0.0)
    pot = chips(100)
    tracker.observe_page(InventoryPage(POT, 0, 0, False, tuple(TagRead(u, -45) for u in pot[:50])), 0)
    tracker.observe_page(InventoryPage(POT, 0, 1, True, tuple(TagRead(u, -45) for u in pot[50:])), 1)
    assert set(tracker.present) == set(pot)
    gone = pot[0]
    for sweep in range(1, 5):
        reads = tuple(TagRead(u, -45) for u in pot[1:])
        assert tracker.observe_page(InventoryPage(POT, sweep, 0, False, reads[:60]), 10 * sweep) == []
        # Not counted before the dwell closes, however late it is.
        assert tracker.expire(10 * sweep + 5) == []
        out = tracker.observe_page(InventoryPage(POT, sweep, 1, True, reads[60:]), 10 * sweep + 9)
    assert out == [Transition(POT, gone, False, None)]


def test_a_lost_page_counts_no_misses() -> None:
    tracker = PresenceTracker(0.0, min_missed_dwells=4, initial_miss_rate=0.0)
    pot = chips(96)
    pages = [tuple(TagRead(u, -45) for u in pot[i : i + 32]) for i in (0, 32, 64)]
    for page, reads in enumerate(pages):
        tracker.observe_page(InventoryPage(POT, 0, page, page == 2, reads), 0)
    out: list[Transition] = []
    for sweep in range(1, 11):
        t = 10.0 * sweep
        # Page 1 is lost every time: a gap in the numbers.
        out += tracker.observe_page(InventoryPage(POT, sweep, 0, False, pages[0]), t)
        out += tracker.observe_page(InventoryPage(POT, sweep, 2, True, pages[2]), t + 1)
    # The last page lost too: the next dwell (another antenna) closes this one, broken.
    out += tracker.observe_page(InventoryPage(POT, 11, 0, False, pages[0]), 120)
    out += tracker.observe(Inventory(SEAT1, 11, ()), 121)
    out += tracker.expire(200)
    assert out == []
    assert tracker.broken_dwells == 11
    assert len(tracker.present) == 96


@pytest.mark.parametrize("order", [[1, 2, 3, 4, 5, 6], [5, 6, 1, 2, 3, 4]], ids=["bets-first", "pot-first"])
def test_chips_swept_into_the_pot_arrive_there_before_they_leave_the_bets(order: list[int]) -> None:
    table = Table(PresenceTracker(0.3, initial_miss_rate=0.0, arrive_first={3, 4, 5, 6}), order=order)
    pot, bet1, bet2 = chips(300), chips(20, 1001), chips(12, 2001)
    table.where = dict.fromkeys(pot, POT) | dict.fromkeys(bet1, BET1) | dict.fromkeys(bet2, BET2)
    table.sweep(3)
    start = len(table.out)
    assert start == 332
    # The dealer sweeps both betting areas into the pot, in the middle of the pot's inventory.
    table.dwell(order[0])
    table.where |= dict.fromkeys(bet1 + bet2, POT)
    for antenna in order[1:]:
        table.dwell(antenna)
    table.sweep_marks.append(len(table.out))
    table.sweep(3)
    moves = table.out[start:]
    assert len(moves) == 2 * 32
    for uid in bet1 + bet2:
        index = next(i for i, t in enumerate(moves) if t.uid == uid)
        old = BET1 if uid in bet1 else BET2
        assert moves[index : index + 2] == [
            Transition(POT, uid, True, None),
            Transition(old, uid, False, None),
        ]
        # Within two sweeps of the move (the sweep it happened in counts as the first).
        assert table.sweeps_until(start + index + 1) - 3 <= 2


def test_a_chip_read_in_the_pot_moves_there_when_its_betting_area_next_misses_it() -> None:
    # Swept after the betting area's dwell, read by the pot before the betting area missed it:
    # the move is decided at the betting area's next dwell, not at the pot's next read (which,
    # with 300 chips, can be seconds later).
    tracker = PresenceTracker(0.3, initial_miss_rate=0.0, arrive_first={POT})
    chip = chips(1)[0]
    assert tracker.observe(Inventory(BET1, 0, (TagRead(chip, -45),)), 0.0) == [
        Transition(BET1, chip, True, None)
    ]
    page = InventoryPage(POT, 0, 0, True, (TagRead(chip, -44),))
    assert tracker.observe_page(page, 0.5) == []
    assert tracker.observe(Inventory(BET1, 1, ()), 3.0) == [
        Transition(POT, chip, True, None),
        Transition(BET1, chip, False, None),
    ]
    # A weak (crosstalk) read in the pot is no reason to move.
    other = chips(1, 7)[0]
    tracker.observe(Inventory(BET1, 1, (TagRead(other, -45),)), 3.1)
    tracker.observe_page(InventoryPage(POT, 1, 0, True, (TagRead(other, -72),)), 3.5)
    assert tracker.observe(Inventory(BET1, 2, ()), 6.0) == []


def test_a_move_out_of_the_pot_into_a_card_zone_leaves_first() -> None:
    table = Table(PresenceTracker(0.3, initial_miss_rate=0.0, arrive_first={5}), order=[1, 2, 3, 4, 5])
    table.where = {CARD: POT}
    table.sweep(2)
    table.where[CARD] = SEAT1
    table.sweep(2)
    assert table.out == [
        Transition(POT, CARD, True, None),
        Transition(POT, CARD, False, None),
        Transition(SEAT1, CARD, True, None),
    ]


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=25, deadline=None)
def test_a_noisy_reader_with_a_full_pot_never_flaps(seed: int) -> None:
    # A tenth of the reads missed, a tenth of the pages lost on the line: nothing leaves.
    table = Table(PresenceTracker(0.3), order=[1, 2, 3, 4, 5, 6], rng=random.Random(seed))
    table.miss_rate, table.page_loss = 0.1, 0.1
    pot = chips(300)
    table.where = dict.fromkeys(pot, POT) | {CARD: SEAT1}
    table.sweep(25)
    assert all(t.present for t in table.out)
    assert set(table.tracker.present) == {*pot, CARD}
