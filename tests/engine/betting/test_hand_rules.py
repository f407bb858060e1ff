"""The betting core rule by rule: blinds, action order, sizes and limits, the chips' codes and
their remedies, the uncalled bet, pushes, and the queries the machine reads."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, fields

import pytest

from engine.betting.hand import Money
from engine.betting.terms import Clear, Raise, Stakes, Verdicts

BOARD = ("2c", "7d", "9h", "Js", "3s")


def start(
    seats: tuple[int, ...] = (1, 2, 3, 4),
    button: int | None = 4,
    *,
    ante: int = 0,
    structure: str = "no_limit",
    profile: str = "tda",
    **kw: object,
) -> Money:
    stakes = Stakes(structure=structure, small_blind=1, big_blind=2, ante=ante, **kw)  # type: ignore[arg-type]
    return Money.begin(stakes=stakes, seats=seats, button=button, table_seats=10, profile=profile)  # type: ignore[arg-type]


class Table:
    """A hand driven by chip moves, collecting every verdict."""

    def __init__(self, money: Money) -> None:
        self.m = money
        self.verdicts: list[Raise | Clear] = []

    def _take(self, answer: tuple[Money, Verdicts]) -> Verdicts:
        self.m = answer[0]
        self.verdicts.extend(answer[1])
        return answer[1]

    def bet(self, seat: int, amount: int, src: str | None = None) -> Verdicts:
        """``amount`` as one chip from the seat's side into its betting area."""
        return self._take(self.m.move(amount, src, f"bet:{seat}"))

    def move(self, amount: int, src: str | None, dst: str | None) -> Verdicts:
        return self._take(self.m.move(amount, src, dst))

    def blinds(self, small: int = 1, big: int = 2) -> Verdicts:
        ring = self.m.ring
        sb, bb = (ring[1], ring[0]) if len(ring) == 2 else (ring[0], ring[1])
        self.bet(sb, small)
        self.bet(bb, big)
        return self._take(self.m.dealt())

    def sweep(self) -> Verdicts:
        out: list[Raise | Clear] = []
        for seat, amount in self.m.bets:
            out.extend(self.move(amount, f"bet:{seat}", "pot"))
        return tuple(out)

    def street(self, n: int) -> Verdicts:
        return self._take(self.m.street(n, BOARD[: 2 + n]))

    def fold(self, seat: int) -> Verdicts:
        return self._take(self.m.fold(seat))

    def all_in(self, seat: int) -> Verdicts:
        return self._take(self.m.all_in(seat))

    def action(self, seat: int, name: str, amount: int = 0) -> Verdicts:
        return self._take(self.m.action(seat, name, amount))


def raised(verdicts: Verdicts | list[Raise | Clear]) -> list[str]:
    return [v.code for v in verdicts if isinstance(v, Raise)]


def cleared(verdicts: Verdicts | list[Raise | Clear]) -> list[str]:
    return [v.key for v in verdicts if isinstance(v, Clear)]


# ---------------------------------------------------------------- blinds, order, inferred actions


def test_preflop_order_starts_left_of_the_big_blind_and_ends_with_its_option() -> None:
    t = Table(start())
    assert t.blinds() == ()
    assert t.m.to_act == 3  # seat 1 small blind, 2 big blind
    t.bet(3, 2)
    assert t.m.to_act == 4
    t.bet(4, 2)
    t.bet(1, 1)
    assert t.m.to_act == 2
    assert t.m.round_complete
    t.street(1)
    assert [a.action for a in t.m.actions] == ["post", "post", "call", "call", "call", "check"]
    assert t.m.to_act == 1
    assert t.m.pots[0].amount == 8


def test_heads_up_the_button_posts_the_small_blind_acts_first_preflop_and_last_after() -> None:
    t = Table(start((3, 7), button=7))
    assert t.blinds() == ()
    assert t.m.actions[0].seat == 7
    assert t.m.actions[0].amount == 1
    assert t.m.to_act == 7
    t.bet(7, 1)
    assert t.m.to_act == 3
    t.street(1)
    assert t.m.to_act == 3
    t.bet(3, 2)
    assert t.m.to_act == 7


def test_blinds_and_antes_are_checked_at_the_deal() -> None:
    t = Table(start(ante=1))
    for seat in (1, 2, 3, 4):
        t.bet(seat, 1)
    t.bet(1, 1)
    t.bet(2, 1)  # big blind one short
    verdicts = t._take(t.m.dealt())
    assert raised(verdicts) == ["blind_wrong_amount"]
    assert verdicts[0].seat == 2  # type: ignore[union-attr]
    assert "3" in verdicts[0].message  # type: ignore[union-attr]
    assert sum(a.amount for a in t.m.actions if a.action == "post") == 6
    assert cleared(t.bet(2, 1)) == ["blind:2"]  # corrected before its turn: not its action
    assert t.m.to_act == 3
    assert [a.amount for a in t.m.actions if a.seat == 2] == [1, 2]


