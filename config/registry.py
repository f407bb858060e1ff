"""The deck registry: which RFID tag UID is which card of which deck (CSV ``uid,deck,card``)."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from config.errors import ConfigError, read_text
from contract.cards import ALL_CARDS, is_card, is_uid

HEADER: Final = ("uid", "deck", "card")


@dataclass(frozen=True, slots=True)
class RegisteredCard:
    """One tagged card: which deck it belongs to and which card it is."""

    deck: str
    card: str


@dataclass(frozen=True)
class DeckRegistry:
    """UID -> (deck, card) for every tagged card of the table's decks."""

    by_uid: Mapping[str, RegisteredCard]
    decks: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # deck -> card -> uid

    def lookup(self, uid: str) -> RegisteredCard | None:
        """The card a UID is, or None for a tag not in the registry."""
        return self.by_uid.get(uid.upper())

    def uid_of(self, deck: str, card: str) -> str:
        """The UID of ``card`` in ``deck`` (KeyError when unknown)."""
        return self.decks[deck][card]

    @property
    def deck_ids(self) -> list[str]:
        return sorted(self.decks)

    @classmethod
    def from_rows(cls, rows: list[tuple[str, str, str]]) -> DeckRegistry:
        """Build from already validated ``(uid, deck, card)`` rows."""
        by_uid = {uid: RegisteredCard(deck, card) for uid, deck, card in rows}
        decks: dict[str, dict[str, str]] = {}
        for uid, deck, card in rows:
            decks.setdefault(deck, {})[card] = uid
        return cls(by_uid=by_uid, decks=decks)


def load_registry(path: Path) -> DeckRegistry:
    """Read and validate a registry CSV.

    Every deck must hold the 52 distinct cards, every UID must be unique across all decks and
    every card code well formed. Errors name the file, line and column key.
    """
    text = read_text(path, "deck registry")

    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if header is None or tuple(h.strip().lower() for h in header) != HEADER:
        raise ConfigError(f"{path}:1: header must be 'uid,deck,card', found {','.join(header or [])!r}")

    rows: list[tuple[str, str, str]] = []
    first_line_of_uid: dict[str, int] = {}
    first_line_of_card: dict[tuple[str, str], int] = {}
    for line_no, raw in enumerate(reader, start=2):
        if not raw or all(not cell.strip() for cell in raw):
            continue
        if len(raw) != 3:
            raise ConfigError(f"{path}:{line_no}: expected 3 columns uid,deck,card, found {len(raw)}")
        uid, deck, card = (cell.strip() for cell in raw)
        uid = uid.upper()
        if not is_uid(uid):
            raise ConfigError(f"{path}:{line_no}: uid {raw[0]!r} is not 8 to 20 hex digits")
        if not deck:
            raise ConfigError(f"{path}:{line_no}: deck is empty")
        if not is_card(card):
            raise ConfigError(
                f"{path}:{line_no}: card {card!r} is not a card code (rank AKQJT98765432, suit shdc)"
            )
        if uid in first_line_of_uid:
            raise ConfigError(f"{path}:{line_no}: uid {uid} already used on line {first_line_of_uid[uid]}")
        if (deck, card) in first_line_of_card:
            raise ConfigError(
                f"{path}:{line_no}: card {card} of deck {deck!r} already on line "
                f"{first_line_of_card[(deck, card)]} (duplicate card)"
            )
        first_line_of_uid[uid] = line_no
        first_line_of_card[(deck, card)] = line_no
        rows.append((uid, deck, card))

    registry = DeckRegistry.from_rows(rows)
    if not registry.decks:
        raise ConfigError(f"{path}: deck registry has no cards")
    for deck, cards in registry.decks.items():
        if len(cards) != len(ALL_CARDS):
            missing = [c for c in ALL_CARDS if c not in cards]
            raise ConfigError(
                f"{path}: deck {deck!r} has {len(cards)} cards, not 52; missing {' '.join(missing)}"
            )
    return registry
