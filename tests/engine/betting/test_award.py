"""Ranks (seed 002), the rake, the award (seed 001's odd chip) and the check of the dealer's push."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting.award import RANK_NAMES, award, check_push, rake_for, rank_of
from engine.betting.pots import build_pots
from engine.betting.terms import Clear, OddChip, Pot, PotAward, Raise, Stakes, Verdict

BOARD = ("Ah", "Kd", "7s", "4c", "2h")
CARD = re.compile(r"\b[2-9TJQKA][shdc]\b")


def shares(awards: tuple[PotAward, ...]) -> list[dict[int, int]]:
    return [dict(a.shares) for a in awards]


# -- ranks -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("board", "hole", "name"),
    [
        (("As", "Ks", "Qs", "2d", "3c"), ("Js", "Ts"), "straight_flush"),  # royal flush
        (("5s", "4s", "3s", "Kd", "Kc"), ("2s", "As"), "straight_flush"),  # the wheel, suited
        (("9c", "9d", "9h", "2d", "3c"), ("9s", "Kh"), "four_of_a_kind"),
        (("9c", "9d", "Kh", "2d", "3c"), ("9s", "Kd"), "full_house"),
        (("2h", "7h", "Jh", "Kd", "3c"), ("9h", "4h"), "flush"),
        (("5d", "4s", "3h", "Kd", "Qc"), ("2s", "Ac"), "straight"),  # ace low
        (("9c", "9d", "Kh", "2d", "3c"), ("9s", "Qd"), "three_of_a_kind"),
        (("9c", "Td", "Kh", "2d", "3c"), ("9s", "Kd"), "two_pair"),
        (BOARD, ("As", "Qc"), "pair"),
        (("9c", "Td", "Kh", "2d", "3c"), ("8s", "4d"), "high_card"),
    ],
)
def test_rank_names(board: tuple[str, ...], hole: tuple[str, str], name: str) -> None:
    value, got = rank_of(board, hole)
    assert got == name
    assert 1 <= value <= 7462


def test_rank_names_are_best_first() -> None:
    values = [rank_of(("As", "Ks", "Qs", "2d", "3c"), ("Js", "Ts"))[0], rank_of(BOARD, ("8s", "9d"))[0]]
    assert values[0] < values[1]
    assert RANK_NAMES[0] == "straight_flush"
    assert RANK_NAMES[-1] == "high_card"


def test_the_kicker_decides() -> None:
    # both pair the ace; queen kicker beats jack kicker (seed 003: the kicker)
    assert rank_of(BOARD, ("As", "Qc"))[0] < rank_of(BOARD, ("Ad", "Jc"))[0]


def test_best_five_of_seven_ignores_a_sixth_and_seventh_card() -> None:
    # the board's two pair plays with an ace kicker against the board's nine kicker
    board = ("Kh", "Kd", "5s", "5c", "9h")
    assert rank_of(board, ("Ac", "4d"))[0] < rank_of(board, ("2c", "3c"))[0]
    # kickers beyond the fifth card do not count: identical hands (seed 002)
    assert rank_of(BOARD, ("As", "3d"))[0] == rank_of(BOARD, ("Ad", "3c"))[0]


# -- rake --------------------------------------------------------------------------------------


def test_rake_is_a_percentage_rounded_down_and_capped() -> None:
    stakes = Stakes(rake_percent=5, rake_cap=10)
    assert rake_for(stakes, 199, saw_flop=True) == 9
    assert rake_for(stakes, 250, saw_flop=True) == 10
    assert rake_for(Stakes(rake_percent=5), 250, saw_flop=True) == 12  # no cap
    assert rake_for(Stakes(rake_percent=7), 100, saw_flop=True) == 7  # no float rounding down


def test_no_flop_no_rake() -> None:
    assert rake_for(Stakes(rake_percent=5, rake_cap=10), 250, saw_flop=False) == 0
    assert rake_for(Stakes(), 250, saw_flop=True) == 0


# -- award -------------------------------------------------------------------------------------


def play(
    pots: list[Pot], shown: list[tuple[int, tuple[str, str]]], board: tuple[str, ...] = BOARD, **kw: object
) -> tuple[PotAward, ...]:
    options: dict[str, object] = {"rake": 0, "odd_chip": "first_shown", "button": 1, "table_seats": 10}
    options.update(kw)
    return award(pots, shown, board, **options)  # type: ignore[arg-type]


def test_the_best_hand_takes_the_pot() -> None:
    got = play([Pot(100, (2, 5))], [(2, ("Ad", "Jc")), (5, ("As", "Qc"))])
    assert got == (PotAward(100, (2, 5), (5,), ((5, 100),)),)


def test_a_lone_eligible_seat_wins_without_showing() -> None:
    got = play([Pot(30, (1, 2, 3)), Pot(40, (3,))], [(1, ("As", "Qc")), (3, ("8s", "9d"))])
    assert [a.winners for a in got] == [(1,), (3,)]


def test_unshown_eligible_seats_lose_their_claim() -> None:
    # seat 3 mucked what would have won
    got = play([Pot(90, (1, 2, 3))], [(1, ("8s", "9d")), (2, ("5s", "6d"))])
    assert got[0].winners == (1,)


def test_side_pots_go_to_the_best_eligible_hand() -> None:
    # the short all-in (seat 1) has the best hand: it wins the main pot only (seed 000)
    pots = [Pot(150, (1, 2, 3)), Pot(200, (2, 3))]
    shown = [(1, ("As", "Ac")), (2, ("Kh", "Kc")), (3, ("Qc", "Qd"))]
    got = play(pots, shown)
    assert shares(got) == [{1: 150}, {2: 200}]


def test_the_board_plays_and_everybody_splits() -> None:
    board = ("As", "Ks", "Qs", "Js", "Ts")
    got = play([Pot(90, (1, 2, 3))], [(3, ("2c", "3d")), (1, ("4c", "5d")), (2, ("9c", "8d"))], board)
    assert shares(got) == [{1: 30, 2: 30, 3: 30}]


def test_odd_chip_to_the_first_shown_winner() -> None:
    tie = [(5, ("Ad", "3c")), (2, ("As", "3d"))]
    assert shares(play([Pot(101, (2, 5))], tie)) == [{2: 50, 5: 51}]
    assert shares(play([Pot(101, (2, 5))], list(reversed(tie)))) == [{2: 51, 5: 50}]


def test_odd_chip_left_of_the_button() -> None:
    tie = [(2, ("As", "3d")), (5, ("Ad", "3c"))]
    got = play([Pot(101, (2, 5))], tie, odd_chip="left_of_button", button=4)
    assert shares(got) == [{2: 50, 5: 51}]  # clockwise from seat 4: 5 comes before 2
    got = play([Pot(101, (2, 5))], tie, odd_chip="left_of_button", button=9)
    assert shares(got) == [{2: 51, 5: 50}]
    # the button itself is the last seat clockwise from the button
    got = play([Pot(101, (2, 5))], tie, odd_chip="left_of_button", button=5)
    assert shares(got) == [{2: 51, 5: 50}]


def test_three_way_split_gives_nobody_more_than_one_odd_chip() -> None:
    board = ("As", "Ks", "Qs", "Js", "Ts")
    shown = [(7, ("2c", "3d")), (3, ("4c", "5d")), (1, ("9c", "8d"))]
    assert shares(play([Pot(101, (1, 3, 7))], shown, board)) == [{1: 33, 3: 34, 7: 34}]
    got = play([Pot(101, (1, 3, 7))], shown, board, odd_chip="left_of_button", button=2)
    assert shares(got) == [{1: 33, 3: 34, 7: 34}]
    got = play([Pot(101, (1, 3, 7))], shown, board, odd_chip="left_of_button", button=8)
    assert shares(got) == [{1: 34, 3: 34, 7: 33}]


def test_rake_comes_out_of_the_main_pot_first() -> None:
    got = play([Pot(5, (1, 2)), Pot(100, (2, 3))], [(2, ("As", "Qc")), (3, ("8s", "9d"))], rake=8)
    assert [a.amount for a in got] == [0, 97]
    assert shares(got) == [{2: 0}, {2: 97}]


def test_a_board_of_six_cards_ranks_nobody_and_raises_nothing() -> None:
    # An irregular board (board_too_many_cards): the floor says which five play.
    six = (*BOARD, "2c") if "2c" not in BOARD else (*BOARD, "3d")
    got = play([Pot(60, (1, 2)), Pot(40, (2,))], [(1, ("As", "Qc")), (2, ("8s", "9d"))], six)
    assert got == (PotAward(60, (1, 2), (), ()), PotAward(40, (2,), (2,), ((2, 40),)))


def test_a_pot_whose_hands_all_mucked_names_no_winner() -> None:
    got = play([Pot(60, (1, 2)), Pot(40, (3, 4))], [(1, ("As", "Qc"))])
    assert got[1] == PotAward(40, (3, 4), (), ())


# -- check_push --------------------------------------------------------------------------------

MAIN_AND_SIDE = (PotAward(100, (1, 2, 3), (1,), ((1, 100),)), PotAward(50, (2, 3), (3,), ((3, 50),)))
SPLIT = (PotAward(101, (2, 5), (2, 5), ((2, 51), (5, 50))),)


def verdicts(
    awards: tuple[PotAward, ...], pushed: dict[int, int], raked: int = 0, rake: int = 0
) -> dict[str, Verdict]:
    got = check_push(awards, pushed, raked=raked, rake=rake)
    keys = [v.key for v in got]
    assert len(keys) == len(set(keys)), keys
    for v in got:
        if isinstance(v, Raise):
            assert not CARD.search(v.message), v.message
    return {v.key: v for v in got}


def raised(got: dict[str, Verdict]) -> dict[str, str]:
    return {key: v.code for key, v in got.items() if isinstance(v, Raise)}


def test_a_right_push_clears_every_key() -> None:
    got = verdicts(MAIN_AND_SIDE, {1: 100, 3: 50})
    assert got == {k: Clear(k) for k in ("push", "split", "odd_chip", "rake")}


def test_chips_to_a_seat_that_wins_nothing() -> None:
    got = verdicts(MAIN_AND_SIDE, {1: 100, 2: 50})
    assert raised(got) == {"push": "pot_awarded_wrong"}
    push = got["push"]
    assert isinstance(push, Raise)
    assert push.seat == 2
    assert "seat 2 got 50 but wins no pot" in push.message.lower()
    assert "main pot of 100 to seat 1; side pot 1 of 50 to seat 3" in push.message


def test_a_winner_who_got_nothing() -> None:
    got = verdicts(MAIN_AND_SIDE, {1: 150})
    assert raised(got) == {"push": "pot_awarded_wrong"}
    assert "seat 3 wins 50 but got nothing" in got["push"].message  # type: ignore[union-attr]


def test_a_side_pot_pushed_to_the_main_pot_winner() -> None:
    got = verdicts(MAIN_AND_SIDE, {1: 120, 3: 30})
    assert raised(got) == {"push": "pot_awarded_wrong"}


def test_a_winner_short_of_chips_with_no_split() -> None:
    got = verdicts(MAIN_AND_SIDE, {1: 90, 3: 50})
    assert raised(got) == {"push": "pot_awarded_wrong"}


def test_a_split_off_by_more_than_the_odd_chip() -> None:
    got = verdicts(SPLIT, {2: 61, 5: 40})
    assert raised(got) == {"split": "split_wrong"}
    assert "seat 2 should get 51 (got 61)" in got["split"].message.lower()  # type: ignore[union-attr]


def test_the_odd_chip_on_the_wrong_seat() -> None:
    got = verdicts(SPLIT, {2: 50, 5: 51})
    assert raised(got) == {"odd_chip": "odd_chip_wrong"}
    odd = got["odd_chip"]
    assert isinstance(odd, Raise)
    assert odd.seat == 2
    assert odd.message.startswith("The odd chip goes to seat 2, not seat 5")


def test_odd_chips_of_two_split_pots_swapped() -> None:
    awards = (
        PotAward(101, (1, 2, 3), (1, 2), ((1, 51), (2, 50))),
        PotAward(31, (1, 2), (1, 2), ((1, 16), (2, 15))),
    )
    assert raised(verdicts(awards, {1: 66, 2: 66})) == {"odd_chip": "odd_chip_wrong"}
    # two odd chips to one seat is possible (one per pot), three are not
    assert raised(verdicts(awards, {1: 65, 2: 67})) == {"odd_chip": "odd_chip_wrong"}
    assert raised(verdicts(awards, {1: 64, 2: 68})) == {"split": "split_wrong"}


def test_a_three_way_odd_chip_given_twice_to_one_seat_is_a_wrong_split() -> None:
    awards = (PotAward(101, (1, 3, 7), (1, 3, 7), ((1, 33), (3, 34), (7, 34))),)
    got = verdicts(awards, {1: 34, 3: 34, 7: 33})
    assert raised(got) == {"odd_chip": "odd_chip_wrong"}
    odd = got["odd_chip"]
    assert isinstance(odd, Raise)
    assert odd.remedy == ("Move the odd chip from seat 1 to seat 7.",)
    assert raised(verdicts(awards, {1: 35, 3: 33, 7: 33})) == {"split": "split_wrong"}


def test_a_wrong_rake() -> None:
    # two chips too many in the rake, taken from the winner: only the rake is wrong
    got = verdicts(MAIN_AND_SIDE, {1: 98, 3: 50}, raked=5, rake=3)
    assert raised(got) == {"rake": "rake_wrong"}
    too_many = got["rake"]
    assert isinstance(too_many, Raise)
    assert too_many.message == "The rake zone holds 5 but this hand's rake is 3: 2 chips too many."
    # from where to where: the rake comes out of the main pot, so its winner gets them back
    assert too_many.remedy == ("Move 2 chips from the rake back to seat 1.",)
    # no rake taken: the winner got it
    got = verdicts(MAIN_AND_SIDE, {1: 103, 3: 50}, raked=0, rake=3)
    assert raised(got) == {"rake": "rake_wrong"}
    short = got["rake"]
    assert isinstance(short, Raise)
    assert short.message == "The rake zone holds 0 but this hand's rake is 3: 3 chips short."
    assert short.remedy == ("Move 3 chips from seat 1 into the rake.",)
    # a split main pot: its winners give or get them as the split says
    got = verdicts(SPLIT, {2: 52, 5: 50}, raked=0, rake=1)
    short = got["rake"]
    assert isinstance(short, Raise)
    assert short.remedy == ("Move 1 chip from the winners (seats 2, 5, as the split says) into the rake.",)


def test_a_wrong_push_corrected_clears_its_alert() -> None:
    assert raised(verdicts(SPLIT, {2: 101})) == {"push": "pot_awarded_wrong"}
    got = verdicts(SPLIT, {2: 51, 5: 50})
    assert got == {k: Clear(k) for k in ("push", "split", "odd_chip", "rake")}


def test_a_pot_nobody_showed_for_may_go_to_any_of_its_seats() -> None:
    awards = (PotAward(60, (1, 2), (1,), ((1, 60),)), PotAward(40, (3, 4), (), ()))
    assert raised(verdicts(awards, {1: 60, 4: 40})) == {}
    assert raised(verdicts(awards, {1: 60, 3: 20, 4: 20})) == {}
    assert raised(verdicts(awards, {1: 60, 2: 40})) == {"push": "pot_awarded_wrong"}


def test_an_over_rake_taken_from_a_split_is_the_rakes_finding_only() -> None:
    got = verdicts(SPLIT, {2: 50, 5: 49}, raked=2, rake=0)
    assert raised(got) == {"rake": "rake_wrong"}


def test_chips_lost_from_a_split_without_the_rake_are_a_wrong_split() -> None:
    got = verdicts(SPLIT, {2: 50, 5: 49})
    assert raised(got) == {"split": "split_wrong"}


DECK = [rank + suit for rank in "23456789TJQKA" for suit in "shdc"]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_pushes_checked_against_random_awards(data: st.DataObject) -> None:
    seats = data.draw(st.lists(st.integers(1, 10), min_size=2, max_size=8, unique=True), label="seats")
    contributed = {seat: data.draw(st.integers(1, 300), label=f"put {seat}") for seat in seats}
    live = data.draw(st.sets(st.sampled_from(seats), min_size=1), label="live")
    cards = data.draw(st.permutations(DECK), label="deck")
    board = tuple(cards[:5])
    holes = {seat: (cards[5 + 2 * i], cards[6 + 2 * i]) for i, seat in enumerate(sorted(live))}
    order = data.draw(st.permutations(sorted(live)), label="shown")
    rule: OddChip = data.draw(st.sampled_from(["first_shown", "left_of_button"]), label="rule")
    pots = build_pots(contributed, live)
    awards = award(
        pots, [(s, holes[s]) for s in order], board, rake=0, odd_chip=rule, button=seats[0], table_seats=10
    )
    for pot in awards:
        assert sum(chips for _, chips in pot.shares) == pot.amount
        assert set(pot.winners) <= set(pot.eligible)
        shares = [chips for _, chips in pot.shares]
        assert max(shares) - min(shares) <= 1
    right: dict[int, int] = {}
    for pot in awards:
        for seat, chips in pot.shares:
            right[seat] = right.get(seat, 0) + chips
    assert raised(verdicts(awards, right)) == {}
    # an odd chip moved to another winner of its pot
    for pot in awards:
        share = dict(pot.shares)
        lucky = [s for s in pot.winners if share[s] > min(share.values())]
        unlucky = [s for s in pot.winners if share[s] == min(share.values())]
        if lucky and unlucky:
            moved = {**right, lucky[0]: right[lucky[0]] - 1, unlucky[0]: right[unlucky[0]] + 1}
            assert raised(verdicts(awards, moved)) == {"odd_chip": "odd_chip_wrong"}
            break
    # chips pushed to a seat that wins nothing
    losers = [s for s in seats if s not in right]
    winner = max(right, key=lambda s: right[s])
    if losers and right[winner] > 1:
        wrong = {**right, winner: right[winner] - 1, losers[0]: 1}
        got = verdicts(awards, wrong)
        assert raised(got) == {"push": "pot_awarded_wrong"}
        assert got["push"].seat == losers[0]  # type: ignore[union-attr]


def test_a_board_cut_short_leaves_contested_pots_undecided() -> None:
    got = play([Pot(60, (1, 2)), Pot(40, (2,))], [(1, ("As", "Qc")), (2, ("8s", "9d"))], board=("Ah", "Kd"))
    assert got == (PotAward(60, (1, 2), (), ()), PotAward(40, (2,), (2,), ((2, 40),)))
