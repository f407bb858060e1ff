"""The terms the betting core works in, taken and given: the stakes, one verdict per finding,
and the pieces of a hand's result.

The machine (``engine.dispatcher``) is a physical tracker: it turns tag reads into chip moves
between zones and card evidence into folds, streets and hands tabled. The betting core
(:class:`engine.betting.hand.Money`) interprets them: who bet what, whose turn it is, the pots,
who won them, and whether what the dealer pushed matches. It answers every call with the
verdicts it reached; the machine turns them into alerts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

Structure: TypeAlias = Literal["no_limit", "pot_limit", "fixed_limit"]
OddChip: TypeAlias = Literal["first_shown", "left_of_button"]
#: Seed 000: with no bet on the final round the first seat left of the button shows first;
#: seed 001's "the last to check" is a house setting.
NoBetShowsFirst: TypeAlias = Literal["first_to_act", "last_to_check"]
#: Where a chip is: ``bet:N``, ``stack:N``, ``pot``, ``rake``; ``None`` is off the table or
#: unseen (a chip that arrived from nowhere, or left and was read nowhere else).
ChipZone: TypeAlias = str | None


@dataclass(frozen=True, slots=True)
class Stakes:
    """The game's money rules (configuration ``[stakes]``)."""

    structure: Structure = "no_limit"
    small_blind: int = 1
    big_blind: int = 2
    ante: int = 0
    rake_percent: float = 0.0
    rake_cap: int = 0  # 0: no cap
    #: The house allows a straddle (2 x big blind by the third seat left of the button, 3+
    #: players, no-limit and pot-limit); False: such a post is a wrong blind.
    straddle: bool = True


@dataclass(frozen=True, slots=True)
class Raise:
    """Raise (or update, if ``key`` is already raised and the message changed) an alert.

    ``key`` is stable for one finding within the hand (``"push"``, ``"sweep:1"``,
    ``"oot:3:1"``...): the machine raises one alert per key and resolves it on :class:`Clear`.
    """

    key: str
    code: str
    seat: int | None
    message: str
    #: Steps naming this finding's seats and amounts; empty: the catalogue's remedy.
    remedy: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Clear:
    """The finding behind ``key`` was put right (remedy followed): resolve its alert."""

    key: str


Verdict: TypeAlias = Raise | Clear
Verdicts: TypeAlias = tuple[Verdict, ...]


@dataclass(frozen=True, slots=True)
class Pot:
    """A pot as of the last sweep: its chips and the seats that may win it (seat order)."""

    amount: int
    eligible: tuple[int, ...]


#: to_act, bets (seat, chips), pots and shows_first, as the public state shows them.
TableView: TypeAlias = tuple[int | None, tuple[tuple[int, int], ...], tuple[Pot, ...], int | None]


@dataclass(frozen=True, slots=True)
class PotAward:
    """A pot after the showdown: its amount after rake, who may win it, who won it and how much
    each winner gets (``shares`` sums to ``amount``)."""

    amount: int
    eligible: tuple[int, ...]
    winners: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Shown:
    """A hand tabled face up at showdown, in the order shown, with its rank's name."""

    seat: int
    cards: tuple[str, str]
    rank: str  # "flush", "two_pair", ... (engine.betting.award.RANK_NAMES)


@dataclass(frozen=True, slots=True)
class Action:
    """One action of the hand as the result lists it: ``amount`` is the chips it put in."""

    street: Literal["preflop", "flop", "turn", "river"]
    seat: int
    action: Literal["fold", "check", "call", "bet", "raise", "all_in", "post"]
    amount: int


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the betting core says about a finished hand (the machine adds the hand number, the
    button, the seats and the board to make the published hand result)."""

    result: Literal["showdown", "uncontested"]
    actions: tuple[Action, ...]
    pots: tuple[PotAward, ...]
    rake: int
    awarded: tuple[tuple[int, int], ...]  # (seat, chips the dealer pushed to it), seat order
    showdown: tuple[Shown, ...]
