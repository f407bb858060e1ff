"""The engine state: an immutable snapshot of the machine, and its public view."""

from __future__ import annotations

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
from engine.betting.api import Pot, TableView
from engine.machine import Machine
from engine.session import EMPTY_VIEW, SessionView
from engine.showdown import showdown_order


class EngineState(NamedTuple):
    """What the engine knows after some messages. Never mutated: :func:`engine.core.step`
    works on a copy of :attr:`machine` and wraps the result in a new state."""

    machine: Machine

    @property
    def settings(self) -> EngineSettings:
        return self.machine.settings

    @property
    def hand(self) -> int:
        return self.machine.hand

    @property
    def phase(self) -> str:
        return self.machine.phase


def new_state(settings: EngineSettings) -> EngineState:
    return EngineState(Machine(settings))


# The items of the last seat_cards and occupied dicts seen, by identity: a dict not changed in
# this step (``cards_changed``) or replaced on change (``occupied``) is as it was when seen.
# (Every cache of this module is one entry, a tuple read and replaced whole: two engines in
# two threads can never see half of another's entry.)
_Items: TypeAlias = tuple[tuple[object, object], ...]
_last_seat_cards: list[tuple[object, _Items]] = [(None, ())]
_last_occupied: list[tuple[object, _Items]] = [(None, ())]


# The betting's view of the last money value asked (immutable: the same value, the same view).
_last_view: list[tuple[object, bool, TableView | None]] = [(None, False, None)]


def state_key(m: Machine) -> tuple[object, ...]:
    """Everything the public state shows, cheap to compare: it changed iff this changed.

    (Dict items are compared with their order; a different insertion order only costs a
    republished, identical state.)
    """
    seat_cards = m.seat_cards
    last_cards, seat_items = _last_seat_cards[0]
    if m.cards_changed or seat_cards is not last_cards:
        # (a dict changes only in a step that says so, and this runs at the end of every step)
        seat_items = tuple(seat_cards.items())
        _last_seat_cards[0] = (seat_cards, seat_items)
    occupied = m.occupied
    last_occupied, occupied_items = _last_occupied[0]
    if occupied is not last_occupied:  # (replaced, never updated, when it changes)
        occupied_items = tuple(occupied.items())
        _last_occupied[0] = (occupied, occupied_items)
    # to_act, bets, pots and shows_first while the betting core follows the hand (the same
    # value while the money is unchanged: the betting core remembers it)
    money = m.money
    money_view = None
    if money is not None and not m.money_done:
        showdown = m.phase == "showdown"
        last_money, last_showdown, money_view = _last_view[0]
        if money is not last_money or showdown is not last_showdown:
            money_view = money.table_view(showdown)
            _last_view[0] = (money, showdown, money_view)
    return (
        m.hand,
        m.phase,
        m.hand_button if m.hand_button is not None else m.button,
        seat_items,
        m.in_hand,
        m.folded,
        occupied_items,
        m.board,
        len(m.burns),
        m.hand_deck,
        m.tracking,
        money_view,
        m.session.view,  # (replaced, never updated, when it changes)
    )


def to_public(state: EngineState) -> PublicState:
    """The public table state: card counts, board, burns; never a hole card."""
    return public_of(state.machine)


_SEATS: dict[tuple[int, bool, bool, int], SeatState] = {}
# The step's hot path builds its models without validation (see contract.pydantic_adapter).
_construct = construct_valid


def _seat_state(seat: int, occupied: bool, in_hand: bool, cards: int) -> SeatState:
    """Seat states are immutable and few: each distinct one is built once and shared."""
    key = (seat, occupied, in_hand, cards)
    found = _SEATS.get(key)
    if found is None:
        found = _SEATS[key] = _construct(
            SeatState, {"seat": seat, "occupied": occupied, "in_hand": in_hand, "cards": cards}
        )
    return found


