"""The engine state: an immutable snapshot of the machine, and its public view."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final, NamedTuple, TypeAlias

from contract.models import (
    MAX_STATE_ALERTS,
    Alert,
    LevelState,
    PotState,
    PublicState,
    SeatAmount,
    SeatAway,
    SeatState,
)
from contract.pydantic_adapter import construct_valid
from engine.api import EngineSettings
from engine.betting.terms import Pot, TableView
from engine.dispatcher import Machine
from engine.session import EMPTY_VIEW, SessionView
from engine.showdown import showdown_order

_Items: TypeAlias = tuple[tuple[object, object], ...]
_SeatsEntry: TypeAlias = tuple[
    tuple[object, ...] | None,
    set[int],
    set[int],
    tuple[tuple[int, tuple[str, ...]], ...],
    list[SeatState],
]
#: Bets built and kept (a bet in the public state is immutable: a chip into a betting area
#: changes one seat's bet, the others are the ones built before); bounded, as amounts vary
#: without end over a session.
_AMOUNTS_KEPT: Final = 4096


_PublicEntry: TypeAlias = tuple[object, bool, str, tuple[object, ...], dict[str, object]]
#: :attr:`PublicCache.public` when no public state was built since the machine last changed
#: (at the start, and after steps that built none: a replay's).
NO_PUBLIC: Final[_PublicEntry] = (None, False, "", (), {})


class PublicCache:
    """What the last public state was built from, and its parts, for the next one to share.

    Most states differ from the one before in a few fields only (the time, a bet), and a public
    state is immutable, so an unchanged part is shared rather than built again. Each entry is
    the last value seen with what it was built from (a miss only rebuilds). A machine holds one,
    shared with its copies (a copy's values are those of the machine it came from, or checked by
    identity); it is not part of what the engine knows (checkpoints leave it out).
    """

    __slots__ = (
        "amounts",
        "board",
        "money",
        "occupied",
        "pots",
        "public",
        "seat_cards",
        "seat_states",
        "seats",
        "view",
    )

    def __init__(self) -> None:
        # The items of the last seat_cards and occupied dicts seen, by identity: a dict not
        # changed in this step (``cards_changed``) or replaced on change (``occupied``) is as it
        # was when seen.
        self.seat_cards: tuple[object, _Items] = (None, ())
        self.occupied: tuple[object, _Items] = (None, ())
        # The betting's view of the last money value asked (the same value, the same view).
        self.view: tuple[object, bool, TableView | None] = (None, False, None)
        # The seats: what they were built from besides the cards (table size, hand active,
        # occupancy known, in hand, folded, occupancy), the sets of occupied and in-hand seats
        # that made, the seats' cards, and the seat states.
        self.seats: _SeatsEntry = (None, set(), set(), (), [])
        self.board: tuple[tuple[str, ...] | None, object, list[str]] = (None, None, [])
        self.pots: tuple[tuple[Pot, ...] | None, list[PotState]] = (None, [])
        self.money: tuple[TableView | None, dict[str, object]] = (None, {})
        # The last public state's fields but the time and the betting, with what they were
        # built from: the machine (a working copy changes in place; its alerts change only in
        # steps that publish a state), whether occupancy is known, the profile and the state
        # key (compared but its last item, the betting).
        self.public: _PublicEntry = NO_PUBLIC
        # Seat states are immutable and few: each distinct one is built once and shared (the
        # common ones by every engine: COMMON_SEAT_STATES).
        self.seat_states: dict[tuple[int, bool, bool, int], SeatState] = COMMON_SEAT_STATES.copy()
        self.amounts: dict[tuple[int, int], SeatAmount] = {}


#: The seat states of seats 1 to 10 with no card, one or two, built once when the module is
#: loaded (a table of immutable models, never changed): every engine's first public states show
#: them, and built by each new engine they were 3,300 models a hundred hands with chips (-0.6 %
#: instructions, callgrind). Any other is built by the engine that shows it.
COMMON_SEAT_STATES: Final[MappingProxyType[tuple[int, bool, bool, int], SeatState]] = MappingProxyType(
    {
        (seat, occupied, in_hand, cards): construct_valid(
            SeatState, {"seat": seat, "occupied": occupied, "in_hand": in_hand, "cards": cards}
        )
        for seat in range(1, 11)
        for occupied in (False, True)
        for in_hand in (False, True)
        for cards in (0, 1, 2)
    }
)


class EngineState(NamedTuple):
    """What the engine knows after some messages. Never mutated: :func:`engine.step.step`
    works on a copy of :attr:`machine` and wraps the result in a new state."""

    machine: Machine
    #: What the last public state was built from (shared by the states of one engine's run;
    #: not what the engine knows: a checkpoint leaves it out, a restored state starts a new one).
    public: PublicCache

    @property
    def settings(self) -> EngineSettings:
        return self.machine.table.settings

    @property
    def hand(self) -> int:
        return self.machine.table.hand

    @property
    def phase(self) -> str:
        return self.machine.hand_part.phase


def new_state(settings: EngineSettings) -> EngineState:
    return EngineState(Machine(settings), PublicCache())


def state_key(m: Machine, cache: PublicCache) -> tuple[object, ...]:
    """Everything the public state shows, cheap to compare: it changed iff this changed.

    (Dict items are compared with their order; a different insertion order only costs a
    republished, identical state.)
    """
    hand = m.hand_part
    seat_cards = m.card_state.seat_cards
    last_cards, seat_items = cache.seat_cards
    if m.cards.seats_changed or seat_cards is not last_cards:
        # (the dict changes only in a step that says so, and this runs at the end of every step)
        seat_items = tuple(seat_cards.items())
        cache.seat_cards = (seat_cards, seat_items)
    occupied = hand.occupied
    last_occupied, occupied_items = cache.occupied
    if occupied is not last_occupied:  # (replaced, never updated, when it changes)
        occupied_items = tuple(occupied.items())
        cache.occupied = (occupied, occupied_items)
    # to_act, bets, pots and shows_first while the betting core follows the hand (the same
    # value while the money is unchanged: the betting core remembers it)
    money = m.result_state.money
    money_view = None
    if money is not None and not m.result_state.done:
        showdown = hand.phase == "showdown"
        last_money, last_showdown, money_view = cache.view
        if money is not last_money or showdown is not last_showdown:
            money_view = money.table_view(showdown, m.answers)
            cache.view = (money, showdown, money_view)
    return (
        m.table.hand,
        hand.phase,
        hand.hand_button if hand.hand_button is not None else hand.button,
        seat_items,
        hand.in_hand,
        hand.folded,
        occupied_items,
        m.board_state.cards,
        len(m.board_state.burns),
        hand.hand_deck,
        m.device_state.tracking,
        m.session_part.view,  # (replaced, never updated, when it changes)
        money_view,  # last: the public state's other fields are built from the rest
    )


def to_public(state: EngineState) -> PublicState:
    """The public table state: card counts, board, burns; never a hole card."""
    return public_of(state.machine, cache=state.public)


#: The public state's field names (every one is given: construct_valid's ``names``).
PUBLIC_FIELDS: Final = frozenset(PublicState.model_fields)
# The step's hot path builds its models without validation (see contract.pydantic_adapter);
# kept: pydantic's model_construct instead is 47 to 54 % slower with chips (benchmarks/engine_tricks.py).
_construct = construct_valid


def _seat_state(cache: PublicCache, seat: int, occupied: bool, in_hand: bool, cards: int) -> SeatState:
    """The seat state of these values (each distinct one is built once: see ``seat_states``)."""
    key = (seat, occupied, in_hand, cards)
    found = cache.seat_states.get(key)
    if found is None:
        found = cache.seat_states[key] = _construct(
            SeatState, {"seat": seat, "occupied": occupied, "in_hand": in_hand, "cards": cards}
        )
    return found


def _seats_of(cache: PublicCache, m: Machine, active: bool, key: tuple[object, ...]) -> list[SeatState]:
    """The seat states: each seat's occupancy, whether it is in the hand, its card count."""
    hand = m.hand_part
    last_rest, occupied, in_hand, last_items, states = cache.seats
    count = m.table.settings.seats
    seat_items: tuple[tuple[int, tuple[str, ...]], ...] = key[3]  # type: ignore[assignment]
    rest = (count, active, hand.seats_known, key[4], key[5], key[6])
    seat_cards = m.card_state.seat_cards
    if rest == last_rest:
        if seat_items is last_items:
            return states
        # At most cards moved (a card dealt, a hand mucked): the seats whose cards are the
        # same tuple as before are as before.
        changed = _changed_seats(seat_items, last_items)
        if changed:
            states = list(states)
            for seat in changed:
                if 1 <= seat <= count:
                    cards = seat_cards.get(seat)
                    states[seat - 1] = _seat_state(
                        cache, seat, seat in occupied, seat in in_hand, len(cards) if cards else 0
                    )
        cache.seats = (rest, occupied, in_hand, seat_items, states)
        return states
    in_hand = set(hand.in_hand).difference(hand.folded) if active else set()
    occupied = {s for s, v in hand.occupied.items() if v} if hand.seats_known else set(hand.in_hand)
    seat_states = cache.seat_states
    seats = []
    for seat in range(1, count + 1):
        cards = seat_cards.get(seat)
        seat_key = (seat, seat in occupied, seat in in_hand, len(cards) if cards else 0)
        found = seat_states.get(seat_key)
        seats.append(found if found is not None else _seat_state(cache, *seat_key))
    cache.seats = (rest, occupied, in_hand, seat_items, seats)
    return seats


