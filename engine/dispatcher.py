"""The dispatcher: the working copy one step mutates, its parts, and where each message goes.

:class:`Machine` holds everything the engine knows, as parts it composes (it inherits from no
class): the shared table (engine.table: settings, time, hand number, alert book, outputs) and one
state part per concern, each concern built around its part, the table and this dispatcher (its
way to the other parts and concerns: :meth:`Machine.attach_concerns`).
:func:`engine.step.step` copies it (shallow copies of small dicts; every value inside is
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

from datetime import datetime
from typing import TYPE_CHECKING, Final

from contract.cards import is_chip_zone
from contract.models import (
    ActionInput,
    BlindEvent,
    ButtonEvent,
    DealerBadgeInput,
    DealerInput,
    DeviceEvent,
    FaultEvent,
    HandAction,
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
    PayloadRejected,
    Received,
    TimeReached,
)
from engine.betting.derived import BettingAnswers
from engine.betting.terms import Clear
from engine.board import Board, BoardState
from engine.cards import Cards, CardState
from engine.chips import LIFT_S, Chips, ChipState
from engine.dealing import Dealing, DealState
from engine.devices import NOT_ADMITTED, Devices, DeviceState
from engine.handling import Handling, HandlingState
from engine.hands import HandPart, Hands, HandSensors, Rounds
from engine.results import Results, ResultState
from engine.seqtrack import received_ts
from engine.sequences import Sequences, SequenceState
from engine.session import NEVER, Session, SessionPart
from engine.table import Table

if TYPE_CHECKING:
    from engine.betting.terms import Verdicts

#: Actions kept between hands for the coming one (a hand's result lists at most 4,096).
COMING_LIMIT: Final = 4096


class Machine:
    """The engine's working state and its dispatcher (see the module docstring)."""

    def __init__(self, settings: EngineSettings) -> None:
        #: What every concern shares: the time, the hand number, the alert book, the outputs.
        self.table = Table(settings)
        # One state part per concern (each concern, built around its part by attach_concerns,
        # is held next to it):
        #: devices: their sequence numbers and the gap fill (engine.sequences)
        self.device_seqs = SequenceState()
        self.sequences: Sequences
        #: devices: their health, who may say what, tracking (engine.devices)
        self.device_state = DeviceState()
        self.devices: Devices
        #: the hand's course and the sensors it starts from (engine.hands)
        self.hand_part = HandPart()
        self.hands: Hands
        self.rounds: Rounds
        self.sensors: HandSensors
        #: the cards on the table (engine.cards)
        self.card_state = CardState()
        self.cards: Cards
        #: chips: where each chip tag is read and is, chips lifted, unknown tags (engine.chips)
        self.chip_state = ChipState()
        self.chips: Chips
        #: the deal and the decks (engine.dealing)
        self.deal_state = DealState()
        self.dealing: Dealing
        #: the board and the burns (engine.board)
        self.board_state = BoardState()
        self.board: Board
        #: the hand's money and result, and what lasts across hands (engine.results)
        self.result_state = ResultState()
        self.results: Results
        #: card handling: a fold half done, live hole cards read nowhere (engine.handling)
        self.handling_state = HandlingState()
        self.handling: Handling
        #: the session around the hands (engine.session)
        self.session_part = SessionPart()
        self.session: Session
        #: Not state: the betting core's answers remembered between calls (engine.betting.derived),
        #: shared by the machine's copies (each answer is found again by the state it came from).
        self.answers = BettingAnswers()
        #: Not state: the hand actions built for hand results (immutable, most recur from hand
        #: to hand: each built once, engine.results.Results), shared by the machine's copies.
        self.hand_actions: dict[tuple[str, int, str, int], HandAction] = {}
        self.reset_hand()
        self.attach_concerns()

    def copy(self) -> Machine:
        """A working copy for the next step: each part copied (shallow copies of small dicts;
        every value inside is immutable), the concerns built around the copies."""
        new = self.snapshot()
        new.attach_concerns()
        return new

    def snapshot(self) -> Machine:
        """A copy of the parts alone, without the concerns: what a holder keeps only to make a
        working copy of later (:meth:`copy`; engine.step.Engine's base), never used itself.

        Why: each concern refers back to its machine, a cycle of references that only the
        garbage collector frees; a snapshot has none, and goes as soon as it is dropped (with
        every working copy left to the collector, collections took 3.6 % of the engine's CPU
        time with chips, against 0.02 % before the concerns)."""
        new = Machine.__new__(Machine)
        new.table = self.table.copy()
        new.device_seqs = self.device_seqs.copy()
        new.device_state = self.device_state.copy()
        new.hand_part = self.hand_part.copy()
        new.card_state = self.card_state.copy()
        new.chip_state = self.chip_state.copy()
        new.deal_state = self.deal_state.copy()
        new.board_state = self.board_state.copy()
        new.result_state = self.result_state.copy()
        new.handling_state = self.handling_state.copy()
        new.session_part = self.session_part.copy()
        new.answers = self.answers
        new.hand_actions = self.hand_actions
        return new

    def reset_hand(self) -> None:
        """A new hand (or a lost one forgotten): each part resets its hand's fields."""
        self.table.new_hand()
        self.hand_part.new_hand()
        self.deal_state.new_hand()
        self.card_state.new_hand()
        self.board_state.new_hand()
        self.result_state.new_hand()
        self.chip_state.unknown = {}
        self.handling_state.reset()

    def session_out(self, verdicts: Verdicts) -> None:
        """The session part's findings as alerts: one per key, kept across hands (scope
        ``session``) until the part clears it."""
        table = self.table
        book = table.book
        for verdict in verdicts:
            if isinstance(verdict, Clear):
                if book.meta:
                    book.resolve_scope("session", table.ts, verdict.key)
                continue
            existing = book.find(verdict.code, verdict.key)
            if existing is None:
                table.raise_alert(
                    verdict.code, verdict.message, verdict.seat, scope="session", key=verdict.key
                )
            elif book.active[existing].message != verdict.message:
                book.update(existing, table.ts, message=verdict.message)

    def session_chip(self, uid: str, value: int, src: str | None, dst: str | None) -> bool:
        """A chip moved that the session follows (:meth:`Session.touches`: the caller asks
        first, a call saved on most chip moves); True when the chip plays no part in the hand
        (added to a stack during it)."""
        session = self.session
        won = uid in self.result_state.award_chips or uid in self.result_state.hand_awards
        skip, verdicts = session.on_chip(uid, value, src, dst, won=won, now=self.table.clock)
        self.session_out(verdicts)
        return skip

    #: The attributes that hold concern objects, not state: rebuilt around the state's parts.
    CONCERNS: Final = frozenset(
        {"sequences", "devices", "hands", "rounds", "sensors", "cards", "chips", "dealing", "board"}
        | {"results", "handling"}
        | {"session"}
    )
    #: The attributes that are neither state nor concerns: answers and models remembered (not stored).
    REMEMBERED: Final = frozenset({"answers", "hand_actions"})

    def attach_concerns(self) -> None:
        """Build the concern objects around this machine's state parts (a new machine, a copy,
        a state restored from data)."""
        table = self.table
        self.sequences = Sequences(self.device_seqs, table.commands, table.gap_wait)
        self.devices = Devices(self.device_state, table, self)
        self.hands = Hands(self.hand_part, table, self)
        self.rounds = Rounds(self.hand_part, table, self)
        self.sensors = HandSensors(self.hand_part, table, self)
        self.cards = Cards(self.card_state, table, self)
        self.chips = Chips(self.chip_state, table, self)
        self.dealing = Dealing(self.deal_state, table, self)
        self.board = Board(self.board_state, table, self)
        self.results = Results(self.result_state, table, self)
        self.handling = Handling(self.handling_state, table, self)
        self.session = Session(self.session_part, self.table.settings.session)

    def handle(self, received: Received) -> None:
        """Take one received message, as one step (on a working copy: engine.step); alert
        changes accumulate in ``self.table.book.changes``, device commands in
        ``self.table.commands`` (the lists of the last step's outputs were emptied when it
        ended). While a gap is being filled the message waits (engine.sequences), and is
        applied in its place once the gap is closed."""
        card_state = self.card_state
        if card_state.changed:  # a new step: no card dict changed yet (the seats' cards change
            # only with the others, so both are false already after most steps: no write)
            card_state.changed = self.cards.seats_changed = False
        if type(received) is DeviceEventReceived:
            event = received.event
            device = received.device
            if type(event) is TagEvent:
                # nearly every message: a reader whose tag reads were admitted in this session
                # is not asked again (engine.devices: who may say what)
                devices = self.devices
                session = event.session  # (read once: a model's field is a slow attribute)
                if devices.tag_sessions.get(device, NOT_ADMITTED) != session and not devices.admitted(
                    received
                ):
                    return  # refused, reported
                if self.device_seqs.held:
                    self._hold(received)
                else:
                    self._apply_tag(device, event, session, received)
                return
            if not self.devices.admitted(received):
                return  # refused (engine.devices: who may say what), reported
        elif type(received) is DeviceStatusReceived and not self.devices.admitted(received):
            return
        if type(received) is TimeReached:
            self._time(received.now)
        elif self.device_seqs.held:
            self._hold(received)
        else:
            self._apply(received)

    def _apply_tag(self, device: str, event: TagEvent, session: int | None, received: Received) -> None:
        """:meth:`_apply` of a tag read (nearly every message: one path, the chip looked up
        once); ``session``: the event's. (Each field of the event is read once: a model's field
        is a slow attribute, about 440 instructions a read; callgrind.)"""
        table = self.table
        chips = table.settings.chips
        uid = event.uid
        value = chips.value(uid) if chips is not None else None
        if value is None and self.chip_state.lifted:
            # a card follows the chips lifted before it: they have gone
            self.chips.settle_lifted(everything=True)
        ts = table.ts = event.ts
        if ts > table.clock:  # noqa: PLR1730 - max() is a call, on the path of every read
            table.clock = ts
        sequences = self.sequences
        taken = sequences.take(device, event.seq, session, table.clock)
        if sequences.findings:
            self.devices.sequence_findings()
        if taken is None:
            sequences.wait(received)  # it shows a gap: it waits for the fill
        elif taken:  # (counted by the sequences as taken)
            if value is not None and device in self.device_state.readers:
                if ts > table.read_ts:  # noqa: PLR1730 - (as above)
                    table.read_ts = ts
                self.chips.tag(uid, event.zone, event.present, value)
            else:
                self._tag(device, event, uid, ts)
        self._after_apply()

    def _hold(self, received: Received) -> None:
        """While gaps are open (engine.sequences): the message waits; once they are closed,
        what waited is applied in its order, until one opens a new gap (the rest waits again)."""
        table = self.table
        table.ts = received_ts(received)
        table.clock = max(table.clock, table.ts)
        self._release(self.sequences.hold(received, table.clock))

    def _release(self, released: list[Received]) -> None:
        """Report what the gap fill found, then apply what it released, in its order."""
        sequences = self.sequences
        if sequences.findings:
            self.devices.sequence_findings()
        for index, item in enumerate(released):
            self._apply(item)
            if self.device_seqs.gaps:
                sequences.hold_back(released[index + 1 :], self.table.clock)
                return

    def _time(self, now: datetime) -> None:
        """Event time ``now`` came with no message (engine.api.TimeReached): what it makes due is
        done as a message of that time would do it (the gap fill's asks, give-ups and release
        while messages are held; else the chip corrections awaiting their evidence and the
        session's clock), and nothing else. A time the clock has passed already is nothing new."""
        table = self.table
        if now <= table.clock:
            return
        table.ts = table.clock = now
        if self.device_seqs.held:
            self._release(self.sequences.review(now))
            return
        awaiting = self.result_state.awaiting
        if awaiting and now >= awaiting[0].due:
            self.results.evidence_due()
        if now >= self.session_part.due:
            self.session_out(self.session.on_time(now))

    def next_due(self) -> datetime | None:
        """The earliest event time at which time alone, with no message, changes something (a
        :class:`engine.api.TimeReached` of it then does): while messages are held, the gap fill's
        next ask, give-up or release; else the earlier of the session's next due time (a seat
        away too long, a level's end) and the time the chip corrections awaiting their evidence are
        judged. None: nothing. (The lifted chips, cards off the table and half-done folds are
        judged on the reader's own time, which only its reads bring: not here.)"""
        if self.device_seqs.held:
            return self.sequences.next_due()
        due = self.session_part.due
        awaiting = self.result_state.awaiting
        if awaiting and awaiting[0].due < due:
            due = awaiting[0].due
        return None if due == NEVER else due

    def _apply(self, received: Received) -> None:
        if self.chip_state.lifted and not self._is_chip_read(received):
            # a card, a key or an action follows the chips lifted before it: they have gone
            self.chips.settle_lifted(everything=True)
        self._apply_one(received)
        self._after_apply()

    def _after_apply(self) -> None:
        """What time and the message's effects made due: chips lifted long enough ago, cards
        off the table, half-done folds, the hand's result."""
        table = self.table
        lifted = self.chip_state.lifted
        if lifted and next(iter(lifted.values()))[1] <= table.read_ts - LIFT_S:
            self.chips.settle_lifted()  # (its own first test, here: the oldest lifted chip is due)
        handling = self.handling_state
        if handling.off_table:
            self.handling.timers()
        if handling.half_folds:
            self.handling.half_folds_due(-1)  # -1: those older than the reaction time
        results = self.result_state
        if self.hand_part.hand_over and not results.result_sent:
            self.results.maybe_finish()
        awaiting = results.awaiting
        if awaiting and table.clock >= awaiting[0].due:  # chip corrections' evidence now in
            self.results.evidence_due()
        if table.clock >= self.session_part.due:  # a seat away too long, a tournament level's end
            self.session_out(self.session.on_time(table.clock))

    def _is_chip_read(self, received: Received) -> bool:
        if not isinstance(received, DeviceEventReceived):
            return isinstance(received, DeviceStatusReceived)
        event = received.event
        chips = self.table.settings.chips
        return isinstance(event, TagEvent) and chips is not None and chips.value(event.uid) is not None

    def _apply_one(self, received: Received) -> None:
        table = self.table
        if isinstance(received, DeviceEventReceived):
            table.ts = received.event.ts
            table.clock = max(table.clock, table.ts)
            sequences = self.sequences
            event = received.event
            taken = sequences.take(received.device, event.seq, event.session, table.clock)
            if sequences.findings:
                self.devices.sequence_findings()
            if taken is None:
                sequences.wait(received)  # it shows a gap: it waits for the fill
            elif taken:
                self._device_event(received.device, received.event)
        elif isinstance(received, DeviceStatusReceived):
            table.ts = received.status.ts
            newer = table.ts > table.clock
            table.clock = max(table.clock, table.ts)
            device, status = received.device, received.status
            sequences = self.sequences
            if sequences.status_gap(device, status, table.clock) or sequences.reconnected(
                device, status, newer, self.device_state.states.get(device), table.clock
            ):
                sequences.wait(received)  # what it announces is coming: it waits
            else:
                self.devices.status(device, status)
        elif isinstance(received, InputReceived):
            table.ts = received.input.ts
            table.clock = max(table.clock, table.ts)
            self.devices.input_seen(received.input)
            self._input(received.input)
        elif isinstance(received, PayloadRejected):
            table.ts = received.received
            table.clock = max(table.clock, table.ts)
            self.devices.rejected(received)

    def _device_event(self, device: str, event: DeviceEvent) -> None:
        table = self.table
        if isinstance(event, TagEvent):  # most events: tag reads
            self._tag(device, event, event.uid, event.ts)
            return
        if not isinstance(event, FaultEvent):
            self.devices.other_from(device)
        if not isinstance(event, FaultEvent):
            table.book.resolve_scope("device", table.ts, f"{device}#fault")
        if isinstance(event, KeyEvent):
            self._key(event.key, event.seat, event.alert)
        elif isinstance(event, SeatEvent):
            empty = self.sensors.seat_sensed(event.seat, event.occupied)
            self.session_out(self.session.on_seat(event.seat, event.occupied, table.ts, empty=empty))
        elif isinstance(event, ButtonEvent):
            self.sensors.button_moved(event.seat)
        elif isinstance(event, BlindEvent):
            self.sensors.blind_sensed(event.seat, event.present)
            if event.present:
                self.dealing.blind_posted(event.seat)
        elif isinstance(event, ShuffleCompleteEvent):
            untracked, hand = self.device_state.untracked, self.hand_part
            if untracked and (not hand.running or event.deck in (hand.hand_deck, hand.misdeal_deck)):
                self.hands.resume()  # the deck of the hand not tracked was reshuffled: it is over
            self.dealing.shuffle_complete(device, event)
        elif isinstance(event, ShufflingEvent):
            self.dealing.shuffling()
        elif isinstance(event, FaultEvent):
            self.devices.fault(device, event)

    def _input(self, item: DealerInput) -> None:
        table = self.table
        if isinstance(item, KeyInput):
            self._key(item.key, item.seat, item.alert)
        elif isinstance(item, ActionInput):
            self._action(item)
        elif isinstance(item, DealerBadgeInput):
            self.session_out(self.session.on_dealer(item.dealer, table.ts))
        elif isinstance(item, LevelStartInput):
            self.session_out(self.session.on_level_start(table.ts))

    def _action(self, item: ActionInput) -> None:
        table = self.table
        hand = self.hand_part
        if not hand.running and (hand.phase != "misdeal" or item.action == "post"):
            # Between the previous hand's end (or its misdeal) and the deal: the coming hand's
            # (contract: keys are optional, a table without a keypad posts before the first card)
            if self.rounds.keep_coming(item, COMING_LIMIT):
                self._too_many_coming()
            return
        self.rounds.acted(item.seat, item.action)
        self.board.action(item.action)  # action taken on an unburned street: it stands
        if table.settings.stakes is not None:
            self.results.action(item)
            if item.action == "fold":
                self.result_state.folded |= {item.seat}
            self._river_actions_done()
        elif table.settings.action_feed and hand.running:
            self.rounds.bet(item.seat, item.action, item.amount)
        if item.action == "fold":
            self.hands.fold(item.seat)
            self.hands.check_one_left()

    def _too_many_coming(self) -> None:
        """More actions between hands than a hand has: the oldest are not kept (said once a
        hand, as a ``bad_payload`` on the inputs)."""
        table = self.table
        message = (
            f"More than {COMING_LIMIT} actions arrived between hands: only the latest "
            f"{COMING_LIMIT} are kept for the coming hand."
        )
        if table.book.find("bad_payload", "coming-actions") is None:
            table.raise_alert("bad_payload", message, scope="hand", key="coming-actions")

    def start_hand(self, *, by_key: bool) -> None:
        """A new hand starts (engine.hands), then takes the actions that came before it."""
        self.hands.begin_hand(by_key=by_key)
        for item in self.rounds.take_coming():  # the posts and actions that came before it, in their order
            self._action(item)

    def start_by_card(self, uid: str, seat: int) -> bool:
        """A card landed on a seat with no hand running: it starts one (or is refused)."""
        hand = self.hand_part
        if hand.phase == "misdeal" and not self.hands.retrieved(
            f"Dealing went on after the misdeal: a card was dealt to seat {seat}", uid
        ):
            return False
        self.start_hand(by_key=False)
        if hand.phase != "dealing":
            self.hands.void_card(uid)  # voided at once (button misplaced): it must be retrieved
            return False
        return True

    def _key(self, key: str, seat: int | None, alert: str | None = None) -> None:
        table = self.table
        hand = self.hand_part
        if key == "ack":
            table.book.acknowledge(table.ts, seat, alert)
        elif key == "new_hand":
            if self.device_state.untracked:
                self.hands.resume()  # events of the last hand were lost: start clean
                self.start_hand(by_key=True)
                return
            if hand.phase == "dealing" and not self.deal_state.dealt:
                return  # pressed twice
            if hand.phase == "misdeal" and not self.hands.retrieved("A new hand was started"):
                return
            self.start_hand(by_key=True)
        elif key == "round_complete":
            if not self.result_state.chips_read:  # where chips are read, the sweep ends the round
                self.rounds.round_complete()
        elif key == "all_in":
            if seat is not None:
                self.results.all_in(seat)
            # A seat all in where the betting is followed closes nothing by itself: the betting
            # core says when nobody is left to bet (engine.chips, the run-out).
            if hand.running and (seat is None or not self.results.followed()):
                self.hands.betting_over()
                if len(self.board.live()) >= 5:
                    self.hands.showdown()
        elif key == "exposed":
            if seat is not None and hand.phase in ("dealing", "preflop") and not self.board.started():
                cards = self.card_state.seat_cards.get(seat, ())
                # the card read face up, if one was; else the latest dealt (named nowhere)
                shown = [uid for uid in cards if uid in self.deal_state.face_up]
                if shown or cards:
                    self.dealing.expose(shown[-1] if shown else cards[-1], seat)
        elif key == "misdeal":
            if hand.running:
                table.book.resolve_scope("hand", table.ts)
                self.hands.void_hand()
        elif key == "declare_board" and seat is not None:
            self.deal_state.declared |= {seat}
        elif key == "last_hands":
            self.session_out(self.session.on_last_hands(table.ts))

    def _tag(self, device: str, event: TagEvent, uid: str, ts: datetime) -> None:
        """A tag read that is not a chip's move (``uid`` and ``ts``: the event's, read already;
        each field is read once, as in :meth:`_apply_tag`)."""
        table = self.table
        if device not in self.device_state.readers:
            self.devices.tag_from(device)
        if ts > table.read_ts:  # noqa: PLR1730 - max() is a call, on the path of most reads
            table.read_ts = ts
        zone, present = event.zone, event.present
        if (table.settings.chips is not None or is_chip_zone(zone)) and self.chips.chip_or_unknown(
            uid, zone, present
        ):
            return
        if present:
            self.cards.seen(uid, zone, event.face == "up")
        else:
            self.cards.unseen(uid, zone)

    def _river_actions_done(self) -> None:
        """With action inputs, the river's last action ends the betting: showdown."""
        money = self.result_state.money
        if (
            self.hand_part.phase == "river"
            and money is not None
            and not self.result_state.chips_read
            and money.round_complete
            and money.to_act is None  # every action is reported: a check too
            and len(money.live) > 1  # (a fold input is the money's before the machine's)
        ):
            self.hands.showdown()
