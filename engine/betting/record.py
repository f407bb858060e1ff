"""Everything :class:`engine.betting.hand.Money` knows about a hand, as one frozen value, and its
cheap copy with changes. The rules live in the layers above it: ``rounds`` (the betting round),
``chips`` (the chips on the table), ``payout`` (the award and the pushes), ``hand`` (the calls
and the queries).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from engine.betting.api import Action, NoBetShowsFirst, OddChip, Pot, Stakes
from engine.betting.sizes import Frame
from engine.betting.zones import BEFORE_DEAL, NO_SEATS, Counts, Profile

#: Where a hand keeps the answers derived from it (its settled view, ``bets``...): not a field,
#: so never compared, and dropped by :meth:`HandRecord._with`, as every change may change them.
MEMO = "_derived"
#: Where it keeps the answers that do not depend on where chips lie (who put in what, who is
#: still in, the round: ``to_act``, ``decided``...): shared with a copy that changes only
#: :data:`_LOCATION` fields (the same answers hold for both), dropped by any other change.
KEPT = "_derived_kept"
#: Fields that only say where chips lie (changed by every chip swept or pushed).
_LOCATION: frozenset[str] = frozenset(
    {"zone", "pushed_zone", "pushed", "pot_chips", "raked", "stack", "stack_read", "swept", "vacant"}
)
_new = object.__new__
_set = object.__setattr__


@dataclass(frozen=True)
class HandRecord:
    """The state of one hand's betting (see :mod:`engine.betting.hand`)."""

    stakes: Stakes
    seats: tuple[int, ...]
    button: int | None
    table_seats: int
    profile: Profile
    odd_chip: OddChip
    no_bet_shows_first: NoBetShowsFirst
    ring: tuple[int, ...]  # action order: from the first seat left of the button
    live: frozenset[int]  # dealt in and not folded
    street_no: int = BEFORE_DEAL  # -1 before the deal, 0 preflop ... 3 river
    allin: frozenset[int] = NO_SEATS
    committed: Counts = field(default_factory=dict)  # chips of earlier rounds and antes, per seat
    # this round's contribution per seat (before the deal: the posts and antes)
    put: Counts = field(default_factory=dict)
    level: Counts = field(default_factory=dict)  # ``put`` as of each seat's last settled action
    top: int = 0  # the highest settled contribution of the round
    full_raise: int = 0  # the last full bet or raise of the round (the minimum raise)
    raises: int = 0  # bets and raises this round
    acted: frozenset[int] = NO_SEATS  # seats that acted since the last bet or raise
    cursor: int = 0  # index in ``ring`` where the action stands
    closed: bool = False  # the round had nobody to act from its start
    pending: int | None = None  # the seat whose chips are still arriving
    pending_oot: int | None = None  # the seat the pending action skipped (out of turn)
    last_bettor: int | None = None  # last bet or raise of the last round with betting
    checked: tuple[int, ...] = ()  # seats that checked this round, in order
    history: tuple[Action, ...] = ()  # the settled actions (``actions`` adds the pending one)
    zone: Counts = field(default_factory=dict)  # chips lying in bet:N
    swept: Counts = field(default_factory=dict)  # this round's chips swept from bet:N into the pot
    pot_chips: int = 0  # chips lying in the pot zone
    stack: Counts = field(default_factory=dict)  # chips seen in stack:N
    stack_read: frozenset[int] = NO_SEATS  # seats whose stack the reader covers
    # open size findings: the frame the action was judged from, and its index in ``history``
    frames: Mapping[int, tuple[Frame, int]] = field(default_factory=dict)
    oot: Mapping[int, int] = field(default_factory=dict)  # seat that acted out of turn -> seat it skipped
    back: Counts = field(default_factory=dict)  # seat -> contribution before it took chips back
    blind_due: Counts = field(default_factory=dict)  # seat -> the blind it should have posted (wrong)
    vacant: Counts = field(default_factory=dict)  # chips in the betting area of a seat not dealt in
    open_keys: frozenset[str] = frozenset()
    pots_: tuple[Pot, ...] = ()
    shown: tuple[tuple[int, tuple[str, str]], ...] = ()
    board: tuple[str, ...] = ()
    pushed: Counts = field(default_factory=dict)  # chips pushed to each seat at the end
    pushed_zone: Counts = field(default_factory=dict)  # of which still lying in bet:N
    raked: int = 0
    chip_mode: bool = False  # chips are read: action inputs only name what the chips show
    finished: bool = False
    # the memos (not fields: never compared): the instance's own once it has one
    _derived: ClassVar[dict[str, Any] | None] = None
    _derived_kept: ClassVar[dict[str, Any] | None] = None

    # ------------------------------------------------------------------ construction

    def _with(self, **changes: Any) -> Self:
        """A copy with ``changes``: ``dataclasses.replace`` without its per-field checks (it
        costs 30 us on 45 fields; this is one C-level dict copy, on the engine's hot path)."""
        fields = self.__dict__.copy()
        fields.update(changes)
        if MEMO in fields:
            del fields[MEMO]
        if KEPT in fields and not changes.keys() <= _LOCATION:
            del fields[KEPT]
        new = _new(type(self))
        _set(new, "__dict__", fields)
        return new

    def _memo(self) -> dict[str, Any]:
        """The answers derived from this (immutable) value so far: the machine asks the same
        queries several times per event, and again after events that left the money alone."""
        memo = self._derived  # (an attribute read: the class's None until the first answer)
        if memo is None:
            memo = self.__dict__[MEMO] = {}
        return memo

    def _kept(self) -> dict[str, Any]:
        """The answers that do not depend on where chips lie (see :data:`KEPT`)."""
        kept = self._derived_kept
        if kept is None:
            kept = self.__dict__[KEPT] = {}
        return kept
