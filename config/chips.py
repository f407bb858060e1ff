"""The chip registry: which RFID tag UID is a casino chip of which value (CSV ``uid,value``)."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from config.errors import ConfigError, read_text
from config.registry import DeckRegistry
from contract.cards import is_uid

HEADER: Final = ("uid", "value")
#: A chip's value in table units; a plaque of a million units is the most a table uses.
MAX_VALUE: Final = 10_000_000


@dataclass(frozen=True)
class ChipRegistry:
    """UID -> value (table units) of every tagged chip of the table."""

    by_uid: Mapping[str, int]

    def __post_init__(self) -> None:
        # The UIDs already in upper case, as readers report them: looked up as they come (the
        # engine asks for every tag read); any other spelling is upper-cased first.
        object.__setattr__(self, "_upper", {u: v for u, v in self.by_uid.items() if u == u.upper()})

    def value(self, uid: str) -> int | None:
        """The value of the chip ``uid``, or None for a tag that is no chip of this table."""
        found: int | None = self._upper.get(uid)  # type: ignore[attr-defined]
        if found is not None or uid.isupper():
            return found  # (a reader's UID: upper case already, looked up as it is)
        return self.by_uid.get(uid.upper())

    def __len__(self) -> int:
        return len(self.by_uid)


def load_chips(path: Path, decks: DeckRegistry | None = None) -> ChipRegistry:
    """Read and validate a chip registry CSV; errors name the file and line.

    A UID that is also a card of the deck registry is an error: the engine tells a chip from a
    card by the registries, so one tag cannot be both.
    """
    text = read_text(path, "chip registry")
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None or tuple(h.strip().lower() for h in header) != HEADER:
        raise ConfigError(f"{path}:1: header must be 'uid,value', found {','.join(header or [])!r}")
    values: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for line_no, raw in enumerate(reader, start=2):
        if not raw or all(not cell.strip() for cell in raw):
            continue
        if len(raw) != 2:
            raise ConfigError(f"{path}:{line_no}: expected 2 columns uid,value, found {len(raw)}")
        uid, value_text = (cell.strip() for cell in raw)
        uid = uid.upper()
        if not is_uid(uid):
            raise ConfigError(f"{path}:{line_no}: uid {raw[0]!r} is not 8 to 20 hex digits")
        if uid in first_line:
            raise ConfigError(f"{path}:{line_no}: uid {uid} already used on line {first_line[uid]}")
        if decks is not None and decks.lookup(uid) is not None:
            card = decks.lookup(uid)
            raise ConfigError(
                f"{path}:{line_no}: uid {uid} is also a card of the deck registry "
                f"(deck {card.deck if card else '?'}): a tag is a chip or a card, not both"
            )
        try:
            value = int(value_text)
        except ValueError:
            raise ConfigError(f"{path}:{line_no}: value {value_text!r} is not a whole number") from None
        if not 1 <= value <= MAX_VALUE:
            raise ConfigError(f"{path}:{line_no}: value {value} is not between 1 and {MAX_VALUE:,}")
        first_line[uid] = line_no
        values[uid] = value
    if not values:
        raise ConfigError(f"{path}: chip registry has no chips")
    return ChipRegistry(by_uid=values)
