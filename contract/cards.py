"""Card codes and table zones as the contract spells them."""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import GetPydanticSchema, StringConstraints, WithJsonSchema
from pydantic_core import core_schema as cs

RANKS: Final = "AKQJT98765432"
SUITS: Final = "shdc"
#: All 52 card codes, rank-major (As, Ah, Ad, Ac, Ks, ...).
ALL_CARDS: Final[tuple[str, ...]] = tuple(r + s for r in RANKS for s in SUITS)

CARD_PATTERN: Final = r"^[AKQJT2-9][shdc]$"
ZONE_PATTERN: Final = r"^((seat|bet|stack):([1-9]|10)|board|burn|muck|aside|pot|rake)$"
UID_PATTERN: Final = r"^[0-9A-F]{8,20}$"

_CARD_RE: Final = re.compile(CARD_PATTERN)
_ZONE_RE: Final = re.compile(ZONE_PATTERN)
_UID_RE: Final = re.compile(UID_PATTERN)

#: A card code: rank then suit, e.g. ``Td`` for the ten of diamonds.
Card = Annotated[str, StringConstraints(pattern=CARD_PATTERN)]
#: A zone covered by an antenna: ``seat:1``..``seat:10``, ``board``, ``burn``, ``muck``, ``aside``, and on
#: tables that read chips ``bet:1``..``bet:10`` (betting areas), ``stack:1``..``stack:10``, ``pot``, ``rake``.
Zone = Annotated[str, StringConstraints(pattern=ZONE_PATTERN)]


#: A tag UID as upper-case hex (readers may send lower case; it is normalised on validation):
#: upper-cased, then matched against the pattern, both inside pydantic-core (two string steps: one
#: step with both checks the pattern before upper-casing). A Python validator doing the upper-casing
#: cost 3,200 of the 26,600 instructions of parsing a tag event (callgrind); the errors are the same.
Uid = Annotated[
    str,
    GetPydanticSchema(
        lambda _source, _handler: cs.chain_schema(
            [cs.str_schema(to_upper=True), cs.str_schema(pattern=UID_PATTERN)]
        )
    ),
    # (the schemas generated stay as they were: the pattern where a UID is written, upper case)
    WithJsonSchema({"type": "string", "pattern": UID_PATTERN}, mode="serialization"),
]

SEAT_PREFIX: Final = "seat:"
BET_PREFIX: Final = "bet:"
STACK_PREFIX: Final = "stack:"
NON_SEAT_ZONES: Final = ("board", "burn", "muck", "aside")
#: Zones where only chips belong (the card zones are the seats and NON_SEAT_ZONES).
CHIP_ZONES: Final = ("pot", "rake")


def is_card(text: str) -> bool:
    """True when ``text`` is a well-formed card code."""
    return _CARD_RE.match(text) is not None


def is_zone(text: str) -> bool:
    """True when ``text`` is a zone name of the contract."""
    return _ZONE_RE.match(text) is not None


def is_uid(text: str) -> bool:
    """True when ``text`` is an upper-case hex UID of 8 to 20 digits."""
    return _UID_RE.match(text) is not None


def seat_zone(seat: int) -> str:
    """The zone name of a seat: ``seat_zone(3) == "seat:3"``."""
    return f"{SEAT_PREFIX}{seat}"


def zone_seat(zone: str) -> int | None:
    """The seat number of a seat zone, or None for board, burn, muck and aside."""
    found = _SEAT_OF.get(zone, -1)
    return found if found != -1 else _prefixed_seat(zone, SEAT_PREFIX)


def bet_zone(seat: int) -> str:
    """The betting area in front of a seat: ``bet_zone(3) == "bet:3"``."""
    return f"{BET_PREFIX}{seat}"


def stack_zone(seat: int) -> str:
    """The stack of a seat: ``stack_zone(3) == "stack:3"``."""
    return f"{STACK_PREFIX}{seat}"


def zone_bet_seat(zone: str) -> int | None:
    """The seat of a betting-area zone (``bet:N``), or None for any other zone."""
    found = _BET_SEAT_OF.get(zone, -1)
    return found if found != -1 else _prefixed_seat(zone, BET_PREFIX)


def zone_stack_seat(zone: str) -> int | None:
    """The seat of a stack zone (``stack:N``), or None for any other zone."""
    if zone.startswith(STACK_PREFIX):
        return int(zone[len(STACK_PREFIX) :])
    return None


def is_chip_zone(zone: str) -> bool:
    """True for the zones of chips: ``bet:N``, ``stack:N``, ``pot`` and ``rake``."""
    found = _IS_CHIP_ZONE.get(zone)
    if found is not None:
        return found
    return zone in CHIP_ZONES or (zone.startswith((BET_PREFIX, STACK_PREFIX)) and is_zone(zone))


def _prefixed_seat(zone: str, prefix: str) -> int | None:
    """The seat of ``prefix`` + N, or None."""
    return int(zone[len(prefix) :]) if zone.startswith(prefix) else None


#: Every zone of the contract (ZONE_PATTERN: 36 names), for the tables below.
ALL_ZONES: Final[tuple[str, ...]] = (
    *(f"{prefix}{seat}" for prefix in (SEAT_PREFIX, BET_PREFIX, STACK_PREFIX) for seat in range(1, 11)),
    *NON_SEAT_ZONES,
    *CHIP_ZONES,
)
# The answers above for every zone of the contract, worked out once when the module is loaded
# (tables, not caches: they never change): the engine asks them for every chip read. Another
# name, never valid on the wire, is worked out as it is asked.
_SEAT_OF: Final[dict[str, int | None]] = {zone: _prefixed_seat(zone, SEAT_PREFIX) for zone in ALL_ZONES}
_BET_SEAT_OF: Final[dict[str, int | None]] = {zone: _prefixed_seat(zone, BET_PREFIX) for zone in ALL_ZONES}
_IS_CHIP_ZONE: Final[dict[str, bool]] = {
    zone: zone in CHIP_ZONES or zone.startswith((BET_PREFIX, STACK_PREFIX)) for zone in ALL_ZONES
}
