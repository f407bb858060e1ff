"""Hole cards: the deal, exposed cards, extra cards, folds and the showdown claim; the decks.

The concern is :class:`Dealing`, over its part :class:`DealState` (its hand's fields reset with
each hand; the decks kept across hands); the dispatcher (:mod:`engine.dispatcher`) tells it the
cards that reach a seat or the muck and the shuffler's events; it reads the hand (seats, order,
button) from the table it is attached to and calls a misdeal through it. (One concern in one
file, long because every check of the deal reads the same state at each card.)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from contract.cards import zone_seat
from contract.models import ShuffleCompleteEvent
from engine.remedies import (
    BlindsRemedy,
    ExposedRemedy,
    ExtraCardRemedy,
)
from engine.showdown import board_is_best

if TYPE_CHECKING:
    from engine.dispatcher import Machine
    from engine.table import Table


@dataclass(slots=True)
class DealState:
    """The deal of the hand, and the decks. Every value is immutable or replaced when it
    changes (a copy shares them)."""

    #: The hole cards dealt in order, and the seat each went to; the deal is complete.
    dealt: tuple[str, ...] = ()
    dealt_seats: tuple[int, ...] = ()
    done: bool = False
    #: TDA 37: the button's missing second card may still come.
    button_short: bool = False
    #: Extra cards dealt after the deal, and hole cards exposed (counted, and which).
    extras: int = 0
    exposures: int = 0
    exposed_uids: frozenset[str] = frozenset()
    #: Hole cards that arrived at their seat not face up (a later face-up read is a turn-up).
    dealt_down: frozenset[str] = frozenset()
    #: Hole cards read face up this hand: the only hole cards an alert may name.
    face_up: frozenset[str] = frozenset()
    #: The remedies in force: an exposed card, an extra card, blinds missing at the deal.
    exposed: ExposedRemedy | None = None
    extra: ExtraCardRemedy | None = None
    blinds: tuple[BlindsRemedy, ...] = ()
    #: Seats that declared the board (keypad); seats whose showdown muck was checked.
    declared: frozenset[int] = frozenset()
    claims_checked: frozenset[int] = frozenset()
    #: Across hands: each deck's state ("ready": shuffled, check passed; "used"; "blocked":
    #: check failed), whether a shuffler reported, the deck of the last hand dealt.
    decks: dict[str, str] = field(default_factory=dict)
    shuffler_known: bool = False
    last_deck: str | None = None

    def copy(self) -> DealState:
        # (every field, in order: dataclasses.replace looks each one up by name, at every copy)
        return DealState(
            self.dealt,
            self.dealt_seats,
            self.done,
            self.button_short,
            self.extras,
            self.exposures,
            self.exposed_uids,
            self.dealt_down,
            self.face_up,
            self.exposed,
            self.extra,
            self.blinds,
            self.declared,
            self.claims_checked,
            self.decks,
            self.shuffler_known,
            self.last_deck,
        )

    def new_hand(self) -> None:
        """A new hand: nothing dealt yet (the decks are kept)."""
        self.dealt, self.dealt_seats, self.done, self.button_short = (), (), False, False
        self.extras = self.exposures = 0
        self.exposed_uids = self.dealt_down = self.face_up = frozenset()
        self.exposed, self.extra, self.blinds = None, None, ()
        self.declared = self.claims_checked = frozenset()


class Dealing:
    """The deal checked card by card; exposures, extra cards, folds, board claims; the decks."""

    __slots__ = ("machine", "state", "table")

    def __init__(self, state: DealState, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table  # the time, the settings, the alerts
        self.machine = machine  # the hand's part (seats, order, button), the hands' misdeals

    def check_exposed(self) -> None:
        """The exposed card's remedy carried out: the seat given the top card, the exposed card
        burned."""
        state = self.state
        remedy = state.exposed
        if remedy is not None and remedy.replaced and remedy.burned:
            self.table.book.resolve(remedy.alert, self.table.ts)
            state.exposed = None

    def exposed_burned(self) -> None:
        """The exposed card was burned (engine.board)."""
        exposed = self.state.exposed
        if exposed is not None:
            self.state.exposed = replace(exposed, burned=True)

    def extra_burned(self) -> None:
        """The extra card was burned (engine.board): its remedy is carried out."""
        extra = self.state.extra
        if extra is not None:
            self.state.extra = None
            self.table.book.resolve(extra.alert, self.table.ts)

    def end_remedies(self) -> None:
        """The hand is over or void: no dealing remedy is followed any more."""
        state = self.state
        state.exposed = state.extra = None
        state.blinds = ()

    def deal_end(self) -> None:
        """The dealer moved on (betting, burn, board) while the deal was incomplete."""
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        if hand.phase != "dealing" or not state.dealt:
            return
        counts = {s: state.dealt_seats.count(s) for s in hand.in_hand}
        wrong = [s for s, c in counts.items() if c != 2]
        button = hand.hand_button
        if table.profile == "tda" and wrong == [button] and button is not None and counts[button] == 1:
            state.button_short = True  # TDA 37: a missing button card may be replaced
            wrong = []
        if wrong:
            seat = hand.order[0] if hand.order and hand.order[0] in wrong else min(wrong)
            for candidate in hand.order:
                if candidate in wrong:
                    seat = candidate
                    break
            machine.hands.misdeal(
                "misdeal_wrong_count",
                f"Seat {seat} ended the deal with {counts[seat]} cards instead of two.",
                seat,
            )
            if hand.phase != "dealing":
                return  # void; otherwise the window had closed and play continues
        state.done = True
        machine.hands.deal_done()

    def blind_posted(self, seat: int) -> None:
        """A blind arrived in its zone: a blinds remedy is carried out."""
        state, table = self.state, self.table
        kept = []
        for remedy in state.blinds:
            if remedy.seat == seat:
                table.book.resolve(remedy.alert, table.ts)
            else:
                kept.append(remedy)
        state.blinds = tuple(kept)

    def shuffling(self) -> None:
        """The shuffler reported: there is one."""
        self.state.shuffler_known = True

    def shown(self, uid: str) -> str:
        """`` (Kh)`` for a hole card read face up, else nothing: secrecy by construction, the only
        way a hole card's name reaches an alert."""
        if uid not in self.state.face_up:
            return ""
        card = self.table.settings.registry.lookup(uid)
        return f" ({card.card})" if card is not None else ""

    def flop_came(self) -> None:
        """The flop's first card: the exposed or extra card must have been the burn."""
        state, table = self.state, self.table
        exposed = state.exposed
        if exposed is not None:
            if not exposed.burned:
                table.not_followed(
                    "exposed-burn",
                    f"The flop came while the exposed card of seat {exposed.seat} was not the burn.",
                    ("The exposed card may not be kept: it is the burn card before the flop.",),
                    exposed.seat,
                    of="exposed_card",
                )
            if not exposed.replaced:
                table.not_followed(
                    "exposed-replace",
                    f"Seat {exposed.seat} was not given the top card in place of its exposed card.",
                    ("Give that seat the top card of the deck.",),
                    exposed.seat,
                    of="exposed_card",
                )
        extra = state.extra
        if extra is not None:
            table.not_followed(
                "extra-card",
                f"The flop came but the extra card of seat {extra.seat} was not the burn card.",
                ("The extra card goes back on the deck and is the burn card for the flop.",),
                extra.seat,
                of="extra_card",
            )
            state.extra = None

    def arrive_seat(self, uid: str, seat: int, old: str | None, face_up: bool) -> None:
        state, machine = self.state, self.machine
        hand = machine.hand_part
        machine.cards.change()
        machine.card_state.seat_cards[seat] = (*machine.card_state.seat_cards.get(seat, ()), uid)
        if not face_up:
            state.dealt_down |= {uid}
        if old is not None and zone_seat(old) is None:
            return  # from the board, burn or muck back to a seat: not a dealt card
        if hand.phase == "dealing":
            self._deal(uid, seat)
        elif hand.running:
            self._late_card(uid, seat)

    def _first_card(self, uid: str, seat: int) -> None:
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        machine.hands.refresh_seats()
        card = table.settings.registry.lookup(uid)
        deck = card.deck if card is not None else None
        machine.hands.deck_dealt(deck)
        state.last_deck = deck
        status = state.decks.get(deck) if deck is not None else None
        if deck is not None and status != "blocked":
            state.decks = {**state.decks, deck: "used"}
        if deck is not None and state.shuffler_known:
            if status == "blocked":
                self._check_blocked()
            elif deck == hand.redeal_of and status != "ready":
                table.not_followed(
                    "misdeal-reshuffle",
                    f"The redeal uses deck {deck} without a reshuffle after the misdeal.",
                    ("Retrieve all cards, reshuffle and cut.", "Redeal with the same button."),
                    of=table.misdeal_code(),
                )
        # the button, checked at the deal
        if hand.button_r is not None:
            remedy = hand.button_r
            where = f"on seat {hand.button}" if hand.button is not None else "not on the table"
            message = f"The button is {where} but must be on seat {remedy.expected}."
            machine.hands.button_late(message, remedy.expected, remedy.alert)
            if hand.phase != "dealing":
                return
        self._deal_from_misplaced_button(seat)
        # the blinds, checked before the deal
        if hand.blinds_known and hand.hand_button is not None and len(hand.in_hand) >= 2:
            if len(hand.in_hand) == 2:
                small, big = hand.hand_button, hand.order[0]
            else:
                small, big = hand.order[0], hand.order[1]
            remedies = []
            for blind_seat, name in ((small, "small"), (big, "big")):
                if not hand.blinds.get(blind_seat):
                    alert = table.raise_alert(
                        "blinds_missing",
                        f"Dealing started without the {name} blind of seat {blind_seat} in its zone.",
                        blind_seat,
                        remedy=(
                            "Stop the deal.",
                            f"Have seat {blind_seat} post the {name} blind in its zone, then continue "
                            "the deal.",
                        ),
                    )
                    remedies.append(BlindsRemedy(alert, blind_seat))
            state.blinds = tuple(remedies)

    def _check_blocked(self) -> None:
        """Dealing a deck that failed its check, once the dealer's reaction time is over."""
        state, table = self.state, self.table
        machine = self.machine
        deck = machine.hand_part.hand_deck
        if (
            deck is None
            or not state.shuffler_known
            or state.decks.get(deck) != "blocked"
            or "deck-blocked" in table.nf_keys
            or table.reacting()
        ):
            return
        table.not_followed(
            "deck-blocked",
            f"Deck {deck} failed its deck check but is being dealt: switch decks.",
            ("Do not deal this deck.", "Switch to the other deck and call the floor."),
            of="deck_check_failed",
        )

    def _deal_from_misplaced_button(self, seat: int) -> None:
        """TDA 34-A: play goes on with a misplaced button, so a deal from it is in order.

        The button alert is already raised; dealing left of where the button physically is
        must not add a wrong-first-seat misdeal the rule does not call.
        """
        table = self.table
        machine = self.machine
        hand = machine.hand_part
        actual, expected = hand.button, hand.expected_button
        if (
            table.profile != "tda"
            or not (hand.button_known and hand.order_closed and hand.in_hand)
            or actual is None
            or expected is None
            or actual == expected
        ):
            return
        physical = machine.hands.clockwise_from(actual, hand.in_hand)
        if seat == physical[0] != hand.order[0]:
            # the next hand moves on from where the button really was: it is not backed up
            machine.hands.deal_from(actual, physical)

    def _deal(self, uid: str, seat: int) -> None:
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        index = len(state.dealt)
        if index == 0:
            self._first_card(uid, seat)
            if hand.phase != "dealing":
                return
        elif state.blinds or state.decks.get(hand.hand_deck or "") == "blocked":
            self._check_blocked()
            violated = []
            for remedy in state.blinds:
                if not remedy.violated:
                    table.not_followed(
                        f"blinds-{remedy.seat}",
                        f"The deal went on before the blind of seat {remedy.seat} was posted.",
                        ("Stop the deal until the blinds are posted.",),
                        remedy.seat,
                        of="blinds_missing",
                    )
                violated.append(replace(remedy, violated=True))
            state.blinds = tuple(violated)
        if hand.seats_known and hand.in_hand and seat not in hand.in_hand:
            machine.hands.misdeal(
                "misdeal_empty_seat", f"A card was dealt to seat {seat}, which has no player.", seat
            )
            return
        if not hand.order_closed:
            if index == 0 and hand.seats_known and seat in hand.in_hand:
                # no button known: the first card shows where the deal starts
                button = hand.in_hand[hand.in_hand.index(seat) - 1]
                machine.hands.deal_from(button, machine.hands.clockwise_from(button, hand.in_hand))
            elif not self._discover(seat, index):
                return
            if not hand.order_closed:
                state.dealt += (uid,)
                state.dealt_seats += (seat,)
                return
        expected = hand.sequence[index] if index < len(hand.sequence) else None
        if seat != expected and not self._deal_mismatch(seat, index):
            return
        state.dealt += (uid,)
        state.dealt_seats += (seat,)
        if hand.order_closed and len(state.dealt) >= len(hand.sequence):
            state.done = True
            machine.hands.deal_done()

    def _discover(self, seat: int, index: int) -> bool:
        """Without occupancy sensors the first round of the deal shows who is dealt in."""
        table = self.table
        machine = self.machine
        hand = machine.hand_part
        n = table.settings.seats
        if index == 0:
            machine.hands.first_dealt(seat)
            return True
        first = hand.order[0]
        if seat == first:
            machine.hands.first_round_dealt()
            return True
        if seat not in hand.order and (seat - first) % n > (hand.order[-1] - first) % n:
            machine.hands.dealt_next(seat)
            return True
        machine.hands.misdeal(
            "misdeal_out_of_sequence", f"A card was dealt out of sequence to seat {seat}.", seat
        )
        return False

    def _deal_mismatch(self, seat: int, index: int) -> bool:
        """A card went to another seat than the next in order: misdeal, or TDA 35-B."""
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        n = len(hand.order)
        if index == 0:
            machine.hands.misdeal(
                "misdeal_wrong_first_seat",
                f"The first card went to seat {seat}; it had to go to seat {hand.order[0]}.",
                seat,
            )
            return False
        if index >= len(hand.sequence):
            return True  # handled as a late card
        button = hand.order[-1]
        expected = hand.sequence[index]
        if table.profile == "tda" and n > 1:
            if seat == button and index == n and state.dealt_seats[-1] == button:
                # TDA 35-B: the button may be dealt two consecutive cards
                machine.hands.button_dealt_twice(at_start=True)
                return True
            if index == n - 1 and expected == button and seat == hand.order[0] != state.dealt_seats[-1]:
                # TDA 35-B: the button passed over in round one gets both cards at the end
                machine.hands.button_dealt_twice(at_start=False)
                return True
        if self._passed_over(seat, index):
            machine.hands.misdeal(
                "misdeal_seat_skipped",
                f"Seat {expected} was passed over: the card went to seat {seat}.",
                expected,
            )
        else:
            machine.hands.misdeal(
                "misdeal_out_of_sequence",
                f"A card was dealt out of sequence to seat {seat}.",
                seat,
            )
        return False

    def _passed_over(self, seat: int, index: int) -> bool:
        """Whether a card to ``seat`` in slot ``index`` passes over the seat due there.

        It does when ``seat`` gets the card of its own next slot in the dealing order: a later
        seat of the same round, or the very next slot (the button passed over in round one, the
        first seat dealt its second card). A seat dealt twice running is out of sequence, except
        the button at the end of round one, which passes over the first seat of round two.
        """
        state, machine = self.state, self.machine
        hand = machine.hand_part
        n = len(hand.order)
        last = state.dealt_seats[-1] if state.dealt_seats else None
        if seat == last and not (seat == hand.order[-1] and index == n):
            return False
        for slot in range(index + 1, len(hand.sequence)):
            if hand.sequence[slot] == seat:
                in_reach = slot // n == index // n or slot == index + 1
                return in_reach and state.dealt_seats.count(seat) == slot // n
        return False

    def _late_card(self, uid: str, seat: int) -> None:
        """A card dealt to a seat after the deal is complete."""
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        exposed = state.exposed
        if exposed is not None and seat == exposed.seat and not exposed.replaced:
            state.exposed = replace(exposed, replaced=True)
            self.check_exposed()
            return
        if state.button_short and seat == hand.hand_button:
            state.button_short = False
            return
        first = hand.order[0] if hand.order else seat
        if hand.phase == "preflop" and not machine.board.started():
            if state.extras >= 1:
                state.extras += 1
                machine.hands.misdeal(
                    "misdeal_extra_cards", f"A second extra card was dealt (seat {seat}): misdeal.", seat
                )
                return
            state.extras = 1
            if seat == first:
                if table.profile == "tda":
                    machine.hands.misdeal(
                        "misdeal_wrong_count",
                        f"Seat {seat} was dealt a third card: a wrong number of cards is a misdeal.",
                        seat,
                    )
                    return
                alert = table.raise_alert(
                    "extra_card",
                    f"An extra card was dealt to seat {seat} after every seat had its two cards.",
                    seat,
                )
                state.extra = ExtraCardRemedy(alert, seat, uid)
                return
        machine.hands.misdeal(
            "misdeal_wrong_count",
            f"Seat {seat} was dealt a card after the deal: it now has "
            f"{len(machine.card_state.seat_cards.get(seat, ()))} cards.",
            seat,
        )

    def turned_up(self, uid: str, zone: str, *, arriving: bool) -> None:
        """A hole card read face up at its seat: a dealer exposure, or the player's own doing.

        Seed 004 calls an exposure "due to a dealer error": a card that lands face up, or is
        turned up while the dealer is still dealing. Once the deal is complete, a card that was
        dealt face down and is now face up was turned by the player: no exposure.
        """
        state, machine = self.state, self.machine
        hand = machine.hand_part
        seat = zone_seat(zone)
        if seat is None:
            if zone == "burn" and not arriving:
                machine.handling.burn_face_up(uid)
            return
        state.face_up |= {uid}
        machine.results.card_face_up(seat)
        if hand.phase not in ("dealing", "preflop") or machine.board.started():
            return
        if hand.all_in:
            return  # betting is over: players table their hands for the run-out (TDA 16)
        if not arriving and state.done and uid in state.dealt_down:
            return  # turned up by the player after the deal
        self.expose(uid, seat)

    def expose(self, uid: str, seat: int) -> None:
        """A hole card exposed by the dealer: misdeal if it is the first, or the second one.

        The alert names the card only when it was read face up (:meth:`_shown`).
        """
        state, table = self.state, self.table
        machine = self.machine
        if uid in state.exposed_uids:
            return
        state.exposed_uids |= {uid}
        index = state.dealt.index(uid) if uid in state.dealt else None
        limit = 2 if table.profile == "tda" else 1
        state.exposures += 1
        if index is not None and index < limit:
            which = "first" if index == 0 else "second"
            machine.hands.misdeal(
                "misdeal_exposed_early",
                f"The {which} hole card dealt (seat {seat}) was exposed: misdeal.",
                seat,
            )
        elif state.exposures > 1:
            machine.hands.misdeal(
                "misdeal_exposed_multiple",
                f"A second hole card was exposed (seat {seat}): misdeal.",
                seat,
            )
        else:
            alert = table.raise_alert(
                "exposed_card",
                f"A hole card of seat {seat} was exposed{self.shown(uid)}: it may not be kept.",
                seat,
            )
            state.exposed = ExposedRemedy(alert, seat, uid)

    def arrive_muck(self, uid: str, old: str) -> None:
        state, machine = self.state, self.machine
        hand = machine.hand_part
        seat = zone_seat(old)
        if seat is None or seat not in hand.in_hand:
            return
        if hand.phase == "showdown" and seat not in state.claims_checked and seat not in hand.folded:
            # (a seat that folded by an ``action`` input brings its cards to the muck after)
            state.claims_checked |= {seat}
            self._board_claim(seat, (*machine.card_state.seat_cards.get(seat, ()), uid))
        if not machine.card_state.seat_cards.get(seat) and hand.running:
            machine.hands.fold(seat)
            machine.results.fold(seat)
            machine.hands.check_one_left()
        elif not machine.card_state.seat_cards.get(seat) and hand.phase == "showdown":
            machine.results.muck(seat)

    def _board_claim(self, seat: int, hole: tuple[str, ...]) -> None:
        state, table = self.state, self.table
        machine = self.machine
        if seat in state.declared or len(machine.board_state.cards) != 5 or len(hole) != 2:
            return
        registry = table.settings.registry
        board = [registry.lookup(u) for u in machine.board_state.cards]
        cards = [registry.lookup(u) for u in hole]
        if any(c is None for c in board) or any(c is None for c in cards):
            return
        board_codes = [c.card for c in board if c is not None]
        hole_codes = [c.card for c in cards if c is not None]
        if board_is_best(board_codes, hole_codes):
            table.raise_alert(
                "board_claim_forfeited",
                f"Seat {seat} mucked at showdown without declaring the board, which was its best hand.",
                seat,
            )

    # -- the decks (shuffler events) --------------------------------------------------------------

    def _forget_deck(self, deck: str) -> None:
        """A deck was reshuffled: its cards left over from a hand over (or void) are in it now."""
        table = self.table
        machine = self.machine
        registry = table.settings.registry
        for uid, zone in list(machine.card_state.zone.items()):
            card = registry.lookup(uid)
            if card is not None and card.deck == deck:
                machine.cards.take_away(uid, zone)

    def _other_deck(self, deck: str | None) -> str | None:
        table = self.table
        others = [d for d in table.settings.registry.decks if d != deck]
        return others[0] if len(others) == 1 else None

    def shuffle_complete(self, device: str, event: ShuffleCompleteEvent) -> None:
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        state.shuffler_known = True
        deck = event.deck
        if deck is not None and deck not in table.settings.registry.decks:
            # not a deck of this table: nothing to mark (and no name from a payload to keep)
            if event.ok:
                return
            table.raise_alert(
                "deck_check_failed",
                f"The deck check of a deck not in the registry failed (count {event.count}): do not deal it.",
                scope="deck",
                device=device,
            )
            return
        if deck is None:
            # The shuffler cannot name the deck: it is the one not in play (decks alternate).
            current = hand.hand_deck if hand.running else state.last_deck
            deck = self._other_deck(current) if current is not None else None
        if event.ok:
            if deck is not None:
                state.decks = {**state.decks, deck: "ready"}
                table.book.resolve_scope("deck", table.ts, deck)
                if not hand.running:
                    self._forget_deck(deck)
            machine.hands.shuffled()
            return
        if deck is not None:
            state.decks = {**state.decks, deck: "blocked"}
        # Counts only: card names could be hole cards of the deck in play (secrecy).
        parts = [f"count {event.count}"]
        if event.missing:
            parts.append(f"{len(event.missing)} missing")
        if event.duplicates:
            parts.append(f"{len(event.duplicates)} duplicated")
        name = f"deck {deck}" if deck is not None else "the deck"
        message = f"The deck check of {name} failed ({', '.join(parts)}): do not deal it."
        table.raise_alert("deck_check_failed", message, scope="deck", key=deck, device=device)