def test_a_blind_too_big_is_corrected_by_taking_the_excess_back() -> None:
    t = Table(start())
    t.bet(1, 2)  # the small blind posts 2
    t.bet(2, 2)
    assert raised(t._take(t.m.dealt())) == ["blind_wrong_amount"]
    verdicts = t.move(1, "bet:1", "stack:1")
    assert cleared(verdicts) == ["blind:1"]
    assert raised(verdicts) == []


def test_checks_are_inferred_for_the_seats_passed_over_where_nothing_was_owed() -> None:
    t = Table(start())
    t.blinds()
    for seat, amount in ((3, 2), (4, 2), (1, 1)):
        t.bet(seat, amount)
    t.street(1)
    assert raised(t.bet(3, 4)) == []  # seats 1 and 2 checked
    assert [(a.seat, a.action) for a in t.m.actions[-3:]] == [(1, "check"), (2, "check"), (3, "bet")]
    assert t.m.to_act == 4


def test_chips_of_a_later_seat_while_an_earlier_one_owes_are_out_of_turn_until_it_acts() -> None:
    t = Table(start((1, 2, 3, 4, 5), button=5))
    t.blinds()
    verdicts = t.bet(4, 2)  # seat 3 is first and owes the big blind
    assert raised(verdicts) == ["action_out_of_turn"]
    assert "seat 3" in verdicts[0].message  # type: ignore[union-attr]
    assert t.m.to_act == 3
    t.bet(3, 2)
    assert cleared(t.bet(5, 2)) == ["oot:4:0"]
    assert t.m.to_act == 1


def test_an_all_in_for_less_is_allowed_and_the_stack_read_emptied_says_so() -> None:
    t = Table(start())
    for seat in (1, 2, 3, 4):
        t.move(10, None, f"stack:{seat}")
    t.bet(1, 1, "stack:1")
    t.bet(2, 2, "stack:2")
    t.m, _ = t.m.dealt()
    t.move(10, None, "stack:4")  # seat 4 has 20
    t.bet(3, 10, "stack:3")  # all in: its whole stack
    t.bet(4, 10, "stack:4")
    assert [a.action for a in t.m.actions[-2:]] == ["all_in", "call"]
    assert t.m.to_act == 1
    assert raised(t.verdicts) == []


# ---------------------------------------------------------------- sizes


def test_an_opening_bet_below_the_big_blind_is_raised_and_cleared_when_completed() -> None:
    t = Table(start((1, 2), button=2))
    t.blinds()
    t.bet(2, 1)
    t.street(1)
    assert t.bet(1, 1) == ()  # judged on the next evidence: more chips may follow
    verdicts = t.bet(2, 1)
    assert raised(verdicts) == ["bet_below_minimum"]
    assert "complete it to 2" in verdicts[0].message  # type: ignore[union-attr]
    assert cleared(t.bet(1, 1)) == ["size:1:1"]
    bet = next(a for a in t.m.actions if a.seat == 1 and a.street == "flop")
    assert (bet.action, bet.amount) == ("bet", 2)


def test_a_raise_below_the_minimum_of_half_a_raise_or_more_must_be_made_full() -> None:
    t = Table(start())
    t.blinds()
    t.bet(3, 3)  # raise to 3: the minimum is to 4
    verdicts = t.bet(4, 3)
    assert raised(verdicts) == ["raise_below_minimum"]
    assert "make it 4" in verdicts[0].message  # type: ignore[union-attr]
    assert cleared(t.bet(3, 1)) == ["size:3:0"]
    assert [(a.action, a.amount) for a in t.m.actions if a.seat == 3] == [("raise", 4)]


def test_a_raise_below_half_a_raise_is_made_a_call() -> None:
    t = Table(start((1, 2, 3), button=3))
    t.blinds()
    t.bet(3, 2)
    t.bet(1, 1)
    t.street(1)
    t.bet(1, 10)
    t.bet(2, 14)  # a raise of 4, under half of 10
    verdicts = t.fold(3)
    assert raised(verdicts) == ["raise_below_minimum"]
    assert "make it a call of 10" in verdicts[0].message  # type: ignore[union-attr]
    assert cleared(t.move(4, "bet:2", "stack:2")) == ["size:2:1"]
    assert [(a.action, a.amount) for a in t.m.actions if a.seat == 2][-1] == ("call", 10)
    assert "chips_taken_back" not in raised(t.verdicts)


