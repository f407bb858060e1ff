"""Hand start and end, the dealing order, the button and the betting rounds."""

from __future__ import annotations

from dataclasses import replace

from contract.cards import zone_seat
from engine.remedies import (
    ButtonRemedy,
)
from engine.streets import PLAY_ZONES
from engine.table import Table


class HandRules(Table):
    """Starting, voiding and ending hands; betting rounds (keypad or action feed)."""

    def _active(self) -> frozenset[int]:
        return frozenset(self.in_hand) - self.folded - self.allin_seats

    def open_round(self) -> None:
        if self.settings.stakes is not None:
            self.results.round_opened()  # the betting core follows the rounds
            return
        if self.settings.action_feed and not self.all_in:
            self.to_act = self._active()
            self.round_open = True
            if self.rounds_done > 0:
                self.contrib = {}

    def bet(self, seat: int, action: str, amount: int) -> None:
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
        self.round_complete()

    def round_complete(self) -> None:
        if self.phase == "dealing":
            self.dealing.deal_end()
        if not self.running:
            return
        street = self.board.street()
        self.round_open = False
        self.board.round_complete()
        self.rounds_done = max(self.rounds_done, street + 1)
        if self.rounds_done >= 4:
            self.showdown()

    def _next_occupied(self, seat: int) -> int:
        n = self.settings.seats
        for step in range(1, n + 1):
            candidate = (seat - 1 + step) % n + 1
            if self.occupied.get(candidate):
                return candidate
        return seat

    def clockwise_from(self, button: int, seats: tuple[int, ...]) -> tuple[int, ...]:
        """``seats`` in dealing order: first the seat left of the button, the button last."""
        n = self.settings.seats
        return tuple(sorted(seats, key=lambda s: (s - button - 1) % n))

    def retrieved(self, done: str, arriving: str | None = None) -> bool:
        """After a misdeal: no card of the void hand is still on a seat, the board or the burn
        (``arriving``, the card now dealt, may be one of them, reshuffled).

        Otherwise what the dealer ``done`` is not a redeal: the card joins the void hand, and
        once the dealer's reaction time is over it is a remedy not followed, named as it is.
        """
        for uid in self.void_cards:
            if uid == arriving:
                continue
            for zone in self.card_state.present.get(uid, ()):
                if zone in PLAY_ZONES or zone_seat(zone) is not None:
                    if arriving is not None:
                        self.void_cards |= {arriving}
                    if not self.reacting():
                        self.not_followed(
                            "misdeal-retrieve",
                            f"{done} while the misdealt hand was still on the table: the hand "
                            "is void.",
                            (
                                "Stop: retrieve all cards.",
                                "Reshuffle, cut and redeal with the same button.",
                            ),
                            of=self.misdeal_code(),
                        )
                    return False
        return True

    def _close_hand(self) -> None:
        self.book.resolve_scope("hand", self.ts)
        self.book.resolve_scope("misdeal", self.ts)

    def resume(self) -> None:
        """Events of this hand were lost (docs/engine.md, "Gap fill"): at the next hand boundary
        the hand is over as far as the evidence goes. Everything it left is forgotten, including
        where tags were seen (an absence may be among what was lost: a card the engine still
        believes on the table would block the next redeal) and where the button must go."""
        self.results.hand_lost()
        self._close_hand()
        self.reset_hand()
        self.phase = "idle"
        self.card_state.present = {}
        self.void_cards = frozenset()
        self.misdeal_deck = None
        self.anchor = None
        self.critical_at = None
        self.devices.resume()
        self.results.no_result()

    def begin_hand(self, *, by_key: bool) -> None:
        """A new hand starts (by the ``new_hand`` key, or by its first card)."""
        left_wrong = self.results.hand_ends()
        redeal = self.phase == "misdeal"
        self._set_up_hand(by_key=by_key)
        self.results.hand_started(left_wrong, redeal=redeal)

    def _set_up_hand(self, *, by_key: bool) -> None:
        redeal_of = self.misdeal_deck if self.phase == "misdeal" else None
        self._close_hand()
        self.hand += 1
        self.reset_hand()
        self.redeal_of = redeal_of
        self.misdeal_deck = None
        self.void_cards = frozenset()
        self.phase = "dealing"
        if self.seats_known:
            occupied = tuple(s for s in range(1, self.settings.seats + 1) if self.occupied.get(s))
            self.in_hand = occupied
        expected: int | None = None
        if self.draw:
            # seed 000: the highest club of the draw takes the button
            expected = min(self.draw, key=lambda drawn: drawn[1])[0]
            self.draw = ()
        elif self.anchor is not None:
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
                alert = self.raise_alert(
                    "button_misplaced",
                    message,
                    expected,
                    remedy=(f"Before dealing, move the button to seat {expected}.",),
                )
                self.button_r = ButtonRemedy(alert, expected)
            else:
                self.button_late(message, expected, None)

    def _set_order(self, button: int | None) -> None:
        """The hand's button and, with the seats known, the dealing order."""
        self.hand_button = button
        if button is None:
            return
        self.anchor = (button, True)
        if self.in_hand:
            self.order = self.clockwise_from(button, self.in_hand)
            self.order_closed = True
            self.sequence = self.order + self.order

    def refresh_seats(self) -> None:
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

    def button_late(self, message: str, expected: int, existing: str | None) -> None:
        """The deal began with the button on the wrong seat: RR misdeal, TDA play continues."""
        if self.profile == "tda":
            remedy = (
                f"Move the button to seat {expected} before substantial action.",
                "After substantial action play continues with the button as it is.",
            )
            text = message + " The deal has begun: correct it before substantial action."
            if existing is not None:
                self.book.update(existing, self.ts, severity="critical", message=text, remedy=list(remedy))
                self.critical_at = self.ts
            else:
                self.raise_alert("button_misplaced", text, expected, severity="critical", remedy=remedy)
            self.button_r = None
            self.late_button = self.book.find("button_misplaced")
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
            self.critical_at = self.ts
        else:
            self.raise_alert(
                "button_misplaced", text, expected, severity="critical", remedy=steps, scope="misdeal"
            )
        self.book.resolve_scope("hand", self.ts)
        self.button_r = None
        self.hand_button = expected
        self.void_hand()

    def hand_done(self) -> None:
        """The hand is over (one seat left, or showdown): dealing alerts are resolved."""
        self.hand_over = True
        self.book.resolve_scope("hand", self.ts)
        self.board.end_remedies()
        self.dealing.end_remedies()

    def showdown(self) -> None:
        self.phase = "showdown"
        self.hand_done()
        self.results.showdown()

    def check_one_left(self) -> None:
        if not self.running or not self.deal_state.done:
            return
        remaining = [s for s in self.in_hand if s not in self.folded]
        if len(remaining) <= 1:
            self.phase = "idle"
            self.hand_done()

    # -- the button and the blinds (sensor events) ----------------------------------------------

    def button_moved(self, seat: int | None) -> None:
        self.button_known = True
        self.button = seat
        remedy = self.button_r
        if remedy is not None and seat == remedy.expected:
            self.book.resolve(remedy.alert, self.ts)
            self.button_r = None
        late = self.late_button
        if (
            late is not None
            and seat is not None
            and seat == self.expected_button
            and self.phase in ("dealing", "preflop")
            and not (self.settings.action_feed and self.window_closed())
        ):
            # TDA 34-A: corrected before substantial action; the next hand moves on from here
            self.book.resolve(late, self.ts)
            self.late_button = None
            self.hand_button = seat
            self.anchor = (seat, True)
