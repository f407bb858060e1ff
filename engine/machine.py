"""The hand, followed from evidence: the working copy one step mutates.

:class:`Machine` holds everything the engine knows. :func:`engine.core.step` copies it (shallow
copies of small dicts; every value inside is immutable), applies one received message and freezes
the result into the next :class:`engine.state.EngineState`, so a state once returned never changes.

Evidence model, in short (docs/engine.md has the long form):
- A card's *zone* is the last zone its tag was reported present in. A tag leaving an antenna
  does not move the card (players lift their cards, reads are missed); only a report in another
  zone does. A tag reported in a second zone while still present in the first is either a move
  or antenna crosstalk: the next absence decides (absent from the old zone: it moved; absent
  from the new one: crosstalk, nothing happened).
- Board cards a remedy says to take back count as removed once their tag leaves the board.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Final

from contract.cards import zone_seat
from contract.models import (
    ActionInput,
    BlindEvent,
    ButtonEvent,
    DealerInput,
    DeviceEvent,
    FaultEvent,
    KeyEvent,
    KeyInput,
    Phase,
    SeatEvent,
    ShuffleCompleteEvent,
    ShufflingEvent,
    Status,
    TagEvent,
)
from engine.alerts import AlertBook
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    EngineSettings,
    InputReceived,
    PayloadRejected,
    Received,
)
from engine.remedies import (
    BlindsRemedy,
    BoardRedeal,
    ButtonRemedy,
    ExposedRemedy,
    ExtraBurnRemedy,
    ExtraCardRemedy,
)
from engine.showdown import board_is_best

EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
RUNNING: Final = frozenset({"dealing", "preflop", "flop", "turn", "river"})
STREET_NAMES: Final = ("preflop", "flop", "turn", "river")
#: Live board cards once a street is complete: flop 3, turn 4, river 5.
BOARD_AT: Final = (0, 3, 4, 5)
CHIP_ACTIONS: Final = frozenset({"bet", "call", "raise", "all_in"})
PLAY_ZONES: Final = ("board", "burn")


def _street_of(live: int) -> int:
    """The street a board card belongs to when ``live`` board cards are already out."""
    if live < 3:
        return 1
    if live == 3:
        return 2
    if live == 4:
        return 3
    return 4


class Machine:
    """Everything the engine knows; mutated only inside one step, on a fresh copy."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self.profile = settings.profile
        self.ts = EPOCH
        self.book = AlertBook(settings.profile)
        # devices
        self.dev_seq: dict[str, int] = {}
        self.dev_session: dict[str, int] = {}
        self.dev_state: dict[str, str] = {}
        self.readers: frozenset[str] = frozenset()  # devices that sent tag events
        self.others: frozenset[str] = frozenset()  # devices that sent only other events
        self.tracking = True
        # sensors (a kind of sensor that never reported is taken as absent hardware)
        self.occupied: dict[int, bool] = {}
        self.seats_known = False
        self.button: int | None = None
        self.button_known = False
        self.blinds: dict[int, bool] = {}
        self.blinds_known = False
        # decks: "ready" (shuffled, check passed), "used", "blocked" (check failed)
        self.decks: dict[str, str] = {}
        self.shuffler_known = False
        self.last_deck: str | None = None
        # cards: logical zone of this hand's cards, physical presence of every tag
        self.zone: dict[str, str] = {}
        self.present: dict[str, tuple[str, ...]] = {}
        self.seat_cards: dict[int, tuple[str, ...]] = {}
        self.hand = 0
        self.phase: Phase = "idle"
        self.state_key: object = None
        self._reset_hand()
        self.anchor: tuple[int, bool] | None = None  # (button seat, whether it moves next hand)
        self.misdeal_deck: str | None = None
        self.void_cards: frozenset[str] = frozenset()

    def _reset_hand(self) -> None:
        self.hand_deck: str | None = None
        self.hand_button: int | None = None
        self.expected_button: int | None = None
        self.in_hand: tuple[int, ...] = ()
        self.order: tuple[int, ...] = ()
        self.order_closed = False
        self.sequence: tuple[int, ...] = ()
        self.dealt: tuple[str, ...] = ()
        self.dealt_seats: tuple[int, ...] = ()
        self.deal_done = False
        self.button_short = False
        self.extras = 0
        self.exposures = 0
        self.exposed_uids: frozenset[str] = frozenset()
        self.folded: frozenset[int] = frozenset()
        self.zone = {}
        self.seat_cards = {}
        self.board: tuple[str, ...] = ()
        self.burns: tuple[str, ...] = ()
        self.street_burns = 0
        self.rounds_done = 0
        self.all_in = False
        self.redeal: BoardRedeal | None = None
        self.exposed_r: ExposedRemedy | None = None
        self.extra_r: ExtraCardRemedy | None = None
        self.extra_burn_r: ExtraBurnRemedy | None = None
        self.expected_burn: str | None = None
        self.blinds_r: tuple[BlindsRemedy, ...] = ()
        self.button_r: ButtonRemedy | None = None
        self.burn_waived: frozenset[int] = frozenset()
        self.declared: frozenset[int] = frozenset()
        self.claims_checked: frozenset[int] = frozenset()
        self.actions: tuple[tuple[int, int, str], ...] = ()  # (betting round, seat, action)
        self.contrib: dict[int, int] = {}  # chips put in this betting round (action feed)
        self.to_act: frozenset[int] = frozenset()
        self.allin_seats: frozenset[int] = frozenset()
        self.round_open = False
        self.nf_keys: frozenset[str] = frozenset()
        self.fouled_seen: frozenset[str] = frozenset()
        self.redeal_of: str | None = None  # the misdealt deck this hand must not reuse unshuffled
        self.hand_over = False

    def copy(self) -> Machine:
        """A working copy for the next step: containers copied, immutable values shared."""
        new = Machine.__new__(Machine)
        new.__dict__ = self.__dict__.copy()
        # rarely written dicts (sessions, states, occupancy, blinds, decks) are replaced, not
        # updated, when they change, so they can be shared here
        new.book = self.book.copy()
        new.dev_seq = dict(self.dev_seq)
        new.zone = dict(self.zone)
        new.present = dict(self.present)
        new.seat_cards = dict(self.seat_cards)
        return new

    # ----------------------------------------------------------------------------------------
    # Entry point
    # ----------------------------------------------------------------------------------------

    def handle(self, received: Received) -> None:
        """Apply one received message; alert changes accumulate in ``self.book.changes``."""
        if isinstance(received, DeviceEventReceived):
            self.ts = received.event.ts
            self._device_event(received.device, received.event)
        elif isinstance(received, DeviceStatusReceived):
            self.ts = received.status.ts
            self._status(received.device, received.status)
        elif isinstance(received, InputReceived):
            self.ts = received.input.ts
            self._input(received.input)
        else:
            self.ts = received.received
            self._rejected(received)

    @property
    def running(self) -> bool:
        return self.phase in RUNNING

    def _update_tracking(self) -> None:
        """The hand is tracked unless a reader (a device that sent tags) is offline."""
        self.tracking = not any(
            state == "offline" and self._may_read(device) for device, state in self.dev_state.items()
        )

    def _may_read(self, device: str) -> bool:
        """A reader, or a device that never sent an event (it may be one)."""
        return device in self.readers or device not in self.others

    # ----------------------------------------------------------------------------------------
    # Alerts
    # ----------------------------------------------------------------------------------------

    def _raise(self, code: str, message: str, seat: int | None = None, **kw: object) -> str:
        return self.book.raise_alert(
            code=code, ts=self.ts, hand=self.hand, message=message, seat=seat, **kw  # type: ignore[arg-type]
        )

    def _not_followed(self, key: str, message: str, remedy: tuple[str, ...], seat: int | None = None) -> None:
        """Raise ``remedy_not_followed`` once per missed step and hand."""
        if key in self.nf_keys:
            return
        self.nf_keys |= {key}
        self._raise("remedy_not_followed", message, seat, remedy=remedy)

    def _window_closed(self) -> bool:
        """Whether action has gone too far for a misdeal (only known with an action feed)."""
        acts = [a for _, _, a in self.actions if a != "post"]
        if self.profile == "tda":
            return len(acts) >= 3 or (len(acts) >= 2 and any(a in CHIP_ACTIONS for a in acts))
        return len(acts) >= 2

    def _misdeal(self, code: str, message: str, seat: int | None = None) -> None:
        """Raise a misdeal code: the hand is void unless the misdeal window has closed."""
        fouled = code == "fouled_deck"
        if not fouled and self.settings.action_feed and self._window_closed():
            self._raise(
                code,
                message + " Action has begun, so a misdeal can no longer be called: play continues.",
                seat,
                remedy=("Play continues: a misdeal can no longer be called after action.",),
            )
            return
        if not fouled and not self.settings.action_feed:
            message += " The misdeal stands only if no action has taken place."
        self.book.resolve_scope("hand", self.ts)
        self._raise(code, message, seat, scope="misdeal")
        self._void_hand()

    def _void_hand(self) -> None:
        self.phase = "misdeal"
        if self.hand_button is not None:
            self.anchor = (self.hand_button, False)  # a redeal keeps the button
        self.misdeal_deck = self.hand_deck
        self.void_cards = frozenset(self.zone)
        self.redeal = None
        self.exposed_r = self.extra_r = self.extra_burn_r = None
        self.blinds_r = ()
        self.button_r = None

    # ----------------------------------------------------------------------------------------
    # Devices
    # ----------------------------------------------------------------------------------------

    def _device_event(self, device: str, event: DeviceEvent) -> None:
        if not self._sequence(device, event.seq):
            return
        if not isinstance(event, TagEvent | FaultEvent) and device not in self.others:
            self.others |= {device}
            self._update_tracking()
        if isinstance(event, TagEvent):
            self._tag(device, event)
            return
        if not isinstance(event, FaultEvent):
            self.book.resolve_scope("device", self.ts, f"{device}#fault")
        if isinstance(event, KeyEvent):
            self._key(event.key, event.seat)
        elif isinstance(event, SeatEvent):
            self.seats_known = True
            self.occupied = {**self.occupied, event.seat: event.occupied}
        elif isinstance(event, ButtonEvent):
            self._button(event.seat)
        elif isinstance(event, BlindEvent):
            self.blinds_known = True
            self.blinds = {**self.blinds, event.seat: event.present}
            if event.present:
                self._blind_posted(event.seat)
        elif isinstance(event, ShuffleCompleteEvent):
            self._shuffle_complete(device, event)
        elif isinstance(event, ShufflingEvent):
            self.shuffler_known = True
        elif isinstance(event, FaultEvent):
            self._fault(device, event)

    def _sequence(self, device: str, seq: int) -> bool:
        """Check the device's sequence; False for a repeat (already applied, QoS 1 redelivery)."""
        last = self.dev_seq.get(device)
        if last is not None and seq != last + 1:
            if seq == last or (seq < last and seq != 1):
                return False
            if seq > last + 1:
                message = (
                    f"Device {device} skipped events {last + 1} to {seq - 1}: "
                    "they were lost, so the table state may be incomplete."
                )
                key = f"{device}#seq"
                existing = self.book.find("device_fault", key)
                if existing is None:
                    self._raise("device_fault", message, scope="hand", key=key, device=device)
                else:
                    self.book.update(existing, self.ts, message=message)
        self.dev_seq[device] = seq
        return True

    def _status(self, device: str, status: Status) -> None:
        if self.dev_session.get(device) != status.session:
            self.dev_seq.pop(device, None)  # seq restarts at 1 with a new session
        self.dev_session = {**self.dev_session, device: status.session}
        self.dev_state = {**self.dev_state, device: status.state}
        self._update_tracking()
        detail = f" ({status.detail})" if status.detail else ""
        if status.state == "online":
            self.book.resolve_scope("device", self.ts, device)
            self.book.resolve_scope("device", self.ts, f"{device}#fault")
            self.book.resolve_scope("hand", self.ts, f"{device}#seq")
            return
        code = "device_offline" if status.state == "offline" else "device_fault"
        if self.book.find(code, device) is not None:
            return
        if status.state == "offline":
            tail = (
                ": the hand is not being tracked until it is back."
                if self._may_read(device)
                else "."
            )
            message = f"Device {device} is offline{detail}{tail}"
        else:
            message = f"Device {device} reports a fault{detail}."
        self._raise(code, message, scope="device", key=device, device=device)

    def _fault(self, device: str, event: FaultEvent) -> None:
        key = f"{device}#fault"
        text = f": {event.text}" if event.text else ""
        message = f"Device {device} reports fault {event.code}{text}."
        existing = self.book.find("device_fault", key)
        if existing is None:
            self._raise("device_fault", message, scope="device", key=key, device=device)
        else:
            self.book.update(existing, self.ts, message=message)

    def _rejected(self, rejected: PayloadRejected) -> None:
        where = f"device {rejected.device}" if rejected.device else "the publisher"
        message = f"A message on {rejected.topic} from {where} was rejected: {rejected.error}"
        key = rejected.topic
        existing = self.book.find("bad_payload", key)
        if existing is None:
            self._raise("bad_payload", message, scope="hand", key=key, device=rejected.device)
        else:
            self.book.update(existing, self.ts, message=message)

    # ----------------------------------------------------------------------------------------
    # Sensors and decks
    # ----------------------------------------------------------------------------------------

    def _button(self, seat: int | None) -> None:
        self.button_known = True
        self.button = seat
        remedy = self.button_r
        if remedy is not None and seat == remedy.expected:
            self.book.resolve(remedy.alert, self.ts)
            self.button_r = None

    def _blind_posted(self, seat: int) -> None:
        kept = []
        for remedy in self.blinds_r:
            if remedy.seat == seat:
                self.book.resolve(remedy.alert, self.ts)
            else:
                kept.append(remedy)
        self.blinds_r = tuple(kept)

    def _forget_deck(self, deck: str) -> None:
        """A deck was reshuffled: its cards left over from a hand over (or void) are in it now."""
        registry = self.settings.registry
        for uid, zone in list(self.zone.items()):
            card = registry.lookup(uid)
            if card is not None and card.deck == deck:
                self._leave(uid, zone)
                del self.zone[uid]

    def _other_deck(self, deck: str | None) -> str | None:
        others = [d for d in self.settings.registry.decks if d != deck]
        return others[0] if len(others) == 1 else None

    def _shuffle_complete(self, device: str, event: ShuffleCompleteEvent) -> None:
        self.shuffler_known = True
        deck = event.deck
        if deck is None:
            # The shuffler cannot name the deck: it is the one not in play (decks alternate).
            current = self.hand_deck if self.running else self.last_deck
            deck = self._other_deck(current) if current is not None else None
        if event.ok:
            if deck is not None:
                self.decks = {**self.decks, deck: "ready"}
                self.book.resolve_scope("deck", self.ts, deck)
                if not self.running:
                    self._forget_deck(deck)
            if self.phase == "idle":
                self.phase = "shuffled"
            return
        if deck is not None:
            self.decks = {**self.decks, deck: "blocked"}
        parts = [f"count {event.count}"]
        if event.missing:
            parts.append("missing " + " ".join(event.missing))
        if event.duplicates:
            parts.append("duplicates " + " ".join(event.duplicates))
        name = f"deck {deck}" if deck is not None else "the deck"
        message = f"The deck check of {name} failed ({', '.join(parts)}): do not deal it."
        self._raise("deck_check_failed", message, scope="deck", key=deck, device=device)

    # ----------------------------------------------------------------------------------------
    # Inputs and keys
    # ----------------------------------------------------------------------------------------

    def _input(self, item: DealerInput) -> None:
        if isinstance(item, KeyInput):
            self._key(item.key, item.seat)
        elif isinstance(item, ActionInput):
            self._action(item)

    def _action(self, item: ActionInput) -> None:
        if not (self.running or self.phase == "misdeal"):
            return
        self.actions += ((self.rounds_done, item.seat, item.action),)
        if self.settings.action_feed and self.running:
            self._bet(item.seat, item.action, item.amount)
        if item.action == "fold":
            self.folded |= {item.seat}
            self._check_one_left()

    # ----------------------------------------------------------------------------------------
    # Betting from an action feed: a round ends when every seat still able to act has acted
    # since the last bet or raise and matched it.
    # ----------------------------------------------------------------------------------------

    def _active(self) -> frozenset[int]:
        return frozenset(self.in_hand) - self.folded - self.allin_seats

    def _open_round(self) -> None:
        if self.settings.action_feed and not self.all_in:
            self.to_act = self._active()
            self.round_open = True
            if self.rounds_done > 0:
                self.contrib = {}

    def _bet(self, seat: int, action: str, amount: int) -> None:
        if seat not in self.in_hand or seat in self.folded:
            return
        if amount:
            self.contrib = {**self.contrib, seat: self.contrib.get(seat, 0) + amount}
        if action == "post" or not self.round_open:
            return
        if action == "all_in":
            self.allin_seats |= {seat}
            others = max((v for s, v in self.contrib.items() if s != seat), default=0)
            if self.contrib.get(seat, 0) > others:
                action = "raise"
        if action in ("bet", "raise"):
            self.to_act = self._active() - {seat}
        else:
            self.to_act -= {seat}
        if self.to_act:
            return
        self.round_open = False
        left = frozenset(self.in_hand) - self.folded
        if len(left) > 1 and len(self._active()) <= 1:
            self.all_in = True  # nobody left to bet: the board is run out
        self._round_complete()

    def _key(self, key: str, seat: int | None) -> None:
        if key == "ack":
            self.book.acknowledge(self.ts, seat)
        elif key == "new_hand":
            if self.phase == "dealing" and not self.dealt:
                return  # pressed twice
            if self.phase == "misdeal" and not self._retrieved():
                return
            self._start_hand(by_key=True)
        elif key == "round_complete":
            self._round_complete()
        elif key == "all_in":
            if self.running:
                self.all_in = True
                if len(self._live_board()) >= 5:
                    self._showdown()
        elif key == "exposed":
            if seat is not None and self.phase in ("dealing", "preflop") and not self._board_started():
                cards = self.seat_cards.get(seat, ())
                if cards:
                    self._expose(cards[-1], seat)
        elif key == "misdeal":
            if self.running:
                self.book.resolve_scope("hand", self.ts)
                self._void_hand()
        elif key == "declare_board" and seat is not None:
            self.declared |= {seat}

    def _round_complete(self) -> None:
        if self.phase == "dealing":
            self._deal_end()
        if not self.running:
            return
        street = self._board_street()
        self.round_open = False
        if self.redeal is not None and self.redeal.keep_ok:
            # TDA 39-B: action took place on the unburned card, it stands
            self.book.resolve(self.redeal.alert, self.ts)
            self.redeal = None
        self.rounds_done = max(self.rounds_done, street + 1)
        if self.rounds_done >= 4:
            self._showdown()

    # ----------------------------------------------------------------------------------------
    # Hand start and end
    # ----------------------------------------------------------------------------------------

    def _next_occupied(self, seat: int) -> int:
        n = self.settings.seats
        for step in range(1, n + 1):
            candidate = (seat - 1 + step) % n + 1
            if self.occupied.get(candidate):
                return candidate
        return seat

    def _clockwise_from(self, button: int, seats: tuple[int, ...]) -> tuple[int, ...]:
        """``seats`` in dealing order: first the seat left of the button, the button last."""
        n = self.settings.seats
        return tuple(sorted(seats, key=lambda s: (s - button - 1) % n))

    def _retrieved(self, arriving: str | None = None) -> bool:
        """After a misdeal: no card of the void hand is still on a seat, the board or the burn
        (``arriving``, the card now dealt, may be one of them, reshuffled)."""
        for uid in self.void_cards:
            if uid == arriving:
                continue
            for zone in self.present.get(uid, ()):
                if zone in PLAY_ZONES or zone_seat(zone) is not None:
                    self._not_followed(
                        "misdeal-retrieve",
                        "A card of the misdealt hand is still on the table: retrieve all cards "
                        "before the redeal.",
                        ("Retrieve all cards.", "Reshuffle, cut and redeal with the same button."),
                    )
                    return False
        return True

    def _close_hand(self) -> None:
        self.book.resolve_scope("hand", self.ts)
        self.book.resolve_scope("misdeal", self.ts)

    def _start_hand(self, *, by_key: bool) -> None:
        redeal_of = self.misdeal_deck if self.phase == "misdeal" else None
        self._close_hand()
        self.hand += 1
        self._reset_hand()
        self.redeal_of = redeal_of
        self.misdeal_deck = None
        self.void_cards = frozenset()
        self.phase = "dealing"
        if self.seats_known:
            occupied = tuple(s for s in range(1, self.settings.seats + 1) if self.occupied.get(s))
            self.in_hand = occupied
        expected: int | None = None
        if self.anchor is not None:
            seat, moves = self.anchor
            expected = self._next_occupied(seat) if moves and self.seats_known else seat
            if moves and not self.seats_known:
                expected = None  # cannot tell where it must go without occupancy
        actual = self.button if self.button_known else None
        button = expected if expected is not None else actual
        self.expected_button = expected
        self._set_order(button)
        if expected is not None and actual != expected and self.button_known:
            where = f"on seat {actual}" if actual is not None else "not on the table"
            message = f"The button is {where} but must be on seat {expected}."
            if by_key:
                alert = self._raise("button_misplaced", message, expected)
                self.button_r = ButtonRemedy(alert, expected)
            else:
                self._button_late(message, expected, None)

    def _set_order(self, button: int | None) -> None:
        """The hand's button and, with the seats known, the dealing order."""
        self.hand_button = button
        if button is None:
            return
        self.anchor = (button, True)
        if self.in_hand:
            self.order = self._clockwise_from(button, self.in_hand)
            self.order_closed = True
            self.sequence = self.order + self.order

    def _refresh_seats(self) -> None:
        """At the first card: players who sat down, or a button placed, after ``new_hand``."""
        changed = False
        if self.seats_known:
            occupied = tuple(s for s in range(1, self.settings.seats + 1) if self.occupied.get(s))
            changed = occupied != self.in_hand
            self.in_hand = occupied
        button = self.hand_button
        if self.expected_button is None and self.button_known and self.button != button:
            button, changed = self.button, True
        if changed:
            self.order, self.order_closed, self.sequence = (), False, ()
            self._set_order(button)

    def _button_late(self, message: str, expected: int, existing: str | None) -> None:
        """The deal began with the button on the wrong seat: RR misdeal, TDA play continues."""
        if self.profile == "tda":
            remedy = (
                "Correct the button before substantial action.",
                "After substantial action play continues with the button as it is.",
            )
            text = message + " The deal has begun: correct it before substantial action."
            if existing is not None:
                self.book.update(
                    existing, self.ts, severity="critical", message=text, remedy=list(remedy)
                )
            else:
                self._raise("button_misplaced", text, expected, severity="critical", remedy=remedy)
            self.button_r = None
            return
        steps = (
            "Stop the deal: this is a misdeal.",
            f"Move the button to seat {expected}.",
            "Retrieve all cards, reshuffle, cut and redeal.",
        )
        text = message + " The deal has begun: misdeal."
        if not self.settings.action_feed:
            text += " The misdeal stands only if no action has taken place."
        if existing is not None:
            self.book.update(existing, self.ts, severity="critical", message=text, remedy=list(steps))
            self.book.meta[existing] = replace(self.book.meta[existing], scope="misdeal")
        else:
            self._raise(
                "button_misplaced", text, expected, severity="critical", remedy=steps, scope="misdeal"
            )
        self.book.resolve_scope("hand", self.ts)
        self.button_r = None
        self.hand_button = expected
        self._void_hand()

    def _hand_done(self) -> None:
        """The hand is over (one seat left, or showdown): dealing alerts are resolved."""
        self.hand_over = True
        self.book.resolve_scope("hand", self.ts)
        self.redeal = None
        self.exposed_r = self.extra_r = self.extra_burn_r = None
        self.blinds_r = ()

    def _showdown(self) -> None:
        self.phase = "showdown"
        self._hand_done()

    def _check_one_left(self) -> None:
        if not self.running or not self.deal_done:
            return
        remaining = [s for s in self.in_hand if s not in self.folded]
        if len(remaining) <= 1:
            self.phase = "idle"
            self._hand_done()

    # ----------------------------------------------------------------------------------------
    # Tags: presence, absence and moves
    # ----------------------------------------------------------------------------------------

    def _tag(self, device: str, event: TagEvent) -> None:
        if device not in self.readers:
            self.readers |= {device}
            self._update_tracking()
        if event.present:
            self._present(event.uid, event.zone, event.face == "up")
        else:
            self._absent(event.uid, event.zone)

    def _present(self, uid: str, zone: str, face_up: bool) -> None:
        zones = self.present.get(uid, ())
        if zone in zones:
            if face_up and self.zone.get(uid) == zone:
                self._face_up(uid, zone)
            return  # the same tag reported twice is one card
        self.present[uid] = (*zones, zone)
        if not self._genuine(uid, zone):
            return
        current = self.zone.get(uid)
        if current == zone:
            if face_up:
                self._face_up(uid, zone)
            return
        if zones:
            return  # still seen elsewhere: a move or crosstalk, the next absence tells
        self._move(uid, current, zone)
        if face_up and self.zone.get(uid) == zone:
            self._face_up(uid, zone)

    def _absent(self, uid: str, zone: str) -> None:
        zones = self.present.get(uid)
        if not zones or zone not in zones:
            return
        rest = tuple(z for z in zones if z != zone)
        if rest:
            self.present[uid] = rest
        else:
            del self.present[uid]
        current = self.zone.get(uid)
        if current != zone:
            return  # a crosstalk read ended: the card never left its zone
        if rest:
            self._move(uid, current, rest[-1])
        else:
            self._lifted(uid, zone)

    def _genuine(self, uid: str, zone: str) -> bool:
        """False (and ``fouled_deck``) for an unknown tag or another deck's card in play."""
        if zone in ("muck", "aside"):
            return True
        card = self.settings.registry.lookup(uid)
        if card is None:
            if uid not in self.fouled_seen and (self.running or zone_seat(zone) is not None):
                self.fouled_seen |= {uid}
                where = zone if zone_seat(zone) is None else f"seat {zone_seat(zone)}"
                self._foul(f"Tag {uid} in {where} is not in the deck registry: the deck is fouled.")
            return False
        if self.running and self.hand_deck is not None and card.deck != self.hand_deck:
            if uid not in self.fouled_seen:
                self.fouled_seen |= {uid}
                where = zone if zone_seat(zone) is None else f"seat {zone_seat(zone)}"
                self._foul(
                    f"A card of deck {card.deck} appeared in {where} during a hand dealt from "
                    f"deck {self.hand_deck}: the deck is fouled."
                )
            return False
        return True

    def _foul(self, message: str) -> None:
        if self.running:
            self._misdeal("fouled_deck", message)
        else:
            self._raise("fouled_deck", message)

    def _lifted(self, uid: str, zone: str) -> None:
        """A tag left every antenna: lifted (seats, noise) unless a remedy takes it away."""
        redeal = self.redeal
        if zone == "board" and redeal is not None and uid in redeal.taken:
            self._leave(uid, zone)
            del self.zone[uid]
        elif zone == "burn" and self.extra_burn_r is not None and self.extra_burn_r.returned is None:
            self._leave(uid, zone)
            del self.zone[uid]
            self.street_burns = max(0, self.street_burns - 1)
            self.book.resolve(self.extra_burn_r.alert, self.ts)
            self.extra_burn_r = None
            self.expected_burn = uid
        elif zone == "board" and self.phase in ("river", "showdown") and self._board_cleared():
            # The river was out and the board has been cleared: the hand is over.
            if self.phase == "river":
                self._hand_done()
            self.phase = "idle"

    def _board_cleared(self) -> bool:
        present = self.present
        return not any("board" in present.get(uid, ()) for uid in self.board)

    def _leave(self, uid: str, zone: str) -> None:
        seat = zone_seat(zone)
        if seat is not None:
            self.seat_cards[seat] = tuple(u for u in self.seat_cards.get(seat, ()) if u != uid)
        elif zone == "board":
            self.board = tuple(u for u in self.board if u != uid)
            redeal = self.redeal
            if redeal is not None and uid in redeal.taken:
                self.redeal = replace(redeal, removed=redeal.removed | {uid})
        elif zone == "burn":
            self.burns = tuple(u for u in self.burns if u != uid)

    def _move(self, uid: str, old: str | None, new: str) -> None:
        seat = zone_seat(new)
        if seat is not None and old is None and not self.running and not self._start_by_card(uid):
            return
        if old is not None:
            self._leave(uid, old)
        self.zone[uid] = new
        if seat is not None:
            self._arrive_seat(uid, seat, old)
        elif new == "board":
            self._arrive_board(uid)
        elif new == "burn":
            self._arrive_burn(uid, old)
        elif new == "muck" and old is not None:
            self._arrive_muck(uid, old)

    # ----------------------------------------------------------------------------------------
    # Hole cards: the deal, exposures, extra cards, folds
    # ----------------------------------------------------------------------------------------

    def _start_by_card(self, uid: str) -> bool:
        """A card landed on a seat with no hand running: it starts one (or is refused)."""
        if self.phase == "misdeal" and not self._retrieved(uid):
            return False
        self._start_hand(by_key=False)
        if self.phase != "dealing":
            self.void_cards |= {uid}  # voided at once (button misplaced): it must be retrieved
            return False
        return True

    def _arrive_seat(self, uid: str, seat: int, old: str | None) -> None:
        self.seat_cards[seat] = (*self.seat_cards.get(seat, ()), uid)
        if old is not None and zone_seat(old) is None:
            return  # from the board, burn or muck back to a seat: not a dealt card
        if self.phase == "dealing":
            self._deal(uid, seat)
        elif self.running:
            self._late_card(uid, seat)

    def _first_card(self, uid: str) -> None:
        self._refresh_seats()
        card = self.settings.registry.lookup(uid)
        deck = card.deck if card is not None else None
        self.hand_deck = deck
        self.last_deck = deck
        status = self.decks.get(deck) if deck is not None else None
        if deck is not None and status != "blocked":
            self.decks = {**self.decks, deck: "used"}
        if deck is not None and self.shuffler_known:
            if status == "blocked":
                self._not_followed(
                    "deck-blocked",
                    f"Deck {deck} failed its deck check but is being dealt: switch decks.",
                    ("Do not deal this deck.", "Switch to the other deck and call the floor."),
                )
            elif deck == self.redeal_of and status != "ready":
                self._not_followed(
                    "misdeal-reshuffle",
                    f"The redeal uses deck {deck} without a reshuffle after the misdeal.",
                    ("Retrieve all cards, reshuffle and cut.", "Redeal with the same button."),
                )
        # the button, checked at the deal
        if self.button_r is not None:
            remedy = self.button_r
            where = f"on seat {self.button}" if self.button is not None else "not on the table"
            message = f"The button is {where} but must be on seat {remedy.expected}."
            self._button_late(message, remedy.expected, remedy.alert)
            if self.phase != "dealing":
                return
        # the blinds, checked before the deal
        if self.blinds_known and self.hand_button is not None and len(self.in_hand) >= 2:
            if len(self.in_hand) == 2:
                small, big = self.hand_button, self.order[0]
            else:
                small, big = self.order[0], self.order[1]
            remedies = []
            for seat, name in ((small, "small"), (big, "big")):
                if not self.blinds.get(seat):
                    alert = self._raise(
                        "blinds_missing",
                        f"Dealing started without the {name} blind of seat {seat} in its zone.",
                        seat,
                    )
                    remedies.append(BlindsRemedy(alert, seat))
            self.blinds_r = tuple(remedies)

    def _deal(self, uid: str, seat: int) -> None:
        index = len(self.dealt)
        if index == 0:
            self._first_card(uid)
            if self.phase != "dealing":
                return
        elif self.blinds_r:
            violated = []
            for remedy in self.blinds_r:
                if not remedy.violated:
                    self._not_followed(
                        f"blinds-{remedy.seat}",
                        f"The deal went on before the blind of seat {remedy.seat} was posted.",
                        ("Stop the deal until the blinds are posted.",),
                        remedy.seat,
                    )
                violated.append(replace(remedy, violated=True))
            self.blinds_r = tuple(violated)
        if self.seats_known and self.in_hand and seat not in self.in_hand:
            self._misdeal(
                "misdeal_empty_seat", f"A card was dealt to seat {seat}, which has no player.", seat
            )
            return
        if not self.order_closed:
            if index == 0 and self.seats_known and seat in self.in_hand:
                # no button known: the first card shows where the deal starts
                position = self.in_hand.index(seat)
                self.hand_button = self.in_hand[position - 1]
                self.anchor = (self.hand_button, True)
                self.order = self._clockwise_from(self.hand_button, self.in_hand)
                self.order_closed = True
                self.sequence = self.order + self.order
            elif not self._discover(seat, index):
                return
            if not self.order_closed:
                self.dealt += (uid,)
                self.dealt_seats += (seat,)
                return
        expected = self.sequence[index] if index < len(self.sequence) else None
        if seat != expected and not self._deal_mismatch(seat, index):
            return
        self.dealt += (uid,)
        self.dealt_seats += (seat,)
        if self.order_closed and len(self.dealt) >= len(self.sequence):
            self.deal_done = True
            self.phase = "preflop"
            self._open_round()

    def _discover(self, seat: int, index: int) -> bool:
        """Without occupancy sensors the first round of the deal shows who is dealt in."""
        n = self.settings.seats
        if index == 0:
            self.order = (seat,)
            return True
        first = self.order[0]
        if seat == first:
            self.order_closed = True
            self.in_hand = tuple(sorted(self.order))
            self.sequence = self.order + self.order
            if self.hand_button is None:
                self.hand_button = self.order[-1]
                self.anchor = (self.hand_button, True)
            return True
        if seat not in self.order and (seat - first) % n > (self.order[-1] - first) % n:
            self.order += (seat,)
            return True
        self._misdeal("misdeal_out_of_sequence", f"A card was dealt out of sequence to seat {seat}.", seat)
        return False

    def _deal_mismatch(self, seat: int, index: int) -> bool:
        """A card went to another seat than the next in order: misdeal, or TDA 35-B."""
        n = len(self.order)
        if index == 0:
            self._misdeal(
                "misdeal_wrong_first_seat",
                f"The first card went to seat {seat}, not to seat {self.order[0]}.",
                seat,
            )
            return False
        if index >= len(self.sequence):
            return True  # handled as a late card
        button = self.order[-1]
        if (
            self.profile == "tda"
            and seat == button
            and index == n
            and self.dealt_seats[-1] == button
        ):
            self.sequence = (*self.order, button, *self.order[:-1])
            return True
        round_no = index // n
        expected_pos = index % n
        pos = self.order.index(seat)
        if pos > expected_pos and self.dealt_seats.count(seat) == round_no:
            skipped = self.sequence[index]
            self._misdeal(
                "misdeal_seat_skipped",
                f"Seat {skipped} was passed over: the card went to seat {seat}.",
                skipped,
            )
        else:
            self._misdeal(
                "misdeal_out_of_sequence",
                f"A card was dealt out of sequence to seat {seat}.",
                seat,
            )
        return False

    def _deal_end(self) -> None:
        """The dealer moved on (betting, burn, board) while the deal was incomplete."""
        if self.phase != "dealing" or not self.dealt:
            return
        counts = {s: self.dealt_seats.count(s) for s in self.in_hand}
        wrong = [s for s, c in counts.items() if c != 2]
        button = self.hand_button
        if (
            self.profile == "tda"
            and wrong == [button]
            and button is not None
            and counts[button] == 1
        ):
            self.button_short = True  # TDA 37: a missing button card may be replaced
            wrong = []
        if wrong:
            seat = self.order[0] if self.order and self.order[0] in wrong else min(wrong)
            for candidate in self.order:
                if candidate in wrong:
                    seat = candidate
                    break
            self._misdeal(
                "misdeal_wrong_count",
                f"Seat {seat} ended the deal with {counts[seat]} cards instead of two.",
                seat,
            )
            if self.phase != "dealing":
                return  # void; otherwise the window had closed and play continues
        self.deal_done = True
        self.phase = "preflop"
        self._open_round()

    def _late_card(self, uid: str, seat: int) -> None:
        """A card dealt to a seat after the deal is complete."""
        exposed = self.exposed_r
        if exposed is not None and seat == exposed.seat and not exposed.replaced:
            self.exposed_r = replace(exposed, replaced=True)
            self._check_exposed()
            return
        if self.button_short and seat == self.hand_button:
            self.button_short = False
            return
        first = self.order[0] if self.order else seat
        if self.phase == "preflop" and not self._board_started():
            if self.extras >= 1:
                self.extras += 1
                self._misdeal(
                    "misdeal_extra_cards", "More than one extra card was dealt: misdeal.", seat
                )
                return
            self.extras = 1
            if seat == first:
                if self.profile == "tda":
                    self._misdeal(
                        "misdeal_wrong_count",
                        f"Seat {seat} was dealt a third card: a wrong number of cards is a misdeal.",
                        seat,
                    )
                    return
                alert = self._raise(
                    "extra_card",
                    f"An extra card was dealt to seat {seat} after every seat had its two cards.",
                    seat,
                )
                self.extra_r = ExtraCardRemedy(alert, seat, uid)
                return
        self._misdeal(
            "misdeal_wrong_count",
            f"Seat {seat} was dealt a card after the deal: it now has "
            f"{len(self.seat_cards.get(seat, ()))} cards.",
            seat,
        )

    def _face_up(self, uid: str, zone: str) -> None:
        seat = zone_seat(zone)
        if seat is None or self.phase not in ("dealing", "preflop") or self._board_started():
            return
        self._expose(uid, seat)

    def _expose(self, uid: str, seat: int) -> None:
        """A hole card exposed by the dealer: misdeal if it is the first, or the second one."""
        if uid in self.exposed_uids:
            return
        self.exposed_uids |= {uid}
        index = self.dealt.index(uid) if uid in self.dealt else None
        limit = 2 if self.profile == "tda" else 1
        self.exposures += 1
        if index is not None and index < limit:
            which = "first" if index == 0 else "second"
            self._misdeal(
                "misdeal_exposed_early",
                f"The {which} hole card dealt (seat {seat}) was exposed: misdeal.",
                seat,
            )
        elif self.exposures > 1:
            self._misdeal(
                "misdeal_exposed_multiple",
                f"A second hole card was exposed (seat {seat}): misdeal.",
                seat,
            )
        else:
            card = self.settings.registry.lookup(uid)
            name = f" ({card.card})" if card is not None else ""
            alert = self._raise(
                "exposed_card",
                f"A hole card of seat {seat} was exposed{name}: it may not be kept.",
                seat,
            )
            self.exposed_r = ExposedRemedy(alert, seat, uid)

    def _check_exposed(self) -> None:
        remedy = self.exposed_r
        if remedy is not None and remedy.replaced and remedy.burned:
            self.book.resolve(remedy.alert, self.ts)
            self.exposed_r = None

    def _arrive_muck(self, uid: str, old: str) -> None:
        seat = zone_seat(old)
        if seat is None or seat not in self.in_hand:
            return
        if self.phase == "showdown" and seat not in self.claims_checked:
            self.claims_checked |= {seat}
            self._board_claim(seat, (*self.seat_cards.get(seat, ()), uid))
        if not self.seat_cards.get(seat) and self.running:
            self.folded |= {seat}
            self._check_one_left()

    def _board_claim(self, seat: int, hole: tuple[str, ...]) -> None:
        if seat in self.declared or len(self.board) != 5 or len(hole) != 2:
            return
        registry = self.settings.registry
        board = [registry.lookup(u) for u in self.board]
        cards = [registry.lookup(u) for u in hole]
        if any(c is None for c in board) or any(c is None for c in cards):
            return
        board_codes = [c.card for c in board if c is not None]
        hole_codes = [c.card for c in cards if c is not None]
        if board_is_best(board_codes, hole_codes):
            self._raise(
                "board_claim_forfeited",
                f"Seat {seat} mucked at showdown without declaring the board, "
                "which was its best hand.",
                seat,
            )

    # ----------------------------------------------------------------------------------------
    # Board and burns
    # ----------------------------------------------------------------------------------------

    def _board_started(self) -> bool:
        return bool(self.board or self.burns)

    def _live_board(self) -> tuple[str, ...]:
        redeal = self.redeal
        if redeal is None or redeal.keep_ok:
            return self.board
        return tuple(u for u in self.board if u not in redeal.taken)

    def _board_street(self) -> int:
        """Completed board streets: 0 none, 1 flop, 2 turn, 3 river."""
        live = len(self._live_board())
        return 3 if live >= 5 else 2 if live == 4 else 1 if live >= 3 else 0

    def _prelude(self) -> bool:
        """Before a burn or board card: the deal must be over and the hand alive."""
        if self.phase == "misdeal":
            self._not_followed(
                "misdeal-play",
                "Play went on after a misdeal: the hand is void.",
                ("Retrieve all cards.", "Reshuffle, cut and redeal with the same button."),
            )
            return False
        if self.phase == "dealing":
            self._deal_end()
        return self.running

    def _arrive_board(self, uid: str) -> None:
        self.board = (*self.board, uid)
        if not self._prelude():
            return
        redeal = self.redeal
        if redeal is not None and uid in redeal.removed:
            # a card taken back, reshuffled and dealt again is a new card
            redeal = replace(redeal, taken=redeal.taken - {uid}, removed=redeal.removed - {uid})
            self.redeal = redeal
        live_before = len(self._live_board()) - 1
        street = _street_of(live_before)
        first_of_street = live_before in (0, 3, 4)
        if first_of_street and street == 1:
            self._flop_prerequisites()
        if self.extra_burn_r is not None:
            self._not_followed(
                "extra-burn",
                "A board card was dealt while both burn cards were still in the burn.",
                ("Put one burn card back on the deck: it is the next burn.",),
            )
        if redeal is not None and self._redeal_card(redeal, uid, street):
            return
        premature = not self.all_in and self.rounds_done < min(street, 4)
        if premature and redeal is not None and redeal.street == street:
            self._not_followed(
                f"wait-betting-{street}",
                f"The {STREET_NAMES[street]} was dealt again before the betting was complete.",
                ("Complete the betting before dealing the street.",),
            )
            self.redeal = None  # the alert stays open until the hand is over
        elif street == 4 or (
            premature and first_of_street and street >= 2 and self.street_burns == 0
        ):
            self._too_many(uid, street - 1)
        elif premature:
            self._premature(uid, street)
        elif first_of_street and self.street_burns == 0 and street not in self.burn_waived:
            if redeal is not None and redeal.street == street and redeal.code == "missing_burn":
                self._not_followed(
                    f"burn-{street}",
                    f"The {STREET_NAMES[street]} was dealt again without a burn card.",
                    ("Burn one card, then deal the street.",),
                )
            else:
                self._missing_burn(uid, street)
        self._street_progress()

    def _flop_prerequisites(self) -> None:
        exposed = self.exposed_r
        if exposed is not None:
            if not exposed.burned:
                self._not_followed(
                    "exposed-burn",
                    f"The flop came while the exposed card of seat {exposed.seat} was not the burn.",
                    ("The exposed card may not be kept: it is the burn card before the flop.",),
                    exposed.seat,
                )
            if not exposed.replaced:
                self._not_followed(
                    "exposed-replace",
                    f"Seat {exposed.seat} was not given the top card in place of its exposed card.",
                    ("Give that seat the top card of the deck.",),
                    exposed.seat,
                )
        extra = self.extra_r
        if extra is not None:
            self._not_followed(
                "extra-card",
                f"The flop came but the extra card of seat {extra.seat} was not the burn card.",
                ("The extra card goes back on the deck and is the burn card for the flop.",),
                extra.seat,
            )
            self.extra_r = None

    def _redeal_card(self, redeal: BoardRedeal, uid: str, street: int) -> bool:
        """A board card while a street is being redealt; True when fully handled here."""
        if redeal.keep_ok:
            return False
        needed = BOARD_AT[redeal.street] - BOARD_AT[redeal.street - 1]
        absorbing = (
            not redeal.removed
            and not redeal.scramble
            and redeal.code in ("premature_flop", "premature_turn", "premature_river", "missing_burn")
            and street == redeal.street
            and len(redeal.taken) < needed
        )
        if absorbing:
            # the rest of the same premature (or unburned) street, turned in one go
            self.redeal = replace(redeal, taken=redeal.taken | {uid})
            return True
        if redeal.scramble:
            self._not_followed(
                "scramble",
                "A new card was turned instead of using the four scrambled flop cards.",
                ("Scramble the four cards; one becomes the burn, three are the flop.",),
            )
            return True
        if not redeal.all_removed and street == redeal.street:
            self._not_followed(
                f"take-back-{redeal.street}",
                f"The {STREET_NAMES[redeal.street]} was dealt again before the cards turned by "
                "mistake were taken back.",
                ("Take the cards turned by mistake back and mix them with the stub.",),
            )
            self._street_progress()
            return True
        return False

    def _premature(self, uid: str, street: int) -> None:
        name = STREET_NAMES[street]
        code = f"premature_{name}"
        alert = self._raise(code, f"The {name} was turned before the betting round was complete.")
        if street == 1:
            taken = frozenset(u for u in self.board if u not in self._taken())
            self.redeal = BoardRedeal(alert, code, 1, taken, resolve_at=1)
            self.burn_waived |= {1}
        elif street == 2 and self.profile == "roberts":
            self.redeal = BoardRedeal(alert, code, 2, frozenset({uid}), resolve_at=3)
            self.street_burns = 0  # burn and turn what would have been the river
            self.burn_waived |= {3}
        else:
            self.redeal = BoardRedeal(alert, code, street, frozenset({uid}), resolve_at=street)
            self.burn_waived |= {street}

    def _taken(self) -> frozenset[str]:
        return self.redeal.taken if self.redeal is not None else frozenset()

    def _too_many(self, uid: str, street: int) -> None:
        name = STREET_NAMES[street]
        live = [u for u in self.board if u not in self._taken() and u != uid]
        cards = frozenset((*live[BOARD_AT[street - 1] :], uid))
        alert = self._raise(
            "board_too_many_cards",
            f"Too many cards were turned for the {name}.",
        )
        scramble = self.profile == "tda" and street == 1
        self.redeal = BoardRedeal(
            alert, "board_too_many_cards", street, cards, resolve_at=street, scramble=scramble
        )
        if not scramble:
            self.burn_waived |= {street}

    def _missing_burn(self, uid: str, street: int) -> None:
        name = STREET_NAMES[street]
        alert = self._raise("missing_burn", f"The {name} was turned without a burn card.")
        keep = self.profile == "tda"
        self.redeal = BoardRedeal(
            alert, "missing_burn", street, frozenset({uid}), resolve_at=street, keep_ok=keep
        )

    def _street_progress(self) -> None:
        """Board complete for a street: reset the burn count, resolve finished remedies."""
        live = len(self._live_board())
        street = {3: 1, 4: 2, 5: 3}.get(live)
        if street is None:
            return
        self.street_burns = 0
        self.phase = ("preflop", "flop", "turn", "river")[street]
        redeal = self.redeal
        if redeal is not None and redeal.resolve_at == street and redeal.all_removed:
            self.book.resolve(redeal.alert, self.ts)
            self.redeal = None
        elif redeal is not None and redeal.resolve_at < street:
            self.redeal = None
        if street == 3 and self.all_in:
            self._showdown()
        elif self.rounds_done == street:
            self._open_round()

    def _arrive_burn(self, uid: str, old: str | None) -> None:
        self.burns = (*self.burns, uid)
        exposed = self.exposed_r
        if exposed is not None and uid == exposed.uid and self.running:
            self.exposed_r = replace(exposed, burned=True)
            self.street_burns += 1
            self._check_exposed()
            return
        if not self._prelude():
            return
        redeal = self.redeal
        if redeal is not None and redeal.scramble and uid in redeal.taken:
            # TDA 39-A: one of the four becomes the burn, the other three are the flop
            self.board = tuple(u for u in self.board if u != uid)
            self.book.resolve(redeal.alert, self.ts)
            self.redeal = None
            self._street_progress()
            return
        street = _street_of(len(self._live_board()))
        extra = self.extra_r
        if extra is not None:
            self.extra_r = None
            if uid == extra.uid:
                self.book.resolve(extra.alert, self.ts)
            else:
                self._not_followed(
                    "extra-card",
                    f"The burn card is not the extra card dealt to seat {extra.seat}.",
                    ("The extra card goes back on the deck and is the burn card for the flop.",),
                    extra.seat,
                )
            self.street_burns += 1
            return
        if exposed is not None and not exposed.burned and street == 1:
            self._not_followed(
                "exposed-burn",
                f"Another card was burned instead of the exposed card of seat {exposed.seat}.",
                ("The exposed card may not be kept: it is the burn card before the flop.",),
                exposed.seat,
            )
        if self.expected_burn is not None:
            expected, self.expected_burn = self.expected_burn, None
            if uid != expected:
                self._not_followed(
                    "returned-burn",
                    "The burn card put back on the deck was not used as the next burn.",
                    ("The burn card put back on the deck is the next burn.",),
                )
            self.street_burns += 1
            return
        if street in self.burn_waived:
            self._not_followed(
                f"no-burn-{street}",
                f"A burn card was dealt for the {STREET_NAMES[min(street, 3)]}, "
                "which must be dealt without burning.",
                ("Deal the street without burning a card.",),
            )
            self.street_burns += 1
            return
        self.street_burns += 1
        if self.street_burns == 2:
            alert = self._raise(
                "extra_burn",
                f"Two burn cards were dealt for the {STREET_NAMES[min(street, 3)]}.",
            )
            self.extra_burn_r = ExtraBurnRemedy(alert, street)