def _changed_seats(
    items: tuple[tuple[int, tuple[str, ...]], ...], before: tuple[tuple[int, tuple[str, ...]], ...]
) -> set[int]:
    """The seats whose cards differ in ``items`` and ``before`` (the items of two seat_cards
    dicts), a seat in only one of them included. (A set's difference is done in C: a loop over
    the seats here was a tenth of the dealing's steps.)"""
    return {seat for seat, _ in set(items).symmetric_difference(before)}


def _board_of(cache: PublicCache, m: Machine) -> list[str]:
    """The board's card names (the registry's)."""
    registry = m.table.settings.registry
    last_board, last_registry, board = cache.board
    if last_registry is registry and last_board == m.board_state.cards:
        return board
    board = []
    for uid in m.board_state.cards:
        card = registry.lookup(uid)
        if card is not None:
            board.append(card.card)
    cache.board = (m.board_state.cards, registry, board)
    return board


def _seat_amount(amounts: dict[tuple[int, int], SeatAmount], bet: tuple[int, int]) -> SeatAmount:
    found = amounts[bet] = _construct(SeatAmount, {"seat": bet[0], "amount": bet[1]})
    return found


def _pots_of(cache: PublicCache, pots: tuple[Pot, ...]) -> list[PotState]:
    """The pots of the public state (they change at a sweep's end only, bets every chip)."""
    last, states = cache.pots
    if pots is last or pots == last:
        return states
    states = [_construct(PotState, {"amount": p.amount, "eligible": list(p.eligible)}) for p in pots]
    cache.pots = (pots, states)
    return states


