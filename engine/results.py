"""The hand's money from start to result: the betting core begun at the deal, told the streets
and the hands tabled, and the hand result built when the hand ends.

A hand ends (contract, "Chips, betting and hand results") when its pots have been pushed (the
``pot`` zone is empty) and its cards have left the seats and the board, or at the latest when
the next hand starts; its result is published then. A push the engine found wrong keeps the
hand open until it is put right (its alert resolved) or the next hand starts, so the result
shows what was finally pushed.

The concern is :class:`Results`, over its part :class:`ResultState`; the chips (engine.chips)
tell it each chip move, the hand's rules (engine.hands), the deal and the board tell it the
rounds, folds, streets, hands tabled, and the hand's start and end. (One concern in one file,
long because the betting core's value is begun, fed and finished here as one thing.)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final, TypeAlias

from contract.cards import zone_bet_seat, zone_stack_seat
from contract.models import (
    ActionInput,
    HandAction,
    HandOutcome,
    HandResult,
    PotResult,
    SeatAmount,
    ShownHand,
)
from contract.pydantic_adapter import construct_valid
from engine.betting.hand import Money
from engine.betting.terms import Clear, Verdicts
from engine.chips import chip_seat
from engine.streets import RUNNING, STREET_NAMES

if TYPE_CHECKING:
    from engine.dispatcher import Machine
    from engine.table import Table

#: Push findings: while one is active the hand stays open for the dealer to put it right.
PUSH_CODES: Final = frozenset({"pot_awarded_wrong", "split_wrong", "odd_chip_wrong", "rake_wrong"})
#: What each push finding left wrong, for the remedy not followed when the next hand starts.
PUSH_WRONG: Final = {
    "pot_awarded_wrong": "a pot awarded to the wrong seat",
    "split_wrong": "a pot split wrong",
    "odd_chip_wrong": "the odd chip on the wrong seat",
    "rake_wrong": "a wrong rake",
}
#: Chip findings whose remedy is a correction made before play goes on (docs/rules.md, "Chips,
#: pots and showdown"): the correction not made when the next street is dealt (the round over)
#: or the next hand starts is a remedy not followed (docs/engine.md, "Remedies followed to their
#: end"). Each says what stayed undone, ``{seat}`` the seat of the finding.
CORRECTIONS: Final = {
    "bet_below_minimum": "seat {seat}'s bet below the minimum was completed",
    "raise_below_minimum": "seat {seat}'s raise below the minimum was made a full raise or a call",
    "bet_over_limit": "seat {seat}'s bet over the limit was reduced to the limit",
    "chips_taken_back": "the chips seat {seat} took back were put back in its betting area",
    "chips_on_vacant_seat": "the chips in the betting area of vacant seat {seat} were removed",
    "uncalled_bet_not_returned": "the uncalled part of seat {seat}'s bet was returned to it",
    "fold_incomplete": "the other card of seat {seat}'s fold was retrieved into the muck",
    "unknown_chip": "the tag that is no chip of this table was taken off the table",
}
#: A correction made only by taking a tag off the table, which a reader reports after several
#: sweeps without it (seconds: docs/drivers.md, the presence tracker): a street dealt right after
#: it would come before its evidence (the demo's dealer did so), so it is judged when the next
#: hand starts only. The others show as chips (or a card) arriving in a zone, at once.
OFF_THE_TABLE: Final = frozenset({"unknown_chip"})
#: Corrections made by taking chips off the table where no stack is read (the excess of a bet,
#: a vacant seat's chips, the uncalled part from the pot): their absence too is reported only
#: after the reader's sweeps without them, so at the next street they are judged once that
#: evidence could have come (:class:`Awaiting`). Where the chips arrive in a read stack the
#: correction shows at once, and is then already made when the judgement comes.
REMOVED_LATE: Final = frozenset({"bet_over_limit", "chips_on_vacant_seat", "uncalled_bet_not_returned"})
#: How long after a street (event time) a chip taken off the table before it may still be
#: reported absent: about 1.8 s from a clean reader, about 6 s from one missing a fifth of its
#: reads (docs/drivers.md, the presence tracker's K sweeps).
GONE_S: Final = timedelta(seconds=6)
#: Distinct hand actions an engine keeps built for its results (Results.actions).
ACTIONS_KEPT: Final = 4096
#: What each correction not made must now be (the remedy of the ``remedy_not_followed``).
CORRECTION_STEPS: Final = {
    "bet_below_minimum": "Complete the bet to the minimum (the big blind).",
    "raise_below_minimum": "Make the raise a full raise (50 % or more of a raise) or a call (less).",
    "bet_over_limit": "Reduce the bet to the limit.",
    "chips_taken_back": "The chips released stay: put them back in the betting area.",
    "chips_on_vacant_seat": "Remove the chips from the vacant seat's betting area.",
    "uncalled_bet_not_returned": "Return the uncalled chips to the player who bet them.",
    "fold_incomplete": "Put the folded seat's other card in the muck.",
    "unknown_chip": "Take the tag off the table: it is not a chip of this table.",
}


#: A chip finding still open: (its key, its code, its seat).
Correction: TypeAlias = tuple[str, str, int | None]


@dataclass(frozen=True, slots=True)
class Awaiting:
    """Chip findings of :data:`REMOVED_LATE` open when a street was dealt (``done``: "The turn
    was dealt"), judged at the first message at or after ``due``, or when the next hand starts
    if sooner. ``money`` is the betting core as it was before the street: the chips reported
    gone off the table meanwhile are told to it (they left before the street), and the findings
    it then clears (``cleared``, by key) were corrected in time."""

    done: str
    due: datetime
    money: Money
    found: tuple[Correction, ...]
    cleared: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class LeftOpen:
    """What the last hand left wrong when the next one starts: its push findings' codes, its
    chip findings still open, a fouled deck's chips left in the pot (judged once the new hand
    has begun)."""

    push: tuple[str, ...]
    corrections: tuple[Correction, ...]
    void_pot: bool  # a fouled deck's chips still in the pot


@dataclass(slots=True)
class ResultState:
    """The hand's money and result. Every value is immutable or replaced when it changes (a
    copy shares them), but ``owners``, updated in place (a copy copies it)."""

    #: The betting core (engine.betting), once the deal is complete; its result is out (done),
    #: the last street it was told of.
    money: Money | None = None
    done: bool = False
    street: int = 0
    #: Chip moves, action inputs were seen this hand; action inputs before the deal ended.
    chips_read: bool = False
    actions_seen: bool = False
    early_inputs: tuple[ActionInput, ...] = ()
    #: The betting core's findings raised: finding key -> alert id.
    alerts: dict[str, str] = field(default_factory=dict)
    #: Seats told folded; chips pushed from the pot to a seat this hand.
    folded: frozenset[int] = frozenset()
    hand_awards: frozenset[str] = frozenset()
    #: Seats with both cards face up, and hands tabled to the betting core, in that order.
    face_up_seats: tuple[int, ...] = ()
    tabled: tuple[int, ...] = ()
    result_sent: bool = False
    showdown_reached: bool = False
    #: Across hands: chips pushed to winners of earlier hands, not in play until taken off the
    #: table; chips gathered from a betting area into the pot before the betting core began
    #: (antes the dealer collects before the deal): chip -> the seat that put it in.
    award_chips: frozenset[str] = frozenset()
    gathered: dict[str, int] = field(default_factory=dict)
    #: This hand's chips swept from a betting area into the pot: chip -> the seat that wagered
    #: it (a fouled deck's chips go back to them). Updated in place: a chip of every sweep adds
    #: one, and a new dict each time copied the hand's tens of them.
    owners: dict[str, int] = field(default_factory=dict)
    #: Corrections judged once their evidence could have come (:class:`Awaiting`), oldest first.
    awaiting: tuple[Awaiting, ...] = ()

    def copy(self) -> ResultState:
        # (every field, in order: dataclasses.replace looks each one up by name, at every copy)
        return ResultState(
            self.money,
            self.done,
            self.street,
            self.chips_read,
            self.actions_seen,
            self.early_inputs,
            self.alerts,
            self.folded,
            self.hand_awards,
            self.face_up_seats,
            self.tabled,
            self.result_sent,
            self.showdown_reached,
            self.award_chips,
            self.gathered,
            self.owners.copy(),
            self.awaiting,
        )

    def new_hand(self) -> None:
        """A new hand: nothing of its money yet (what lasts across hands is kept)."""
        self.money, self.done, self.street = None, False, 0
        self.chips_read = self.actions_seen = False
        self.early_inputs, self.alerts, self.folded, self.hand_awards = (), {}, frozenset(), frozenset()
        self.face_up_seats, self.tabled = (), ()
        self.result_sent = self.showdown_reached = False
        self.owners = {}
        self.awaiting = ()


class Results:
    """Begin, feed and finish the betting core; the hand result (see the module docstring)."""

    __slots__ = ("asked", "asked_settled", "machine", "state", "table")

    def __init__(self, state: ResultState, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table  # the time, the settings, the alerts
        self.machine = machine  # the hand followed, its cards and board, the session
        # The money value last asked whether it is settled, and the answer (a frozen value: it
        # stays so). A chip moved is asked about twice, after the move and at the step's end,
        # and a settled one at every card read until the hand's cards are gone (half the asks
        # with chips); not part of the state.
        self.asked: Money | None = None
        self.asked_settled = False

    def _action(self, street: str, seat: int, action: str, amount: int) -> HandAction:
        """A hand action of the result: most recur from hand to hand (the posts, the checks, the
        calls of a blind), each is built once and shared (the machine's ``hand_actions``, bounded
        by ``ACTIONS_KEPT``: amounts vary without end)."""
        key = (street, seat, action, amount)
        built = self.machine.hand_actions
        found = built.get(key)
        if found is None:
            if len(built) >= ACTIONS_KEPT:
                built.clear()
            found = built[key] = construct_valid(
                HandAction, {"street": street, "seat": seat, "action": action, "amount": amount}
            )
        return found

    # -- when the betting is followed ---------------------------------------------------------

    def followed(self) -> bool:
        """The engine knows the betting of this hand: chips are read, or actions arrived."""
        state = self.state
        return state.money is not None and (state.chips_read or state.actions_seen)

    def _begin(self) -> None:
        """The deal is complete: the betting core starts with what lies in the betting areas
        (the blinds and antes posted before the deal) and the action inputs already received."""
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        stakes = table.settings.stakes
        if stakes is None or state.money is not None or state.done:
            return
        stakes = machine.session.hand_stakes(stakes)  # a tournament: the level's blinds and ante
        seats = tuple(sorted(hand.in_hand or set(machine.deal_state.dealt_seats)))
        if len(seats) < 2:
            return
        money = Money.begin(
            stakes=stakes,
            seats=seats,
            button=hand.hand_button,
            table_seats=table.settings.seats,
            profile=table.profile,
            odd_chip=table.settings.odd_chip,
            no_bet_shows_first=table.settings.no_bet_shows_first,
        )
        chips = table.settings.chips
        verdicts: list[object] = []
        if chips is not None:
            for uid, zone in sorted(machine.chip_state.at.items(), key=lambda item: item[1]):
                # the betting areas (blinds and antes) and, where read, the stacks (an all in
                # is a stack emptied)
                if (
                    uid in state.award_chips
                    or uid in machine.session.state.rebuy_chips
                    or (zone_bet_seat(zone) is None and zone_stack_seat(zone) is None)
                ):
                    continue
                value = chips.value(uid)
                if value is None:
                    continue
                state.chips_read = True
                money, found = money.move(value, None, zone, machine.answers)
                verdicts.extend(found)
            for uid, seat in sorted(state.gathered.items()):
                value = chips.value(uid)
                if value is None or machine.chip_state.at.get(uid) != "pot":
                    continue
                # an ante gathered before the deal: put in by its seat, then into the pot
                state.chips_read = True
                for src, dst in ((None, f"bet:{seat}"), (f"bet:{seat}", "pot")):
                    money, found = money.move(value, src, dst, machine.answers)
                    verdicts.extend(found)
            state.gathered = {}
        state.money = money
        self._verdicts(tuple(verdicts))  # type: ignore[arg-type]
        for item in state.early_inputs:
            self.action(item)
        state.early_inputs = ()
        money, found = state.money.dealt()
        state.money = money
        self._verdicts(found)
        self._progress()

    def action(self, item: ActionInput) -> None:
        """An ``action`` input for the betting core (kept until the deal is complete)."""
        state, table = self.state, self.table
        if table.settings.stakes is None or state.done:
            return
        if state.money is None:
            state.early_inputs = (*state.early_inputs, item)
            return
        state.actions_seen = True
        money, verdicts = state.money.action(item.seat, item.action, item.amount)
        state.money = money
        self._verdicts(verdicts)
        self._progress()

    def fold(self, seat: int) -> None:
        state = self.state
        if state.money is None or state.done or seat in state.folded:
            return
        state.folded |= {seat}
        money, verdicts = state.money.fold(seat)
        state.money = money
        self._verdicts(verdicts)
        self._progress()

    def muck(self, seat: int) -> None:
        state = self.state
        if state.money is None or state.done:
            return
        state.money = state.money.muck(seat)

    def all_in(self, seat: int, *, tabled: bool = False) -> None:
        state = self.state
        if state.money is None or state.done:
            return
        money, verdicts = state.money.all_in(seat, tabled=tabled)
        state.money = money
        self._verdicts(verdicts)
        self._progress()

    def street(self, street: int) -> bool:
        """The first card of ``street`` (1 flop, 2 turn, 3 river): True when the betting core
        saw the previous round complete (a check moves nothing: checks are inferred), and then
        tells it the round is over. A premature street is not told: its betting goes on."""
        state = self.state
        money = state.money
        if money is None or state.done or not self.followed():
            return False
        if street <= state.street:
            return True
        if not (money.round_complete or money.run_out):
            return False
        done = f"The {STREET_NAMES[street]} was dealt"
        now: list[Correction] = []
        late: list[Correction] = []
        for found in self._open():
            if found[1] in REMOVED_LATE:
                late.append(found)  # judged once its evidence could have come
            elif found[1] not in OFF_THE_TABLE:
                now.append(found)
        if late and not self.table.reacting():
            state.awaiting = (*state.awaiting, Awaiting(done, self.table.clock + GONE_S, money, tuple(late)))
        self._corrections(done, tuple(now))
        money, verdicts = money.street(street)
        state.money = money
        state.street = street
        self._verdicts(verdicts)
        return True

    def _open(self) -> tuple[Correction, ...]:
        """The chip findings of :data:`CORRECTIONS` still open and not yet judged (a finding
        left open at the next street is not judged again at the next hand): (finding key, code,
        seat)."""
        table, machine = self.table, self.machine
        active, judged = table.book.active, table.nf_keys
        if self.state.awaiting:  # (being judged already)
            judged = judged | {f"correct:{f[0]}" for waiting in self.state.awaiting for f in waiting.found}
        found = []
        # the betting core's findings, the handling's (a fold half done), the foreign tags'
        held = [
            *self.state.alerts.items(),
            *machine.handling_state.alerts.items(),
            *((f"unknown:{uid}", a) for uid, a in machine.chip_state.unknown.items()),
        ]
        for key, alert_id in sorted(held):
            alert = active.get(alert_id)
            if alert is not None and alert.code in CORRECTIONS and f"correct:{key}" not in judged:
                found.append((key, alert.code, alert.seat))
        return tuple(found)

    def _corrections(self, done: str, found: tuple[Correction, ...] | None = None) -> None:
        """The next step (``done``: what the dealer did) came while a chip finding of
        :data:`CORRECTIONS` was still open (``found``, else those open now): its correction was
        not made. Not judged within the dealer's reaction time of a critical alert."""
        if self.table.reacting():
            return
        self._not_corrected(done, self._open() if found is None else found)

    def _not_corrected(self, done: str, found: tuple[Correction, ...]) -> None:
        """Each of ``found`` not corrected when the dealer did ``done``: a remedy not followed."""
        table = self.table
        for key, code, seat in found:
            table.not_followed(
                f"correct:{key}",
                f"{done} before {CORRECTIONS[code].format(seat=seat)}.",
                (CORRECTION_STEPS[code],),
                seat,
                of=code,
            )

    def evidence_due(self) -> None:
        """A message at or after the due time of the oldest :class:`Awaiting` (engine.dispatcher):
        the chips reported read nowhere before it have gone, and every judgement due is made."""
        state, table = self.state, self.table
        self.machine.chips.settle_lifted(before=state.awaiting[0].due)
        while state.awaiting and state.awaiting[0].due <= table.clock:
            self._judge_awaiting(state.awaiting[0])
            state.awaiting = state.awaiting[1:]

    def _judge_awaiting(self, waiting: Awaiting) -> None:
        """The findings of ``waiting`` still open, and not cleared by the chips gone meanwhile,
        were not corrected before the street."""
        active, alerts = self.table.book.active, self.state.alerts
        self._not_corrected(
            waiting.done,
            tuple(f for f in waiting.found if alerts.get(f[0]) in active and f[0] not in waiting.cleared),
        )

    def _gone_before_street(self, gone: list[tuple[str, str]]) -> None:
        """Chips reported gone off the table while corrections await their evidence: told to the
        betting core as it was before each street, in case they left before it. A finding they
        clear there was corrected in time: its alert is resolved (the betting core that goes on
        has left that street's findings behind)."""
        chips = self.table.settings.chips
        updated, corrected = [], []
        for waiting in self.state.awaiting:
            money, cleared = waiting.money, set(waiting.cleared)
            for uid, left in gone:
                value = chips.value(uid) if chips is not None else None
                if value is not None:
                    money, verdicts = money.move(value, left, None, self.machine.answers)
                    cleared.update(v.key for v in verdicts if isinstance(v, Clear))
            corrected += [f[0] for f in waiting.found if f[0] in cleared and f[0] not in waiting.cleared]
            updated.append(replace(waiting, money=money, cleared=frozenset(cleared)))
        self.state.awaiting = tuple(updated)
        self._verdicts(tuple(Clear(key) for key in corrected))

    def _table(self, seat: int) -> None:
        """A hand tabled face up at showdown, in the order shown."""
        state, machine = self.state, self.machine
        money = state.money
        if money is None or state.done or seat in state.tabled:
            return
        cards = self._card_codes(machine.card_state.seat_cards.get(seat, ()))
        board = self._card_codes(machine.board.live())
        if len(cards) != 2:
            return
        state.tabled = (*state.tabled, seat)
        money, verdicts = money.table(seat, (cards[0], cards[1]), board)
        state.money = money
        self._verdicts(verdicts)

    def _card_codes(self, uids: tuple[str, ...]) -> tuple[str, ...]:
        table = self.table
        registry = table.settings.registry
        codes = []
        for uid in uids:
            card = registry.lookup(uid)
            if card is not None:
                codes.append(card.card)
        return tuple(codes)

    def card_face_up(self, seat: int) -> None:
        """Both hole cards of a seat face up: tabled at showdown (the river's betting done, or
        all in for the run-out)."""
        state, machine = self.state, self.machine
        hand = machine.hand_part
        cards = machine.card_state.seat_cards.get(seat, ())
        if len(cards) != 2 or not all(uid in machine.deal_state.face_up for uid in cards):
            return
        if seat not in state.face_up_seats:
            state.face_up_seats = (*state.face_up_seats, seat)
        money = state.money
        if money is None or state.done:
            return
        if hand.phase == "river" and self.followed() and money.round_complete:
            machine.hands.showdown()  # the hands are tabled: the river's betting is over
        elif hand.phase == "showdown":
            self._table(seat)
        elif (
            hand.phase in ("preflop", "flop", "turn")
            and self.followed()
            and not money.run_out
            and money.live <= set(state.face_up_seats)
        ):
            self._tabled_run_out(money)

    def _tabled_run_out(self, money: Money) -> None:
        """Every hand still in is tabled face up before the river: the players are all in
        (nobody tables a live hand with betting to come), which the chips alone cannot show where
        no stack is read and no all-in key was pressed. The seat that put in the most, and of
        those the last to act, may have chips left; the others are all in, a seat that did not
        match the highest bet (a short all in, taken for a short raise or a premature sweep until
        now) included."""
        put: dict[int, int] = {}
        last: dict[int, int] = {}
        for index, action in enumerate(money.actions):
            put[action.seat] = put.get(action.seat, 0) + action.amount
            last[action.seat] = index
        covering = max(money.live, key=lambda s: (put.get(s, 0), last.get(s, -1)))
        for seat in sorted(money.live - {covering}):
            self.all_in(seat, tabled=True)

    # -- chips moved (engine.chips) and the betting core's verdicts --------------------------------

    def chips_gone(self, gone: list[tuple[str, str]]) -> None:
        """Chips read nowhere have left the table (engine.chips: each with the zone it left)."""
        state, table = self.state, self.table
        chips = table.settings.chips
        if state.awaiting:
            self._gone_before_street(gone)
        # A winner collecting the chips pushed to him (out of a betting area after the betting)
        # moves them one by one; their moves add up, so a run of them from one betting area is
        # told to the betting core once, with their total: a collection is tens of chips.
        run_from: str | None = None
        run_total = 0
        for uid, left in gone:
            value = chips.value(uid) if chips is not None else None
            if value is None:
                continue
            if self._collected(uid, left):
                if left != run_from:
                    self._collect(run_from, run_total)
                    run_from, run_total = left, 0
                run_total += value
                if uid in state.hand_awards:
                    state.hand_awards -= {uid}  # collected by the winner: in play again once bet
                continue
            self._collect(run_from, run_total)
            run_from, run_total = None, 0
            self.chip_move(uid, value, left, None)
        self._collect(run_from, run_total)

    def _collected(self, uid: str, left: str) -> bool:
        """Whether a chip gone off the table from ``left`` is collected after the betting (a
        move the betting core takes in a total, see :meth:`chips_gone`)."""
        state = self.state
        money = state.money
        return (
            money is not None
            and not state.done
            and uid not in state.award_chips
            and zone_bet_seat(left) is not None
            and money.decided
        )

    def _collect(self, src: str | None, total: int) -> None:
        """Chips worth ``total`` collected off the table from betting area ``src`` (none: no run)."""
        if src is not None:
            self._tell_money(total, src, None)

    def chip_move(self, uid: str, value: int, src: str | None, dst: str | None) -> None:
        """One chip moved (engine.chips): the betting core interprets it, if a hand is followed."""
        state, machine = self.state, self.machine
        if machine.session.touches(uid, src, dst) and machine.session_chip(uid, value, src, dst):
            return  # added to a stack during the hand: it plays no part in it
        if uid in state.award_chips:
            # pushed to a winner at the end of an earlier hand: not in play until it has left
            # the table (a winner collecting his chips)
            if dst is None or zone_stack_seat(dst) is not None:
                state.award_chips -= {uid}
            return
        if dst == "pot" and src is not None and uid not in state.owners:
            owner = zone_bet_seat(src)
            if owner is not None:
                state.owners[uid] = owner
        hand = machine.hand_part
        if hand.phase == "misdeal" and dst is not None:
            self._void_chip(uid, src, dst)
        if (
            hand.hand_over
            and not state.result_sent
            and src is None
            and dst is not None
            and zone_bet_seat(dst) is not None
        ):
            # chips from a player's side into a betting area after the hand was decided: the
            # next hand's blinds; the last hand is over even with a wrong push left standing
            self.finish_hand()
        money = state.money
        if money is None or state.done or hand.phase == "misdeal":
            # between hands (a void hand's chips too: its action is void): what lies in the
            # betting areas is read at the next deal, and the antes gathered into the pot with
            # the seat that put them in
            seat = zone_bet_seat(src) if src is not None else None
            if dst == "pot" and seat is not None:
                state.gathered = {**state.gathered, uid: seat}
            elif uid in state.gathered:
                state.gathered = {u: s for u, s in state.gathered.items() if u != uid}
            return
        if src == "pot" and dst is not None and chip_seat(dst) is not None:
            state.hand_awards |= {uid}
        elif uid in state.hand_awards and (dst is None or zone_stack_seat(dst) is not None):
            state.hand_awards -= {uid}  # collected by the winner: in play again once bet
        self._tell_money(value, src, dst)

    def _void_chip(self, uid: str, src: str | None, dst: str) -> None:
        """A chip of a hand void by a fouled deck moved: it goes back to the seat that wagered
        it (docs/rules.md, ``fouled_deck``); to another seat's betting area or stack it is a
        remedy not followed (after the reaction time)."""
        table = self.table
        seat = chip_seat(dst)
        owner = self.state.owners.get(uid) or (zone_bet_seat(src) if src is not None else None)
        if (
            seat is None
            or owner is None
            or seat == owner
            or table.reacting()
            or table.book.find("fouled_deck") is None
        ):
            return
        table.not_followed(
            "fouled-chips",
            f"A chip wagered by seat {owner} in the hand void by the fouled deck went to seat {seat}.",
            ("Return every chip of the void hand to the player who wagered it.",),
            seat,
            of="fouled_deck",
        )

    def _void_pot(self) -> bool:
        """The void hand's chips still in the pot (a fouled deck's: they go back)."""
        at = self.machine.chip_state.at
        return any(at.get(uid) == "pot" for uid in self.state.owners)

    def _tell_money(self, value: int, src: str | None, dst: str | None) -> None:
        """Chips worth ``value`` moved: the betting core's verdicts as alerts, and what follows."""
        state = self.state
        money = state.money
        if money is None:
            return
        state.chips_read = True
        money, verdicts = money.move(value, src, dst, self.machine.answers)
        state.money = money
        if verdicts:  # (most chip moves find nothing: a call saved)
            self._verdicts(verdicts)
        self._progress()

    def _verdicts(self, verdicts: Verdicts) -> None:
        state, table = self.state, self.table
        machine = self.machine
        for verdict in verdicts:
            if isinstance(verdict, Clear):
                alert = state.alerts.get(verdict.key)
                if alert is not None:
                    table.book.resolve(alert, table.ts)
                    state.alerts = {k: a for k, a in state.alerts.items() if k != verdict.key}
                continue
            existing = state.alerts.get(verdict.key)
            remedy = verdict.remedy or None  # None: the catalogue's
            if existing is not None and existing in table.book.active:
                if table.book.active[existing].message != verdict.message:
                    fields: dict[str, object] = {"message": verdict.message}
                    if remedy is not None:
                        fields["remedy"] = list(remedy)
                    table.book.update(existing, table.ts, **fields)
                continue
            code, message = machine.session.blind_code(verdict.code, verdict.message)  # a level's
            # a wrong blind judged against a tournament level keeps the level's own remedy
            alert = table.raise_alert(
                code, message, verdict.seat, scope="money", remedy=remedy if code == verdict.code else None
            )
            state.alerts = {**state.alerts, verdict.key: alert}

    def _progress(self) -> None:
        """After the betting core moved on: an all-in run-out, a hand won uncontested."""
        state, machine = self.state, self.machine
        hand = machine.hand_part
        money = state.money
        if money is None:
            return
        # (the cheap tests first; the phase read here, not through the part's property: asked
        # after every chip moved, a call saved each time)
        if not hand.all_in and hand.phase in RUNNING and money.run_out:
            machine.hands.betting_over()
        if hand.hand_over and not state.result_sent:
            self.maybe_finish()

    # -- told by the hand rules (engine.hands) ---------------------------------------------------

    def round_opened(self) -> None:
        """A betting round opens (the betting core follows the rounds): at the first, the
        betting core begins."""
        machine = self.machine
        if machine.hand_part.rounds_done == 0 and machine.deal_state.done and self.state.money is None:
            self._begin()

    def showdown(self) -> None:
        """The showdown is reached: the hands already tabled are shown to the betting core."""
        state = self.state
        state.showdown_reached = True
        for seat in state.face_up_seats:
            self._table(seat)

    def hand_ends(self) -> LeftOpen | tuple[()]:
        """The next hand is starting: the last one's result at the latest now. Returns what its
        pushes left wrong (not judged while the dealer is still reacting), for
        :meth:`hand_started`."""
        state, table = self.state, self.table
        # a push found wrong must be put right before the next hand (pot_awarded_wrong: "do not
        # start the next hand"); what the dealer does within his reaction time is not judged
        active = table.book.active
        left_wrong = sorted(
            {active[a].code for a in state.alerts.values() if a in active and active[a].code in PUSH_CODES}
        )
        reacting = table.reacting()
        # chips left uncorrected (a void hand's chips go back with it: not judged here); those
        # awaiting their evidence are judged now, at the latest, as of their street
        void = self.machine.hand_part.phase == "misdeal"
        for waiting in () if void else state.awaiting:
            self._judge_awaiting(waiting)
        state.awaiting = ()
        open_ = () if void else self._open()
        void_pot = void and table.book.find("fouled_deck") is not None and self._void_pot()
        self.finish_hand()  # at the latest when the next hand starts
        table.book.resolve_scope("money", table.ts)
        return () if reacting else LeftOpen(tuple(left_wrong), open_, void_pot)

    def hand_started(self, left: LeftOpen | tuple[()], *, redeal: bool) -> None:
        """The new hand has started (:meth:`hand_ends` said what the last one left wrong)."""
        table = self.table
        machine = self.machine
        machine.session_out(machine.session.on_hand_start(table.ts, machine.hand_part.in_hand, redeal=redeal))
        if not left:
            return
        left_wrong = left.push
        if left.corrections:
            self._corrections("The next hand was started", left.corrections)
        if left.void_pot:
            table.not_followed(
                "fouled-pot",
                "The redeal was started with chips of the hand void by the fouled deck still in the pot.",
                ("Return every chip in the pot to the player who wagered it.",),
                of="fouled_deck",
            )
        if left_wrong:
            table.not_followed(
                "push-put-right",
                "The next hand was started before the last hand's pots were put right "
                f"({'; '.join(PUSH_WRONG[code] for code in left_wrong)}).",
                ("Stop: put the last hand's pots right before dealing the next hand.",),
                of=left_wrong[0],
            )

    def hand_lost(self) -> None:
        """Events of the hand were lost: its result is what the evidence showed, marked so; the
        money is left out (a bet or a push may be among what was lost: nothing is made up)."""
        self.state.done = True
        self.state.awaiting = ()  # (nor is a correction judged: its evidence may be lost)
        self.finish_hand()
        # what its pushes were found to be is forgotten with it (no remedy is judged at the next
        # hand's start)
        self.table.book.resolve_scope("money", self.table.ts)

    def no_result(self) -> None:
        """The hand just reset (a lost one's) has had its result: the next start makes none."""
        self.state.result_sent = True

    # -- the hand's end ------------------------------------------------------------------------

    def _cards_out(self) -> bool:
        """Cards of this hand still read at a seat or on the board."""
        machine = self.machine
        present = machine.card_state.present
        for uids in machine.card_state.seat_cards.values():
            for uid in uids:
                if present.get(uid):
                    return True
        return any(present.get(uid) for uid in machine.board_state.cards)

    def maybe_finish(self) -> None:
        """Publish the result once the hand is over, its cards gone and its pots pushed."""
        state = self.state
        money = state.money
        if money is not None and money is self.asked and not self.asked_settled:
            return  # asked already, of the same money: its pushes are not done
        table = self.table
        hand = self.machine.hand_part
        if state.result_sent or table.hand == 0 or hand.phase == "misdeal" or not hand.hand_over:
            return
        followed = money is not None and not state.done and state.chips_read
        if followed and money is not None:  # (the cheap tests first)
            if money is not self.asked:
                self.asked, self.asked_settled = money, money.settled
            if not self.asked_settled:
                return
        if self._cards_out():
            return
        if followed and any(
            table.book.active[a].code in PUSH_CODES for a in state.alerts.values() if a in table.book.active
        ):
            return  # a wrong push: the hand stays open until it is put right
        self.finish_hand()

    def finish_hand(self) -> None:
        """The hand's result, from the betting core where it followed the hand."""
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        if state.result_sent or table.hand == 0:
            return
        if machine.handling_state.half_folds:
            machine.handling.half_folds_due(None)
        state.result_sent = True
        left = [s for s in hand.in_hand if s not in hand.folded]
        outcome_result: HandOutcome
        if hand.phase == "misdeal":
            outcome_result = "fouled" if table.book.find("fouled_deck") else "misdeal"
        elif len(left) > 1 or state.showdown_reached:
            outcome_result = "showdown"
        else:
            outcome_result = "uncontested"
        fields: dict[str, object] = {
            "v": 1,
            "ts": table.ts,
            "hand": table.hand,
            "button": hand.hand_button,
            "seats": list(hand.in_hand or sorted(set(machine.deal_state.dealt_seats))),
            "board": list(self._card_codes(machine.board.live() if hand.phase != "misdeal" else ())),
            "result": outcome_result,
            "actions": [],
            "pots": [],
            "rake": 0,
            "awarded": [],
            "showdown": [],
            "profile": table.profile,
            "evidence_missing": hand.evidence_missing,
        }
        money = state.money
        if money is not None and not state.done and hand.phase != "misdeal":
            machine.chips.settle_lifted(everything=True)
            money, verdicts, outcome = money.finish(self._card_codes(machine.board.live()), machine.answers)
            state.money = money
            self._verdicts(verdicts)
            fields["result"] = "showdown" if state.showdown_reached else outcome.result
            fields["board"] = list(self._card_codes(machine.board.live()))
            fields["actions"] = [self._action(a.street, a.seat, a.action, a.amount) for a in outcome.actions]
            fields["pots"] = [
                construct_valid(
                    PotResult,
                    {
                        "amount": p.amount,
                        "eligible": list(p.eligible),
                        "winners": list(p.winners),
                        "shares": [_seat_amount(s, a) for s, a in p.shares],
                    },
                )
                for p in outcome.pots
            ]
            fields["rake"] = outcome.rake
            fields["awarded"] = [_seat_amount(s, a) for s, a in outcome.awarded]
            fields["showdown"] = [
                construct_valid(ShownHand, {"seat": s.seat, "cards": list(s.cards), "rank": s.rank})
                for s in outcome.showdown
            ]
        elif money is not None:
            fields["actions"] = [self._action(a.street, a.seat, a.action, a.amount) for a in money.actions]
        state.done = True
        # the chips pushed this hand still in front of the winner (those already taken off, or
        # stacked in a stack zone, are the player's again)
        chips = machine.chip_state
        state.award_chips |= {
            u
            for u in state.hand_awards
            if u in chips.lifted or (u in chips.at and zone_stack_seat(chips.at[u]) is None)
        }
        state.hand_awards = frozenset()
        fields["dealer"] = machine.session.hand_dealer  # (off the wire when unknown)
        # (every field given: built as the public state is, contract.pydantic_adapter)
        table.hands_out.append(construct_valid(HandResult, fields))
        machine.session_out(machine.session.on_hand_end(table.ts))


def _seat_amount(seat: int, amount: int) -> SeatAmount:
    return construct_valid(SeatAmount, {"seat": seat, "amount": amount})


__all__ = ["STREET_NAMES", "ResultState", "Results"]
