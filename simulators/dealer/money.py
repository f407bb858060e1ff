"""The dealer's hands on the chips of one hand: posts, bets, sweeps, the showdown and the pushes.

Every physical act is a chip step (:class:`PlaceChips`, :class:`MoveChips`, :class:`TakeChips`)
on the zones of the contract: ``bet:N`` in front of each seat, ``pot``, ``rake``. The money is
booked in the dealer's own :class:`~simulators.dealer.betting.Ledger`; who wins is the dealer's
own phevaluator ranking (:mod:`simulators.dealer.award`), never the engine's.

The dealer's conventions (what the engine is asked to follow):

- blinds and antes lie in the betting areas before the deal (an ante with a blind in one area);
- a bet, call or raise is one handful of chips put in the seat's area; a seat that goes all in
  is announced with the keypad's ``all_in`` key and its seat (after which nobody folds: the
  engine counts no fold once it has seen that key);
- at the end of a round the uncalled chips go back to their owner's stack zone (``stack:N``) and
  the rest is swept into the pot, all areas at once; in a hand won uncontested everything is swept
  and pushed to the winner (the uncalled part is the winner's own);
- at the showdown hands are tabled face up one by one (seed 000's order), hands that cannot win
  are mucked; the rake goes to ``rake``, each pot's shares from ``pot`` to the winners' areas;
- after the cards are cleared the winners take their chips, the chips handed back leave the
  stack zones and the drop box is emptied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contract.cards import bet_zone, stack_zone
from simulators.dealer.award import PotShare, awards, board_rank, hand_rank
from simulators.dealer.betting import Choice, Ledger, Tendencies, choose
from simulators.dealer.chips import Rack, partition, pick
from simulators.dealer.steps import MoveChips, PlaceChips, TakeChips

if TYPE_CHECKING:
    from simulators.dealer.hand import HandPlay
    from simulators.dealer.mistakes.base import Mistake

#: Seconds a real dealer (or player) takes before each chip act, at ``--speed 1``.
CHIP_PACE: dict[str, float] = {
    "post": 0.8,
    "bet": 2.0,
    "sweep": 1.5,
    "push": 1.5,
    "rake": 1.0,
    "collect": 0.5,
    "show": 1.0,
}


@dataclass
class Settlement:
    """What the showdown decided: the rake and each pot's shares, shown order kept."""

    rake: int
    pots: list[PotShare]
    shown: list[int] = field(default_factory=list)
    #: Uncalled chips swept with the rest in a hand won uncontested: they go back with the push.
    returned: dict[int, int] = field(default_factory=dict)

    def totals(self) -> dict[int, int]:
        """Each seat's chips from the pot over every pot (and its uncalled chips), in order."""
        out: dict[int, int] = {}
        for pot in self.pots:
            for seat, amount in pot.shares:
                out[seat] = out.get(seat, 0) + amount
        for seat, amount in self.returned.items():
            out[seat] = out.get(seat, 0) + amount
        return out


