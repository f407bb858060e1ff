"""The dispatcher: the working copy one step mutates, its parts, and where each message goes.

:class:`Machine` holds everything the engine knows: the table's state (engine.table) and one
state part per concern, each concern built around its part (:meth:`Machine.attach_concerns`).
:func:`engine.core.step` copies it (shallow copies of small dicts; every value inside is
immutable), applies one received message and freezes the result into the next
:class:`engine.state.EngineState`, so a state once returned never changes.

A message goes to the concern that takes it: a device's message is admitted by the devices and
sequenced (engine.sequences: a gap holds what follows it); a tag read to the chips or the cards
(engine.chips, engine.cards), which tell the betting core, the deal, the board and the handling;
a status to the devices; a key or an action input to the hand's rules, here and in
engine.hands; then what time made due (lifted chips, cards off the table, half-done folds, the
hand's result, the session's clock).
"""

from __future__ import annotations

from typing import Final, Self

from contract.cards import is_chip_zone
from contract.models import (
    ActionInput,
    BlindEvent,
    ButtonEvent,
    DealerBadgeInput,
    DealerInput,
    DeviceEvent,
    FaultEvent,
    KeyEvent,
    KeyInput,
    LevelStartInput,
    SeatEvent,
    ShuffleCompleteEvent,
    ShufflingEvent,
    TagEvent,
)
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    EngineSettings,
    InputReceived,
    Received,
)
from engine.board import Board
from engine.cards import Cards
from engine.chips import LIFT_S, Chips
from engine.dealing import Dealing
from engine.devices import Devices
from engine.handling import Handling
from engine.hands import HandRules
from engine.results import Results
from engine.seqtrack import received_ts
from engine.sequences import Sequences
from engine.session import Session

#: Actions kept between hands for the coming one (a hand's result lists at most 4,096).
COMING_LIMIT: Final = 4096