# The parts of the last public state built, with what they were built from: most states differ
# from the one before in a few fields only (the time, a bet), and a public state is immutable, so
# an unchanged part is shared rather than built again. One entry each: a miss only rebuilds.
# The seats' entry: what they were built from besides the cards (table size, hand active,
# occupancy known, in hand, folded, occupancy), the sets of occupied and in-hand seats that
# made, the seats' cards, and the seat states.
_SeatsEntry: TypeAlias = tuple[
    tuple[object, ...] | None, set[int], set[int], tuple[tuple[int, tuple[str, ...]], ...],
    list[SeatState],
]
_last_seats: list[_SeatsEntry] = [(None, set(), set(), (), [])]
_last_board: list[tuple[tuple[str, ...] | None, object, list[str]]] = [(None, None, [])]
_last_pots: list[tuple[tuple[Pot, ...] | None, list[PotState]]] = [(None, [])]
_last_money: list[tuple[TableView | None, dict[str, object]]] = [(None, {})]


def _seats_of(m: Machine, active: bool, key: tuple[object, ...]) -> list[SeatState]:
    """The seat states: each seat's occupancy, whether it is in the hand, its card count."""
    last_rest, occupied, in_hand, last_items, states = _last_seats[0]
    count = m.settings.seats
    seat_items: tuple[tuple[int, tuple[str, ...]], ...] = key[3]  # type: ignore[assignment]
    rest = (count, active, m.seats_known, key[4], key[5], key[6])
    seat_cards = m.seat_cards
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
                    states[seat - 1] = _seat_state(seat, seat in occupied, seat in in_hand,
                                                   len(cards) if cards else 0)
        _last_seats[0] = (rest, occupied, in_hand, seat_items, states)
        return states
    in_hand = set(m.in_hand).difference(m.folded) if active else set()
    occupied = {s for s, v in m.occupied.items() if v} if m.seats_known else set(m.in_hand)
    cache = _SEATS
    seats = []
    for seat in range(1, count + 1):
        cards = seat_cards.get(seat)
        seat_key = (seat, seat in occupied, seat in in_hand, len(cards) if cards else 0)
        found = cache.get(seat_key)
        seats.append(found if found is not None else _seat_state(*seat_key))
    _last_seats[0] = (rest, occupied, in_hand, seat_items, seats)
    return seats


def _changed_seats(
    items: tuple[tuple[int, tuple[str, ...]], ...], before: tuple[tuple[int, tuple[str, ...]], ...]
) -> list[int]:
    """The seats whose cards are not the same tuple in ``items`` as in ``before`` (the items of
    two seat_cards dicts), a seat in only one of them included."""
    changed: list[int] = []
    if len(items) >= len(before):
        # the usual case: the same seats in the same order, maybe one more (its first card)
        for (seat, cards), (seat_before, cards_before) in zip(items, before, strict=False):
            if seat != seat_before:
                break
            if cards is not cards_before:
                changed.append(seat)
        else:
            changed.extend(seat for seat, _ in items[len(before):])
            return changed
    old = dict(before)
    changed = [seat for seat, cards in items if old.pop(seat, None) is not cards]
    changed.extend(old)
    return changed


def _board_of(m: Machine) -> list[str]:
    """The board's card names (the registry's)."""
    registry = m.settings.registry
    last_board, last_registry, board = _last_board[0]
    if last_registry is registry and last_board == m.board:
        return board
    board = []
    for uid in m.board:
        card = registry.lookup(uid)
        if card is not None:
            board.append(card.card)
    _last_board[0] = (m.board, registry, board)
    return board


# A bet in the public state (immutable): a chip into a betting area changes one seat's bet, the
# others are the ones built before. Bounded: amounts vary without end over a session.
_AMOUNTS: dict[tuple[int, int], SeatAmount] = {}
_AMOUNTS_KEPT: Final = 4096


def _seat_amount(bet: tuple[int, int]) -> SeatAmount:
    found = _AMOUNTS[bet] = _construct(SeatAmount, {"seat": bet[0], "amount": bet[1]})
    return found


