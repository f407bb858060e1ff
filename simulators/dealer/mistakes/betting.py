"""Mistakes of the betting rounds: wrong blinds, out of turn, wrong sizes, chips taken back or
put where nobody sits, sweeps too early, uncalled chips swept, a tag that is no chip.

An action's size is judged once it is *settled* (another seat acts, a card, a sweep): the step
that completes the evidence of a size code is the next seat's fold, which settles it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from simulators.dealer.betting import Choice, choose
from simulators.dealer.chips import pick
from simulators.dealer.hand import HandPlay
from simulators.dealer.mistakes.base import DealPlan
from simulators.dealer.mistakes.chipbase import (
    ChipMistake,
    money_of,
    next_in_turn,
)
from simulators.dealer.mistakes.registry import register
from simulators.dealer.seating import blind_seats
from simulators.dealer.steps import PlaceChips, Step, TakeChips

if TYPE_CHECKING:
    from simulators.dealer.dealer import VirtualDealer


@register
class BlindWrongAmount(ChipMistake):
    """The small blind posts the big blind's amount; seen when the deal is complete. The remedy
    ("correct it before the deal") comes too late once cards are out: the hand plays on."""

    code = "blind_wrong_amount"
    not_with = frozenset({"levels"})  # a tournament's wrong blind is blinds_out_of_level

    def blind_amount(self, play: HandPlay, seat: int, due: int) -> int:
        _, ledger = money_of(play)
        if seat != ledger.small_blind:
            return due
        return (
            due
            - ledger.stakes.small_blind
            + ledger.stakes.big_blind
            + (1 if ledger.stakes.small_blind == ledger.stakes.big_blind else 0)
        )

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        return DealPlan(targets, tags={len(targets) - 1: self.code or ""})

    def after_deal(self, play: HandPlay) -> bool:
        play.ack()
        return True


@register
class ActionOutOfTurn(ChipMistake):
    """Preflop the seat after the first to act calls before it; the skipped seat then acts
    (calls or folds: the action to the early seat does not change, so its call is binding)."""

    code = "action_out_of_turn"
    players = 3

    def act(self, play: HandPlay, seat: int) -> bool:
        money, ledger = money_of(play)
        if self.done or ledger.street != "preflop":
            return False
        early = next_in_turn(ledger, seat)
        if early is None or ledger.highest - ledger.bet.get(early, 0) <= 0:
            return False
        self.done = True
        money.act(early, Choice("call", ledger.highest), mistake=self.code)
        play.ack()
        choice = choose(
            ledger, seat, play.rng, money.tendencies, may_fold=len(ledger.live) > 2, may_raise=False
        )
        money.act(seat, choice)
        return True


class _Size(ChipMistake, ABC):
    """A bet or raise of the wrong size by the first seat to act; the next seat folds (which
    settles the action and shows the evidence); the dealer then has it put right."""

    players = 3
    keep = 3
    round_street = "preflop"
    #: Whether the wrong bet is a handful from which any part can be handed back.
    complete = False

    def act(self, play: HandPlay, seat: int) -> bool:
        money, ledger = money_of(play)
        if self.done or ledger.street != self.round_street or ledger.acted:
            return False
        after = next_in_turn(ledger, seat)
        wrong, right = self.sizes(play, seat)
        if after is None or wrong - ledger.bet.get(seat, 0) >= ledger.stack[seat]:
            return False
        self.done = True
        before = ledger.bet.get(seat, 0)
        money.chips_in(seat, wrong - before, complete=self.complete)
        ledger.apply(seat, Choice("bet" if ledger.highest == 0 else "raise", right))
        ledger.apply(after, Choice("fold"))
        play.fold(after, mistake=self.code)
        play.ack()
        self.remedy(play, seat, wrong, right)
        return True

    @abstractmethod
    def sizes(self, play: HandPlay, seat: int) -> tuple[int, int]:
        """(the wrong total in front of ``seat``, the right one)."""

    def remedy(self, play: HandPlay, seat: int, wrong: int, right: int) -> None:
        money, _ = money_of(play)
        money.chips_in(seat, right - wrong)  # completed to the minimum


@register
class BetBelowMinimum(_Size):
    """On the flop the first seat bets less than the big blind; it is completed."""

    code = "bet_below_minimum"
    structures = ("no_limit", "pot_limit")
    round_street = "flop"

    def sizes(self, play: HandPlay, seat: int) -> tuple[int, int]:
        _, ledger = money_of(play)
        return ledger.stakes.big_blind - 1, ledger.stakes.big_blind


@register
class RaiseBelowMinimum(_Size):
    """Preflop the first seat raises by half the big blind (half a raise or more: RR / TDA 43
    make it a full raise); it is completed to the minimum raise."""

    code = "raise_below_minimum"
    structures = ("no_limit", "pot_limit")

    def sizes(self, play: HandPlay, seat: int) -> tuple[int, int]:
        _, ledger = money_of(play)
        return ledger.highest + max(1, ledger.last_raise // 2), ledger.min_to()


@register
class BetOverLimit(_Size):
    """Preflop the first seat raises over the limit (pot limit: the pot and a big blind more;
    fixed limit: twice the limit); the dealer has it reduced to the limit (the excess handed
    back to the seat's stack) before the next action."""

    code = "bet_over_limit"
    structures = ("pot_limit", "fixed_limit")
    complete = True

    def sizes(self, play: HandPlay, seat: int) -> tuple[int, int]:
        _, ledger = money_of(play)
        stakes = ledger.stakes
        if stakes.structure == "fixed_limit":
            limit = stakes.limit_bet("preflop")
            return ledger.highest + 2 * limit, ledger.highest + limit
        right = ledger.highest + ledger.pot_size_after_call(seat)
        return right + stakes.big_blind, right

    def remedy(self, play: HandPlay, seat: int, wrong: int, right: int) -> None:
        """Reduced to the limit: the excess back to the seat's stack."""
        money, _ = money_of(play)
        excess = pick(money.chips, money.front.get(seat, []), wrong - right)
        assert excess is not None, "a complete handful holds any part of it"
        money.to_stack(seat, excess)


@register
class ChipsTakenBack(ChipMistake):
    """Preflop the first seat calls, the next acts, then the first takes a chip back to its
    stack. Chips released stay: when its turn comes again it puts them back (calls)."""

    code = "chips_taken_back"
    players = 3

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.taker: int | None = None

    def act(self, play: HandPlay, seat: int) -> bool:
        money, ledger = money_of(play)
        if ledger.street != "preflop":
            return False
        if seat == self.taker:
            self.taker = None
            money.act(seat, Choice("call", ledger.highest))
            return True
        if self.done or ledger.acted:
            return False
        after = next_in_turn(ledger, seat)
        if after is None:
            return False
        self.done = True
        money.act(seat, Choice("call", ledger.highest))
        money.act(after, Choice("call", ledger.highest))
        chip = min(money.front[seat], key=lambda uid: money.chips[uid])
        money.to_stack(seat, [chip], mistake=self.code)
        ledger.give_back(seat, money.chips[chip])
        play.ack()
        self.taker = seat
        return True


@register
class ChipsOnVacantSeat(ChipMistake):
    """Chips land in the betting area of a seat where nobody is dealt in; they are removed."""

    code = "chips_on_vacant_seat"

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.settings.min_players >= dealer.settings.seats:
            return f"{cls.code}: every seat must be occupied at this table"
        return super().infeasible(dealer)

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        if len(dealer.occupied) >= dealer.settings.seats:
            dealer.leave(steps)

    def act(self, play: HandPlay, seat: int) -> bool:
        money, ledger = money_of(play)
        if self.done:
            return False
        self.done = True
        vacant = [s for s in range(1, play.settings.seats + 1) if s not in ledger.order]
        where = play.rng.choice(vacant)
        uids = money.rack.take(ledger.stakes.big_blind)
        play.emit(PlaceChips(uids=tuple(uids), zone=f"bet:{where}", mistake=self.code, pause_s=2.0))
        play.ack()
        money.front[where] = uids
        money.to_stack(where, uids)  # removed: to that seat's side of the table
        return False


@register
class PrematureSweep(ChipMistake):
    """Preflop, after the first action, the dealer sweeps while a seat has not matched the bet;
    sometimes the bets are put back before the round goes on."""

    code = "premature_sweep"

    def act(self, play: HandPlay, seat: int) -> bool:
        money, ledger = money_of(play)
        if self.done or ledger.street != "preflop" or ledger.acted:
            return False
        self.done = True
        if ledger.heads_up:
            money.act(seat, Choice("raise", ledger.min_to()))
        else:
            money.act(seat, Choice("call", ledger.highest))
        money.sweep(mistake=self.code)
        play.ack()
        if play.rng.random() < 0.5:
            money.unsweep(money.swept)
        return True


@register
class UncalledBetNotReturned(ChipMistake):
    """The big blind has one chip behind: the first seat makes the smallest raise, the big blind
    calls all in, the rest fold; the uncalled chip is swept with the rest and then handed back
    from the pot to its owner's stack."""

    code = "uncalled_bet_not_returned"

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.kept: tuple[int, list[str]] | None = None

    def stacks(self, dealer: VirtualDealer, stacks: dict[int, int]) -> None:
        stakes = dealer.stakes  # (a tournament: the level in force)
        assert stakes is not None
        assert dealer.button is not None
        players = sorted(dealer.occupied)
        _, big = blind_seats(dealer.button, players, dealer.settings.seats)
        stacks[big] = stakes.ante + stakes.big_blind + 1  # one chip behind its blind

    def act(self, play: HandPlay, seat: int) -> bool:
        money, ledger = money_of(play)
        if ledger.street != "preflop":
            return False
        big = ledger.big_blind
        if not self.done:
            self.done = True
            money.act(seat, Choice("raise", ledger.min_to()))
            return True
        if seat == big:
            everything = ledger.bet.get(seat, 0) + ledger.stack[seat]
            money.act(seat, Choice("call", min(ledger.highest, everything)))
        else:
            money.act(seat, Choice("fold"))
        return True

    def uncalled_back(self, play: HandPlay, seat: int, uids: list[str]) -> bool:
        if self.kept is not None:
            return False
        self.kept = (seat, uids)
        return True

    def sweep(self, play: HandPlay) -> bool:
        if self.kept is None or self.kept == (0, []):
            return False
        money, _ = money_of(play)
        seat, uids = self.kept
        self.kept = (0, [])
        money.sweep(mistake=self.code)
        play.ack()
        money.to_stack(seat, uids)  # handed back from the pot to its owner
        return True


@register
class UnknownChip(ChipMistake):
    """A tag that is no chip (another casino's) lands in the pot; the dealer takes it out."""

    code = "unknown_chip"

    def act(self, play: HandPlay, seat: int) -> bool:
        if self.done:
            return False
        self.done = True
        uid = play.foreign_uid("E0080000")
        play.emit(PlaceChips(uids=(uid,), zone="pot", mistake=self.code, pause_s=2.0))
        play.ack()
        play.emit(TakeChips(uids=(uid,), pause_s=1.0))
        return False