def test_a_short_all_in_raise_is_no_error() -> None:
    t = Table(start())
    t.blinds()
    t.bet(3, 3)
    t.all_in(3)
    assert raised(t.bet(4, 3)) == []
    assert t.m.actions[-2].action == "all_in"


def test_pot_limit_caps_a_raise_at_the_pot() -> None:
    t = Table(start(structure="pot_limit"))
    t.blinds()
    t.bet(3, 8)  # pot 3 + call 2 = 5: at most to 2 + 5 = 7
    verdicts = t.fold(4)
    assert raised(verdicts) == ["bet_over_limit"]
    assert "7" in verdicts[0].message  # type: ignore[union-attr]
    assert cleared(t.move(1, "bet:3", "stack:3")) == ["size:3:0"]


def test_an_excess_over_the_pot_limit_returned_after_the_call_reduces_the_bet() -> None:
    """Seat 3's 8 over the limit of 7 called to 7 by seat 1 (the others fold): the 1 taken off the
    table then is the bet reduced to the limit (not only the uncalled part returned)."""
    t = Table(start(structure="pot_limit"))
    t.blinds()
    t.bet(3, 8)
    assert raised(t.fold(4)) == ["bet_over_limit"]
    t.bet(1, 6)
    t.fold(2)
    assert cleared(t.move(1, "bet:3", None)) == ["size:3:0"]
    assert [(a.seat, a.action, a.amount) for a in t.m.actions if a.seat == 3][-1] == (3, "raise", 7)


def test_fixed_limit_wants_the_limit_amount_and_four_bets_at_most() -> None:
    t = Table(start((1, 2), button=2, structure="fixed_limit"))
    t.blinds()
    t.bet(2, 5)  # raise to 6: the limit is to 4
    assert raised(t.bet(1, 2)) == ["bet_over_limit"]
    t = Table(start((1, 2), button=2, structure="fixed_limit"))
    t.blinds()
    total = {2: 1, 1: 2}
    for seat, to in ((2, 4), (1, 6), (2, 8), (1, 10)):
        t.bet(seat, to - total[seat])
        total[seat] = to
    assert raised(t.verdicts) == []
    t.bet(2, 4)  # a fifth bet
    assert raised(t.bet(1, 2)) == ["bet_over_limit"]


# ---------------------------------------------------------------- chips on the table


def test_chips_taken_back_before_the_sweep_are_raised_until_put_back() -> None:
    t = Table(start())
    t.blinds()
    t.bet(3, 2)
    t.bet(4, 2)
    verdicts = t.move(2, "bet:4", "stack:4")
    assert raised(verdicts) == ["chips_taken_back"]
    assert cleared(t.bet(4, 2)) == ["back:4:0"]


def test_chips_on_a_vacant_seat() -> None:
    t = Table(start())
    assert raised(t.bet(8, 5)) == ["chips_on_vacant_seat"]
    assert cleared(t.move(5, "bet:8", None)) == ["vacant:8"]


def test_a_sweep_before_the_round_is_complete_is_premature_until_finished() -> None:
    t = Table(start())
    t.blinds()
    t.bet(3, 6)
    t.bet(4, 6)
    t.bet(1, 5)
    verdicts = t.sweep()  # seat 2 (big blind, 2 in) has not matched 6
    assert raised(verdicts) == ["premature_sweep"]
    assert "seat 2" in verdicts[0].message  # type: ignore[union-attr]
    t.bet(2, 4)
    assert cleared(t.street(1)) == ["sweep:0"]


def test_the_uncalled_part_of_a_bet_goes_back_to_its_owner() -> None:
    t = Table(start((1, 2, 3), button=3))
    t.blinds()
    t.bet(3, 2)
    t.bet(1, 1)
    t.street(1)
    t.bet(1, 10)
    t.bet(2, 4)
    t.all_in(2)
    t.fold(3)
    assert t.m.uncalled == (1, 6)
    verdicts = t.sweep()
    assert raised(verdicts) == ["uncalled_bet_not_returned"]
    assert "6" in verdicts[0].message  # type: ignore[union-attr]
    assert cleared(t.move(6, "pot", "stack:1")) == ["uncalled"]
    assert t.m.uncalled is None
    t.street(2)
    assert [(p.amount, p.eligible) for p in t.m.pots] == [(14, (1, 2))]


