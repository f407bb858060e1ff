"""The showdown's verdict: ranks, the rake, who wins each pot and how much.

Seed 002: best five of seven, kickers decide, identical five-card hands split. Seed 001: the odd
chip of a split pot goes to the player who showed first (the house may choose the first winner
left of the button instead). The house's payment comes out of the main pot first.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from decimal import Decimal
from typing import Final

from phevaluator import evaluate_cards

from engine.betting.push import check_push  # the check of an award, callable by this module's name
from engine.betting.terms import OddChip, Pot, PotAward, Stakes

__all__ = ["RANK_NAMES", "award", "check_push", "rake_for", "rank_of", "rankable"]

#: Hand categories, best first (a royal flush is the best straight flush).
RANK_NAMES: Final[tuple[str, ...]] = (
    "straight_flush",
    "four_of_a_kind",
    "full_house",
    "flush",
    "straight",
    "three_of_a_kind",
    "two_pair",
    "pair",
    "high_card",
)
#: phevaluator's value (1 = royal flush ... 7462 = 7-high) of the worst hand of each category.
_WORST_OF: Final[tuple[int, ...]] = (10, 166, 322, 1599, 1609, 2467, 3325, 6185, 7462)


def rank_of(board: Sequence[str], hole: Sequence[str]) -> tuple[int, str]:
    """The best five of the board and ``hole``: phevaluator's value (lower is better, equal is an
    identical hand) and its category's name."""
    value: int = evaluate_cards(*board, *hole)
    return value, RANK_NAMES[bisect_left(_WORST_OF, value)]


def rankable(board: Sequence[str]) -> bool:
    """Whether hands can be ranked on ``board``: three to five cards (fewer: a hand cut short;
    more: an irregular board the floor rules on)."""
    return 3 <= len(board) <= 5


def rake_for(stakes: Stakes, total: int, saw_flop: bool) -> int:
    """The house's payment from a hand of ``total`` chips: ``rake_percent`` of it, rounded down,
    at most ``rake_cap`` (0: no cap); nothing when the hand ended before the flop."""
    if not saw_flop or stakes.rake_percent <= 0 or total <= 0:
        return 0
    # Decimal of the written percentage: 7% of 100 is 7, not 7.000000000000001 or 6.99...
    rake = int(Decimal(total) * Decimal(str(stakes.rake_percent)) / 100)
    if stakes.rake_cap > 0:
        rake = min(rake, stakes.rake_cap)
    return min(rake, total)


def award(
    pots: Sequence[Pot],
    shown: Sequence[tuple[int, tuple[str, str]]],
    board: Sequence[str],
    *,
    rake: int,
    odd_chip: OddChip,
    button: int,
    table_seats: int,
) -> tuple[PotAward, ...]:
    """Each pot's winners and shares, the rake taken out of the main pot first.

    ``shown``: the hands tabled face up, in the order shown. A pot with one eligible seat goes to
    it, shown or not. Otherwise the best of its eligible seats that showed wins; identical hands
    split; a split's odd chips go one each, in the house's order (``first_shown``: the order
    shown; ``left_of_button``: clockwise from the button), so nobody gets more than one per pot.

    A pot whose eligible seats all mucked has no winner here (``winners`` and ``shares`` empty):
    no hand was shown to give it to, so the engine names nobody and the floor decides; a push
    check accepts its chips going to any of its eligible seats. The same holds for a contested
    pot when the board has fewer than three cards (nothing to rank on) or more than five (an
    irregular board, ``board_too_many_cards``: which five play is the floor's decision).
    """
    ranks = {seat: rank_of(board, cards)[0] for seat, cards in shown} if rankable(board) else {}
    order = _odd_chip_order(shown, odd_chip, button, table_seats)
    awards: list[PotAward] = []
    rake_left = rake
    for pot in pots:
        taken = min(rake_left, pot.amount)
        rake_left -= taken
        amount = pot.amount - taken
        winners = _winners(pot.eligible, ranks)
        awards.append(PotAward(amount, pot.eligible, winners, _shares(amount, winners, order)))
    return tuple(awards)


def _winners(eligible: tuple[int, ...], ranks: dict[int, int]) -> tuple[int, ...]:
    """The eligible seats with the best hand shown (seat order); the lone eligible seat as is."""
    if len(eligible) == 1:
        return eligible
    contenders = [seat for seat in eligible if seat in ranks]
    if not contenders:
        return ()
    best = min(ranks[seat] for seat in contenders)
    return tuple(seat for seat in contenders if ranks[seat] == best)


def _shares(amount: int, winners: tuple[int, ...], order: dict[int, int]) -> tuple[tuple[int, int], ...]:
    """``(seat, chips)`` per winner in seat order; the odd chips one each in the house's order."""
    if not winners:
        return ()
    each, odd = divmod(amount, len(winners))
    lucky = set(sorted(winners, key=lambda seat: order.get(seat, len(order)))[:odd])
    return tuple((seat, each + (seat in lucky)) for seat in winners)


def _odd_chip_order(
    shown: Sequence[tuple[int, tuple[str, str]]], rule: OddChip, button: int, table_seats: int
) -> dict[int, int]:
    """Seat -> place in the line for odd chips (lower first)."""
    if rule == "first_shown":
        return {seat: place for place, (seat, _) in enumerate(shown)}
    return {seat: (seat - button - 1) % table_seats for seat, _ in shown}