#: The betting fields of a public state while the betting core follows no hand: the contract's
#: defaults (the lists are never changed: a public state is not).
_NO_BETTING: Final[dict[str, object]] = {"to_act": None, "bets": [], "pots": [], "shows_first": None}


def _money_fields(cache: PublicCache, view: TableView) -> dict[str, object]:
    """The betting fields of the public state."""
    last, fields = cache.money
    if view is last or view == last:
        return fields
    to_act, bets, pots, shows_first = view
    amounts = cache.amounts
    if len(amounts) > _AMOUNTS_KEPT:
        amounts.clear()
    extra: dict[str, object] = {
        "to_act": to_act,
        "bets": [amounts.get(bet) or _seat_amount(amounts, bet) for bet in bets],
        "pots": _pots_of(cache, pots),
        "shows_first": shows_first,
    }
    cache.money = (view, extra)
    return extra


def public_of(
    m: Machine,
    key: tuple[object, ...] | None = None,
    alerts_same: bool = False,
    cache: PublicCache | None = None,
) -> PublicState:
    """The public state of ``m``; ``key``: its :func:`state_key`, if the caller has it;
    ``alerts_same``: the caller knows the active alerts did not change since the last public
    state built (then a state that differs only in its time and betting shares the rest);
    ``cache``: the engine's (None: nothing shared with earlier states)."""
    hand = m.hand_part
    if cache is None:
        cache = PublicCache()
    if key is None:
        key = state_key(m, cache)
    view = key[12]
    last_machine, last_known, last_profile, last_key, last_values = cache.public
    session = key[11]
    profile = m.table.profile
    # the last public state's other fields stand (its alerts among them)
    shared = alerts_same and last_machine is m and last_known == hand.seats_known and last_profile == profile
    if shared and last_key[:12] == key[:12]:
        values = last_values.copy()
        values["ts"] = m.table.ts
    elif shared and last_key[:3] == key[:3] and last_key[4:12] == key[4:12]:
        # only cards at the seats changed (a card dealt, a hand mucked: most states built
        # while dealing): the seats built again, the rest as in the last public state
        values = last_values.copy()
        values["ts"] = m.table.ts
        values["seats"] = _seats_of(cache, m, hand.running or hand.phase in ("showdown", "misdeal"), key)
        cache.public = (m, hand.seats_known, profile, key, values.copy())
    else:
        active = hand.running or hand.phase in ("showdown", "misdeal")
        active_alerts = m.table.book.active
        alerts, omitted = _listed(list(active_alerts.values())) if active_alerts else ([], 0)
        values = {
            "v": 1,
            "ts": m.table.ts,
            "hand": m.table.hand,
            "phase": hand.phase,
            "button": key[2],
            "seats": _seats_of(cache, m, active, key),
            "board": _board_of(cache, m),
            "burns": key[8],
            "deck": hand.hand_deck,
            "alerts": alerts,
            "alerts_omitted": omitted,
            "profile": m.table.profile,
            "tracking": m.device_state.tracking,
            # the betting's, replaced below while the betting core follows the hand; given here
            # too, with the contract's defaults: a model built without validation must have
            # every field (contract.pydantic_adapter), else the ones missing are left out of its
            # JSON, and the same state read back (a checkpoint's) would say them: not the bytes
            # published live (a retained state republished after a restart differed so)
            **_NO_BETTING,
            # the session's (docs/engine.md, "The session"): none on most tables
            "dealer": None,
            "hands_left": None,
            "level": None,
            "away": None,
        }
        if session is not EMPTY_VIEW:
            values.update(_session_fields(session))  # type: ignore[arg-type]
        cache.public = (m, hand.seats_known, profile, key, values.copy())
    if view is not None:
        values.update(_money_fields(cache, view))  # type: ignore[arg-type]
    return _construct(PublicState, values, PUBLIC_FIELDS)


