"""Main and side pots and the uncalled bet (seed 001), by hand-worked examples and properties."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from engine.betting.pots import build_pots, uncalled
from engine.betting.terms import Pot


def test_uncalled_is_the_top_bets_excess_over_the_second() -> None:
    assert uncalled({1: 100, 2: 300, 3: 50}) == (2, 200)


def test_matched_top_leaves_nothing_uncalled() -> None:
    assert uncalled({1: 300, 2: 300, 3: 50}) is None


def test_a_big_blind_nobody_called_goes_back_beyond_the_small_blind() -> None:
    # everyone folds to the big blind: the part of it the small blind did not match is returned
    assert uncalled({1: 1, 2: 2}) == (2, 1)


def test_a_lone_contributor_gets_everything_back() -> None:
    assert uncalled({4: 40}) == (4, 40)
    assert uncalled({}) is None
    assert uncalled({1: 0, 2: 0}) is None


def test_folded_chips_count_for_the_second_highest() -> None:
    # seat 3 raised to 80 and folded to seat 1's all-in re-raise to 200: 120 uncalled
    assert uncalled({1: 200, 2: 10, 3: 80}) == (1, 120)


def test_everyone_equal_makes_one_pot() -> None:
    assert build_pots({1: 50, 2: 50, 3: 50}, {1, 2, 3}) == (Pot(150, (1, 2, 3)),)


def test_three_all_ins_at_three_levels() -> None:
    # seat 1 all in for 50, seat 2 for 120, seat 3 for 300, seat 4 covers with 300
    pots = build_pots({1: 50, 2: 120, 3: 300, 4: 300}, {1, 2, 3, 4})
    assert pots == (Pot(200, (1, 2, 3, 4)), Pot(210, (2, 3, 4)), Pot(360, (3, 4)))


def test_folded_chips_fill_the_levels_but_win_nothing() -> None:
    # seat 2 folded after putting in 80: 50 of it in the main pot, 30 in the side pot
    pots = build_pots({1: 50, 2: 80, 3: 200, 4: 200}, {1, 3, 4})
    assert pots == (Pot(200, (1, 3, 4)), Pot(330, (3, 4)))


def test_folded_chips_below_every_level_all_go_to_the_main_pot() -> None:
    pots = build_pots({1: 1, 2: 2, 3: 30, 4: 30}, {3, 4})
    assert pots == (Pot(63, (3, 4)),)


def test_uncalled_returned_then_pots() -> None:
    contributed = {1: 40, 2: 500, 3: 100}
    back = uncalled(contributed)
    assert back == (2, 400)
    seat, amount = back
    contributed[seat] -= amount
    assert build_pots(contributed, {1, 2, 3}) == (Pot(120, (1, 2, 3)), Pot(120, (2, 3)))


def test_everyone_but_one_folded_gives_one_pot_to_that_seat() -> None:
    assert build_pots({1: 1, 2: 2, 5: 2}, {5}) == (Pot(5, (5,)),)


def test_no_chips_no_pots() -> None:
    assert build_pots({}, {1, 2}) == ()
    assert build_pots({1: 0, 2: 0}, {1, 2}) == ()


def test_chips_above_the_top_live_level_join_the_last_pot() -> None:
    # not a legal end state (the uncalled part was not returned) but no chip may vanish
    assert build_pots({1: 100, 2: 30}, {2}) == (Pot(130, (2,)),)


def test_eligible_seats_are_in_seat_order() -> None:
    pots = build_pots({9: 10, 2: 10, 5: 10}, {9, 5, 2})
    assert pots[0].eligible == (2, 5, 9)


contributions = st.dictionaries(st.integers(1, 10), st.integers(0, 1000), min_size=1, max_size=10)


@given(contributions, st.data())
def test_pots_hold_every_chip_and_shrink_upwards(contributed: dict[int, int], data: st.DataObject) -> None:
    live = data.draw(st.sets(st.sampled_from(sorted(contributed)), min_size=1))
    pots = build_pots(contributed, live)
    assert sum(p.amount for p in pots) == sum(contributed.values())
    assert all(p.amount > 0 for p in pots)
    for lower, upper in pairwise(pots):
        assert set(upper.eligible) < set(lower.eligible)
    for pot in pots:
        assert set(pot.eligible) <= live
        assert list(pot.eligible) == sorted(pot.eligible)


@given(contributions)
def test_after_the_uncalled_part_the_top_is_matched(contributed: dict[int, int]) -> None:
    back = uncalled(contributed)
    if back is not None:
        seat, amount = back
        assert amount > 0
        contributed = {**contributed, seat: contributed[seat] - amount}
    assert uncalled(contributed) is None