def _pots_of(pots: tuple[Pot, ...]) -> list[PotState]:
    """The pots of the public state (they change at a sweep's end only, bets every chip)."""
    last, states = _last_pots[0]
    if pots is last or pots == last:
        return states
    states = [_construct(PotState, {"amount": p.amount, "eligible": list(p.eligible)}) for p in pots]
    _last_pots[0] = (pots, states)
    return states


def _money_fields(view: TableView) -> dict[str, object]:
    """The betting fields of the public state."""
    last, fields = _last_money[0]
    if view is last or view == last:
        return fields
    to_act, bets, pots, shows_first = view
    amounts = _AMOUNTS
    if len(amounts) > _AMOUNTS_KEPT:
        amounts.clear()
    extra: dict[str, object] = {
        "to_act": to_act,
        "bets": [amounts.get(bet) or _seat_amount(bet) for bet in bets],
        "pots": _pots_of(pots),
        "shows_first": shows_first,
    }
    _last_money[0] = (view, extra)
    return extra


def public_of(m: Machine, key: tuple[object, ...] | None = None, *, alerts_same: bool = False) -> PublicState:
    """The public state of ``m``; ``key``: its :func:`state_key`, if the caller has it;
    ``alerts_same``: the caller knows the active alerts did not change since the last public
    state built (then a state that differs only in its time and betting shares the rest)."""
    if key is None:
        key = state_key(m)
    view = key[11]
    last_of, last_values = _last_public[0]
    session = key[12]
    if alerts_same and last_of[0] is m and last_of[1:] == (m.seats_known, m.profile, *key[:11], session):
        values = last_values.copy()
        values["ts"] = m.ts
    else:
        active = m.running or m.phase in ("showdown", "misdeal")
        active_alerts = m.book.active
        alerts, omitted = _listed(list(active_alerts.values())) if active_alerts else ([], 0)
        values = {
            "v": 1,
            "ts": m.ts,
            "hand": m.hand,
            "phase": m.phase,
            "button": key[2],
            "seats": _seats_of(m, active, key),
            "board": _board_of(m),
            "burns": key[8],
            "deck": m.hand_deck,
            "alerts": alerts,
            "alerts_omitted": omitted,
            "profile": m.profile,
            "tracking": m.tracking,
            # the session's (docs/engine.md, "The session"): none on most tables
            "dealer": None,
            "hands_left": None,
            "level": None,
            "away": None,
        }
        if session is not EMPTY_VIEW:
            values.update(_session_fields(session))  # type: ignore[arg-type]
        _last_public[0] = ((m, m.seats_known, m.profile, *key[:11], session), values.copy())
    if view is not None:
        values.update(_money_fields(view))  # type: ignore[arg-type]
    return _construct(PublicState, values)


def _session_fields(view: SessionView) -> dict[str, object]:
    """The session's fields of the public state (docs/engine.md, "The session")."""
    fields: dict[str, object] = {"dealer": view.dealer, "hands_left": view.hands_left,
                                 "level": None, "away": None}
    level = view.level
    if level is not None:
        fields["level"] = _construct(LevelState, {
            "level": level.number, "small_blind": level.small_blind, "big_blind": level.big_blind,
            "ante": level.ante, "ends": level.ends,
        })
    if view.away:
        fields["away"] = [_construct(SeatAway, {"seat": seat, "since": since}) for seat, since in view.away]
    return fields


# The last public state's fields but the time and the betting, with what they were built from:
# the machine (a working copy changes in place; its alerts change only in steps that publish a
# state), whether occupancy is known, the profile and the state key but its betting.
_last_public: list[tuple[tuple[object, ...], dict[str, object]]] = [((None,), {})]


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
    left = [s for s in m.in_hand if s not in m.folded]
    last_round = max((r for r, _, _ in m.actions), default=-1)
    aggressor = None
    for round_no, seat, action in m.actions:
        if round_no == last_round and action in ("bet", "raise", "all_in"):
            aggressor = seat
    button = m.hand_button if m.hand_button is not None else (left[-1] if left else 1)
    return showdown_order(left, button, m.settings.seats, aggressor)
