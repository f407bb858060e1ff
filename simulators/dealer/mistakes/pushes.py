"""Mistakes at the end of the hand: chips pushed to a seat that won nothing, a split pot cut
unevenly, the odd chip to the wrong winner, the wrong rake. After the alert the dealer puts the
push right (takes the chips back and pushes them where they belong): a push left standing when
the next hand starts is a remedy not followed (docs/engine.md), which this dealer does not commit.

The engine judges the pushes once the pot is empty, so the last push carries the tag; a push to
a seat that wins nothing is judged at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from contract.cards import RANKS, SUITS
from simulators.dealer.betting import Choice, Ledger
from simulators.dealer.hand import HandPlay
from simulators.dealer.mistakes.chipbase import ChipMistake, money_of
from simulators.dealer.mistakes.registry import register
from simulators.dealer.money import Settlement, TableMoney


def totals(plan: Settlement) -> dict[int, int]:
    """Each winner's chips over every pot, in the order they first win."""
    return plan.totals()


def carry_out(
    money: TableMoney,
    rake: Sequence[int],
    pieces: Sequence[tuple[int, int]],
    code: str,
    tag_at: int | None = None,
) -> list[list[str]]:
    """The rake (one move of its parts), then each (seat, amount) piece pushed on its own; the
    piece ``tag_at`` (default: the last pushed, else the rake) carries ``code``. Returns the
    chips of each rake part, then of each piece."""
    amounts = [*rake, *(amount for _, amount in pieces)]
    chips = money.split_pot([(None, a) for a in amounts])
    pushed = [i for i, (_, amount) in enumerate(pieces) if amount]
    if tag_at is None:
        tag_at = pushed[-1] if pushed else -1
    money.take_rake([u for part in chips[: len(rake)] for u in part], mistake=code if tag_at == -1 else None)
    for i, ((seat, _), uids) in enumerate(zip(pieces, chips[len(rake) :], strict=True)):
        if uids:
            money.push(seat, uids, mistake=code if i == tag_at else None)
    return chips


def rig_royal(play: HandPlay) -> None:
    """Arrange the deck so that the board is a royal flush: every hand shown ties (the shuffler
    reports no order, so any order is a fair shuffle)."""
    shoe, order = play.hand.shoe, play.hand.order
    n = len(order)
    board_at = (2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7)
    suit = play.rng.choice(SUITS)
    wanted = [rank + suit for rank in RANKS[:5]]
    for position, card in zip(board_at, wanted, strict=True):
        here = shoe.order.index(card)
        shoe.order[here], shoe.order[position] = shoe.order[position], shoe.order[here]


@register
class PotAwardedWrong(ChipMistake):
    """The first winner's chips go to a seat that won nothing."""

    code = "pot_awarded_wrong"

    def pushes(self, play: HandPlay, plan: Settlement) -> bool:
        money, ledger = money_of(play)
        won = totals(plan)
        losers = [s for s in ledger.order if s not in won]
        if not losers or not won:
            return False
        loser = play.rng.choice(losers)
        winner = next(iter(won))
        pieces = [(loser if s == winner else s, a) for s, a in won.items()]
        pieces.sort(key=lambda piece: piece[0] != loser)  # the wrong push first: judged at once
        chips = carry_out(money, [plan.rake], pieces, self.code or "", tag_at=0)
        wrong = chips[1]
        play.ack()
        money.push_back(loser, wrong)
        money.push(winner, wrong)
        return True


class _Split(ChipMistake):
    """A pot shared by tied hands (the board a royal flush)."""

    keep = 2

    def rig_board(self, play: HandPlay) -> None:
        rig_royal(play)

    @staticmethod
    def split(plan: Settlement) -> tuple[int, ...] | None:
        for pot in plan.pots:
            if len(pot.winners) >= 2:
                return pot.winners
        return None


@register
class SplitWrong(_Split):
    """One winner of a split pot gets chips of another's share (more than an odd chip)."""

    code = "split_wrong"

    def pushes(self, play: HandPlay, plan: Settlement) -> bool:
        money, _ = money_of(play)
        winners = self.split(plan)
        won = totals(plan)
        if winners is None or won[winners[1]] < 2:
            return False
        rich, poor = winners[0], winners[1]
        # Uneven by two chips or more, yet the poorer winner gets something (a winner who gets
        # nothing is a push to the wrong seat, pot_awarded_wrong).
        moved = min(max(1, won[poor] // 2), won[poor] - 1)
        pieces = [(s, a - (moved if s == poor else 0)) for s, a in won.items() if s != poor]
        pieces += [(rich, moved), (poor, won[poor] - moved)]
        chips = carry_out(money, [plan.rake], pieces, self.code or "")
        play.ack()
        extra = chips[len(pieces) - 1]
        money.push_back(rich, extra)
        money.push(poor, extra)
        return True


@register
class OddChipWrong(_Split):
    """The odd chip of a split pot goes to the last winner shown instead of the first (seed 001)."""

    code = "odd_chip_wrong"
    keep = 3
    players = 3

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.river_bet: int | None = None

    def act(self, play: HandPlay, seat: int) -> bool:
        """On the river everybody checks, or the first seat bets what leaves an odd chip in the
        pot (every hand ties: the board is a royal flush) and the others call."""
        money, ledger = money_of(play)
        if ledger.street != "river":
            return False
        if self.river_bet is None:
            self.river_bet = self._odd_bet(ledger)
            if self.river_bet:
                money.act(seat, Choice("bet", self.river_bet))
                return True
        if self.river_bet:
            money.act(seat, Choice("call", ledger.highest))
        else:
            money.act(seat, Choice("check"))
        return True

    @staticmethod
    def _odd_bet(ledger: Ledger) -> int:
        """The smallest river bet (0: none) after which the pot, raked, does not split evenly."""
        live = len(ledger.live)
        shortest = min(ledger.stack[s] for s in ledger.live)
        if ledger.stakes.structure == "fixed_limit":
            bets = [0, ledger.stakes.limit_bet("river")]  # the one bet the limit allows
        else:
            bets = [b * ledger.stakes.big_blind for b in range(20)]
        for bet in bets:
            if bet and bet > shortest:
                break
            total = ledger.pot + sum(ledger.bet.values()) + bet * live
            if (total - ledger.stakes.rake_for(total, True)) % live:
                return bet
        return 0

    def pushes(self, play: HandPlay, plan: Settlement) -> bool:
        money, _ = money_of(play)
        pot = next((p for p in plan.pots if len(p.winners) >= 2 and p.amount % len(p.winners)), None)
        if pot is None:
            return False  # no odd chip in this hand: nothing to get wrong
        first, last = pot.winners[0], pot.winners[-1]
        won = totals(plan)
        pieces = [(s, a - (1 if s == first else 0)) for s, a in won.items()]
        pieces.append((last, 1))
        chips = carry_out(money, [plan.rake], pieces, self.code or "")
        play.ack()
        odd = chips[-1]
        money.push_back(last, odd)
        money.push(first, odd)
        return True


@register
class RakeWrong(ChipMistake):
    """One chip more than the configured rake goes to the drop."""

    code = "rake_wrong"

    def pushes(self, play: HandPlay, plan: Settlement) -> bool:
        money, _ = money_of(play)
        won = totals(plan)
        winner = next(iter(won), None)
        if winner is None or won[winner] < 1:
            return False
        pieces = [(s, a - (1 if s == winner else 0)) for s, a in won.items()]
        chips = carry_out(money, [plan.rake, 1], pieces, self.code or "")
        play.ack()
        money.unrake(chips[1])
        money.push(winner, chips[1])
        return True