def test_the_uncalled_part_taken_from_the_pot_off_the_table_goes_back_to_its_owner() -> None:
    """No stack read where it went: chips leaving the pot mid-hand once the uncalled part was
    found swept into it are that part handed back; before that finding they are nothing."""
    t = Table(start((1, 2, 3), button=3))
    t.blinds()
    t.bet(3, 2)
    t.bet(1, 1)
    t.street(1)
    t.bet(1, 10)
    t.bet(2, 4)
    t.all_in(2)
    t.fold(3)
    assert t.move(1, "pot", None) == ()  # the uncalled part is not in the pot yet
    t.move(1, None, "pot")
    assert raised(t.sweep()) == ["uncalled_bet_not_returned"]
    assert cleared(t.move(6, "pot", None)) == ["uncalled"]
    assert t.m.uncalled is None
    t.street(2)
    assert [(p.amount, p.eligible) for p in t.m.pots] == [(14, (1, 2))]


def test_returning_the_uncalled_part_before_the_sweep_is_no_take_back() -> None:
    t = Table(start((1, 2, 3), button=3))
    t.blinds()
    t.bet(3, 10)
    t.fold(1)
    t.fold(2)
    assert t.m.uncalled == (3, 8)
    assert raised(t.move(8, "bet:3", "stack:3")) == []
    assert t.m.uncalled is None


# ---------------------------------------------------------------- the award


def _to_showdown() -> Table:
    t = Table(start((1, 2, 3), button=3))
    t.blinds()
    t.bet(3, 2)
    t.bet(1, 1)
    t.sweep()
    for street in (1, 2, 3):
        t.street(street)
    t.m, _ = t.m.table(1, ("As", "Ad"), BOARD)
    t.m, _ = t.m.table(2, ("4c", "5d"), BOARD)
    t.m, _ = t.m.table(3, ("Kh", "Qh"), BOARD)
    return t


def test_a_chip_pushed_to_a_seat_that_wins_nothing_is_raised_at_once_and_resolved_when_right() -> None:
    t = _to_showdown()
    assert t.m.shows_first == 1  # no bet on the river: the first seat left of the button
    verdicts = t.move(6, "pot", "stack:2")
    assert raised(verdicts) == ["pot_awarded_wrong"]
    assert "seat 1" in verdicts[0].message  # type: ignore[union-attr]
    t.move(6, "stack:2", "pot")
    verdicts = t.move(6, "pot", "stack:1")
    assert "push" in cleared(verdicts)
    assert t.m.settled
    _, _, outcome = t.m.finish(BOARD)
    assert outcome.result == "showdown"
    assert outcome.awarded == ((1, 6),)
    assert [(s.seat, s.rank) for s in outcome.showdown] == [(1, "pair"), (2, "high_card"), (3, "high_card")]


def test_the_uncontested_winner_takes_the_pot_and_its_own_bet_back() -> None:
    t = Table(start((1, 2, 3), button=3))
    t.blinds()
    t.bet(3, 6)
    t.fold(1)
    t.fold(2)
    t.move(4, "bet:3", "stack:3")  # the uncalled part
    t.move(2, "bet:3", "stack:3")
    t.move(1, "bet:1", "stack:3")
    t.move(2, "bet:2", "stack:3")
    assert t.m.settled
    assert raised(t.verdicts) == []
    _, _, outcome = t.m.finish(())
    assert outcome.result == "uncontested"
    assert outcome.awarded == ((3, 5),)
    assert outcome.pots[0].winners == (3,)


# ---------------------------------------------------------------- queries and inputs


def test_the_misdeal_window_closes_by_profile() -> None:
    for profile, after in (("roberts", 2), ("tda", 3)):
        t = Table(start((1, 2, 3, 4, 5), button=5, profile=profile))
        t.blinds()
        t.fold(3)
        assert not t.m.window_closed
        t.fold(4)
        assert t.m.window_closed == (after == 2)
        t.fold(5)
        assert t.m.window_closed


def test_the_last_bettor_of_the_river_shows_first_else_by_house_rule() -> None:
    t = _to_showdown()
    assert t.m.shows_first == 1
    t = Table(start((1, 2, 3), button=3))
    t.blinds()
    t.bet(3, 2)
    t.bet(1, 1)
    for street in (1, 2, 3):
        t.street(street)
    t.bet(2, 4)
    t.bet(3, 4)
    t.bet(1, 4)
    assert t.m.shows_first == 2


def test_an_all_in_called_runs_the_board_out() -> None:
    t = Table(start((1, 2), button=2))
    t.blinds()
    t.bet(2, 99)
    t.all_in(2)
    t.bet(1, 98)
    t.all_in(1)
    assert t.m.run_out
    assert t.m.to_act is None
    t.street(1)
    assert t.m.run_out
    assert t.m.round_complete


