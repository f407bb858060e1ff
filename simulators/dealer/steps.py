"""The virtual dealer's physical steps: what a dealer's hands (and the players) do at the table.

A step is an abstract physical action (a card placed on a zone, a key pressed, the button moved,
a badge held to the badge reader), never an MQTT event: the demo carries steps out through the
simulators' physical interfaces (a badge or the tournament clock as the ``input`` its terminal
publishes), and :func:`testing.events.to_events` turns them into the device events the drivers
would publish, for tests that feed the engine directly (``to_stream``: with those inputs).

Every step may carry ``mistake``: the catalogue code (``docs/rules/irregularities.md``) the
step completes the evidence for, i.e. the alert the engine must raise once it has seen this step.
``pause_s`` is the time a real dealer takes before the step, at ``--speed 1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from contract.models import KeyName

Face: TypeAlias = Literal["up", "down"] | None
MarkerKind: TypeAlias = Literal["hand_start", "redeal", "hand_end"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepBase:
    """Fields of every step."""

    mistake: str | None = None
    pause_s: float = 0.5


@dataclass(frozen=True, slots=True, kw_only=True)
class SetOccupied(StepBase):
    """A player sits down at (``occupied``) or leaves ``seat``: the occupancy sensor changes."""

    seat: int
    occupied: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveButton(StepBase):
    """The dealer puts the dealer button in front of ``seat``."""

    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SetBlind(StepBase):
    """Chips put into (``present``) or pulled from ``seat``'s blind zone."""

    seat: int
    present: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Shuffle(StepBase):
    """The dealer loads ``deck`` (all 52 cards) into the shuffler and starts it; the check passes."""

    deck: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FailDeckCheck(StepBase):
    """Like :class:`Shuffle`, but the shuffler's deck check fails with these findings."""

    deck: str
    count: int
    missing: tuple[str, ...] = ()
    duplicates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AwaitShuffle(StepBase):
    """The dealer waits until the shuffler has finished ``deck`` before dealing from it."""

    deck: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Place(StepBase):
    """A card (tag ``uid``) put on ``zone``; ``card`` is what it is (None: an unknown tag)."""

    uid: str
    zone: str
    face: Face = None
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Move(StepBase):
    """A card already on the table pushed to another ``zone`` (a fold to the muck, for example)."""

    uid: str
    zone: str
    face: Face = None
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Remove(StepBase):
    """A card taken off the table (back to the stub, into the dealer's hands or the shuffler)."""

    uid: str
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlaceChips(StepBase):
    """Chips (tags ``uids``) put in ``zone`` at once, from a player's stack or the rack.

    ``group``: chip steps of one group whose order does not matter (the posts before the deal)
    may be carried out together."""

    uids: tuple[str, ...]
    zone: str
    group: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveChips(StepBase):
    """Chips lying on the table moved to ``zone`` at once (a sweep, a push, the rake); ``group``
    as for :class:`PlaceChips` (the rake and the pushes of one pot)."""

    uids: tuple[str, ...]
    zone: str
    group: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TakeChips(StepBase):
    """Chips taken off the table at once (back to a player's stack, into the drop box)."""

    uids: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Wait(StepBase):
    """Nothing happens for ``seconds`` of real time, even flat out (a card held off the table)."""

    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Press(StepBase):
    """A dealer keypad key, with the seat it concerns where the key takes one."""

    key: KeyName
    seat: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerBadge(StepBase):
    """The dealer now at the table holds up ``badge`` to the badge reader beside it: the
    ``dealer`` input (no device event: the reader's terminal publishes on ``input``)."""

    badge: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelStart(StepBase):
    """The floor starts the tournament clock at level 1: the ``level_start`` input."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Marker(StepBase):
    """No physical action: tells the runner where hands start and end (for pacing and the summary)."""

    kind: MarkerKind
    hand: int
    pause_s: float = 0.0


Step: TypeAlias = (
    SetOccupied
    | MoveButton
    | SetBlind
    | Shuffle
    | FailDeckCheck
    | AwaitShuffle
    | Place
    | Move
    | Remove
    | PlaceChips
    | MoveChips
    | TakeChips
    | Wait
    | Press
    | DealerBadge
    | LevelStart
    | Marker
)


@dataclass(frozen=True, slots=True)
class DeviceIds:
    """The ids of the devices that observe the steps (the example table's by default)."""

    reader: str = "rfid-1"
    shuffler: str = "shuffler"
    sensors: str = "sensors"
    #: The readers of the chip zones, where they have their own (none: ``reader`` reads them).
    chip_readers: tuple[str, ...] = ()

    def reads(self, device: str) -> bool:
        """Whether ``device`` is one of the table's RFID readers."""
        return device == self.reader or device in self.chip_readers


@dataclass(frozen=True, slots=True)
class HandScript:
    """The steps of one hand (from the changes before it to the cleared table after it).

    ``mistakes`` lists the codes the steps inject, in order (the ``mistake`` of each tagged
    step); an empty list means a legal hand, which must raise no warning or critical alert.
    """

    hand: int
    deck: str
    button: int
    players: tuple[int, ...]
    steps: tuple[Step, ...]
    mistakes: tuple[str, ...] = field(default=())
