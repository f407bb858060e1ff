"""Seat geometry: clockwise order, the button's next seat, dealing order and blinds."""

from __future__ import annotations

from collections.abc import Collection


def clockwise_from(start: int, seats: int) -> list[int]:
    """Seats 1..``seats`` clockwise, beginning with the seat after ``start``."""
    return [(start + i - 1) % seats + 1 for i in range(1, seats + 1)]


def next_occupied(after: int, occupied: Collection[int], seats: int) -> int:
    """The first occupied seat clockwise after ``after`` (``after`` itself if it is the only one)."""
    for seat in clockwise_from(after, seats):
        if seat in occupied:
            return seat
    raise ValueError("no occupied seat")


def dealing_order(button: int, players: Collection[int], seats: int) -> list[int]:
    """The seats dealt in, clockwise from the first seat left of the button; the button is last.

    Heads-up this puts the non-button seat first and the button (who posts the small blind) last.
    """
    return [seat for seat in clockwise_from(button, seats) if seat in players]


def blind_seats(button: int, players: Collection[int], seats: int) -> tuple[int, int]:
    """(small blind, big blind): left of the button, then the next; heads-up the button is small."""
    order = dealing_order(button, players, seats)
    if len(order) == 2:
        return order[1], order[0]
    return order[0], order[1]
