"""The session around the hands: buy-ins and rebuys, seats away, the dealer, the last hands and
the tournament clock (docs/rules.md, "The session").

A composed concern of the engine: the machine holds a :class:`SessionPart` (a
:class:`SessionState`, frozen, plain values that round-trip through JSON, and what is derived
from it) and :class:`Session`, the concern over that part with the settings' rules, built by
``Machine.attach_concerns`` (engine.dispatcher). The concern is told what happens by explicit
calls from the hand follower (``on_chip``, ``on_seat``, ``on_dealer``, ``on_last_hands``, ``on_level_start``,
``on_hand_start``, ``on_hand_end``, ``on_time``). Each call answers with the findings it reached
as the betting core's verdicts (:class:`engine.betting.terms.Raise` / ``Clear``, one alert per
key); the caller turns them into alerts. It reads no clock: time is the events' own.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from operator import attrgetter
from typing import Any, Final

from contract.cards import zone_bet_seat, zone_stack_seat
from engine.betting.terms import Clear, Raise, Stakes, Verdict, Verdicts

#: A time no event reaches: nothing is due.
NEVER: Final = datetime.max.replace(tzinfo=UTC)

Pairs = tuple[tuple[int, int], ...]  # (seat, chips), by seat


@dataclass(frozen=True, slots=True)
class Level:
    """One tournament level: blinds, ante and length (``[[stakes.levels]]``)."""

    small_blind: int
    big_blind: int
    ante: int
    minutes: float


@dataclass(frozen=True, slots=True)
class SessionRules:
    """What the house set for the session (configuration); fixed for the life of an engine."""

    min_buy_in: int = 0  # 0: none
    max_rebuy: int = 0  # 0: no limit
    max_absence_s: float | None = None  # None: absence not followed
    levels: tuple[Level, ...] = ()  # empty: a cash game
    #: Seats whose ``stack:N`` zone an antenna covers: the buy-in codes judge only these.
    stack_seats: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class LevelView:
    """The level in force for the public state: number (1-based), blinds, ante, its end."""

    number: int
    small_blind: int
    big_blind: int
    ante: int
    ends: datetime | None  # None: the last level, it lasts to the end


@dataclass(frozen=True, slots=True)
class SessionView:
    """What the public state shows of the session (compared whole: changed iff it changed)."""

    dealer: str | None = None
    hands_left: int | None = None
    level: LevelView | None = None
    away: tuple[tuple[int, datetime], ...] = ()  # (seat, since)


#: The view of a session that has shown nothing (one value: the public state knows it by identity).
EMPTY_VIEW: Final = SessionView()


@dataclass(frozen=True, slots=True)
class SessionState:
    """Everything the session part knows: plain values only (see :meth:`to_json`)."""

    stacks: Pairs = ()  # chips read in each seat's stack:N now
    at_deal: Pairs = ()  # each dealt-in seat's stack when the hand began
    added: Pairs = ()  # chips each seat added from off the table since the last hand began
    posted: Pairs = ()  # chips each seat moved from its stack to its betting area between hands
    bought_in: frozenset[int] = frozenset()  # seats whose first stack since sitting was judged
    limits: tuple[tuple[int, int, int], ...] = ()  # (seat, low, high): a buy-in alert's bounds
    gone: tuple[tuple[str, int], ...] = ()  # (chip, seat): own chips taken off the table
    rebuy_chips: frozenset[str] = frozenset()  # chips added during this hand: no part in it
    away: tuple[tuple[int, datetime], ...] = ()  # (seat, since): chips and no occupant
    away_alerted: frozenset[int] = frozenset()
    dealer: str | None = None  # the dealer's badge in force
    dealer_next: str | None = None  # a change announced mid-hand, in force at its end
    hands_left: int | None = None  # after last_hands: hands that may still begin
    clock_start: datetime | None = None  # the tournament clock's start
    hand_level: int | None = None  # the level (index) in force when the hand began
    in_hand: bool = False
    dealt_in: tuple[int, ...] = ()
    seen: datetime | None = None  # the latest event time the part was told

    def to_json(self) -> str:
        """The state as JSON (times in ISO 8601, sets sorted)."""
        return json.dumps(asdict(self), default=_plain, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SessionState:
        """The state :meth:`to_json` wrote."""
        data: dict[str, Any] = json.loads(text)

        def when(value: str | None) -> datetime | None:
            return None if value is None else datetime.fromisoformat(value)

        def pairs(key: str) -> Pairs:
            return tuple((int(a), int(b)) for a, b in data[key])

        return cls(
            stacks=pairs("stacks"),
            at_deal=pairs("at_deal"),
            added=pairs("added"),
            posted=pairs("posted"),
            bought_in=frozenset(data["bought_in"]),
            limits=tuple((int(s), int(lo), int(hi)) for s, lo, hi in data["limits"]),
            gone=tuple((str(u), int(s)) for u, s in data["gone"]),
            rebuy_chips=frozenset(data["rebuy_chips"]),
            away=tuple((int(s), datetime.fromisoformat(t)) for s, t in data["away"]),
            away_alerted=frozenset(data["away_alerted"]),
            dealer=data["dealer"],
            dealer_next=data["dealer_next"],
            hands_left=data["hands_left"],
            clock_start=when(data["clock_start"]),
            hand_level=data["hand_level"],
            in_hand=bool(data["in_hand"]),
            dealt_in=tuple(data["dealt_in"]),
            seen=when(data["seen"]),
        )


#: The names of a session state's fields, and the getter of their values in that order.
_FIELD_NAMES: Final = tuple(f.name for f in fields(SessionState))
_FIELD_VALUES: Final = attrgetter(*_FIELD_NAMES)


def _with(state: SessionState, **changes: Any) -> SessionState:
    """``dataclasses.replace`` of a session state: its values read in one call, where ``replace``
    looks at each of the 18 fields in turn (at every hand's start and end: a quarter of the
    engine's work at a hand boundary)."""
    values = dict(zip(_FIELD_NAMES, _FIELD_VALUES(state), strict=True))
    values.update(changes)
    return SessionState(**values)


def _plain(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, frozenset):
        return sorted(value)
    raise TypeError(f"not plain data: {type(value).__name__}")


def _get(pairs: Pairs, seat: int) -> int:
    for s, v in pairs:
        if s == seat:
            return v
    return 0


def _duration(seconds: float) -> str:
    """``45 s``, ``2 min``: a duration as the floor reads it."""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _latest(seen: datetime | None, now: datetime) -> datetime:
    """The latest event time the part was told, ``now`` included."""
    return now if seen is None or now > seen else seen


def _put(pairs: Pairs, seat: int, value: int) -> Pairs:
    rest = [(s, v) for s, v in pairs if s != seat]
    if value:
        rest.append((seat, value))
    return tuple(sorted(rest))


@dataclass(slots=True)
class SessionPart:
    """The machine's part for the session: its state and what is derived from it (the next due
    time, the public view). Plain data; its fields are replaced, never updated, when they change
    (a copy shares them)."""

    state: SessionState = SessionState()
    #: The earliest event time at which something falls due (a seat away too long, a level's
    #: end): the caller asks :meth:`Session.on_time` only from then on.
    due: datetime = NEVER
    view: SessionView = EMPTY_VIEW

    def copy(self) -> SessionPart:
        return SessionPart(self.state, self.due, self.view)


class Session:
    """The session's rules, followed from the evidence: the concern over a :class:`SessionPart`
    (the machine's; mutated only inside a step, on a copy no earlier state shares), with the
    rules the settings give."""

    __slots__ = ("part", "rules")

    def __init__(self, part: SessionPart, rules: SessionRules) -> None:
        self.part = part
        self.rules = rules

    @property
    def state(self) -> SessionState:
        return self.part.state

    @state.setter
    def state(self, value: SessionState) -> None:
        self.part.state = value

    @property
    def due(self) -> datetime:
        return self.part.due

    @property
    def view(self) -> SessionView:
        return self.part.view

    # -- chips ---------------------------------------------------------------------------------

    def touches(self, uid: str, src: str | None, dst: str | None) -> bool:
        """Whether a chip move concerns the session at all (cheap: most moves do not)."""
        if uid in self.part.state.rebuy_chips:
            return True
        if dst is None:  # off the table: from a stack, or a seat's own chips from its bet
            return src is not None and src.startswith(("stack:", "bet:"))
        return dst.startswith("stack:") or (src is not None and src.startswith("stack:"))

    def on_chip(
        self, uid: str, value: int, src: str | None, dst: str | None, *, won: bool, now: datetime
    ) -> tuple[bool, Verdicts]:
        """A chip moved (``None``: off the table). Returns (whether the chip plays no part in the
        hand: the betting core is not told, its findings)."""
        st = self.state
        out: list[Verdict] = []
        if uid in st.rebuy_chips and st.in_hand:
            # added during the hand: none of its moves count in this hand
            self._stack_move(value, src, dst, out)
            return True, tuple(out)
        seat = zone_stack_seat(dst) if dst is not None else None
        left_seat = None
        if dst is None and src is not None:
            left_seat = zone_stack_seat(src) or zone_bet_seat(src)
        if left_seat is not None:
            # the seat's own chips left the table: back later, they are no new money
            self.state = st = _with(st, gone=(*((u, s) for u, s in st.gone if u != uid), (uid, left_seat)))
        new_money = False
        if seat is not None and src is None and not won:
            own = next((s for u, s in st.gone if u == uid), None)
            if own is not None:
                self.state = st = _with(st, gone=tuple((u, s) for u, s in st.gone if u != uid))
            new_money = own != seat
        skip = False
        if new_money and seat is not None:
            if st.in_hand and seat in st.dealt_in:
                skip = True
                self.state = st = _with(st, rebuy_chips=st.rebuy_chips | {uid})
                stack = _get(st.at_deal, seat)
                out.append(
                    Raise(
                        f"rebuy:{seat}",
                        "rebuy_during_hand",
                        seat,
                        f"Chips were added to seat {seat}'s stack during the hand: they play no part "
                        f"in it; the seat plays this hand with the {stack} it had at the deal.",
                    )
                )
            else:
                self.state = st = _with(st, added=_put(st.added, seat, _get(st.added, seat) + value))
        if not st.in_hand and src is not None and dst is not None:
            # blinds and antes posted from the stack before the deal are still the seat's chips
            from_stack, to_bet = zone_stack_seat(src), zone_bet_seat(dst)
            if from_stack is not None and from_stack == to_bet:
                self.state = st = _with(st, posted=_put(st.posted, to_bet, _get(st.posted, to_bet) + value))
        self._stack_move(value, src, dst, out)
        self._check_away(now, out)
        return skip, tuple(out)

    def _stack_move(self, value: int, src: str | None, dst: str | None, out: list[Verdict]) -> None:
        st = self.state
        stacks = st.stacks
        for zone, sign in ((src, -1), (dst, 1)):
            seat = zone_stack_seat(zone) if zone is not None else None
            if seat is not None:
                stacks = _put(stacks, seat, max(0, _get(stacks, seat) + sign * value))
        if stacks is st.stacks:
            return
        self.state = st = _with(st, stacks=stacks)
        for seat, low, high in st.limits:
            if low <= _get(stacks, seat) <= high:
                self.state = st = _with(st, limits=tuple(x for x in st.limits if x[0] != seat))
                out.append(Clear(f"buyin:{seat}"))
        for seat, _ in st.away:
            if not _get(stacks, seat):
                # the chips were taken (deposited in the player's name): nobody is away
                self._back(seat, out)

    # -- seats ---------------------------------------------------------------------------------

    def on_seat(self, seat: int, occupied: bool, now: datetime, *, empty: bool = False) -> Verdicts:
        """The seat sensor: a player sat down or left (``empty``: nobody is seated any more)."""
        st = self.state
        out: list[Verdict] = []
        if empty and st.hands_left is not None and not st.in_hand:
            # the table is empty: the game announced as ending is over, the next is a new one
            self.state = st = _with(st, hands_left=None)
            out.append(Clear("last"))
            self._refresh(now)
        if occupied:
            if any(s == seat for s, _ in st.away):
                self._back(seat, out)
            elif seat in st.bought_in and not _get(st.stacks, seat):
                # a new player: his first stack is a buy-in
                self.state = _with(st, bought_in=st.bought_in - {seat})
            return tuple(out)
        if (
            _get(st.stacks, seat)
            and self.rules.max_absence_s is not None
            and not any(s == seat for s, _ in st.away)
        ):
            self.state = _with(st, away=(*st.away, (seat, now)))
            self._refresh(now)
        elif seat in st.bought_in and not _get(st.stacks, seat):
            self.state = _with(st, bought_in=st.bought_in - {seat})
        return tuple(out)

    def _back(self, seat: int, out: list[Verdict]) -> None:
        st = self.state
        self.state = _with(
            st,
            away=tuple((s, t) for s, t in st.away if s != seat),
            away_alerted=st.away_alerted - {seat},
        )
        if seat in st.away_alerted:
            out.append(Clear(f"away:{seat}"))
        self._refresh(None)

    def _check_away(self, now: datetime, out: list[Verdict]) -> None:
        limit = self.rules.max_absence_s
        st = self.state
        if limit is None or not st.away:
            return
        for seat, since in st.away:
            if seat in st.away_alerted or now - since <= timedelta(seconds=limit):
                continue
            self.state = st = _with(st, away_alerted=st.away_alerted | {seat})
            out.append(
                Raise(
                    f"away:{seat}",
                    "absence_over_limit",
                    seat,
                    f"Seat {seat} has been empty with chips in its stack for "
                    f"{_duration((now - since).total_seconds())}, longer than the house's "
                    f"{_duration(limit)}: call the floor.",
                )
            )
        self._refresh(now)

    # -- the dealer, the last hands, the clock -------------------------------------------------

    def on_dealer(self, badge: str, now: datetime) -> Verdicts:
        """A ``dealer`` input: the dealer from then on (at the hand's end, mid-hand)."""
        self._refresh(now)
        st = self.state
        if badge == (st.dealer_next or st.dealer):
            return ()
        if badge == st.dealer:  # the change announced during the hand is taken back
            self.state = _with(st, dealer_next=None)
            return (Clear("dealer"),)
        if not st.in_hand or st.dealer is None:
            self.state = _with(st, dealer=badge, dealer_next=None)
            self._refresh(None)
            return (Clear("dealer"),) if st.dealer_next is not None else ()
        self.state = _with(st, dealer_next=badge)
        return (
            Raise(
                "dealer",
                "dealer_changed_mid_hand",
                None,
                f"A new dealer ({badge}) was announced during the hand dealt by {st.dealer}: the change "
                "takes effect when this hand ends; the floor is told.",
            ),
        )

    def on_last_hands(self, now: datetime) -> Verdicts:
        """The end of the game is announced: three hands are left."""
        self._refresh(now)
        if self.state.hands_left is None:
            self.state = _with(self.state, hands_left=3)
            self._refresh(None)
        return ()

    def on_level_start(self, now: datetime) -> Verdicts:
        """A ``level_start`` input: the tournament clock starts (again) at level 1."""
        if self.rules.levels:
            self.state = _with(self.state, clock_start=now)
            self._refresh(now)
        return ()

    def on_time(self, now: datetime) -> Verdicts:
        """Event time reached :attr:`due`: a seat away too long, a new level."""
        out: list[Verdict] = []
        self._check_away(now, out)
        self._refresh(now)
        return tuple(out)

    # -- the hand ------------------------------------------------------------------------------

    def on_hand_start(self, now: datetime, dealt_in: tuple[int, ...], *, redeal: bool) -> Verdicts:
        """A hand begins (``redeal``: the same hand dealt again after a misdeal)."""
        st = self.state
        rules = self.rules
        if not dealt_in:  # no seat sensor: the players are the seats with chips in their stack
            dealt_in = tuple(seat for seat, _ in st.stacks)
        if st.dealer_next is not None:  # the last hand's end was not seen (events lost)
            self.on_hand_end(now)
            st = self.state
        out: list[Verdict] = [Clear("last")]
        if st.rebuy_chips:  # (a rebuy's alert comes with its chips: none, nothing to clear)
            out.extend(Clear(f"rebuy:{seat}") for seat in st.dealt_in)
        hands_left = st.hands_left
        if hands_left is not None and not redeal:
            if hands_left == 0:
                out.append(
                    Raise(
                        "last",
                        "hand_after_last",
                        None,
                        "A hand was dealt after the last announced one: the game was announced as ended.",
                    )
                )
            hands_left = max(0, hands_left - 1)
        clock_start = st.clock_start
        if rules.levels and clock_start is None:
            clock_start = now  # no level_start input: the clock starts with the first hand
        limits = list(st.limits)
        bought_in = set(st.bought_in)
        for seat in dealt_in:
            if seat not in rules.stack_seats:
                continue
            stack = _get(st.stacks, seat) + _get(st.posted, seat)
            bound: tuple[int, int, int] | None = None
            message = ""
            if seat not in bought_in:
                bought_in.add(seat)
                if rules.min_buy_in and stack < rules.min_buy_in:
                    bound = (seat, rules.min_buy_in - _get(st.posted, seat), 10**12)
                    message = (
                        f"Seat {seat} bought in for {stack}, below the session's minimum "
                        f"buy-in of {rules.min_buy_in}: the floor decides."
                    )
            else:
                added = _get(st.added, seat)
                if rules.max_rebuy and added > rules.max_rebuy:
                    bound = (seat, 0, stack - (added - rules.max_rebuy))
                    message = (
                        f"Seat {seat} added {added} to its stack between hands, more than "
                        f"the maximum rebuy of {rules.max_rebuy}: the floor decides."
                    )
            if bound is not None and not any(x[0] == seat for x in limits):
                limits.append(bound)
                out.append(Raise(f"buyin:{seat}", "buy_in_out_of_limits", seat, message))
        self.state = _with(
            st,
            at_deal=tuple((s, _get(st.stacks, s)) for s in sorted(dealt_in) if _get(st.stacks, s)),
            added=(),
            posted=(),
            bought_in=frozenset(bought_in),
            limits=tuple(limits),
            rebuy_chips=frozenset(),
            hands_left=hands_left,
            clock_start=clock_start,
            # a redeal after a misdeal is the same hand: its level (and posted blinds) stand
            hand_level=(
                (
                    st.hand_level
                    if redeal and st.hand_level is not None
                    else self._level_index(clock_start, now)
                )
                if rules.levels
                else None
            ),
            in_hand=True,
            dealt_in=tuple(dealt_in),
            seen=_latest(st.seen, now),  # (what _refresh would do with a copy of its own)
        )
        self._refresh(now)
        return tuple(out)

    def on_seats_dealt(self, dealt_in: tuple[int, ...]) -> None:
        """The seats dealt in, known better at the first card (players who sat down late)."""
        st = self.state
        if st.in_hand and dealt_in != st.dealt_in:
            at_deal = tuple((s, _get(st.stacks, s)) for s in sorted(dealt_in) if _get(st.stacks, s))
            self.state = _with(st, dealt_in=dealt_in, at_deal=at_deal)

    def on_hand_end(self, now: datetime) -> Verdicts:
        """The hand's result is out: a dealer change announced during it takes effect."""
        st = self.state
        # the chips added during the hand played no part in it: that remedy is carried out
        # (a rebuy's alert comes with its chips: none, nothing to clear)
        out: list[Verdict] = [Clear(f"rebuy:{seat}") for seat in st.dealt_in] if st.rebuy_chips else []
        if st.dealer_next is not None:
            out.append(Clear("dealer"))
        self.state = _with(
            st,
            dealer=st.dealer_next or st.dealer,
            dealer_next=None,
            in_hand=False,
            rebuy_chips=frozenset(),
            seen=_latest(st.seen, now),  # (what _refresh would do with a copy of its own)
        )
        self._refresh(now)
        return tuple(out)

    @property
    def hand_dealer(self) -> str | None:
        """The dealer of the hand in progress (a change announced during it comes after)."""
        return self.state.dealer

    # -- levels --------------------------------------------------------------------------------

    def _level_index(self, start: datetime | None, now: datetime) -> int:
        """The level in force at ``now`` on a clock started at ``start``."""
        if start is None:
            return 0
        elapsed = (now - start).total_seconds() / 60
        for index, level in enumerate(self.rules.levels):
            if elapsed < level.minutes:
                return index
            elapsed -= level.minutes
        return len(self.rules.levels) - 1

    def _level_end(self, index: int) -> datetime | None:
        start = self.state.clock_start
        if start is None or index >= len(self.rules.levels) - 1:
            return None
        minutes = sum(level.minutes for level in self.rules.levels[: index + 1])
        return start + timedelta(minutes=minutes)

    def hand_stakes(self, stakes: Stakes) -> Stakes:
        """The stakes of the hand in progress: a tournament's blinds and ante are those of the
        level in force when it began (asked once a hand, when the betting core begins)."""
        index = self.state.hand_level
        if index is None:
            return stakes
        level = self.rules.levels[index]
        return replace(stakes, small_blind=level.small_blind, big_blind=level.big_blind, ante=level.ante)

    def blind_code(self, code: str, message: str) -> tuple[str, str]:
        """In a tournament a wrong blind or ante is one out of the level in force."""
        index = self.state.hand_level
        if code != "blind_wrong_amount" or index is None:
            return code, message
        level = self.rules.levels[index]
        ante = f" ante {level.ante}" if level.ante else ""
        return "blinds_out_of_level", (
            f"{message} Level {index + 1} ({level.small_blind}/{level.big_blind}{ante}) was in "
            "force when the hand began."
        )

    # -- the public view -----------------------------------------------------------------------

    def _refresh(self, now: datetime | None) -> None:
        """The public view and the next due time, after a change (``now``: the event time, if
        the change came with one; else the latest the part was told)."""
        st = self.state
        if now is not None and (st.seen is None or now > st.seen):
            self.state = st = _with(st, seen=now)
        now = st.seen
        rules = self.rules
        level: LevelView | None = None
        due = NEVER
        if rules.levels and st.clock_start is not None:
            at = now if now is not None else st.clock_start
            index = self._level_index(st.clock_start, at)
            ends = self._level_end(index)
            current = rules.levels[index]
            level = LevelView(index + 1, current.small_blind, current.big_blind, current.ante, ends)
            if ends is not None:
                due = ends
        if rules.max_absence_s is not None:
            for seat, since in st.away:
                if seat not in st.away_alerted:
                    at = since + timedelta(seconds=rules.max_absence_s, microseconds=1)
                    due = min(due, at)
        view = SessionView(st.dealer, st.hands_left, level, st.away)
        part = self.part
        if view != part.view:
            part.view = EMPTY_VIEW if view == EMPTY_VIEW else view
        part.due = due


__all__ = [
    "EMPTY_VIEW",
    "NEVER",
    "Level",
    "LevelView",
    "Session",
    "SessionPart",
    "SessionRules",
    "SessionState",
    "SessionView",
]