class Machine(HandRules):
    """The engine's working state and its dispatcher (see the module docstring)."""

    def __init__(self, settings: EngineSettings) -> None:
        super().__init__(settings)
        self.attach_concerns()

    def copy(self) -> Self:
        """A working copy for the next step: containers copied, immutable values shared."""
        new = type(self).__new__(type(self))
        new.__dict__ = self.__dict__.copy()
        # rarely written dicts (sessions, states, occupancy, blinds, decks) are replaced, not
        # updated, when they change, so they can be shared here
        new.book = self.book.copy()
        new.commands = []
        new.hands_out = []
        new.device_seqs = self.device_seqs.copy()
        new.device_state = self.device_state.copy()
        new.card_state = self.card_state.copy()
        new.chip_state = self.chip_state.copy()
        new.deal_state = self.deal_state.copy()
        new.board_state = self.board_state.copy()
        new.result_state = self.result_state.copy()
        new.handling_state = self.handling_state.copy()
        new.session_part = self.session_part.copy()
        new.attach_concerns()
        return new

    #: The attributes that hold concern objects, not state: rebuilt around the state's parts.
    CONCERNS: Final = frozenset(
        {"sequences", "devices", "cards", "chips", "dealing", "board", "results", "handling", "session"}
    )

    def attach_concerns(self) -> None:
        """Build the concern objects around this machine's state parts (a new machine, a copy,
        a state restored from data)."""
        self.sequences = Sequences(self.device_seqs, self.commands, self.gap_wait)
        self.devices = Devices(self.device_state, self)
        self.cards = Cards(self.card_state, self)
        self.chips = Chips(self.chip_state, self)
        self.dealing = Dealing(self.deal_state, self)
        self.board = Board(self.board_state, self)
        self.results = Results(self.result_state, self)
        self.handling = Handling(self.handling_state, self)
        self.session = Session(self.session_part, self.settings.session)

    def handle(self, received: Received) -> None:
        """Take one received message; alert changes accumulate in ``self.book.changes``,
        device commands in ``self.commands``. While a gap is being filled the message waits
        (engine.sequences), and is applied in its place once the gap is closed."""
        if (
            type(received) is DeviceEventReceived or type(received) is DeviceStatusReceived
        ) and not self.devices.admitted(received):
            return  # refused (engine.devices: who may say what), reported
        if self.device_seqs.held:
            self._hold(received)
        elif type(received) is DeviceEventReceived and type(received.event) is TagEvent:
            self._apply_tag(received.device, received.event, received)
        else:
            self._apply(received)

    def _apply_tag(self, device: str, event: TagEvent, received: Received) -> None:
        """:meth:`_apply` of a tag read (nearly every message: one path, the chip looked up
        once)."""
        chips = self.settings.chips
        value = chips.value(event.uid) if chips is not None else None
        if value is None and self.chip_state.lifted:
            # a card follows the chips lifted before it: they have gone
            self.chips.settle_lifted(everything=True)
        ts = self.ts = event.ts
        if ts > self.clock:  # noqa: PLR1730 - max() is a call, on the path of every read
            self.clock = ts
        sequences = self.sequences
        taken = sequences.take(device, event, self.clock)
        if sequences.findings:
            self.devices.sequence_findings()
        if taken is None:
            sequences.wait(received)  # it shows a gap: it waits for the fill
        elif taken:  # (counted by the sequences as taken)
            if value is not None and device in self.device_state.readers:
                if ts > self.read_ts:  # noqa: PLR1730 - (as above)
                    self.read_ts = ts
                self.chips.tag(event.uid, event.zone, event.present, value)
            else:
                self._tag(device, event)
        self._after_apply()

    def _hold(self, received: Received) -> None:
        """While gaps are open (engine.sequences): the message waits; once they are closed,
        what waited is applied in its order, until one opens a new gap (the rest waits again)."""
        self.ts = received_ts(received)
        self.clock = max(self.clock, self.ts)
        sequences = self.sequences
        released = sequences.hold(received, self.clock)
        if sequences.findings:
            self.devices.sequence_findings()
        for index, item in enumerate(released):
            self._apply(item)
            if self.device_seqs.gaps:
                sequences.hold_back(released[index + 1 :], self.clock)
                return

    def _apply(self, received: Received) -> None:
        if self.chip_state.lifted and not self._is_chip_read(received):
            # a card, a key or an action follows the chips lifted before it: they have gone
            self.chips.settle_lifted(everything=True)
        self._apply_one(received)
        self._after_apply()

    def _after_apply(self) -> None:
        """What time and the message's effects made due: chips lifted long enough ago, cards
        off the table, half-done folds, the hand's result."""
        lifted = self.chip_state.lifted
        if lifted and next(iter(lifted.values()))[1] <= self.read_ts - LIFT_S:
            self.chips.settle_lifted()  # (its own first test, here: the oldest lifted chip is due)
        handling = self.handling_state
        if handling.off_table:
            self.handling.timers()
        if handling.half_folds:
            self.handling.half_folds_due(-1)  # -1: those older than the reaction time
        if self.hand_over and not self.result_state.result_sent:
            self.results.maybe_finish()
        if self.clock >= self.session_part.due:  # a seat away too long, a tournament level's end
            self.session_out(self.session.on_time(self.clock))

    def _is_chip_read(self, received: Received) -> bool:
        if not isinstance(received, DeviceEventReceived):
            return isinstance(received, DeviceStatusReceived)
        event = received.event
        chips = self.settings.chips
        return isinstance(event, TagEvent) and chips is not None and chips.value(event.uid) is not None

    def _apply_one(self, received: Received) -> None:
        if isinstance(received, DeviceEventReceived):
            self.ts = received.event.ts
            self.clock = max(self.clock, self.ts)
            sequences = self.sequences
            taken = sequences.take(received.device, received.event, self.clock)
            if sequences.findings:
                self.devices.sequence_findings()
            if taken is None:
                sequences.wait(received)  # it shows a gap: it waits for the fill
            elif taken:
                self._device_event(received.device, received.event)
        elif isinstance(received, DeviceStatusReceived):
            self.ts = received.status.ts
            newer = self.ts > self.clock
            self.clock = max(self.clock, self.ts)
            device, status = received.device, received.status
            sequences = self.sequences
            if sequences.status_gap(device, status, self.clock) or sequences.reconnected(
                device, status, newer, self.device_state.states.get(device), self.clock
            ):
                sequences.wait(received)  # what it announces is coming: it waits
            else:
                self.devices.status(device, status)
        elif isinstance(received, InputReceived):
            self.ts = received.input.ts
            self.clock = max(self.clock, self.ts)
            self.devices.input_seen(received.input)
            self._input(received.input)
        else:
            self.ts = received.received
            self.clock = max(self.clock, self.ts)
            self.devices.rejected(received)

    def _device_event(self, device: str, event: DeviceEvent) -> None:
        if isinstance(event, TagEvent):  # most events: tag reads
            self._tag(device, event)
            return
        if not isinstance(event, FaultEvent):
            self.devices.other_from(device)
        if not isinstance(event, FaultEvent):
            self.book.resolve_scope("device", self.ts, f"{device}#fault")
        if isinstance(event, KeyEvent):
            self._key(event.key, event.seat, event.alert)
        elif isinstance(event, SeatEvent):
            self.seats_known = True
            self.occupied = {**self.occupied, event.seat: event.occupied}
            empty = not any(self.occupied.values())
            self.session_out(self.session.on_seat(event.seat, event.occupied, self.ts, empty=empty))
        elif isinstance(event, ButtonEvent):
            self.button_moved(event.seat)
        elif isinstance(event, BlindEvent):
            self.blinds_known = True
            self.blinds = {**self.blinds, event.seat: event.present}
            if event.present:
                self.dealing.blind_posted(event.seat)
        elif isinstance(event, ShuffleCompleteEvent):
            untracked = self.device_state.untracked
            if untracked and (not self.running or event.deck in (self.hand_deck, self.misdeal_deck)):
                self.resume()  # the deck of the hand not tracked was reshuffled: it is over
            self.dealing.shuffle_complete(device, event)
        elif isinstance(event, ShufflingEvent):
            self.dealing.shuffling()
        elif isinstance(event, FaultEvent):
            self.devices.fault(device, event)

    def _input(self, item: DealerInput) -> None:
        if isinstance(item, KeyInput):
            self._key(item.key, item.seat, item.alert)
        elif isinstance(item, ActionInput):
            self._action(item)
        elif isinstance(item, DealerBadgeInput):
            self.session_out(self.session.on_dealer(item.dealer, self.ts))
        elif isinstance(item, LevelStartInput):
            self.session_out(self.session.on_level_start(self.ts))

    def _action(self, item: ActionInput) -> None:
        if not self.running and (self.phase != "misdeal" or item.action == "post"):
            # Between the previous hand's end (or its misdeal) and the deal: the coming hand's
            # (contract: keys are optional, a table without a keypad posts before the first card)
            coming = (*self.coming, item)
            if len(coming) > COMING_LIMIT:
                coming = coming[1:]
                self._too_many_coming()
            self.coming = coming
            return
        self.actions += ((self.rounds_done, item.seat, item.action),)
        self.board.action(item.action)  # action taken on an unburned street: it stands
        if self.settings.stakes is not None:
            self.results.action(item)
            if item.action == "fold":
                self.result_state.folded |= {item.seat}
            self._river_actions_done()
        elif self.settings.action_feed and self.running:
            self.bet(item.seat, item.action, item.amount)
        if item.action == "fold":
            self.folded |= {item.seat}
            self.check_one_left()

    def _too_many_coming(self) -> None:
        """More actions between hands than a hand has: the oldest are not kept (said once a
        hand, as a ``bad_payload`` on the inputs)."""
        message = (
            f"More than {COMING_LIMIT} actions arrived between hands: only the latest "
            f"{COMING_LIMIT} are kept for the coming hand."
        )
        if self.book.find("bad_payload", "coming-actions") is None:
            self.raise_alert("bad_payload", message, scope="hand", key="coming-actions")

    def start_hand(self, *, by_key: bool) -> None:
        """A new hand starts (engine.hands), then takes the actions that came before it."""
        self.begin_hand(by_key=by_key)
        coming, self.coming = self.coming, ()
        for item in coming:  # the posts and actions that came before it, in their order
            self._action(item)

    def start_by_card(self, uid: str, seat: int) -> bool:
        """A card landed on a seat with no hand running: it starts one (or is refused)."""
        if self.phase == "misdeal" and not self.retrieved(
            f"Dealing went on after the misdeal: a card was dealt to seat {seat}", uid
        ):
            return False
        self.start_hand(by_key=False)
        if self.phase != "dealing":
            self.void_cards |= {uid}  # voided at once (button misplaced): it must be retrieved
            return False
        return True

    def _key(self, key: str, seat: int | None, alert: str | None = None) -> None:
        if key == "ack":
            self.book.acknowledge(self.ts, seat, alert)
        elif key == "new_hand":
            if self.device_state.untracked:
                self.resume()  # events of the last hand were lost: start clean
                self.start_hand(by_key=True)
                return
            if self.phase == "dealing" and not self.deal_state.dealt:
                return  # pressed twice
            if self.phase == "misdeal" and not self.retrieved("A new hand was started"):
                return
            self.start_hand(by_key=True)
        elif key == "round_complete":
            if not self.result_state.chips_read:  # where chips are read, the sweep ends the round
                self.round_complete()
        elif key == "all_in":
            if seat is not None:
                self.results.all_in(seat)
            # A seat all in where the betting is followed closes nothing by itself: the betting
            # core says when nobody is left to bet (engine.chips, the run-out).
            if self.running and (seat is None or not self.results.followed()):
                self.all_in = True
                if len(self.board.live()) >= 5:
                    self.showdown()
        elif key == "exposed":
            if seat is not None and self.phase in ("dealing", "preflop") and not self.board.started():
                cards = self.card_state.seat_cards.get(seat, ())
                # the card read face up, if one was; else the latest dealt (named nowhere)
                shown = [uid for uid in cards if uid in self.deal_state.face_up]
                if shown or cards:
                    self.dealing.expose(shown[-1] if shown else cards[-1], seat)
        elif key == "misdeal":
            if self.running:
                self.book.resolve_scope("hand", self.ts)
                self.void_hand()
        elif key == "declare_board" and seat is not None:
            self.deal_state.declared |= {seat}
        elif key == "last_hands":
            self.session_out(self.session.on_last_hands(self.ts))

    def _tag(self, device: str, event: TagEvent) -> None:
        self.devices.tag_from(device)
        self.read_ts = max(self.read_ts, event.ts)
        if (self.settings.chips is not None or is_chip_zone(event.zone)) and self.chips.chip_or_unknown(
            event.uid, event.zone, event.present
        ):
            return
        if event.present:
            self.cards.seen(event.uid, event.zone, event.face == "up")
        else:
            self.cards.unseen(event.uid, event.zone)

    def _river_actions_done(self) -> None:
        """With action inputs, the river's last action ends the betting: showdown."""
        money = self.result_state.money
        if (
            self.phase == "river"
            and money is not None
            and not self.result_state.chips_read
            and money.round_complete
            and money.to_act is None  # every action is reported: a check too
            and len(money.live) > 1  # (a fold input is the money's before the machine's)
        ):
            self.showdown()
