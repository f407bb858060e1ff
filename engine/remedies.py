"""What the engine expects after an alert: one small immutable record per open remedy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BoardRedeal:
    """Board cards of a street must be taken back (premature, too many, missing burn)."""

    alert: str
    code: str
    street: int  # 1 flop, 2 turn, 3 river: the street whose cards are taken back
    taken: frozenset[str]  # UIDs that must leave the board
    removed: frozenset[str] = frozenset()
    resolve_at: int = 0  # the street whose completion carries the remedy out
    scramble: bool = False  # TDA 39-A: one of the taken cards becomes the burn, three the flop
    keep_ok: bool = False  # TDA 39-B: after action the card stands
    burns: frozenset[str] = frozenset()  # premature flop: the flop's burn, which stays the burn

    @property
    def all_removed(self) -> bool:
        return self.removed >= self.taken


@dataclass(frozen=True, slots=True)
class ExposedRemedy:
    """An exposed hole card: the seat gets the top card, the exposed card becomes the flop burn."""

    alert: str
    seat: int
    uid: str
    replaced: bool = False
    burned: bool = False


@dataclass(frozen=True, slots=True)
class ExtraCardRemedy:
    """An extra card on the first seat: it goes back on the deck and becomes the flop burn."""

    alert: str
    seat: int
    uid: str


@dataclass(frozen=True, slots=True)
class ExtraBurnRemedy:
    """Two burns for a street: one goes back on the deck and is the next burn."""

    alert: str
    street: int  # the street that got two burns
    returned: str | None = None  # the burn put back, once seen to leave the burn zone: the next burn


@dataclass(frozen=True, slots=True)
class BlindsRemedy:
    """Dealing started with an empty blind zone: stop until it is posted."""

    alert: str
    seat: int
    violated: bool = False


@dataclass(frozen=True, slots=True)
class ButtonRemedy:
    """The button is not where it must be: move it before dealing."""

    alert: str
    expected: int
