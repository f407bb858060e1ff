"""Who wins what: the dealer's own ranking and split, independent of the engine's; pure.

Seed 002: the best five of seven cards, kickers decide, identical hands split (phevaluator: a
lower value is a better hand). Seed 001: each side pot is split on its own; the odd chip goes to
the winner who showed first. The rake comes out of the main pot first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from phevaluator import evaluate_cards


@dataclass(frozen=True, slots=True)
class PotShare:
    """One pot after the rake: who could win it, who did, and each winner's chips."""

    amount: int
    eligible: tuple[int, ...]
    winners: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]


def hand_rank(board: Sequence[str], hole: Sequence[str]) -> int:
    return int(evaluate_cards(*board, *hole))


def board_rank(board: Sequence[str]) -> int:
    return int(evaluate_cards(*board))


def awards(
    pots: Sequence[tuple[int, tuple[int, ...]]],
    shown: Sequence[int],
    ranks: Mapping[int, int],
    rake: int,
) -> list[PotShare]:
    """Each pot's winners and shares; ``shown`` is the order the hands were tabled."""
    out: list[PotShare] = []
    owed = rake
    for amount, eligible in pots:
        taken = min(owed, amount)
        owed -= taken
        left = amount - taken
        contenders = [s for s in shown if s in eligible]
        if len(eligible) == 1 or not contenders:
            winners: tuple[int, ...] = (eligible[0],) if len(eligible) == 1 else tuple(eligible)
        else:
            best = min(ranks[s] for s in contenders)
            winners = tuple(s for s in contenders if ranks[s] == best)
        base, odd = divmod(left, len(winners))
        shares = tuple((seat, base + (1 if i < odd else 0)) for i, seat in enumerate(winners))
        out.append(PotShare(left, eligible, winners, shares))
    return out