def test_action_inputs_follow_the_same_rules() -> None:
    t = Table(start())
    for seat, amount in ((1, 1), (2, 2)):
        t.action(seat, "post", amount)
    t._take(t.m.dealt())
    t.action(3, "raise", 6)
    t.action(4, "fold")
    t.action(1, "call", 5)
    t.action(2, "call", 4)
    t.street(1)
    assert t.m.to_act == 1
    t.action(1, "check")
    assert t.m.to_act == 2
    assert raised(t.action(3, "bet", 10)) == []  # seat 2 could check: inferred
    assert [(a.seat, a.action) for a in t.m.actions[-3:]] == [(1, "check"), (2, "check"), (3, "bet")]
    t.action(1, "fold")
    assert raised(t.action(2, "raise", 11)) == ["raise_below_minimum"]


def test_where_chips_are_read_an_action_input_only_names_what_they_cannot_show() -> None:
    t = Table(start())
    t.blinds()
    t.bet(3, 2)
    t.action(3, "call", 2)  # the chips already said it
    t.bet(4, 2)
    assert sum(a.amount for a in t.m.actions if a.seat == 3) == 2


def test_without_a_button_there_is_no_order_but_sizes_are_still_checked() -> None:
    t = Table(start(button=None))
    t.bet(1, 1)
    t.bet(2, 2)
    t._take(t.m.dealt())
    assert t.m.to_act is None
    t.bet(4, 3)
    assert raised(t.bet(3, 3)) == ["raise_below_minimum"]
    assert "action_out_of_turn" not in raised(t.verdicts)


def test_money_is_a_value() -> None:
    m = start()
    after, _ = m.move(1, None, "bet:1")
    assert m.bets == ()
    assert after.bets == ((1, 1),)
    with pytest.raises(FrozenInstanceError):
        m.state = after.state  # type: ignore[misc]
    for part in (m.state, m.state.seating, m.state.betting):
        with pytest.raises(FrozenInstanceError):
            setattr(part, fields(part)[0].name, None)


def test_the_rake_is_checked_with_the_push_and_cleared_when_corrected() -> None:
    t = Table(start((1, 2, 3), button=3, rake_percent=10.0, rake_cap=3))
    t.blinds()
    t.bet(3, 10)
    t.bet(1, 9)
    t.bet(2, 8)
    t.sweep()
    for street in (1, 2, 3):
        t.street(street)
    t.m, _ = t.m.table(1, ("As", "Ad"), BOARD)
    t.m, _ = t.m.table(2, ("4c", "5d"), BOARD)
    t.move(1, "pot", "rake")  # the rake is 10 % of 30 = 3
    verdicts = t.move(29, "pot", "stack:1")
    assert raised(verdicts) == ["rake_wrong"]
    t.move(2, "stack:1", "pot")
    verdicts = t.move(2, "pot", "rake")
    assert cleared(verdicts) == ["rake"]
    _, _, outcome = t.m.finish(BOARD)
    assert outcome.rake == 3
    assert outcome.awarded == ((1, 27),)
    assert outcome.pots[0].amount == 27


def test_without_chips_the_bets_are_what_the_inputs_put_in() -> None:
    t = Table(start())
    t.action(1, "post", 1)
    t.action(2, "post", 2)
    t._take(t.m.dealt())
    t.action(3, "raise", 6)
    assert t.m.bets == ((1, 1), (2, 2), (3, 6))
    assert t.m.to_act == 4


def test_with_no_river_bet_the_house_may_have_the_last_to_check_show_first() -> None:
    stakes = Stakes(small_blind=1, big_blind=2)
    money = Money.begin(
        stakes=stakes,
        seats=(1, 2, 3),
        button=3,
        table_seats=10,
        profile="tda",
        no_bet_shows_first="last_to_check",
    )
    t = Table(money)
    t.blinds()
    t.bet(3, 2)
    t.bet(1, 1)
    for street in (1, 2, 3):
        t.street(street)
    t.action(1, "check")
    t.action(2, "check")
    t.action(3, "check")
    assert t.m.shows_first == 3


def test_a_hand_mucked_at_showdown_loses_its_claim_without_a_betting_action() -> None:
    t = _to_showdown()
    before = t.m.actions
    t.fold(2)
    assert t.m.actions == before
    assert 2 not in t.m.live
    _, _, outcome = t.m.finish(BOARD)
    assert outcome.pots[0].eligible == (1, 3)
