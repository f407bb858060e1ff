"""Everything :class:`engine.betting.hand.Money` knows about a hand, as plain frozen data: a
:class:`HandState` holding two parts, the :class:`Seating` (fixed for the hand) and the
:class:`Betting` (who is in, who put in what, the round under way), and itself where the chips
lie, the findings open, the pots and the showdown. The rules that change it are module functions
over a ``HandState``: ``rounds`` (the betting round), ``chip_moves`` (the chips on the table),
``payout`` (the award and the pushes); ``hand`` (``Money``) calls them.

Every field is plain data (ints, strs, tuples, frozensets, dicts of those, other plain frozen
dataclasses): the state is serialised field by field. Nothing derived is kept in it (see
``derived``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engine.betting.sizes import Frame
from engine.betting.terms import Action, NoBetShowsFirst, OddChip, Pot, Stakes
from engine.betting.zones import BEFORE_DEAL, NO_SEATS, Counts, Profile

_T = TypeVar("_T")
_new = object.__new__
_set = object.__setattr__


def _copy_with(value: _T, **changes: Any) -> _T:
    """A copy of the frozen dataclass ``value`` with ``changes``: one new dict, where
    ``dataclasses.replace`` checks and re-initialises every field. It is the parts' ``with_``
    itself (not a method calling it: a call less for each of the many copies). The dict is a
    display, not ``value.__dict__.copy()``: a copy of an instance's key-sharing dict shares its
    keys too, and a field read of an instance given such a dict takes CPython's slow path (the
    betting core reads its parts' fields at every chip: 4.75 % of the engine with chips)."""
    # Kept: with dataclasses.replace the engine with chips is 9 to 27 % slower (benchmarks/engine_tricks.py).
    new: _T = _new(type(value))
    _set(new, "__dict__", {**value.__dict__, **changes})
    return new


@dataclass(frozen=True)
class Seating:
    """Who was dealt in and in what order: fixed for the hand.

    ``seats`` ascending; ``ring`` the same seats in action order (from the first seat left of
    the button, the button last; ascending when the button is unknown)."""

    stakes: Stakes
    seats: tuple[int, ...]
    button: int | None
    table_seats: int
    profile: Profile
    odd_chip: OddChip
    no_bet_shows_first: NoBetShowsFirst
    ring: tuple[int, ...]


@dataclass(frozen=True)
class Betting:
    """Who is in, who put in what, and the round under way.

    ``live`` and ``allin`` are seats of the seating (``allin`` within ``live`` while the seat is
    in); counts hold no zero. ``put`` is this round's contribution per seat (before the deal: the
    posts and antes), ``level`` the same as of each seat's last settled action (``put`` differs
    only for the ``pending`` seat, whose chips are still arriving, and for a seat taking chips
    back); ``top`` is the highest settled contribution."""

    live: frozenset[int]  # dealt in and not folded
    street_no: int = BEFORE_DEAL  # -1 before the deal, 0 preflop ... 3 river
    allin: frozenset[int] = NO_SEATS
    committed: Counts = field(default_factory=dict)  # chips of earlier rounds and antes, per seat
    put: Counts = field(default_factory=dict)
    level: Counts = field(default_factory=dict)
    top: int = 0
    full_raise: int = 0  # the last full bet or raise of the round (the minimum raise)
    raises: int = 0  # bets and raises this round
    acted: frozenset[int] = NO_SEATS  # seats that acted since the last bet or raise
    cursor: int = 0  # index in the ring where the action stands
    closed: bool = False  # the round had nobody to act from its start
    pending: int | None = None  # the seat whose chips are still arriving
    pending_oot: int | None = None  # the seat the pending action skipped (out of turn)
    last_bettor: int | None = None  # last bet or raise of the last round with betting
    checked: tuple[int, ...] = ()  # seats that checked this round, in order
    history: tuple[Action, ...] = ()  # the settled actions (``actions`` adds the pending one)
    # open size findings: the frame the action was judged from, and its index in ``history``
    frames: Mapping[int, tuple[Frame, int]] = field(default_factory=dict)
    oot: Mapping[int, int] = field(default_factory=dict)  # seat that acted out of turn -> seat it skipped
    back: Counts = field(default_factory=dict)  # seat -> contribution before it took chips back
    blind_due: Counts = field(default_factory=dict)  # seat -> the blind it should have posted (wrong)

    #: A copy with ``changes``.
    with_ = _copy_with


@dataclass(frozen=True)
class HandState:
    """The state of one hand's betting: its seating and its betting (parts), where the chips
    lie as read, the findings open, the pots as of the last sweep and the showdown.

    Where the chips lie (``zone`` ... ``chip_mode``) changes with every chip read, swept or
    pushed, and the betting answers (whose turn, the uncalled part, decided) never read it: a
    sweep or a push leaves the betting part the same object. Counts hold no zero."""

    seating: Seating
    betting: Betting
    zone: Counts = field(default_factory=dict)  # chips lying in bet:N
    swept: Counts = field(default_factory=dict)  # this round's chips swept from bet:N into the pot
    pot_chips: int = 0  # chips lying in the pot zone
    stack: Counts = field(default_factory=dict)  # chips seen in stack:N
    stack_read: frozenset[int] = NO_SEATS  # seats whose stack was read whole (before the deal)
    vacant: Counts = field(default_factory=dict)  # chips in the betting area of a seat not dealt in
    pushed: Counts = field(default_factory=dict)  # chips pushed to each seat at the end
    pushed_zone: Counts = field(default_factory=dict)  # of which still lying in bet:N
    raked: int = 0
    chip_mode: bool = False  # chips are read: action inputs only name what the chips show
    open_keys: frozenset[str] = frozenset()  # the keys of the findings raised and not cleared
    pots: tuple[Pot, ...] = ()
    shown: tuple[tuple[int, tuple[str, str]], ...] = ()
    board: tuple[str, ...] = ()
    finished: bool = False

    #: A copy with ``changes`` (of its own fields, or a whole part).
    with_ = _copy_with

    def with_betting(self, **changes: Any) -> HandState:
        """A copy with ``changes`` to the betting."""
        return _copy_with(self, betting=_copy_with(self.betting, **changes))
