"""Card codes and table zones as the contract spells them."""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import BeforeValidator, StringConstraints

RANKS: Final = "AKQJT98765432"
SUITS: Final = "shdc"
#: All 52 card codes, rank-major (As, Ah, Ad, Ac, Ks, ...).
ALL_CARDS: Final[tuple[str, ...]] = tuple(r + s for r in RANKS for s in SUITS)

CARD_PATTERN: Final = r"^[AKQJT2-9][shdc]$"
ZONE_PATTERN: Final = r"^(seat:([1-9]|10)|board|burn|muck|aside)$"
UID_PATTERN: Final = r"^[0-9A-F]{8,20}$"

_CARD_RE: Final = re.compile(CARD_PATTERN)
_ZONE_RE: Final = re.compile(ZONE_PATTERN)
_UID_RE: Final = re.compile(UID_PATTERN)

#: A card code: rank then suit, e.g. ``Td`` for the ten of diamonds.
Card = Annotated[str, StringConstraints(pattern=CARD_PATTERN)]
#: A zone covered by an antenna: ``seat:1``..``seat:10``, ``board``, ``burn``, ``muck``, ``aside``.
Zone = Annotated[str, StringConstraints(pattern=ZONE_PATTERN)]
#: A tag UID as upper-case hex (readers may send lower case; it is normalised on validation).
def _upper(value: object) -> object:
    return value.upper() if isinstance(value, str) else value


Uid = Annotated[str, BeforeValidator(_upper), StringConstraints(pattern=UID_PATTERN)]

SEAT_PREFIX: Final = "seat:"
NON_SEAT_ZONES: Final = ("board", "burn", "muck", "aside")


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
    if zone.startswith(SEAT_PREFIX):
        return int(zone[len(SEAT_PREFIX) :])
    return None
