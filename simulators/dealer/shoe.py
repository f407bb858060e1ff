"""The deck in the dealer's hand: the order the shuffler produced, drawn from the top."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping


class Shoe:
    """One deck's cards in dealing order (index 0 is the top), with their tag UIDs."""

    def __init__(self, deck: str, uids: Mapping[str, str], rng: random.Random) -> None:
        self.deck = deck
        self.uids = uids
        self._rng = rng
        self.order: list[str] = sorted(uids)
        rng.shuffle(self.order)

    def draw(self) -> str:
        """Take the top card."""
        if not self.order:
            raise RuntimeError(f"deck {self.deck} is exhausted")
        return self.order.pop(0)

    def peek(self, index: int = 0) -> str:
        return self.order[index]

    def put_on_top(self, card: str) -> None:
        self.order.insert(0, card)

    def reshuffle_with(self, cards: Iterable[str]) -> None:
        """Mix ``cards`` back into the stub and shuffle it (the stub is then cut: same thing here)."""
        self.order.extend(cards)
        self._rng.shuffle(self.order)

    def uid(self, card: str) -> str:
        return self.uids[card]
