"""Showdown: who shows first (seed 000) and whether the board was a seat's best hand (seed 004)."""

from __future__ import annotations

from collections.abc import Sequence

from phevaluator import evaluate_cards


def board_is_best(board: Sequence[str], hole: Sequence[str]) -> bool:
    """True when the five board cards alone are as good as the best hand with ``hole``.

    phevaluator ranks hands 1 (royal flush) upwards: lower is better, equal is a tie.
    """
    board_rank: int = evaluate_cards(*board)
    best_rank: int = evaluate_cards(*board, *hole)
    return best_rank >= board_rank


def showdown_order(
    seats_left: Sequence[int],
    button: int,
    table_seats: int,
    last_aggressor: int | None,
) -> tuple[int, ...]:
    """The order in which the remaining seats show their cards.

    The last player who bet or raised in the final round shows first, then clockwise; with no
    bet in the final round, the first to act (first seat left of the button) shows first.
    """
    if not seats_left:
        return ()
    if last_aggressor is not None and last_aggressor in seats_left:
        start = last_aggressor
        return tuple(sorted(seats_left, key=lambda s: (s - start) % table_seats))
    return tuple(sorted(seats_left, key=lambda s: (s - button - 1) % table_seats))


def odd_chip_seat(
    winners: Sequence[int],
    shown_order: Sequence[int],
    button: int,
    table_seats: int,
    rule: str,
) -> int:
    """The seat that gets an odd chip of a split pot.

    ``first_shown`` (seed 001, the default): the winner who showed first. ``left_of_button``
    (Robert's Rules, WSOP, TDA): the first winner clockwise from the button.
    """
    if not winners:
        raise ValueError("a split pot needs winners")
    if rule == "first_shown":
        for seat in shown_order:
            if seat in winners:
                return seat
    return min(winners, key=lambda s: (s - button - 1) % table_seats)
