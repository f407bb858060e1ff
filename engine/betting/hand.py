"""The money of one hand, followed from chip moves (or ``action`` inputs): who put in what, whose
turn it is, the pots, and whether the dealer's sweeps, returns and pushes are right.

:class:`Money` is a frozen value: every call returns a new one and the verdicts it reached. The
machine tells it what the evidence shows (chips moved between zones, the deal complete, a fold,
a street, a hand tabled); it answers with :class:`Raise` / :class:`Clear` verdicts.

How betting is inferred from chips. A seat's chips arrive tag by tag, so its action is *pending*
until something else happens (another seat's chips or fold, a card, the sweep, a key): then it
is settled and named by the amount (call, bet, raise, all in). A check moves nothing: it is
inferred for the seats passed over when a later seat acts, and at the end of the round. A round's
contribution of a seat is what it put in front of it, whether still there or already swept into
the pot, so the sweep (which may itself be tag by tag, or undone) never changes who bet what.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any, Literal, TypeAlias

from engine.betting.api import (
    Action,
    ChipZone,
    Clear,
    NoBetShowsFirst,
    OddChip,
    Outcome,
    Pot,
    PotAward,
    Raise,
    Shown,
    Stakes,
    Verdict,
    Verdicts,
)
from engine.betting.award import award, check_push, rake_for, rank_of
from engine.betting.pots import build_pots, uncalled
from engine.betting.sizes import Frame, judge

Profile: TypeAlias = Literal["roberts", "tda"]
Counts: TypeAlias = Mapping[int, int]

STREETS: tuple[Literal["preflop", "flop", "turn", "river"], ...] = ("preflop", "flop", "turn", "river")
BEFORE_DEAL = -1
_VIEW = "_view_memo"
_SUMMARY = "_summary_memo"
_MEMOS = (_VIEW, _SUMMARY + "True", _SUMMARY + "False")
_NO_SEATS: frozenset[int] = frozenset()


def _add(counts: Counts, seat: int, amount: int) -> Counts:
    """``counts`` with ``amount`` added to ``seat`` (a new small dict; never below zero)."""
    value = max(0, counts.get(seat, 0) + amount)
    new = dict(counts)
    if value:
        new[seat] = value
    else:
        new.pop(seat, None)
    return new


def _zone(zone: ChipZone) -> tuple[str | None, int]:
    """``"bet:3"`` -> ``("bet", 3)``; ``"pot"`` -> ``("pot", 0)``; None -> ``(None, 0)``."""
    if zone is None:
        return None, 0
    kind, _, seat = zone.partition(":")
    return kind, int(seat) if seat.isdigit() else 0


@lru_cache(maxsize=128)
def _award(pots: tuple[Pot, ...], shown: tuple[tuple[int, tuple[str, str]], ...],
           board: tuple[str, ...], rake: int, odd_chip: OddChip, button: int,
           table_seats: int) -> tuple[PotAward, ...]:
    """:func:`award`, remembered: every chip of a push is checked against the same award."""
    return award(pots, shown, board, rake=rake, odd_chip=odd_chip, button=button,
                 table_seats=table_seats)


@lru_cache(maxsize=128)
def _pots_of(contributed: tuple[tuple[int, int], ...], live: frozenset[int]) -> tuple[Pot, ...]:
    """The pots of these contributions, the uncalled part aside (remembered: a push checks
    every chip against the same pots)."""
    chips = dict(contributed)
    due = uncalled(chips)
    if due is not None:
        chips[due[0]] -= due[1]
    return build_pots(chips, live)


def clockwise(seats: Iterable[int], button: int | None, table_seats: int) -> tuple[int, ...]:
    """``seats`` in action order: the first left of the button first, the button last."""
    if button is None:
        return tuple(sorted(seats))
    return tuple(sorted(seats, key=lambda s: (s - button - 1) % table_seats))


@dataclass(frozen=True)
class Money:
    """The betting of one hand (see the module docstring).

    A frozen value, copied on every change by :meth:`_with` (a copy of the instance's dict: the
    hot path of a hand with chips, where :func:`dataclasses.replace` cost most of the time). The
    queries answer from the pending action settled, computed once per value (``_VIEW``, a memo
    that no change carries over and no pickle keeps).
    """

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
    allin: frozenset[int] = _NO_SEATS
    committed: Counts = field(default_factory=dict)  # chips of earlier rounds and antes, per seat
    # this round's contribution per seat (before the deal: the posts and antes)
    put: Counts = field(default_factory=dict)
    level: Counts = field(default_factory=dict)  # ``put`` as of each seat's last settled action
    top: int = 0  # the highest settled contribution of the round
    full_raise: int = 0  # the last full bet or raise of the round (the minimum raise)
    raises: int = 0  # bets and raises this round
    acted: frozenset[int] = _NO_SEATS  # seats that acted since the last bet or raise
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
    stack_read: frozenset[int] = _NO_SEATS  # seats whose stack the reader covers
    # open size findings: the frame the action was judged from, and its index in ``history``
    frames: Mapping[int, tuple[Frame, int]] = field(default_factory=dict)
    oot: Mapping[int, int] = field(default_factory=dict)  # seat that acted out of turn -> seat it skipped
    back: Counts = field(default_factory=dict)  # seat -> contribution before it took chips back
    vacant: Counts = field(default_factory=dict)  # chips in the betting area of a seat not dealt in
    open_keys: frozenset[str] = frozenset()
    pots_: tuple[Pot, ...] = ()
    shown: tuple[tuple[int, tuple[str, str]], ...] = ()
    board: tuple[str, ...] = ()
    pushed: Counts = field(default_factory=dict)  # chips pushed to each seat at the end
    pushed_zone: Counts = field(default_factory=dict)  # of which still lying in bet:N
    raked: int = 0
    chip_mode: bool = False  # chips are read: action inputs only name what the chips show
    mucked: frozenset[int] = _NO_SEATS  # live at the showdown, but the hand was mucked untabled
    finished: bool = False

    # ------------------------------------------------------------------ construction

    def _with(self, **changes: Any) -> Money:
        """This value with ``changes`` (field names), the memo of the old one left behind."""
        state = self.__dict__.copy()
        if len(state) != _FIELD_COUNT:  # memos computed on the old value
            for memo in _MEMOS:
                state.pop(memo, None)
        state.update(changes)
        new = _new(Money)
        _set(new, "__dict__", state)
        return new

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for memo in _MEMOS:
            state.pop(memo, None)
        return state

    @classmethod
    def begin(
        cls,
        *,
        stakes: Stakes,
        seats: tuple[int, ...],
        button: int | None,
        table_seats: int,
        profile: Profile,
        odd_chip: OddChip = "first_shown",
        no_bet_shows_first: NoBetShowsFirst = "first_to_act",
    ) -> Money:
        """A hand about to be dealt to ``seats`` (ascending); ``button`` None: order unknown."""
        return cls(
            stakes=stakes,
            seats=tuple(sorted(seats)),
            button=button,
            table_seats=table_seats,
            profile=profile,
            odd_chip=odd_chip,
            no_bet_shows_first=no_bet_shows_first,
            ring=clockwise(seats, button, table_seats),
            live=frozenset(seats),
        )

    # ------------------------------------------------------------------ queries

    @property
    def to_act(self) -> int | None:
        """The seat expected to act next, or None (order unknown, round over, hand decided)."""
        view = self._view()
        return view._next_to_act()

    @property
    def round_complete(self) -> bool:
        """Nothing more is owed in this round: a street dealt now is not premature."""
        view = self._view()
        return view.street_no >= 0 and not any(view._owes(s) for s in view.live)

    @property
    def window_closed(self) -> bool:
        """The misdeal window is closed: RR, two players after the blinds acted; TDA 36,
        substantial action (three actions, or two of which one put chips in)."""
        played = [a for a in self._view().history if a.action != "post"]
        if self.profile == "roberts":
            return len(played) >= 2
        return len(played) >= 3 or (len(played) >= 2 and any(a.amount for a in played))

    @property
    def actions(self) -> tuple[Action, ...]:
        """The hand's actions so far, in order (posts, inferred checks, folds, bets...)."""
        return self._view().history

    @property
    def bets(self) -> tuple[tuple[int, int], ...]:
        """Chips in front of each seat this round (seat order)."""
        pushed = self.pushed_zone
        return tuple(sorted((s, v - pushed.get(s, 0)) for s, v in self.zone.items() if v > pushed.get(s, 0)))

    @property
    def pots(self) -> tuple[Pot, ...]:
        """The pots as of the last sweep (main pot first)."""
        return self.pots_

    @property
    def run_out(self) -> bool:
        """No more betting is possible: the board is run out."""
        view = self._view()
        able = view.live - view.allin
        return (
            view.street_no >= 0
            and len(view.live) >= 2
            and len(able) <= 1
            and (view.closed or not any(view._needs(s) for s in able))
        )

    @property
    def shows_first(self) -> int | None:
        """At showdown, the seat that must show first (seed 000), else None."""
        view = self._view()
        if not view._decided() or len(view.live) < 2:
            return None
        if view.last_bettor is not None and view.last_bettor in view.live:
            return view.last_bettor
        if view.no_bet_shows_first == "last_to_check":
            for seat in reversed(view.checked):
                if seat in view.live:
                    return seat
        return next((s for s in view.ring if s in view.live), None)

    def summary(self, showdown: bool) -> tuple[int | None, tuple[tuple[int, int], ...],
                                              tuple[Pot, ...], int | None]:
        """What the public state shows of the betting: to_act (None at showdown), bets, pots,
        shows_first (at showdown only); computed once per value."""
        key = _SUMMARY + str(showdown)
        found: tuple[int | None, tuple[tuple[int, int], ...], tuple[Pot, ...], int | None] | None
        found = self.__dict__.get(key)
        if found is None:
            found = (None if showdown else self.to_act, self.bets, self.pots,
                     self.shows_first if showdown else None)
            self.__dict__[key] = found
        return found

    @property
    def settled(self) -> bool:
        """The pushes are done: the pot zone is empty after the last round."""
        view = self._view()
        return view._decided() and view._pushes_done()

    @property
    def uncalled(self) -> tuple[int, int] | None:
        """Where the uncalled chips go: (seat, amount), or None."""
        return self._view()._due()

    # ------------------------------------------------------------------ evidence

    def move(self, amount: int, src: ChipZone, dst: ChipZone) -> tuple[Money, Verdicts]:
        """One chip (value ``amount``) moved from ``src`` to ``dst``."""
        src_kind, src_seat = _zone(src)
        dst_kind, dst_seat = _zone(dst)
        m = self
        if src_kind == "stack":
            m = m._with(stack=_add(m.stack, src_seat, -amount))
        if dst_kind == "stack":
            m = m._with(stack=_add(m.stack, dst_seat, amount))
            if m.street_no == BEFORE_DEAL:
                # Only a stack seen before the deal is known whole: its emptying is an all in.
                m = m._with(stack_read=m.stack_read | {dst_seat})
        if src_kind == "pot":
            m = m._with(pot_chips=max(0, m.pot_chips - amount))
        if dst_kind == "pot":
            m = m._with(pot_chips=m.pot_chips + amount)
        if (src_kind == "bet" or dst_kind in ("bet", "pot")) and not m.chip_mode:
            m = m._with(chip_mode=True)
        out: list[Verdict] = []
        if dst_kind == "bet" and dst_seat not in self.seats:
            m = m._vacant(dst_seat, amount, out)
            return m, tuple(out)
        if src_kind == "bet" and src_seat not in self.seats:
            m = m._vacant(src_seat, -amount, out)
            if dst_kind != "bet":
                return m, tuple(out)
            src_kind = None
        if dst_kind == "rake" or (src_kind == "rake" and dst_kind == "pot"):
            sign = 1 if dst_kind == "rake" else -1
            m = m._with(raked=max(0, m.raked + sign * amount))
            if src_kind == "bet":
                m = m._with(zone=_add(m.zone, src_seat, -amount))
            return m._after_push(out)
        if m.street_no == BEFORE_DEAL:
            return m._before_deal(amount, src_kind, src_seat, dst_kind, dst_seat, out)
        if src_kind == "bet" and dst_kind is None and not m.pushed_zone.get(src_seat) and m._decided():
            due = m._due()
            if due is not None and due[0] == src_seat and amount <= due[1]:
                # the uncalled part back to the player's side once everyone else folded
                m = m._with(zone=_add(m.zone, src_seat, -amount))
                return m._give_back(src_seat, amount, from_pot=False)._check_uncalled(out), tuple(out)
        late_sweep = src_kind == "bet" and dst_kind == "pot" and not m.pushed_zone.get(src_seat)
        if m._decided() and not late_sweep and (src_kind in ("pot", "bet") or dst_kind == "pot"):
            return m._push(amount, src_kind, src_seat, dst_kind, dst_seat, out)
        if dst_kind == "bet" and src_kind not in ("bet", "pot"):
            m = m._chips_in(dst_seat, amount, out)
        elif src_kind == "bet" and dst_kind == "pot":
            m = m._sweep(src_seat, amount, out)
        elif src_kind == "pot" and dst_kind == "bet":
            m = m._unsweep(dst_seat, amount, out)
        elif src_kind == "bet" and dst_kind == "bet":
            m = m._chips_out(src_seat, amount, out)
            m = m._chips_in(dst_seat, amount, out)
        elif src_kind == "bet":
            m = m._chips_out(src_seat, amount, out)
        elif src_kind == "pot" and dst_kind == "stack":
            m = m._pot_back(dst_seat, amount, out)
        if src_kind == "stack" and dst_kind == "bet" and src_seat == dst_seat:
            m = m._stack_emptied(src_seat, out)
        return m, tuple(out)

    def action(self, seat: int, name: str, amount: int) -> tuple[Money, Verdicts]:
        """An ``action`` input: ``amount`` is the chips that action puts in."""
        out: list[Verdict] = []
        if name == "fold":
            return self.fold(seat)
        if name == "all_in" and self.chip_mode:
            m, verdicts = self.all_in(seat)
            out.extend(verdicts)
        elif name == "all_in" and seat in self.live:
            m = self._with(allin=self.allin | {seat})  # the input's amount follows
        else:
            m = self
        if m.chip_mode:
            # The chips tell the amounts; the input names what they cannot show.
            if name == "check":
                m = m._settle(out)._check_in_turn(seat, out)
            return m, tuple(out)
        if m.street_no == BEFORE_DEAL:
            return m._with(put=_add(m.put, seat, amount)), tuple(out)
        if name == "check" or amount <= 0:
            m = m._settle(out)._check_in_turn(seat, out)
            return m, tuple(out)
        m = m._chips_in(seat, amount, out, zone=False)
        return m._settle(out), tuple(out)

    def dealt(self) -> tuple[Money, Verdicts]:
        """The deal is complete: check the blinds and antes, record the posts, open preflop."""
        if self.street_no != BEFORE_DEAL:
            return self, ()
        out: list[Verdict] = []
        ante = self.stakes.ante
        blinds = self._blind_seats()
        committed: dict[int, int] = {}
        put: dict[int, int] = {}
        posts: list[Action] = []
        blind_posts: list[Action] = []
        for seat in self.ring:
            posted = self.put.get(seat, 0)
            expected = blinds.get(seat)
            wrong = self._blind_wrong(seat, posted, expected)
            if wrong:
                out.append(Raise(f"blind:{seat}", "blind_wrong_amount", seat, wrong))
            seat_ante = min(ante, posted)
            if seat_ante:
                committed[seat] = seat_ante
                posts.append(Action("preflop", seat, "post", seat_ante))
            if posted - seat_ante:
                put[seat] = posted - seat_ante
                blind_posts.append(Action("preflop", seat, "post", posted - seat_ante))
        # Blinds in posting order (small then big), as the rules list them.
        blind_posts.sort(key=lambda a: self.stakes.big_blind if blinds.get(a.seat) is None
                         else blinds[a.seat])
        top = max(put.values(), default=0)
        opener = 0
        if len(self.ring) >= 2:
            opener = (1 if len(self.ring) == 2 else 2) % len(self.ring)
        m = self._with(
            street_no=0,
            committed=committed,
            put=put,
            level=dict(put),
            top=top,
            full_raise=0,
            raises=0,
            acted=_NO_SEATS,
            cursor=opener,
            history=(*posts, *blind_posts),
            open_keys=self.open_keys | {v.key for v in out if isinstance(v, Raise)},
        )
        m = m._with(closed=m._nobody_to_act())
        return m, tuple(out)

    def fold(self, seat: int) -> tuple[Money, Verdicts]:
        """The seat's cards reached the muck."""
        if seat not in self.live:
            return self, ()
        out: list[Verdict] = []
        m = self._settle(out)
        if m.street_no >= 0 and m.button is not None:
            m = m._advance_to(seat, out, infer=not m._someone_owes_before(seat))
        m = m._with(
            live=m.live - {seat},
            history=(*m.history, Action(STREETS[max(0, m.street_no)], seat, "fold", 0)),
        )
        m = m._after_action(out)
        return m, tuple(out)

    def all_in(self, seat: int) -> tuple[Money, Verdicts]:
        """The keypad's (or an input's) all in for ``seat``."""
        if seat not in self.live or seat in self.allin:
            return self, ()
        out: list[Verdict] = []
        m = self._with(allin=self.allin | {seat})
        m = m._mark_all_in(seat, out)
        return m, tuple(out)

    def street(self, street: int, board: tuple[str, ...] = ()) -> tuple[Money, Verdicts]:
        """Street ``street`` (1 flop, 2 turn, 3 river) began: the previous round is over.

        ``board``, when given, is the board so far (an all-in's hands are tabled before the
        run-out; the award needs the whole board)."""
        if board:
            self = self._with(board=board)  # noqa: PLW0642 - the new value is what follows
        if street <= self.street_no or self.street_no == BEFORE_DEAL:
            return self, ()
        out: list[Verdict] = []
        m = self._end_round(out)
        m = m._with(
            street_no=street,
            top=0,
            full_raise=0,
            raises=0,
            acted=_NO_SEATS,
            cursor=0,
            checked=(),
            frames={},
            oot={},
            back={},
        )
        m = m._with(closed=m._nobody_to_act())
        if not m.closed:
            m = m._with(last_bettor=None)
        return m, tuple(out)

    def table(self, seat: int, cards: tuple[str, str], board: tuple[str, ...]) -> tuple[Money, Verdicts]:
        """A hand tabled face up at showdown (the order of calls is the order shown)."""
        if seat not in self.live or any(s == seat for s, _ in self.shown):
            return self._with(board=board), ()
        return self._with(shown=(*self.shown, (seat, cards)), board=board), ()

    def muck(self, seat: int) -> Money:
        """A hand not tabled was mucked at showdown: dead, it wins nothing and is no longer
        eligible for any pot (the pots are those of the hands still claiming them). A hand
        tabled face up stays tabled wherever its cards go afterwards."""
        if seat not in self.live or any(s == seat for s, _ in self.shown) or seat in self.mucked:
            return self
        m = self._end_round([]) if self.street_no >= 0 and not self.finished else self
        return m._with(mucked=m.mucked | {seat})

    def finish(self, board: tuple[str, ...]) -> tuple[Money, Verdicts, Outcome]:
        """The hand is over: its pots, awards, what was pushed and the hands shown."""
        out: list[Verdict] = []
        m = self._with(board=board) if board else self
        if m.street_no >= 0 and not m.finished:
            m = m._end_round(out)
        m = m._with(finished=True)
        awards, rake = m._awards()
        showdown = tuple(
            Shown(seat, cards, rank_of(m.board, cards)[1]) for seat, cards in m.shown
        ) if len(m.board) >= 3 else ()
        outcome = Outcome(
            result="uncontested" if len(m.live) <= 1 else "showdown",
            actions=m.history,
            pots=awards,
            rake=rake,
            awarded=tuple(sorted(m.pushed.items())),
            showdown=showdown,
        )
        return m, tuple(out), outcome

    # ------------------------------------------------------------------ the betting round

    def _view(self) -> Money:
        """This hand with the pending action settled (queries answer as if it were)."""
        if self.pending is None:
            return self
        view: Money | None = self.__dict__.get(_VIEW)
        if view is None:
            view = self._settle([])
            self.__dict__[_VIEW] = view  # a memo of a pure function of this value
        return view

    def _needs(self, seat: int) -> bool:
        """The seat still has to act this round (it may, or must, put chips in or check)."""
        return (
            seat in self.live
            and seat not in self.allin
            and (seat not in self.acted or self.level.get(seat, 0) < self.top)
        )

    def _owes(self, seat: int) -> bool:
        """The seat has to act and acting would move chips or cards (it faces a bet)."""
        return self._needs(seat) and self.level.get(seat, 0) < self.top

    def _nobody_to_act(self) -> bool:
        """At a round's start: nobody, or one seat that already matches, is able to act."""
        able = [s for s in self.live if s not in self.allin]
        if len(self.live) <= 1 or not able:
            return True
        return len(able) == 1 and self.level.get(able[0], 0) >= self.top

    def _next_to_act(self) -> int | None:
        if self.button is None or self.street_no < 0 or self.closed or self.finished or len(self.live) <= 1:
            return None
        n = len(self.ring)
        for i in range(n):
            seat = self.ring[(self.cursor + i) % n]
            if self._needs(seat):
                return seat
        return None

    def _between(self, seat: int) -> list[int]:
        """Seats from the cursor up to (not including) ``seat``, in action order."""
        n = len(self.ring)
        at = self.ring.index(seat)
        return [self.ring[(self.cursor + i) % n] for i in range((at - self.cursor) % n)]

    def _someone_owes_before(self, seat: int) -> bool:
        return seat in self.ring and any(self._owes(s) for s in self._between(seat))

    def _advance_to(self, seat: int, out: list[Verdict], *, infer: bool) -> Money:
        """``seat`` acts: when in turn, the seats passed over checked and the cursor moves past it."""
        if seat not in self.ring or not infer:
            return self
        m = self
        for skipped in self._between(seat):
            if m._needs(skipped):
                m = m._record_check(skipped)
        return m._with(cursor=(m.ring.index(seat) + 1) % len(m.ring))

    def _record_check(self, seat: int) -> Money:
        return self._with(
            acted=self.acted | {seat},
            checked=(*self.checked, seat),
            history=(*self.history, Action(STREETS[self.street_no], seat, "check", 0)),
        )

    def _check_in_turn(self, seat: int, out: list[Verdict]) -> Money:
        """A check reported by an input: the seats before it checked too (if they could)."""
        if seat not in self.live or self.street_no < 0:
            return self
        m = self
        if m.button is not None:
            if m._someone_owes_before(seat):
                m = m._out_of_turn(seat, out)
            else:
                m = m._advance_to(seat, out, infer=True)
        if m._needs(seat):
            m = m._record_check(seat)
        return m._after_action(out)

    def _out_of_turn(self, seat: int, out: list[Verdict]) -> Money:
        skipped = next(s for s in self._between(seat) if self._owes(s))
        key = f"oot:{seat}:{self.street_no}"
        out.append(Raise(key, "action_out_of_turn", seat,
                         f"Seat {seat} acted out of turn: seat {skipped} acts first; seat {seat}'s "
                         "chips stay and are binding if the action to it does not change."))
        return self._with(oot={**self.oot, seat: skipped}, open_keys=self.open_keys | {key})

    def _chips_in(self, seat: int, amount: int, out: list[Verdict], *, zone: bool = True) -> Money:
        """Chips of ``seat`` arrive in its betting area (or an input says it put them in)."""
        m = self
        if zone:
            m = m._with(zone=_add(m.zone, seat, amount))
        if seat not in m.live:
            return m  # a folded seat's chips: dead, they are swept like the rest
        if m.pending is not None and m.pending != seat:
            m = m._settle(out)
        if seat in m.frames:
            # A remedy: the bet or raise is completed (or made more) in front of the dealer.
            m = m._with(put=_add(m.put, seat, amount))
            return m._rejudge(seat, out)
        if m.pending is None:
            m = m._with(pending=seat, pending_oot=None)
            if m.button is not None and m._someone_owes_before(seat):
                m = m._out_of_turn(seat, out)._with(pending=seat, pending_oot=seat)
        m = m._with(put=_add(m.put, seat, amount))
        if seat in m.back and m.put.get(seat, 0) >= m.back[seat]:
            key = f"back:{seat}:{m.street_no}"
            out.append(Clear(key))
            m = m._with(back={s: v for s, v in m.back.items() if s != seat},
                        open_keys=m.open_keys - {key})
        return m

    def _frame(self, seat: int) -> Frame:
        total = sum(self.committed.values()) + sum(self.level.values())
        return Frame(self.top, self.full_raise, self.raises, total, self.level.get(seat, 0))

    def _settle(self, out: list[Verdict]) -> Money:
        """Name and check the pending seat's action: its chips are all in."""
        seat = self.pending
        if seat is None:
            return self
        m = self._with(pending=None, pending_oot=None)
        total = m.put.get(seat, 0)
        if total == m.level.get(seat, 0):
            return m
        in_turn = self.pending_oot is None
        if m.button is not None and in_turn:
            m = m._advance_to(seat, out, infer=True)
        frame = m._frame(seat)
        return m._apply(seat, frame, total, len(m.history), out)

    def _apply(self, seat: int, frame: Frame, total: int, index: int, out: list[Verdict]) -> Money:
        """Record (or, for a remedy, re-record at ``index``) the action that took ``seat`` to
        ``total`` from ``frame``, and check its size."""
        verdict = judge(self.stakes, self.street_no, frame, seat, total, seat in self.allin)
        action = Action(STREETS[self.street_no], seat, verdict.name, total - frame.before)
        actions = (*self.history[:index], action, *self.history[index + 1:])
        level = {**self.level, seat: total}
        # one copy for the whole record (the hot path of every settled chip action)
        changes: dict[str, Any] = {"history": actions, "level": level}
        if total > frame.top:
            changes.update(top=total, full_raise=max(frame.full_raise, total - frame.top),
                           raises=frame.bets + 1, acted=frozenset({seat}), last_bettor=seat)
        else:
            changes.update(top=max(frame.top, max(level.values(), default=0)),
                           acted=self.acted | {seat})
        key = f"size:{seat}:{self.street_no}"
        if verdict.code is not None:
            out.append(Raise(key, verdict.code, seat, verdict.message))
            changes.update(frames={**self.frames, seat: (frame, index)},
                           open_keys=self.open_keys | {key})
        elif seat in self.frames:
            out.append(Clear(key))
            changes.update(frames={s: f for s, f in self.frames.items() if s != seat},
                           open_keys=self.open_keys - {key})
        return self._with(**changes)._after_action(out)

    def _rejudge(self, seat: int, out: list[Verdict]) -> Money:
        """A seat with a size finding changed its chips: judge the action again from its frame."""
        frame, index = self.frames[seat]
        return self._apply(seat, frame, self.put.get(seat, 0), index, out)

    def _after_action(self, out: list[Verdict]) -> Money:
        """Findings the action may have put right: out-of-turn seats now in turn, a premature
        sweep whose round is now complete."""
        m = self
        for seat, skipped in list(m.oot.items()):
            if skipped not in m.live or not m._owes(skipped):
                key = f"oot:{seat}:{m.street_no}"
                out.append(Clear(key))
                m = m._with(oot={s: v for s, v in m.oot.items() if s != seat},
                            open_keys=m.open_keys - {key})
        key = f"sweep:{m.street_no}"
        if key in m.open_keys and not any(m._owes(s) for s in m.live):
            out.append(Clear(key))
            m = m._with(open_keys=m.open_keys - {key})
        return m

    def _mark_all_in(self, seat: int, out: list[Verdict]) -> Money:
        """``seat`` is all in: a short bet of it is allowed, and its last action is named so."""
        m = self
        if seat in m.frames:
            return m._rejudge(seat, out)
        last = m.history[-1] if m.history and m.pending != seat else None
        # The key follows the chips it names: only the action just made is relabelled.
        if last is not None and last.seat == seat and last.amount > 0 and m.street_no >= 0 \
                and last.street == STREETS[m.street_no] and last.action in ("call", "bet", "raise"):
            return m._with(history=(*m.history[:-1], replace(last, action="all_in")))
        return m

    def _stack_emptied(self, seat: int, out: list[Verdict]) -> Money:
        """Where stacks are read, a stack emptied into the betting area is an all in."""
        if seat in self.stack_read and not self.stack.get(seat) and seat not in self.allin:
            return self._with(allin=self.allin | {seat})._mark_all_in(seat, out)
        return self

    def _chips_out(self, seat: int, amount: int, out: list[Verdict]) -> Money:
        """Chips leave ``seat``'s betting area for its side (or vanish) before the sweep."""
        m = self._settle(out) if self.pending not in (None, seat) else self
        m = m._with(zone=_add(m.zone, seat, -amount))
        before = m.put.get(seat, 0)
        due = m._due()
        if due is not None and due[0] == seat:
            # The uncalled part goes back to its owner: not a take-back.
            return m._give_back(seat, min(amount, due[1]), from_pot=False)._check_uncalled(out)
        m = m._with(put=_add(m.put, seat, -amount))
        if seat in m.frames:
            return m._rejudge(seat, out)  # a remedy: reduced to the limit, or to a call
        key = f"back:{seat}:{m.street_no}"
        restore = max(before, m.back.get(seat, 0))
        out.append(Raise(key, "chips_taken_back", seat,
                         f"Seat {seat} took {restore - m.put.get(seat, 0)} back from its betting area: "
                         f"chips released stay; put them back ({restore} in front)."))
        return m._with(back={**m.back, seat: restore}, open_keys=m.open_keys | {key})

    def _sweep(self, seat: int, amount: int, out: list[Verdict]) -> Money:
        """A chip swept from ``seat``'s betting area into the pot."""
        m = self._settle(out)
        key = f"sweep:{m.street_no}"
        if key not in m.open_keys and any(m._owes(s) for s in m.live):
            behind = [s for s in m.ring if m._owes(s)]
            out.append(Raise(key, "premature_sweep", None,
                             "The bets were swept while seat " + ", ".join(map(str, behind))
                             + f" had not matched {m.top}: return them and finish the round."))
            m = m._with(open_keys=m.open_keys | {key})
        m = m._with(zone=_add(m.zone, seat, -amount), swept=_add(m.swept, seat, amount))
        m = m._check_uncalled(out)
        if not any(m.zone.values()):
            m = m._with(pots_=m._current_pots())
        return m

    def _unsweep(self, seat: int, amount: int, out: list[Verdict]) -> Money:
        """Chips back from the pot to a betting area (a premature sweep undone)."""
        m = self._with(zone=_add(self.zone, seat, amount), swept=_add(self.swept, seat, -amount))
        return m._check_uncalled(out)

    def _pot_back(self, seat: int, amount: int, out: list[Verdict]) -> Money:
        """Chips from the pot to a seat's stack mid-hand: the uncalled part returned late."""
        due = self._due()
        if due is None or due[0] != seat:
            return self
        return self._give_back(seat, min(amount, due[1]), from_pot=True)._check_uncalled(out)

    def _give_back(self, seat: int, back: int, *, from_pot: bool) -> Money:
        """``back`` uncalled chips return to ``seat``: from this round's bet (in front of it or
        swept), or from an earlier round's."""
        m = self
        if m.put.get(seat, 0) >= back:
            swept = _add(m.swept, seat, -back) if from_pot else m.swept
            m = m._with(put=_add(m.put, seat, -back), level=_add(m.level, seat, -back), swept=swept)
            return m._with(top=max(m.level.values(), default=0))
        return m._with(committed=_add(m.committed, seat, -back))

    def _due(self) -> tuple[int, int] | None:
        """The uncalled chips (seat, amount) once the round is complete, else None."""
        if self.street_no < 0 or any(self._owes(s) for s in self.live):
            return None
        return uncalled(self._contributions())

    def _check_uncalled(self, out: list[Verdict]) -> Money:
        """Raise when the uncalled part went into the pot; clear once it is back."""
        due = self._due()
        if due is not None and len(self.live) >= 2 \
                and self.swept.get(due[0], 0) > self.put.get(due[0], 0) - due[1]:
            if "uncalled" in self.open_keys:
                return self
            out.append(Raise("uncalled", "uncalled_bet_not_returned", due[0],
                             f"{due[1]} of seat {due[0]}'s bet was not called: return it to seat "
                             f"{due[0]} instead of the pot."))
            return self._with(open_keys=self.open_keys | {"uncalled"})
        if "uncalled" in self.open_keys:
            out.append(Clear("uncalled"))
            return self._with(open_keys=self.open_keys - {"uncalled"})
        return self

    def _contributions(self) -> dict[int, int]:
        total = dict(self.committed)
        for seat, value in self.put.items():
            total[seat] = total.get(seat, 0) + value
        return total

    def _current_pots(self) -> tuple[Pot, ...]:
        return _pots_of(tuple(sorted(self._contributions().items())), self.live - self.mucked)

    def _end_round(self, out: list[Verdict]) -> Money:
        """The round is over (a card came, or the hand ended): settle, infer the checks, and
        move its contributions to the hand's."""
        m = self._settle(out)
        if m.button is not None and not m.closed and len(m.live) > 1:
            n = len(m.ring)
            for i in range(n):
                seat = m.ring[(m.cursor + i) % n]
                if m._needs(seat) and not m._owes(seat):
                    m = m._record_check(seat)
        pots = m._current_pots()
        return m._with(committed=m._contributions(), put={}, level={}, swept={}, pots_=pots,
                       top=0, full_raise=0, raises=0, acted=_NO_SEATS, closed=True)

    # ------------------------------------------------------------------ before the deal

    def _blind_seats(self) -> dict[int, int]:
        """Seat -> the blind it posts (antes aside); empty when the order is unknown."""
        if self.button is None or len(self.ring) < 2:
            return {}
        if len(self.ring) == 2:
            return {self.ring[1]: self.stakes.small_blind, self.ring[0]: self.stakes.big_blind}
        return {self.ring[0]: self.stakes.small_blind, self.ring[1]: self.stakes.big_blind}

    def _blind_wrong(self, seat: int, posted: int, blind: int | None) -> str:
        """The sentence for a wrong blind or ante, or ''."""
        ante = self.stakes.ante
        if self.button is None:
            allowed = {ante, ante + self.stakes.small_blind, ante + self.stakes.big_blind}
            if posted in allowed or (seat in self.allin and posted < max(allowed)):
                return ""
            return f"Seat {seat} posted {posted} before the deal; a blind or ante here is one of " \
                   f"{', '.join(map(str, sorted(allowed)))}."
        expected = ante + (blind or 0)
        if posted == expected or (seat in self.allin and posted < expected):
            return ""
        what = "small blind" if blind == self.stakes.small_blind and blind != self.stakes.big_blind \
            else "big blind" if blind else "ante"
        return f"Seat {seat} posted {posted} before the deal; its {what}" \
               f"{' and ante' if blind and ante else ''} is {expected}."

    def _before_deal(self, amount: int, src_kind: str | None, src_seat: int,
                     dst_kind: str | None, dst_seat: int, out: list[Verdict]) -> tuple[Money, Verdicts]:
        """Before the deal chips come and go freely: posts and antes, and their corrections."""
        m = self
        if dst_kind == "bet":
            m = m._with(zone=_add(m.zone, dst_seat, amount), put=_add(m.put, dst_seat, amount))
            if src_kind == "stack" and src_seat == dst_seat:
                m = m._stack_emptied(src_seat, out)
        elif src_kind == "bet" and dst_kind == "pot":
            m = m._with(zone=_add(m.zone, src_seat, -amount))  # antes swept before the deal
        elif src_kind == "bet":
            m = m._with(zone=_add(m.zone, src_seat, -amount), put=_add(m.put, src_seat, -amount))
        elif dst_kind == "pot" and src_kind == "stack":
            m = m._with(put=_add(m.put, src_seat, amount))  # an ante straight into the pot
        return m, tuple(out)

    def _vacant(self, seat: int, amount: int, out: list[Verdict]) -> Money:
        vacant = _add(self.vacant, seat, amount)
        key = f"vacant:{seat}"
        if vacant.get(seat) and key not in self.open_keys:
            out.append(Raise(key, "chips_on_vacant_seat", seat,
                             f"Chips in the betting area of seat {seat}, where nobody is dealt in: "
                             "remove them."))
            return self._with(vacant=vacant, open_keys=self.open_keys | {key})
        if not vacant.get(seat) and key in self.open_keys:
            out.append(Clear(key))
            return self._with(vacant=vacant, open_keys=self.open_keys - {key})
        return self._with(vacant=vacant)

    # ------------------------------------------------------------------ the award

    def _decided(self) -> bool:
        """No more betting: one seat left, or the last round complete, or the hand finished."""
        if self.finished or (self.street_no >= 0 and len(self.live) <= 1):
            return True
        return self.street_no == 3 and self.pending is None and not any(self._owes(s) for s in self.live)

    def _pushes_done(self) -> bool:
        leftover = any(v > self.pushed_zone.get(s, 0) for s, v in self.zone.items())
        return self.pot_chips == 0 and not leftover and (bool(self.pushed) or self.raked > 0)

    def _awards(self) -> tuple[tuple[PotAward, ...], int]:
        pots = self._current_pots()
        total = sum(p.amount for p in pots)
        rake = rake_for(self.stakes, total, self.street_no >= 1)
        button = self.button if self.button is not None else (self.ring[-1] if self.ring else 0)
        shown = self.shown if len(self.board) >= 3 else ()  # no board: no ranks yet
        awards = _award(pots, shown, self.board, rake, self.odd_chip, button, self.table_seats)
        return awards, rake

    def _push(self, amount: int, src_kind: str | None, src_seat: int,
              dst_kind: str | None, dst_seat: int, out: list[Verdict]) -> tuple[Money, Verdicts]:
        """After the betting: chips from the pot (or the bets left in front) to a seat."""
        m = self._settle(out)
        from_pushed = 0
        if src_kind == "bet":
            from_pushed = min(amount, m.pushed_zone.get(src_seat, 0))
            m = m._with(zone=_add(m.zone, src_seat, -amount),
                        pushed_zone=_add(m.pushed_zone, src_seat, -from_pushed))
        if dst_kind == "pot":
            # A push taken back (or the bets swept late).
            if src_kind == "stack":
                m = m._with(pushed=_add(m.pushed, src_seat, -amount))
            elif src_kind == "bet" and from_pushed:
                m = m._with(pushed=_add(m.pushed, src_seat, -from_pushed))
            return m._after_push(out)
        if dst_kind not in ("bet", "stack"):
            return m._after_push(out)
        if dst_kind == "bet":
            m = m._with(zone=_add(m.zone, dst_seat, amount),
                        pushed_zone=_add(m.pushed_zone, dst_seat, amount))
        if src_kind == "bet" and src_seat == dst_seat and from_pushed == amount:
            return m._after_push(out)  # the winner stacking chips already pushed to it
        if src_kind == "bet" and from_pushed:
            m = m._with(pushed=_add(m.pushed, src_seat, -from_pushed))
        due = m._due()
        if due is not None and due[0] == dst_seat:
            back = min(amount, due[1])
            m = m._give_back(dst_seat, back, from_pot=src_kind == "pot")._check_uncalled(out)
            amount -= back
        if amount > 0:
            m = m._with(pushed=_add(m.pushed, dst_seat, amount))
            awards, _ = m._awards()
            if not any(dst_seat in a.winners for a in awards):
                winners = sorted({w for a in awards for w in a.winners})
                out.append(Raise("push", "pot_awarded_wrong", dst_seat,
                                 f"Stop: seat {dst_seat} wins no pot; take the chips back and push "
                                 f"to seat {', '.join(map(str, winners))}."))
                m = m._with(open_keys=m.open_keys | {"push"})
        return m._after_push(out)

    def _after_push(self, out: list[Verdict]) -> tuple[Money, Verdicts]:
        """Once the pot is empty after the betting, check what went where."""
        m = self
        if m._decided() and m._pushes_done():
            awards, rake = m._awards()
            for verdict in check_push(awards, m.pushed, raked=m.raked, rake=rake):
                if isinstance(verdict, Raise):
                    # One finding per key: the full check supersedes the at-once one.
                    out[:] = [v for v in out if not (isinstance(v, Raise) and v.key == verdict.key)]
                    out.append(verdict)
                    m = m._with(open_keys=m.open_keys | {verdict.key})
                elif verdict.key in m.open_keys:
                    out.append(verdict)
                    m = m._with(open_keys=m.open_keys - {verdict.key})
        return m, tuple(out)


_FIELD_COUNT = len(fields(Money))
_new = object.__new__
_set = object.__setattr__
