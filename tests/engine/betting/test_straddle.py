"""The straddle (seed 000: a third, optional blind of 2 x big blind by the third seat left of the
button, where the house allows it): posted before the deal it is a blind, not a wrong one; the
action begins left of it, it acts last preflop, and the minimum raise is measured by it."""

from __future__ import annotations

from engine.betting.terms import Action
from tests.engine.betting.test_hand_rules import Table, raised, start


def straddled(
    seats: tuple[int, ...] = (1, 2, 3, 4),
    button: int = 4,
    *,
    straddle: int = 4,
    ante: int = 0,
    structure: str = "no_limit",
    allowed: bool = True,
) -> Table:
    """Blinds 1/2 and ``straddle`` posted by the first three seats left of ``button``, dealt."""
    t = Table(start(seats, button, ante=ante, structure=structure, straddle=allowed))
    ring = t.m.ring
    for seat, blind in zip(ring, (1, 2, straddle), strict=False):
        t.bet(seat, ante + blind)
    for seat in ring[3:]:
        if ante:
            t.bet(seat, ante)
    t._take(t.m.dealt())
    return t


def test_a_straddle_raises_nothing_and_is_posted_after_the_blinds() -> None:
    t = straddled()
    assert raised(t.verdicts) == []
    assert t.m.actions == (
        Action("preflop", 1, "post", 1),
        Action("preflop", 2, "post", 2),
        Action("preflop", 3, "post", 4),
    )
    assert t.m.to_act == 4  # left of the straddler


def test_a_straddle_with_antes_is_the_ante_and_2_x_big_blind() -> None:
    t = straddled(ante=1)
    assert raised(t.verdicts) == []
    assert [(a.seat, a.amount) for a in t.m.actions] == [
        (1, 1),
        (2, 1),
        (3, 1),
        (4, 1),
        (1, 1),
        (2, 2),
        (3, 4),
    ]
    assert t.m.to_act == 4


def test_the_straddler_has_the_option_and_acts_last_preflop() -> None:
    t = straddled()
    t.bet(4, 4)
    assert t.m.to_act == 1
    t.bet(1, 3)
    assert t.m.to_act == 2
    t.bet(2, 2)
    assert t.m.to_act == 3  # everyone called: the straddler may still raise
    assert raised(t.bet(3, 8)) == []  # its raise to 12 is a full one (8 >= 4)
    assert t.m.to_act == 4
    assert [a.action for a in t.m.actions[3:]] == ["call", "call", "call", "raise"]


def test_the_straddler_checks_its_option_when_the_flop_comes() -> None:
    t = straddled()
    for seat, chips in ((4, 4), (1, 3), (2, 2)):
        t.bet(seat, chips)
    t.sweep()
    assert raised(t.street(1)) == []
    assert t.m.actions[-1] == Action("preflop", 3, "check", 0)
    assert t.m.pots[0].amount == 16
    assert t.m.to_act == 1


def test_everyone_folding_to_the_straddle_gives_back_its_uncalled_part() -> None:
    t = straddled()
    for seat in (4, 1, 2):
        t.fold(seat)
    assert raised(t.verdicts) == []
    assert t.m.uncalled == (3, 2)


def test_a_raise_below_4_x_big_blind_after_a_straddle_is_below_the_minimum() -> None:
    t = straddled()
    verdicts = t.bet(4, 6)
    assert raised(t.fold(1)) == ["raise_below_minimum"]
    assert verdicts == ()
    assert "minimum raise to 8" in t.verdicts[-1].message  # type: ignore[union-attr]
    t2 = straddled()
    t2.bet(4, 8)
    assert raised(t2.fold(1)) == []


def test_pot_limit_after_a_straddle_goes_from_the_straddle_to_the_pot() -> None:
    t = straddled(structure="pot_limit")
    t.bet(4, 15)  # call 4, pot 1 + 2 + 4 + 4 = 11: to 15 at most
    t.fold(1)
    assert raised(t.verdicts) == []
    t2 = straddled(structure="pot_limit")
    t2.bet(4, 16)
    assert raised(t2.fold(1)) == ["bet_over_limit"]


def test_without_the_house_s_straddle_the_same_post_is_a_wrong_blind() -> None:
    t = straddled(allowed=False)
    assert raised(t.verdicts) == ["blind_wrong_amount"]
    assert t.verdicts[0].seat == 3  # type: ignore[union-attr]


def test_three_times_the_big_blind_at_the_straddle_seat_is_a_wrong_blind() -> None:
    t = straddled(straddle=6)
    assert raised(t.verdicts) == ["blind_wrong_amount"]
    assert t.verdicts[0].seat == 3  # type: ignore[union-attr]


def test_heads_up_there_is_no_straddle() -> None:
    t = Table(start((3, 7), button=7))
    t.bet(7, 4)  # the button (small blind) puts in 2 x big blind
    t.bet(3, 2)
    assert raised(t._take(t.m.dealt())) == ["blind_wrong_amount"]


def test_fixed_limit_has_no_straddle() -> None:
    t = straddled(structure="fixed_limit")
    assert raised(t.verdicts) == ["blind_wrong_amount"]


def test_three_handed_the_button_straddles_and_the_small_blind_acts_first() -> None:
    t = straddled((2, 5, 9), button=9)  # ring 2 (small), 5 (big), 9 (button: straddle)
    assert raised(t.verdicts) == []
    assert t.m.to_act == 2
    t.bet(2, 3)
    t.bet(5, 2)
    assert t.m.to_act == 9


def test_a_straddle_by_action_inputs() -> None:
    t = Table(start())
    for seat, amount in ((1, 1), (2, 2), (3, 4)):
        t.action(seat, "post", amount)
    t._take(t.m.dealt())
    assert t.m.to_act == 4
    assert raised(t.action(4, "raise", 6)) == ["raise_below_minimum"]  # to 6: the minimum is 8
    t2 = Table(start())
    for seat, amount in ((1, 1), (2, 2), (3, 4)):
        t2.action(seat, "post", amount)
    t2._take(t2.m.dealt())
    assert raised(t2.action(4, "raise", 8)) == []
    for seat, amount in ((1, 7), (2, 6)):
        t2.action(seat, "call", amount)
    assert t2.m.to_act == 3
    assert [a.action for a in t2.m.actions] == ["post", "post", "post", "raise", "call", "call"]


def test_without_a_button_a_straddle_sized_post_is_no_wrong_blind() -> None:
    t = Table(start(button=None))
    for seat, amount in ((1, 1), (2, 2), (3, 4)):
        t.bet(seat, amount)
    assert raised(t._take(t.m.dealt())) == []