def _session_fields(view: SessionView) -> dict[str, object]:
    """The session's fields of the public state (docs/engine.md, "The session")."""
    fields: dict[str, object] = {
        "dealer": view.dealer,
        "hands_left": view.hands_left,
        "level": None,
        "away": None,
    }
    level = view.level
    if level is not None:
        fields["level"] = _construct(
            LevelState,
            {
                "level": level.number,
                "small_blind": level.small_blind,
                "big_blind": level.big_blind,
                "ante": level.ante,
                "ends": level.ends,
            },
        )
    if view.away:
        fields["away"] = [_construct(SeatAway, {"seat": seat, "since": since}) for seat, since in view.away]
    return fields


_RANK: Final = {"info": 0, "warning": 1, "critical": 2}


def _listed(alerts: list[Alert]) -> tuple[list[Alert], int]:
    """The alerts the state lists, and how many it leaves out: at most ``MAX_STATE_ALERTS``,
    the most severe and then the most recent, in the order they were raised. However many
    devices or topics misbehave, the retained state stays small."""
    if len(alerts) <= MAX_STATE_ALERTS:
        return alerts, 0
    ranked = sorted(range(len(alerts)), key=lambda i: (_RANK[alerts[i].severity], i), reverse=True)
    keep = sorted(ranked[:MAX_STATE_ALERTS])
    return [alerts[i] for i in keep], len(alerts) - MAX_STATE_ALERTS


def showdown_order_of(state: EngineState) -> tuple[int, ...]:
    """Who shows first at showdown and then clockwise (seed 000), for the current hand."""
    m = state.machine
    hand = m.hand_part
    left = [s for s in hand.in_hand if s not in hand.folded]
    last_round = max((r for r, _, _ in hand.actions), default=-1)
    aggressor = None
    for round_no, seat, action in hand.actions:
        if round_no == last_round and action in ("bet", "raise", "all_in"):
            aggressor = seat
    button = hand.hand_button if hand.hand_button is not None else (left[-1] if left else 1)
    return showdown_order(left, button, m.table.settings.seats, aggressor)
