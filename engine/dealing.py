"""Hole cards: the deal, exposed cards, extra cards, folds and the showdown claim."""

from __future__ import annotations

from dataclasses import replace

from contract.cards import zone_seat
from contract.models import ShuffleCompleteEvent
from engine.hands import HandRules
from engine.remedies import (
    BlindsRemedy,
    ExposedRemedy,
    ExtraCardRemedy,
)
from engine.showdown import board_is_best


class DealRules(HandRules):
    """The deal checked card by card; exposures, extra cards, folds, board claims."""

    def _arrive_seat(self, uid: str, seat: int, old: str | None, face_up: bool) -> None:
        self._cards_change()
        self.seat_cards[seat] = (*self.seat_cards.get(seat, ()), uid)
        if not face_up:
            self.dealt_down |= {uid}
        if old is not None and zone_seat(old) is None:
            return  # from the board, burn or muck back to a seat: not a dealt card
        if self.phase == "dealing":
            self._deal(uid, seat)
        elif self.running:
            self._late_card(uid, seat)

    def _first_card(self, uid: str, seat: int) -> None:
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
                self._check_blocked()
            elif deck == self.redeal_of and status != "ready":
                self.not_followed(
                    "misdeal-reshuffle",
                    f"The redeal uses deck {deck} without a reshuffle after the misdeal.",
                    ("Retrieve all cards, reshuffle and cut.", "Redeal with the same button."),
                    of=self.misdeal_code(),
                )
        # the button, checked at the deal
        if self.button_r is not None:
            remedy = self.button_r
            where = f"on seat {self.button}" if self.button is not None else "not on the table"
            message = f"The button is {where} but must be on seat {remedy.expected}."
            self._button_late(message, remedy.expected, remedy.alert)
            if self.phase != "dealing":
                return
        self._deal_from_misplaced_button(seat)
        # the blinds, checked before the deal
        if self.blinds_known and self.hand_button is not None and len(self.in_hand) >= 2:
            if len(self.in_hand) == 2:
                small, big = self.hand_button, self.order[0]
            else:
                small, big = self.order[0], self.order[1]
            remedies = []
            for blind_seat, name in ((small, "small"), (big, "big")):
                if not self.blinds.get(blind_seat):
                    alert = self.raise_alert(
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
            self.blinds_r = tuple(remedies)

    def _check_blocked(self) -> None:
        """Dealing a deck that failed its check, once the dealer's reaction time is over."""
        deck = self.hand_deck
        if (
            deck is None
            or not self.shuffler_known
            or self.decks.get(deck) != "blocked"
            or "deck-blocked" in self.nf_keys
            or self.reacting()
        ):
            return
        self.not_followed(
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
        actual, expected = self.button, self.expected_button
        if (
            self.profile != "tda"
            or not (self.button_known and self.order_closed and self.in_hand)
            or actual is None
            or expected is None
            or actual == expected
        ):
            return
        physical = self._clockwise_from(actual, self.in_hand)
        if seat == physical[0] != self.order[0]:
            self.hand_button = actual
            # the next hand moves on from where the button really was: it is not backed up
            self.anchor = (actual, True)
            self.order = physical
            self.sequence = physical + physical

    def _deal(self, uid: str, seat: int) -> None:
        index = len(self.dealt)
        if index == 0:
            self._first_card(uid, seat)
            if self.phase != "dealing":
                return
        elif self.blinds_r or self.decks.get(self.hand_deck or "") == "blocked":
            self._check_blocked()
            violated = []
            for remedy in self.blinds_r:
                if not remedy.violated:
                    self.not_followed(
                        f"blinds-{remedy.seat}",
                        f"The deal went on before the blind of seat {remedy.seat} was posted.",
                        ("Stop the deal until the blinds are posted.",),
                        remedy.seat,
                        of="blinds_missing",
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
            self.open_round()

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
                f"The first card went to seat {seat}; it had to go to seat {self.order[0]}.",
                seat,
            )
            return False
        if index >= len(self.sequence):
            return True  # handled as a late card
        button = self.order[-1]
        expected = self.sequence[index]
        if self.profile == "tda" and n > 1:
            if seat == button and index == n and self.dealt_seats[-1] == button:
                # TDA 35-B: the button may be dealt two consecutive cards
                self.sequence = (*self.order, button, *self.order[:-1])
                return True
            if (
                index == n - 1
                and expected == button
                and seat == self.order[0] != self.dealt_seats[-1]
            ):
                # TDA 35-B: the button passed over in round one gets both cards at the end
                self.sequence = (*self.order[:-1], *self.order[:-1], button, button)
                return True
        if self._passed_over(seat, index):
            self._misdeal(
                "misdeal_seat_skipped",
                f"Seat {expected} was passed over: the card went to seat {seat}.",
                expected,
            )
        else:
            self._misdeal(
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
        n = len(self.order)
        last = self.dealt_seats[-1] if self.dealt_seats else None
        if seat == last and not (seat == self.order[-1] and index == n):
            return False
        for slot in range(index + 1, len(self.sequence)):
            if self.sequence[slot] == seat:
                in_reach = slot // n == index // n or slot == index + 1
                return in_reach and self.dealt_seats.count(seat) == slot // n
        return False

    def _late_card(self, uid: str, seat: int) -> None:
        """A card dealt to a seat after the deal is complete."""
        exposed = self.exposed_r
        if exposed is not None and seat == exposed.seat and not exposed.replaced:
            self.exposed_r = replace(exposed, replaced=True)
            self.check_exposed()
            return
        if self.button_short and seat == self.hand_button:
            self.button_short = False
            return
        first = self.order[0] if self.order else seat
        if self.phase == "preflop" and not self.board.started():
            if self.extras >= 1:
                self.extras += 1
                self._misdeal(
                    "misdeal_extra_cards", f"A second extra card was dealt (seat {seat}): misdeal.", seat
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
                alert = self.raise_alert(
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

    def _face_up(self, uid: str, zone: str, *, arriving: bool) -> None:
        """A hole card read face up at its seat: a dealer exposure, or the player's own doing.

        Seed 004 calls an exposure "due to a dealer error": a card that lands face up, or is
        turned up while the dealer is still dealing. Once the deal is complete, a card that was
        dealt face down and is now face up was turned by the player: no exposure.
        """
        seat = zone_seat(zone)
        if seat is None:
            if zone == "burn" and not arriving:
                self.handling.burn_face_up(uid)
            return
        self.face_up |= {uid}
        self.results.card_face_up(seat)
        if self.phase not in ("dealing", "preflop") or self.board.started():
            return
        if self.all_in:
            return  # betting is over: players table their hands for the run-out (TDA 16)
        if not arriving and self.deal_done and uid in self.dealt_down:
            return  # turned up by the player after the deal
        self._expose(uid, seat)

    def _expose(self, uid: str, seat: int) -> None:
        """A hole card exposed by the dealer: misdeal if it is the first, or the second one.

        The alert names the card only when it was read face up (:meth:`_shown`).
        """
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
            alert = self.raise_alert(
                "exposed_card",
                f"A hole card of seat {seat} was exposed{self._shown(uid)}: it may not be kept.",
                seat,
            )
            self.exposed_r = ExposedRemedy(alert, seat, uid)

    def _arrive_muck(self, uid: str, old: str) -> None:
        seat = zone_seat(old)
        if seat is None or seat not in self.in_hand:
            return
        if self.phase == "showdown" and seat not in self.claims_checked and seat not in self.folded:
            # (a seat that folded by an ``action`` input brings its cards to the muck after)
            self.claims_checked |= {seat}
            self._board_claim(seat, (*self.seat_cards.get(seat, ()), uid))
        if not self.seat_cards.get(seat) and self.running:
            self.folded |= {seat}
            self.results.fold(seat)
            self._check_one_left()
        elif not self.seat_cards.get(seat) and self.phase == "showdown":
            self.results.muck(seat)

    def _board_claim(self, seat: int, hole: tuple[str, ...]) -> None:
        if seat in self.declared or len(self.board_state.cards) != 5 or len(hole) != 2:
            return
        registry = self.settings.registry
        board = [registry.lookup(u) for u in self.board_state.cards]
        cards = [registry.lookup(u) for u in hole]
        if any(c is None for c in board) or any(c is None for c in cards):
            return
        board_codes = [c.card for c in board if c is not None]
        hole_codes = [c.card for c in cards if c is not None]
        if board_is_best(board_codes, hole_codes):
            self.raise_alert(
                "board_claim_forfeited",
                f"Seat {seat} mucked at showdown without declaring the board, which was its best hand.",
                seat,
            )

    # -- the decks (shuffler events) --------------------------------------------------------------

    def _forget_deck(self, deck: str) -> None:
        """A deck was reshuffled: its cards left over from a hand over (or void) are in it now."""
        registry = self.settings.registry
        for uid, zone in list(self.zone.items()):
            card = registry.lookup(uid)
            if card is not None and card.deck == deck:
                self.take_away(uid, zone)

    def _other_deck(self, deck: str | None) -> str | None:
        others = [d for d in self.settings.registry.decks if d != deck]
        return others[0] if len(others) == 1 else None

    def _shuffle_complete(self, device: str, event: ShuffleCompleteEvent) -> None:
        self.shuffler_known = True
        deck = event.deck
        if deck is not None and deck not in self.settings.registry.decks:
            # not a deck of this table: nothing to mark (and no name from a payload to keep)
            if event.ok:
                return
            self.raise_alert(
                "deck_check_failed",
                f"The deck check of a deck not in the registry failed (count {event.count}): "
                "do not deal it.",
                scope="deck",
                device=device,
            )
            return
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
        # Counts only: card names could be hole cards of the deck in play (secrecy).
        parts = [f"count {event.count}"]
        if event.missing:
            parts.append(f"{len(event.missing)} missing")
        if event.duplicates:
            parts.append(f"{len(event.duplicates)} duplicated")
        name = f"deck {deck}" if deck is not None else "the deck"
        message = f"The deck check of {name} failed ({', '.join(parts)}): do not deal it."
        self.raise_alert("deck_check_failed", message, scope="deck", key=deck, device=device)