class TableMoney:
    """The chips of one hand (see the module docstring)."""

    def __init__(self, play: HandPlay, ledger: Ledger, rack: Rack, tendencies: Tendencies) -> None:
        self.play = play
        self.ledger = ledger
        self.rack = rack
        self.chips = rack.chips
        self.tendencies = tendencies
        self.front: dict[int, list[str]] = {}
        self.pot: list[str] = []
        self.raked: list[str] = []
        self.pushed: dict[int, list[str]] = {}
        self.winnings: dict[int, int] = {}
        #: What the last sweep took from each betting area (to put it back).
        self.swept: dict[int, list[str]] = {}
        #: Uncalled chips swept into the pot of a hand won uncontested, by seat.
        self.returned: dict[int, int] = {}
        #: Chips handed back to a stack zone this hand (taken away after the hand).
        self.stacked: dict[int, list[str]] = {}
        #: Chips a seat bought during the hand (a rebuy: they play no part in it), by seat.
        self.bought: dict[int, int] = {}

    # ------------------------------------------------------------------ physical acts

    def chips_in(
        self,
        seat: int,
        amount: int,
        *,
        mistake: str | None = None,
        pause: float | None = None,
        complete: bool = False,
        group: str | None = None,
    ) -> list[str]:
        """``amount`` from the seat's stack into its betting area (one handful); ``complete``
        handfuls (bets and raises) hold small chips enough to hand back any part of them."""
        uids = self.rack.take(amount, complete=complete)
        self.front.setdefault(seat, []).extend(uids)
        self.play.emit(
            PlaceChips(
                uids=tuple(uids),
                zone=bet_zone(seat),
                mistake=mistake,
                pause_s=CHIP_PACE["bet"] if pause is None else pause,
                group=group,
            )
        )
        return uids

    def to_stack(self, seat: int, uids: Sequence[str], *, mistake: str | None = None) -> None:
        """Chips from the seat's betting area (or the pot) back to its stack, where the reader
        sees them arrive. They stay there until the hand is over (:meth:`collect`): a chip taken
        off the table before the hand's result would still count, for the engine, as pushed."""
        taken = set(uids)
        self.front[seat] = [u for u in self.front.get(seat, []) if u not in taken]
        self.pot = [u for u in self.pot if u not in taken]
        self.stacked.setdefault(seat, []).extend(uids)
        self.play.emit(
            MoveChips(uids=tuple(uids), zone=stack_zone(seat), mistake=mistake, pause_s=CHIP_PACE["bet"])
        )

    def sweep(self, *, mistake: str | None = None) -> None:
        """Every betting area into the pot at once."""
        self.swept = {seat: list(uids) for seat, uids in self.front.items() if uids}
        uids = [u for seat in sorted(self.front) for u in self.front[seat]]
        self.front = {}
        if not uids:
            return
        self.pot += uids
        self.play.emit(MoveChips(uids=tuple(uids), zone="pot", mistake=mistake, pause_s=CHIP_PACE["sweep"]))

    def unsweep(self, swept: dict[int, list[str]]) -> None:
        """Bets swept too early put back in their betting areas."""
        for seat, uids in sorted(swept.items()):
            if not uids:
                continue
            taken = set(uids)
            self.pot = [u for u in self.pot if u not in taken]
            self.front.setdefault(seat, []).extend(uids)
            self.play.emit(MoveChips(uids=tuple(uids), zone=bet_zone(seat), pause_s=CHIP_PACE["sweep"]))

    def push(self, seat: int, uids: Sequence[str], *, mistake: str | None = None) -> None:
        """Chips from the pot to a seat's betting area."""
        taken = set(uids)
        self.pot = [u for u in self.pot if u not in taken]
        self.pushed.setdefault(seat, []).extend(uids)
        self.play.emit(
            MoveChips(
                uids=tuple(uids),
                zone=bet_zone(seat),
                mistake=mistake,
                pause_s=CHIP_PACE["push"],
                group="push",
            )
        )

    def push_back(self, seat: int, uids: Sequence[str]) -> None:
        """A push taken back into the pot (the remedy of a wrong push)."""
        taken = set(uids)
        self.pushed[seat] = [u for u in self.pushed.get(seat, []) if u not in taken]
        self.pot += list(uids)
        self.play.emit(MoveChips(uids=tuple(uids), zone="pot", pause_s=CHIP_PACE["push"]))

    def take_rake(self, uids: Sequence[str], *, mistake: str | None = None) -> None:
        taken = set(uids)
        self.pot = [u for u in self.pot if u not in taken]
        self.raked += uids
        if uids:
            self.play.emit(
                MoveChips(
                    uids=tuple(uids), zone="rake", mistake=mistake, pause_s=CHIP_PACE["rake"], group="push"
                )
            )

    def unrake(self, uids: Sequence[str]) -> None:
        """Chips taken from the drop back into the pot (a wrong rake put right)."""
        taken = set(uids)
        self.raked = [u for u in self.raked if u not in taken]
        self.pot += list(uids)
        self.play.emit(MoveChips(uids=tuple(uids), zone="pot", pause_s=CHIP_PACE["rake"]))

    def value(self, uids: Sequence[str]) -> int:
        return sum(self.chips[u] for u in uids)

    # ------------------------------------------------------------------ before the deal

    def post(self, seat: int, amount: int, *, mistake: str | None = None) -> None:
        """A blind and/or ante put in the seat's betting area before the deal."""
        if amount > 0:
            self.chips_in(seat, amount, mistake=mistake, pause=CHIP_PACE["post"], group="post")

    # ------------------------------------------------------------------ betting

    def act(self, seat: int, choice: Choice, *, mistake: str | None = None) -> None:
        """Book ``choice`` and do it: cards to the muck, nothing, or chips in (all in announced)."""
        ledger = self.ledger
        if choice.verb == "fold":
            ledger.apply(seat, choice)
            self.play.fold(seat)
            return
        amount = ledger.apply(seat, choice)
        if amount > 0:
            self.chips_in(seat, amount, mistake=mistake, complete=choice.verb != "call")
            if seat in ledger.all_in:
                self.play.press("all_in", seat=seat, pause=CHIP_PACE["bet"])

    def decide(self, seat: int, *, keep: int, protect: int | None, cautious: bool) -> Choice:
        """A legal choice for ``seat``; ``keep`` seats at least stay in; ``cautious``: no raise
        and no all in (a hand with a mistake plays on to its end)."""
        ledger = self.ledger
        before, behind = ledger.bet.get(seat, 0), ledger.stack[seat]
        # Once a seat is all in, nobody folds any more: the engine takes the keypad's all_in
        # (with its seat) for "nobody is left to bet" and from then on counts no fold (see
        # docs/demo.md); bets and calls it still follows, so side pots are played out.
        any_all_in = any(s in ledger.all_in for s in ledger.live)
        may_fold = seat != protect and len(ledger.live) > keep and not any_all_in
        choice = choose(ledger, seat, self.play.rng, self.tendencies, may_fold=may_fold)
        if not cautious:
            return choice
        if choice.verb in ("bet", "raise"):
            to = choice.to if ledger.stakes.structure == "fixed_limit" else ledger.min_to()
            if to - before < behind:
                return Choice(choice.verb, to)
            choice = Choice("call", ledger.highest) if ledger.highest > before else Choice("check")
        if choice.verb == "call" and ledger.highest - before >= behind and may_fold:
            return Choice("fold")
        return choice

    def play_round(
        self, mistake: Mistake, *, keep: int, protect: int | None, cautious: bool, until_bet: bool = False
    ) -> None:
        """Players act until the round is complete (or, ``until_bet``, until someone bets)."""
        ledger = self.ledger
        while True:
            seat = ledger.next_to_act()
            if seat is None:
                return
            if mistake.act(self.play, seat):
                continue
            choice = self.decide(seat, keep=keep, protect=protect, cautious=cautious)
            if until_bet and choice.verb in ("check", "call", "fold") and ledger.highest == 0:
                choice = Choice("bet", ledger.min_to())  # somebody must owe: the turn comes early
            self.act(seat, choice)
            if until_bet and choice.verb in ("bet", "raise"):
                return

    def end_round(self, mistake: Mistake) -> None:
        """Uncalled chips back to their owner, the rest into the pot (the mistake may interfere)."""
        ledger = self.ledger
        contested = len(ledger.live) > 1
        back = ledger.uncalled()
        if back is not None and not contested:
            # Won uncontested: everything is swept and pushed to the winner, its uncalled chips
            # with the pot (they are its own; the rake is on the pot without them).
            seat, amount = back
            ledger.give_back(seat, amount)
            self.returned[seat] = self.returned.get(seat, 0) + amount
        elif back is not None:
            seat, amount = back
            uids = pick(self.chips, self.front.get(seat, []), amount)
            if uids is None:
                raise RuntimeError(f"cannot hand back {amount} from seat {seat}'s bet")
            ledger.give_back(seat, amount)
            if not mistake.uncalled_back(self.play, seat, uids):
                self.to_stack(seat, uids)
        if not mistake.sweep(self.play):
            self.sweep()
        ledger.sweep()

    # ------------------------------------------------------------------ the end of the hand

    def settle(self, mistake: Mistake) -> None:
        """The showdown (or the uncontested win), the rake and the pushes."""
        ledger, hand = self.ledger, self.play.hand
        live = ledger.live
        saw_flop = len(hand.board) >= 3
        if len(live) == 1:
            shown: list[int] = []
            ranks: dict[int, int] = {}
        else:
            shown, ranks = self.showdown(mistake)
        pots = ledger.pots(claims=shown or None)
        total = sum(amount for amount, _ in pots)
        rake = ledger.stakes.rake_for(total, saw_flop)
        plan = Settlement(rake, awards(pots, shown, ranks, rake), shown, dict(self.returned))
        if not mistake.pushes(self.play, plan):
            self.push_plan(plan)
        for seat, uids in self.pushed.items():
            # The uncalled chips pushed back are already in the stack (``give_back``).
            self.winnings[seat] = self.value(uids) - self.returned.get(seat, 0)

    def showdown(self, mistake: Mistake) -> tuple[list[int], dict[int, int]]:
        """Hands tabled face up in seed 000's order; those that cannot win a pot are mucked."""
        ledger, play = self.ledger, self.play
        board = play.hand.board
        ranks = {seat: hand_rank(board, play.hole_cards(seat)) for seat in ledger.live}
        on_board = board_rank(board)
        pots = ledger.pots()
        shown: list[int] = []
        for seat in ledger.showing_order():
            if mistake.showdown_muck(play, seat):
                continue
            contests = [elig for _, elig in pots if seat in elig and len(elig) > 1]
            best = [min((ranks[s] for s in shown if s in elig), default=None) for elig in contests]
            if any(b is None or ranks[seat] <= b for b in best) or not contests:
                play.table_hand(seat)
                shown.append(seat)
            else:
                if ranks[seat] == on_board:
                    play.press("declare_board", seat=seat)
                play.muck(seat)
        return shown, ranks

    def parts(self, plan: Settlement) -> list[tuple[int | None, int]]:
        """(seat or None for the rake, amount) for every chip movement of a plan, rake first."""
        parts: list[tuple[int | None, int]] = [(None, plan.rake)] if plan.rake else []
        parts += [(seat, amount) for seat, amount in plan.totals().items() if amount]
        return parts

    def split_pot(self, parts: Sequence[tuple[int | None, int]]) -> list[list[str]]:
        """The pot's chips for each part (a dealer cuts the pot without making change)."""
        chips = partition(self.chips, self.pot, [amount for _, amount in parts])
        if chips is None:
            raise RuntimeError(f"cannot cut a pot of {self.value(self.pot)} into {parts}")
        return chips

    def push_plan(self, plan: Settlement, *, last_mistake: str | None = None) -> None:
        """The rake, then each winner's chips (the last push may carry a mistake's tag)."""
        parts = self.parts(plan)
        chips = self.split_pot(parts)
        for index, ((seat, _amount), uids) in enumerate(zip(parts, chips, strict=True)):
            tag = last_mistake if index == len(parts) - 1 else None
            if seat is None:
                self.take_rake(uids, mistake=tag)
            else:
                self.push(seat, uids, mistake=tag)

    def collect(self) -> None:
        """After the hand: the winners take their chips, the drop box is emptied."""
        uids: list[str] = []
        for by_seat in (self.pushed, self.front, self.stacked):
            for seat in sorted(by_seat):
                uids += by_seat[seat]
                self.rack.give(by_seat[seat], seat=seat)
        uids += self.raked
        self.rack.give(self.raked)
        if uids:
            self.play.emit(TakeChips(uids=tuple(uids), pause_s=CHIP_PACE["collect"]))
        self.pushed, self.front, self.raked, self.stacked = {}, {}, [], {}

    def final_stacks(self) -> dict[int, int]:
        """Each seat's stack after the hand (chips behind plus what it won, and chips it bought
        during the hand, which played no part in it)."""
        return {
            seat: stack + self.winnings.get(seat, 0) + self.bought.get(seat, 0)
            for seat, stack in self.ledger.stack.items()
        }
