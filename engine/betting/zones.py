"""What the betting core's modules share: the zones a chip can be in, the streets, seat order
and per-seat counts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal, TypeAlias

from contract.cards import ALL_ZONES
from engine.betting.terms import ChipZone

Profile: TypeAlias = Literal["roberts", "tda"]
Counts: TypeAlias = Mapping[int, int]

STREETS: tuple[Literal["preflop", "flop", "turn", "river"], ...] = ("preflop", "flop", "turn", "river")
BEFORE_DEAL = -1
NO_SEATS: frozenset[int] = frozenset()


def add_count(counts: Counts, seat: int, amount: int) -> Counts:
    """``counts`` with ``amount`` added to ``seat`` (a new small dict; never below zero)."""
    value = counts.get(seat, 0) + amount  # (never below zero: none is kept then)
    new = {**counts}  # (a display, not a call: dict(counts) was 2.7 times its cost, timeit)
    if value > 0:
        new[seat] = value
    else:
        new.pop(seat, None)
    return new


def parse_zone(zone: ChipZone) -> tuple[str | None, int]:
    """``"bet:3"`` -> ``("bet", 3)``; ``"pot"`` -> ``("pot", 0)``; None -> ``(None, 0)``."""
    if zone is None:
        return None, 0
    found = _PARSED.get(zone)
    return found if found is not None else _parse(zone)


def _parse(zone: str) -> tuple[str | None, int]:
    kind, _, seat = zone.partition(":")
    return kind, int(seat) if seat.isdigit() else 0


#: Every zone of the contract parsed once, when the module is loaded (a table, not a cache: it
#: never changes): every chip move parses two.
_PARSED: Final[dict[str, tuple[str | None, int]]] = {zone: _parse(zone) for zone in ALL_ZONES}


def clockwise(seats: Iterable[int], button: int | None, table_seats: int) -> tuple[int, ...]:
    """``seats`` in action order: the first left of the button first, the button last."""
    if button is None:
        return tuple(sorted(seats))
    return tuple(sorted(seats, key=lambda s: (s - button - 1) % table_seats))
