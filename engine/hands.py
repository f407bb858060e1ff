"""The hand's course: its state part (:class:`HandPart`) and the concern that follows it
(:class:`Hands`): a hand started (by its key or its first card), voided, ended; the dealing
order, the button and its remedy, the misdeal window. Two more concerns on the same part, each
an object of its own beside it: :class:`Rounds`, the betting rounds where no betting core
follows them (keypad or action feed), and :class:`HandSensors`, the sensors of the hand (seats,
button, blinds).

Other concerns read the hand from the part (``machine.hand_part``: the seats in the hand, the
order, the phase) and call the concern by its public methods (``machine.hands.misdeal(...)``);
they change the hand's course only so (``machine.hands.street_out(street)``, ``fold(seat)``...):
every field of the part is written in this file.
The hand number is the shared table's (engine.table: every alert carries it); the concern counts
it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Final

from contract.cards import zone_seat
from engine.remedies import (
    ButtonRemedy,
)
from engine.streets import CHIP_ACTIONS, PLAY_ZONES, RUNNING

if TYPE_CHECKING:
    from contract.models import ActionInput, Phase
    from engine.dispatcher import Machine
    from engine.table import Table


@dataclass(slots=True)
class HandPart:
    """The hand's course and the sensors it starts from. Its containers are replaced, never
    updated, when they change (a copy shares them); the first group lasts across hands, the
    second is reset with each hand (:meth:`new_hand`)."""

    phase: Phase = "idle"
    #: Action inputs received between hands (after the last hand's end or misdeal, before
    #: the next one starts): the coming hand's, given to it when it starts.
    coming: tuple[ActionInput, ...] = ()
    # sensors (a kind of sensor that never reported is taken as absent hardware)
    occupied: dict[int, bool] = field(default_factory=dict)
    seats_known: bool = False
    button: int | None = None
    button_known: bool = False
    blinds: dict[int, bool] = field(default_factory=dict)
    blinds_known: bool = False
    #: (button seat, whether it moves next hand)
    anchor: tuple[int, bool] | None = None
    #: The button draw: (seat, club rank, 0 = ace).
    draw: tuple[tuple[int, int], ...] = ()
    misdeal_deck: str | None = None
    void_cards: frozenset[str] = frozenset()

    hand_deck: str | None = None
    hand_button: int | None = None
    expected_button: int | None = None
    in_hand: tuple[int, ...] = ()
    order: tuple[int, ...] = ()
    order_closed: bool = False
    sequence: tuple[int, ...] = ()
    folded: frozenset[int] = frozenset()
    rounds_done: int = 0
    all_in: bool = False
    button_r: ButtonRemedy | None = None
    #: TDA 34-A: the critical button alert of a deal begun from a misplaced button.
    late_button: str | None = None
    #: (betting round, seat, action)
    actions: tuple[tuple[int, int, str], ...] = ()
    #: Chips put in this betting round (action feed).
    contrib: dict[int, int] = field(default_factory=dict)
    to_act: frozenset[int] = frozenset()
    allin_seats: frozenset[int] = frozenset()
    round_open: bool = False
    #: The misdealt deck this hand must not reuse unshuffled.
    redeal_of: str | None = None
    hand_over: bool = False
    #: Events or dealer inputs of this hand were lost: its result says so.
    evidence_missing: bool = False

    def copy(self) -> HandPart:
        return HandPart(*_HAND_FIELDS(self))  # (dataclasses.replace checks every field: slower)

    def new_hand(self) -> None:
        """A new hand: nobody in it yet (the sensors, the button's anchor, the void hand kept)."""
        self.hand_deck = self.hand_button = self.expected_button = None
        self.in_hand = self.order = self.sequence = ()
        self.order_closed = False
        self.folded = frozenset()
        self.rounds_done = 0
        self.all_in = False
        self.button_r = None
        self.late_button = None
        self.actions = ()
        self.contrib = {}
        self.to_act = self.allin_seats = frozenset()
        self.round_open = False
        self.redeal_of = None
        self.hand_over = False
        self.evidence_missing = False

    @property
    def running(self) -> bool:
        return self.phase in RUNNING


#: Every field of a :class:`HandPart`, in order (its copy).
_HAND_FIELDS: Final = attrgetter(*HandPart.__slots__)


class Hands:
    """Starting, voiding and ending hands, the dealing order, the misdeal window (the betting
    rounds without a betting core: :class:`Rounds`; the sensors: :class:`HandSensors`)."""

    __slots__ = ("machine", "state", "table")

    def __init__(self, state: HandPart, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table  # the time, the settings, the alerts
        self.machine = machine  # the other concerns told of the hand's course

    def _next_occupied(self, seat: int) -> int:
        n = self.table.settings.seats
        for step in range(1, n + 1):
            candidate = (seat - 1 + step) % n + 1
            if self.state.occupied.get(candidate):
                return candidate
        return seat

    def clockwise_from(self, button: int, seats: tuple[int, ...]) -> tuple[int, ...]:
        """``seats`` in dealing order: first the seat left of the button, the button last."""
        n = self.table.settings.seats
        return tuple(sorted(seats, key=lambda s: (s - button - 1) % n))

    def retrieved(self, done: str, arriving: str | None = None) -> bool:
        """After a misdeal: no card of the void hand is still on a seat, the board or the burn
        (``arriving``, the card now dealt, may be one of them, reshuffled).

        Otherwise what the dealer ``done`` is not a redeal: the card joins the void hand, and
        once the dealer's reaction time is over it is a remedy not followed, named as it is.
        """
        table, state = self.table, self.state
        machine = self.machine
        for uid in state.void_cards:
            if uid == arriving:
                continue
            for zone in machine.card_state.present.get(uid, ()):
                if zone in PLAY_ZONES or zone_seat(zone) is not None:
                    if arriving is not None:
                        state.void_cards |= {arriving}
                    if not table.reacting():
                        table.not_followed(
                            "misdeal-retrieve",
                            f"{done} while the misdealt hand was still on the table: the hand is void.",
                            (
                                "Stop: retrieve all cards.",
                                "Reshuffle, cut and redeal with the same button.",
                            ),
                            of=table.misdeal_code(),
                        )
                    return False
        return True

    def _close_hand(self) -> None:
        table = self.table
        table.book.resolve_scope("hand", table.ts)
        table.book.resolve_scope("misdeal", table.ts)

    def resume(self) -> None:
        """Events of this hand were lost (docs/engine.md, "Gap fill"): at the next hand boundary
        the hand is over as far as the evidence goes. Everything it left is forgotten, including
        where tags were seen (an absence may be among what was lost: a card the engine still
        believes on the table would block the next redeal) and where the button must go."""
        table, state = self.table, self.state
        machine = self.machine
        machine.results.hand_lost()
        self._close_hand()
        machine.reset_hand()
        state.phase = "idle"
        machine.cards.forget_where_seen()
        state.void_cards = frozenset()
        state.misdeal_deck = None
        state.anchor = None
        table.critical_at = None
        machine.devices.resume()
        machine.results.no_result()

    def begin_hand(self, *, by_key: bool) -> None:
        """A new hand starts (by the ``new_hand`` key, or by its first card)."""
        machine = self.machine
        left_wrong = machine.results.hand_ends()
        redeal = self.state.phase == "misdeal"
        self._set_up_hand(by_key=by_key)
        machine.results.hand_started(left_wrong, redeal=redeal)

    def _set_up_hand(self, *, by_key: bool) -> None:
        table, state = self.table, self.state
        machine = self.machine
        redeal_of = state.misdeal_deck if state.phase == "misdeal" else None
        self._close_hand()
        table.hand += 1
        machine.reset_hand()
        state.redeal_of = redeal_of
        state.misdeal_deck = None
        state.void_cards = frozenset()
        state.phase = "dealing"
        if state.seats_known:
            occupied = tuple(s for s in range(1, table.settings.seats + 1) if state.occupied.get(s))
            state.in_hand = occupied
        expected: int | None = None
        if state.draw:
            # seed 000: the highest club of the draw takes the button
            expected = min(state.draw, key=lambda drawn: drawn[1])[0]
            state.draw = ()
        elif state.anchor is not None:
            seat, moves = state.anchor
            expected = self._next_occupied(seat) if moves and state.seats_known else seat
            if moves and not state.seats_known:
                expected = None  # cannot tell where it must go without occupancy
        actual = state.button if state.button_known else None
        button = expected if expected is not None else actual
        state.expected_button = expected
        self._set_order(button)
        if expected is not None and actual != expected and state.button_known:
            where = f"on seat {actual}" if actual is not None else "not on the table"
            message = f"The button is {where} but must be on seat {expected}."
            if by_key:
                alert = table.raise_alert(
                    "button_misplaced",
                    message,
                    expected,
                    remedy=(f"Before dealing, move the button to seat {expected}.",),
                )
                state.button_r = ButtonRemedy(alert, expected)
            else:
                self.button_late(message, expected, None)

    def _set_order(self, button: int | None) -> None:
        """The hand's button and, with the seats known, the dealing order."""
        state = self.state
        state.hand_button = button
        if button is None:
            return
        state.anchor = (button, True)
        if state.in_hand:
            self.deal_from(button, self.clockwise_from(button, state.in_hand))

    def refresh_seats(self) -> None:
        """At the first card: players who sat down, or a button placed, after ``new_hand``."""
        state = self.state
        changed = False
        if state.seats_known:
            occupied = tuple(s for s in range(1, self.table.settings.seats + 1) if state.occupied.get(s))
            changed = occupied != state.in_hand
            state.in_hand = occupied
        button = state.hand_button
        if state.expected_button is None and state.button_known and state.button != button:
            button, changed = state.button, True
        if changed:
            state.order, state.order_closed, state.sequence = (), False, ()
            self._set_order(button)

    def button_late(self, message: str, expected: int, existing: str | None) -> None:
        """The deal began with the button on the wrong seat: RR misdeal, TDA play continues."""
        table, state = self.table, self.state
        if table.profile == "tda":
            remedy = (
                f"Move the button to seat {expected} before substantial action.",
                "After substantial action play continues with the button as it is.",
            )
            text = message + " The deal has begun: correct it before substantial action."
            if existing is not None:
                table.book.update(existing, table.ts, severity="critical", message=text, remedy=list(remedy))
                table.critical_at = table.ts
            else:
                table.raise_alert("button_misplaced", text, expected, severity="critical", remedy=remedy)
            state.button_r = None
            state.late_button = table.book.find("button_misplaced")
            return
        steps = (
            "Stop the deal: this is a misdeal.",
            f"Move the button to seat {expected}.",
            "Retrieve all cards, reshuffle, cut and redeal.",
        )
        text = message + " The deal has begun: misdeal."
        if not table.settings.action_feed:
            text += " The misdeal stands only if no action has taken place."
        if existing is not None:
            table.book.update(existing, table.ts, severity="critical", message=text, remedy=list(steps))
            table.book.meta[existing] = replace(table.book.meta[existing], scope="misdeal")
            table.critical_at = table.ts
        else:
            table.raise_alert(
                "button_misplaced", text, expected, severity="critical", remedy=steps, scope="misdeal"
            )
        table.book.resolve_scope("hand", table.ts)
        state.button_r = None
        state.hand_button = expected
        self.void_hand()

    def hand_done(self) -> None:
        """The hand is over (one seat left, or showdown): dealing alerts are resolved."""
        table = self.table
        machine = self.machine
        self.state.hand_over = True
        table.book.resolve_scope("hand", table.ts)
        machine.board.end_remedies()
        machine.dealing.end_remedies()

    def showdown(self) -> None:
        self.state.phase = "showdown"
        self.hand_done()
        self.machine.results.showdown()

    def check_one_left(self) -> None:
        state = self.state
        if not state.running or not self.machine.deal_state.done:
            return
        remaining = [s for s in state.in_hand if s not in state.folded]
        if len(remaining) <= 1:
            state.phase = "idle"
            self.hand_done()

    # -- the hand's course as the other concerns see it change ------------------------------------
    # (each field of the part changes here only: the concerns call these by name)

    def deal_from(self, button: int, order: tuple[int, ...]) -> None:
        """The hand's button and its dealing order, now known (closed): two rounds of it; the
        next hand's button moves on from this one."""
        state = self.state
        state.hand_button = button
        state.anchor = (button, True)
        state.order = order
        state.order_closed = True
        state.sequence = order + order

    def first_dealt(self, seat: int) -> None:
        """Without occupancy sensors: the deal's first card went to ``seat``, where its order
        begins (engine.dealing finds the rest of it card by card)."""
        self.state.order = (seat,)

    def dealt_next(self, seat: int) -> None:
        """Without occupancy sensors: the first round of the deal reached ``seat``."""
        self.state.order += (seat,)

    def first_round_dealt(self) -> None:
        """Without occupancy sensors: the deal came back to its first seat; the seats dealt are
        the hand's, and without a button the last of them is taken as it."""
        state = self.state
        state.order_closed = True
        state.in_hand = tuple(sorted(state.order))
        state.sequence = state.order + state.order
        if state.hand_button is None:
            state.hand_button = state.order[-1]
            state.anchor = (state.hand_button, True)

    def button_dealt_twice(self, *, at_start: bool) -> None:
        """TDA 35-B: the button is dealt its two cards in a row, after its first round's card
        (``at_start`` False: passed over in round one, both at the end)."""
        state = self.state
        order, button = state.order, state.order[-1]
        if at_start:
            state.sequence = (*order, button, *order[:-1])
        else:
            state.sequence = (*order[:-1], *order[:-1], button, button)

    def deck_dealt(self, deck: str | None) -> None:
        """The deck the hand is dealt from (its first card's), None when the card is unknown."""
        self.state.hand_deck = deck

    def deal_done(self) -> None:
        """The deal is complete: preflop, and its betting round opens."""
        self.state.phase = "preflop"
        self.machine.rounds.open_round()

    def shuffled(self) -> None:
        """A deck passed its check between hands: the table is ready to deal."""
        if self.state.phase == "idle":
            self.state.phase = "shuffled"

    def street_out(self, street: int) -> None:
        """The board of ``street`` (0 preflop ... 3 river) is complete."""
        self.state.phase = ("preflop", "flop", "turn", "river")[street]

    def rounds_over(self, street: int) -> None:
        """The betting core saw the rounds before ``street`` complete."""
        state = self.state
        state.rounds_done = max(state.rounds_done, street)

    def board_cleared(self) -> None:
        """The board left the table after the river: the hand is over."""
        if self.state.phase == "river":
            self.hand_done()
        self.state.phase = "idle"

    def void_card(self, uid: str) -> None:
        """A card dealt after a misdeal joins the void hand: it must be retrieved."""
        self.state.void_cards |= {uid}

    def drawn(self, seat: int, rank: int) -> None:
        """Seed 000: ``seat`` drew a club of ``rank`` (0 the ace) for the button."""
        state = self.state
        state.draw = (*((s, r) for s, r in state.draw if s != seat), (seat, rank))

    def fold(self, seat: int) -> None:
        """``seat`` folded (its cards in the muck, or an action input)."""
        self.state.folded |= {seat}

    def betting_over(self) -> None:
        """Nobody is left to bet (an all in, the betting core's run-out): the board is run out."""
        self.state.all_in = True

    def evidence_lost(self) -> None:
        """Events or dealer inputs of this hand were lost: its result says so."""
        self.state.evidence_missing = True

    # -- the blinds of the hand and the misdeal window ------------------------------------------

    def _blind_seats(self) -> tuple[int, ...]:
        """The small and big blind of the hand (heads-up the button posts the small blind)."""
        state = self.state
        if state.hand_button is None or len(state.order) < 2:
            return ()
        if len(state.order) == 2:
            return (state.hand_button, state.order[0])
        return (state.order[0], state.order[1])

    def window_closed(self) -> bool:
        """Whether action has gone too far for a misdeal (only known with an action feed).

        RR: two players after the blinds have acted; only the first betting round counts, and
        neither the blinds' own actions nor posts. TDA 36: substantial action, two actions of
        which one puts chips in, or any three (posted blinds do not count).
        """
        state = self.state
        if self.table.profile == "tda":
            acts = [a for _, _, a in state.actions if a != "post"]
            return len(acts) >= 3 or (len(acts) >= 2 and any(a in CHIP_ACTIONS for a in acts))
        blinds = self._blind_seats()
        players = {s for r, s, a in state.actions if r == 0 and a != "post" and s not in blinds}
        return len(players) >= 2

    def misdeal(self, code: str, message: str, seat: int | None = None) -> None:
        """Raise a misdeal code: the hand is void unless the misdeal window has closed."""
        table = self.table
        fouled = code == "fouled_deck"
        if not fouled and table.settings.action_feed and self.window_closed():
            table.raise_alert(
                code,
                message + " Action has begun, so a misdeal can no longer be called: play continues.",
                seat,
                remedy=("Play continues: a misdeal can no longer be called after action.",),
            )
            return
        if not fouled and not table.settings.action_feed:
            message += " The misdeal stands only if no action has taken place."
        table.book.resolve_scope("hand", table.ts)
        table.raise_alert(code, message, seat, scope="misdeal")
        self.void_hand()

    def void_hand(self) -> None:
        machine, state = self.machine, self.state
        state.phase = "misdeal"
        if state.hand_button is not None:
            state.anchor = (state.hand_button, False)  # a redeal keeps the button
        state.misdeal_deck = state.hand_deck
        state.void_cards = frozenset(machine.card_state.zone)
        machine.board.end_remedies()
        machine.dealing.end_remedies()
        state.button_r = None
        state.late_button = None


class Rounds:
    """Betting rounds where no betting core follows them (a keypad or an action feed): who is
    still to act, the round's end, and the action inputs of the coming hand. Its own concern,
    on the hand's part (a betting core, engine.betting, follows the rounds of a table with
    chips; then only ``open_round`` is asked, and hands it on)."""

    __slots__ = ("machine", "state", "table")

    def __init__(self, state: HandPart, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table
        self.machine = machine

    def _active(self) -> frozenset[int]:
        state = self.state
        return frozenset(state.in_hand) - state.folded - state.allin_seats

    def open_round(self) -> None:
        table, state = self.table, self.state
        machine = self.machine
        if table.settings.stakes is not None:
            machine.results.round_opened()  # the betting core follows the rounds
            return
        if table.settings.action_feed and not state.all_in:
            state.to_act = self._active()
            state.round_open = True
            if state.rounds_done > 0:
                state.contrib = {}

    def bet(self, seat: int, action: str, amount: int) -> None:
        state = self.state
        if seat not in state.in_hand or seat in state.folded:
            return
        if amount:
            state.contrib = {**state.contrib, seat: state.contrib.get(seat, 0) + amount}
        if action == "post" or not state.round_open:
            return
        if action == "all_in":
            state.allin_seats |= {seat}
            others = max((v for s, v in state.contrib.items() if s != seat), default=0)
            if state.contrib.get(seat, 0) > others:
                action = "raise"
        if action in ("bet", "raise"):
            state.to_act = self._active() - {seat}
        else:
            state.to_act -= {seat}
        if state.to_act:
            return
        state.round_open = False
        left = frozenset(state.in_hand) - state.folded
        if len(left) > 1 and len(self._active()) <= 1:
            state.all_in = True  # nobody left to bet: the board is run out
        self.round_complete()

    def round_complete(self) -> None:
        machine, state = self.machine, self.state
        if state.phase == "dealing":
            machine.dealing.deal_end()
        if not state.running:
            return
        street = machine.board.street()
        state.round_open = False
        machine.board.round_complete()
        state.rounds_done = max(state.rounds_done, street + 1)
        if state.rounds_done >= 4:
            machine.hands.showdown()

    def keep_coming(self, item: ActionInput, limit: int) -> bool:
        """An action input between hands: kept for the coming hand (at most ``limit``, the
        oldest dropped); True when one was dropped."""
        state = self.state
        coming = (*state.coming, item)
        dropped = len(coming) > limit
        state.coming = coming[1:] if dropped else coming
        return dropped

    def take_coming(self) -> tuple[ActionInput, ...]:
        """The hand has started: the action inputs kept for it, now its own."""
        state = self.state
        coming, state.coming = state.coming, ()
        return coming

    def acted(self, seat: int, action: str) -> None:
        """An action input of the running hand (the misdeal window counts them)."""
        state = self.state
        state.actions += ((state.rounds_done, seat, action),)


class HandSensors:
    """The sensors the hand starts from: seat occupancy, the blind zones and the button (and
    the button's remedy resolved when it moves where it belongs). Its own concern, on the
    hand's part."""

    __slots__ = ("machine", "state", "table")

    def __init__(self, state: HandPart, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table
        self.machine = machine

    def seat_sensed(self, seat: int, occupied: bool) -> bool:
        """A seat sensor: who sits where (the next hand's seats); True when the table is empty."""
        state = self.state
        state.seats_known = True
        state.occupied = {**state.occupied, seat: occupied}
        return not any(state.occupied.values())

    def blind_sensed(self, seat: int, present: bool) -> None:
        """A blind sensor: whether a blind lies in front of ``seat``."""
        state = self.state
        state.blinds_known = True
        state.blinds = {**state.blinds, seat: present}

    def button_moved(self, seat: int | None) -> None:
        table, state = self.table, self.state
        state.button_known = True
        state.button = seat
        remedy = state.button_r
        if remedy is not None and seat == remedy.expected:
            table.book.resolve(remedy.alert, table.ts)
            state.button_r = None
        late = state.late_button
        if (
            late is not None
            and seat is not None
            and seat == state.expected_button
            and state.phase in ("dealing", "preflop")
            and not (table.settings.action_feed and self.machine.hands.window_closed())
        ):
            # TDA 34-A: corrected before substantial action; the next hand moves on from here
            table.book.resolve(late, table.ts)
            state.late_button = None
            state.hand_button = seat
            state.anchor = (seat, True)
