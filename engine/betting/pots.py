"""Main and side pots from what each seat put in, and the uncalled part of the top bet.

Seed 001: chips nobody called go back to the player who bet them; an all-in for less than the
others makes a main pot at its level (every other contribution up to that level) and side pots
above it, one per all-in level, each won only by the seats that reached it.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from engine.betting.terms import Pot

__all__ = ["build_pots", "uncalled"]


def uncalled(contributed: Mapping[int, int]) -> tuple[int, int] | None:
    """``(seat, amount)``: what the single highest contributor put in above the second highest
    contribution (folded seats' contributions count); ``None`` when the top is matched.

    A lone contributor gets everything back (a big blind nobody called, seed 001).
    """
    top_seat: int | None = None
    top = 0
    second = 0
    for seat, amount in contributed.items():
        if amount > top:
            second = top
            top_seat, top = seat, amount
        elif amount > second:
            second = amount
    if top_seat is None or top == second:
        return None
    return top_seat, top - second


def build_pots(contributed: Mapping[int, int], live: AbstractSet[int]) -> tuple[Pot, ...]:
    """The pots, main pot first, from the chips each seat put in (the uncalled part already
    returned) and the seats still in (``live``: not folded).

    A pot closes at each level a live seat stopped at (its all-in); folded seats' chips fill the
    levels up to what they put in but win nothing. Chips above the top live level (none once the
    uncalled part is out) join the last pot rather than vanish. No empty pots; ``eligible`` is in
    seat order.
    """
    levels = sorted({amount for seat, amount in contributed.items() if seat in live and amount > 0})
    total = sum(amount for amount in contributed.values() if amount > 0)
    if not levels:
        # nobody still in put anything in: the chips stay in one pot for the seats still in
        return (Pot(total, tuple(sorted(live))),) if total else ()
    pots: list[Pot] = []
    below = 0
    for level in levels:
        amount = sum(min(put, level) - below for put in contributed.values() if put > below)
        eligible = tuple(sorted(seat for seat, put in contributed.items() if seat in live and put >= level))
        pots.append(Pot(amount, eligible))
        below = level
    above = sum(put - below for put in contributed.values() if put > below)
    if above:
        last = pots[-1]
        pots[-1] = Pot(last.amount + above, last.eligible)
    return tuple(pots)
