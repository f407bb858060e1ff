"""Every code of "Chips, pots and showdown" (and ``unknown_chip``) through the pure core: the
mistake raises exactly its code (once, on the right seat, with the catalogue's severity and the
profile's rule), the dealer following the remedy resolves it, and a game that goes on without the
remedy leaves it active.

The hands are in tests/engine/game_codes.py.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from contract.models import Profile
from engine.betting.terms import Stakes
from engine.catalogue import CATALOGUE, CHIP_CODES
from testing.chipset import chip_registry
from tests.engine.game import Played, game_settings, play
from tests.engine.game_codes import (
    BOARD,
    CASES,
    DEAL,
    DEALT,
    ON_FLOP,
    ON_RIVER,
    SPLIT,
    Case,
)

PROFILES: tuple[Profile, ...] = ("roberts", "tda")
#: Codes whose remedy is written where the alert is raised (the seats and chips of the finding),
#: not the catalogue's general steps.
WRITTEN_AT_RAISE = frozenset({"action_out_of_turn", "odd_chip_wrong", "rake_wrong"})
PARAMS = [
    pytest.param(case, profile, id=f"{case.code}:{case.name}:{profile}")
    for case in CASES
    for profile in PROFILES
]


def _only(played: Played, code: str) -> None:
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [a.code for a in raised] == [code], [f"{a.code} {a.seat}: {a.message}" for a in raised]


@pytest.mark.parametrize(("case", "profile"), PARAMS)
def test_the_mistake_raises_exactly_its_code(case: Case, profile: Profile) -> None:
    played = case.play(case.mistake, profile)
    _only(played, case.code)
    alert = played.alerts[0]
    entry = CATALOGUE[case.code]
    assert (alert.seat, alert.severity, alert.profile) == (case.seat, entry.severity_for(profile), profile)
    assert alert.rule == entry.rule_for(profile)
    if case.code in WRITTEN_AT_RAISE:
        # the steps name the seats and amounts of this finding, from where to where
        assert alert.remedy
        assert all(re.search(r"\bseats? \d", step, re.IGNORECASE) for step in alert.remedy), alert.remedy
    else:
        assert list(alert.remedy) == list(entry.remedy_for(profile))
    assert played.active() == [case.code]


@pytest.mark.parametrize(("case", "profile"), [p for p in PARAMS if p.values[0].followed is not None])  # type: ignore[union-attr]
def test_the_remedy_followed_resolves_it(case: Case, profile: Profile) -> None:
    assert case.followed is not None
    played = case.play((*case.mistake, *case.followed), profile)
    _only(played, case.code)
    raised = played.alerts[0]
    resolved = [a for a in played.alerts if a.status == "resolved"]
    assert [(a.id, a.code) for a in resolved] == [(raised.id, case.code)]
    assert played.active() == []


@pytest.mark.parametrize(("case", "profile"), PARAMS)
def test_without_the_remedy_it_stays_active(case: Case, profile: Profile) -> None:
    played = case.play((*case.mistake, *case.not_followed), profile)
    raised = [a.code for a in played.alerts if a.status == "raised"]
    assert raised == [case.code, *case.also]
    assert [a.code for a in played.alerts if a.status == "resolved"] == []
    assert case.code in played.active()


def test_every_chip_code_has_a_case() -> None:
    assert {case.code for case in CASES} == set(CHIP_CODES)


# -- what each remedy leaves in the hand result --------------------------------------------


def test_a_wrong_push_keeps_the_hand_open_until_put_right() -> None:
    case = next(c for c in CASES if c.code == "pot_awarded_wrong")
    assert case.play((*case.mistake, *case.not_followed), "roberts").hands == []
    assert case.followed is not None
    hands = case.play((*case.mistake, *case.followed), "roberts").hands
    assert [(a.seat, a.amount) for a in hands[-1].awarded] == [(1, 6)]


@pytest.mark.parametrize(
    ("odd_chip", "first", "second"), [("first_shown", 11, 10), ("left_of_button", 10, 11)]
)
def test_a_split_pot_pushed_right_by_either_house_rule(odd_chip: str, first: int, second: int) -> None:
    settings = game_settings(odd_chip=odd_chip)
    steps = (*SPLIT, f"push 1 {first}", f"push 3 {second}", "collect", "clear")
    played = play([1, 2, 3], 1, "\n".join(steps), settings=settings)
    assert played.codes() == []
    (hand,) = played.hands
    assert [(p.amount, p.eligible, p.winners) for p in hand.pots] == [(21, [1, 3], [1, 3])]
    assert [(s.seat, s.amount) for s in hand.pots[0].shares] == [(1, first), (3, second)]
    assert [(s.seat, s.rank) for s in hand.showdown] == [(1, "straight"), (3, "straight")]


def test_the_rake_corrected_from_the_winners_push_leaves_the_push_smaller() -> None:
    case = next(c for c in CASES if c.name == "rake too small")
    assert case.followed is not None
    played = case.play((*case.mistake, *case.followed), "roberts")
    (hand,) = played.hands
    assert (hand.rake, [(a.seat, a.amount) for a in hand.awarded]) == (4, [(1, 38)])


def test_the_uncalled_part_returned_is_out_of_the_pot() -> None:
    case = next(c for c in CASES if c.code == "uncalled_bet_not_returned")
    assert case.followed is not None
    steps = (*case.mistake, *case.followed, "show 2", "show 3", "push 2 26", "collect", "clear")
    played = case.play(steps, "roberts")
    (hand,) = played.hands
    assert [(p.amount, p.eligible, p.winners) for p in hand.pots] == [(26, [2, 3], [2])]
    assert ("river", 3, "all_in", 10) in [(a.street, a.seat, a.action, a.amount) for a in hand.actions]


# -- engine fixes found by these cases ------------------------------------------------------


def test_an_all_in_key_while_another_seat_owes_is_no_run_out() -> None:
    # Seat 3 calls all in for less on the river; seat 1 still has to act: no showdown yet.
    played = play([1, 2, 3], 1, "\n".join([*ON_RIVER, "bet 2 20", "bet 3 10", "all_in 3"]))
    assert played.state is not None
    assert (played.state.phase, played.state.to_act) == ("river", 1)


def test_a_fold_with_one_card_left_behind_is_a_fold_for_the_betting() -> None:
    # Seat 1's call right after seat 3's first card reached the muck is in turn: only the
    # handling is incomplete (judged once the dealer's reaction time has passed).
    steps = [*ON_FLOP, "bet 2 4", "move seat:3#0 muck", "bet 1 4", "wait 3", "sweep"]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == ["fold_incomplete"]
    assert played.state is not None
    assert played.state.to_act is None


def test_chips_lifted_from_one_betting_area_are_gone_when_the_sweep_begins_elsewhere() -> None:
    # The sweep takes seat 1's chips first; seat 2's chip returned just before counts as gone.
    steps = [*DEALT, "bet 1 6", "bet 2 6", "fold 3", "return 2 1", "sweep"]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert "premature_sweep" not in played.codes()


def test_hands_tabled_before_the_river_with_the_round_complete_are_an_all_in_run_out() -> None:
    # No all-in key, no stack read: the hands turned face up after the flop's betting tell.
    steps = [
        *ON_FLOP,
        "bet 2 20",
        "fold 3",
        "bet 1 20",
        "sweep",
        "show 2 1",
        *BOARD[2:],
        "push 1 46",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    (hand,) = played.hands
    assert [(s.seat, s.rank) for s in hand.showdown] == [(2, "pair"), (1, "pair")]
    assert [(p.amount, p.winners) for p in hand.pots] == [(46, [1])]
    assert [a.street for a in hand.actions][-1] == "flop"  # no checks made up on turn and river
    # seat 2's bet was its all in (seat 1, who called last, may cover)
    assert [(a.seat, a.action) for a in hand.actions][-3:] == [(2, "all_in"), (3, "fold"), (1, "call")]


def test_the_uncalled_bet_returned_after_the_last_fold_then_the_pot_pushed_to_the_same_seat() -> None:
    # The river bet is never swept: returned to its owner, and the pot pushed into its area.
    steps = [*ON_RIVER, "bet 2 10", "fold 3", "fold 1", "return 2 10", "push 2 6", "collect", "clear"]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    (hand,) = played.hands
    assert hand.result == "uncontested"
    assert [(a.seat, a.amount) for a in hand.awarded] == [(2, 6)]


def test_a_short_all_in_raise_without_key_or_stack_is_resolved_once_the_hands_are_tabled() -> None:
    # Seat 2 goes all in for 25 over seat 1's 20 (a raise of 5, short); nothing says all in until
    # both hands are turned face up. Judged again then, its raise does not reopen the action.
    steps = [
        *DEALT,
        "bet 1 20",
        "bet 2 24",
        "fold 3",
        "bet 1 5",
        "sweep",
        "show 2 1",
        *BOARD,
        "push 1 52",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert [(a.code, a.status) for a in played.alerts] == [
        ("raise_below_minimum", "raised"),
        ("raise_below_minimum", "resolved"),
    ]
    (hand,) = played.hands
    assert [(p.amount, p.winners) for p in hand.pots] == [(52, [1])]
    assert [(s.seat, s.rank) for s in hand.showdown] == [(2, "pair"), (1, "pair")]
    assert [(a.seat, a.action) for a in hand.actions][-3:] == [(2, "all_in"), (3, "fold"), (1, "call")]


def test_antes_gathered_into_the_pot_before_the_deal_are_the_seats_antes() -> None:
    stakes = Stakes(small_blind=1, big_blind=2, ante=1)
    steps = [
        "bet 1 1",
        "bet 2 1",
        "bet 3 1",
        "chips bet:1 pot 1",
        "chips bet:2 pot 1",
        "chips bet:3 pot 1",
        *DEALT,
        "bet 1 2",
        "bet 2 1",
        "sweep",
        *BOARD,
        "show 2",
        "show 3",
        "show 1",
        "push 1 9",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(stakes))
    assert played.codes() == []
    (result,) = played.hands
    assert [(p.amount, p.winners) for p in result.pots] == [(9, [1])]
    assert [(a.seat, a.action, a.amount) for a in result.actions][:3] == [
        (2, "post", 1),
        (3, "post", 1),
        (1, "post", 1),
    ]


def test_chips_pushed_and_taken_off_before_the_result_are_new_chips_next_hand() -> None:
    # Three chips only: the next hand's blinds are the chips just pushed to the winner.
    settings = game_settings()
    settings = replace(settings, chips=chip_registry(per_value=3, values=(1,)))
    steps = [
        *DEALT,
        "fold 1",
        "fold 2",
        "return 3 1",
        "sweep",
        "push 3 2",
        "collect",
        "clear",
        "shuffle A",
        "button 2",
        "bet 3 1",
        "bet 1 2",
        "new_hand",
        "deal 3 1 2 3 1 2",
        "fold 2",
        "fold 3",
        "return 1 1",
        "sweep",
        "push 1 2",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=settings)
    assert played.codes() == []
    assert [[(p.amount, p.winners) for p in hand.pots] for hand in played.hands] == [[(2, [3])], [(2, [1])]]


def test_stacks_read_before_the_deal_show_a_short_all_in() -> None:
    # Seat 2's stack (14 with its small blind) goes in whole: a raise of 4 over 10, short, and
    # no alert, for the stack read before the deal is emptied.
    stacks = [
        "chips - stack:1 10",
        "chips - stack:1 4",
        "chips - stack:1 50",
        "chips - stack:2 1",
        "chips - stack:2 13",
        "chips - stack:3 2",
        "chips - stack:3 12",
        "chips - stack:3 50",
    ]
    steps = [
        *stacks,
        "chips stack:2 bet:2 1",
        "chips stack:3 bet:3 2",
        "new_hand",
        DEAL,
        "chips stack:1 bet:1 10",
        "chips stack:2 bet:2 13",
        "chips stack:3 bet:3 12",
        "chips stack:1 bet:1 4",
        "sweep",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    assert played.state is not None
    assert [(p.amount, p.eligible) for p in played.state.pots] == [(42, [1, 2, 3])]


def test_a_call_for_less_is_an_all_in_and_the_others_play_on_for_a_side_pot() -> None:
    # Seat 2 calls 20 with 9 more chips (10 in all): nothing says all in, but the rules know no
    # short call. Seats 1 and 3 bet on for a side pot; no premature sweep, no premature flop.
    steps = [
        *DEALT,
        "bet 1 20",
        "bet 2 9",
        "bet 3 18",
        "sweep",
        *BOARD[:2],
        "bet 3 10",
        "bet 1 10",
        "sweep",
        *BOARD[2:],
        "show 3",
        "show 1",
        "show 2",
        "push 1 70",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    (hand,) = played.hands
    assert [(p.amount, p.eligible, p.winners) for p in hand.pots] == [(30, [1, 2, 3], [1]), (40, [1, 3], [1])]
    assert ("preflop", 2, "all_in", 9) in [(a.street, a.seat, a.action, a.amount) for a in hand.actions]


def test_a_raise_whose_first_chips_fall_short_of_the_call_is_no_all_in() -> None:
    # The 2003 bluff, heads-up: the turn raise to 800,000 over 300,000 comes as a 100,000 chip
    # first. While its chips come nothing is all in: the river is bet, the bet nobody calls goes
    # back, and the pot is pushed with no alert.
    settings = replace(
        game_settings(Stakes(small_blind=20_000, big_blind=40_000, ante=5_000)),
        chips=chip_registry(per_value=60, values=(1_000_000, 100_000, 25_000, 5_000)),
    )
    steps = [
        "bet 1 5000",
        "bet 2 5000",
        "bet 1 20000",
        "bet 2 40000",
        "new_hand",
        "deal 2=Qs 1=Ks 2=9h 1=7h",
        "bet 1 80000",
        "bet 2 60000",
        "sweep",
        "burn",
        "flop =9s =2d =6s",
        "burn",
        "turn =8s",
        "bet 2 300000",
        "bet 1 800000",
        "bet 2 500000",
        "sweep",
        "burn",
        "river =3h",
        "bet 1 3715000",
        "fold 2",
        "return 1 3715000",
        "push 1 1810000",
        "collect",
        "clear",
    ]
    played = play([1, 2], 1, "\n".join(steps), settings=settings)
    assert played.codes() == []
    (hand,) = played.hands
    assert (hand.result, [(a.seat, a.amount) for a in hand.awarded]) == ("uncontested", [(1, 1_810_000)])
