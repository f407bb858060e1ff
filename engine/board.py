"""The board and the burns: streets, premature and extra board cards, burns, and their remedies."""

from __future__ import annotations

from dataclasses import replace

from engine.hands import HandRules
from engine.remedies import (
    BoardRedeal,
    ExtraBurnRemedy,
)
from engine.streets import BOARD_AT, STREET_NAMES, street_of


class BoardRules(HandRules):
    """Board cards and burns, checked against the betting and the remedies in force."""

    def _prelude(self, uid: str, done: str) -> bool:
        """Before a burn or board card: the deal must be over and the hand alive.

        After a misdeal the card joins the void hand; once the dealer's reaction time is over,
        what was ``done`` is a remedy not followed.
        """
        if self.phase == "misdeal":
            self.void_cards |= {uid}
            if not self.reacting():
                self.not_followed(
                    "misdeal-play",
                    f"Play went on after the misdeal ({done}): the hand is void.",
                    ("Stop: retrieve all cards.", "Reshuffle, cut and redeal with the same button."),
                    of=self._misdeal_code(),
                )
            return False
        if self.phase == "dealing":
            self.deal_end()
        return self.running

    def _arrive_board(self, uid: str) -> None:
        self.board = (*self.board, uid)
        if not self._prelude(uid, "a board card was turned"):
            return
        redeal = self.redeal
        if redeal is not None and uid in redeal.removed:
            # a card taken back, reshuffled and dealt again is a new card; it stays in
            # ``removed``: its taking back happened (the redeal is no longer the first turn-up)
            redeal = replace(redeal, taken=redeal.taken - {uid})
            self.redeal = redeal
        live_before = len(self.live_board()) - 1
        street = street_of(live_before)
        first_of_street = live_before in (0, 3, 4)
        if first_of_street and street == 1:
            self._flop_prerequisites()
        extra_burn = self.extra_burn_r
        if extra_burn is not None and extra_burn.returned is None:
            self.not_followed(
                "extra-burn",
                "A board card was dealt while both burn cards were still in the burn.",
                ("Put one burn card back on the deck: it is the next burn.",),
                of="extra_burn",
            )
        elif extra_burn is not None and uid == extra_burn.returned:
            self.extra_burn_r = None  # the alert stays open until the hand is over
            self.not_followed(
                "returned-burn",
                "The burn card put back on the deck was turned on the board instead of being "
                "the next burn.",
                ("The burn card put back on the deck is the next burn.",),
                of="extra_burn",
            )
        if redeal is not None and self._redeal_card(redeal, uid, street):
            return
        if redeal is not None and first_of_street and street == 3:
            self._set_aside_check(redeal, uid)
        if first_of_street and street <= 3 and self.results.street(street):
            # the betting core saw the previous round complete (from chips or actions)
            self.rounds_done = max(self.rounds_done, street)
        premature = not self.all_in and self.rounds_done < min(street, 4)
        if premature and redeal is not None and redeal.street == street:
            self.not_followed(
                f"wait-betting-{street}",
                f"The {STREET_NAMES[street]} was dealt again before the betting was complete.",
                ("Complete the betting before dealing the street.",),
                of=redeal.code,
            )
            if redeal.code.startswith("premature_"):
                # premature again: the same remedy, under the same alert (the rest of this
                # street is part of it, not a new premature street)
                self._premature(uid, street, redeal.alert)
            else:
                self.redeal = None  # the alert stays open until the hand is over
        elif street == 4 or (premature and first_of_street and street >= 2 and self.street_burns == 0):
            self._too_many(uid, street - 1)
        elif premature:
            self._premature(uid, street)
        elif first_of_street and self.street_burns == 0 and street not in self.burn_waived:
            redealt = redeal is not None and redeal.street == street
            if redeal is not None and redealt and redeal.code in ("missing_burn", "premature_turn"):
                # (RR premature turn: what would have been the river is burned and turned)
                self.not_followed(
                    f"burn-{street}",
                    f"The {STREET_NAMES[street]} was dealt again without a burn card.",
                    ("Burn one card, then deal the street.",),
                    of=redeal.code,
                )
                if redeal.code == "missing_burn":
                    self.redeal = None  # the alert stays open until the hand is over
            else:
                self._missing_burn(uid, street)
        self._street_progress()

    def _flop_prerequisites(self) -> None:
        exposed = self.exposed_r
        if exposed is not None:
            if not exposed.burned:
                self.not_followed(
                    "exposed-burn",
                    f"The flop came while the exposed card of seat {exposed.seat} was not the burn.",
                    ("The exposed card may not be kept: it is the burn card before the flop.",),
                    exposed.seat,
                    of="exposed_card",
                )
            if not exposed.replaced:
                self.not_followed(
                    "exposed-replace",
                    f"Seat {exposed.seat} was not given the top card in place of its exposed card.",
                    ("Give that seat the top card of the deck.",),
                    exposed.seat,
                    of="exposed_card",
                )
        extra = self.extra_r
        if extra is not None:
            self.not_followed(
                "extra-card",
                f"The flop came but the extra card of seat {extra.seat} was not the burn card.",
                ("The extra card goes back on the deck and is the burn card for the flop.",),
                extra.seat,
                of="extra_card",
            )
            self.extra_r = None

    def _set_aside_check(self, redeal: BoardRedeal, uid: str) -> None:
        """RR premature turn: the river comes from the stub reshuffled with the set-aside card."""
        if redeal.code != "premature_turn" or self.profile != "roberts":
            return
        aside = [u for u in redeal.taken if u != uid and "aside" in self.present.get(u, ())]
        if aside:
            self.not_followed(
                "set-aside-river",
                "The river was dealt while the card taken out of play was still set aside, "
                "not reshuffled into the stub.",
                (
                    "The set-aside card is reshuffled with the stub (not the burns or discards) "
                    "before the river.",
                ),
                of="premature_turn",
            )

    def _redeal_card(self, redeal: BoardRedeal, uid: str, street: int) -> bool:
        """A board card while a street is being redealt; True when fully handled here."""
        if redeal.keep_ok and redeal.code != "missing_burn":
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
            if redeal.keep_ok:
                self._street_progress()  # an unburned street stands once action is taken
            return True
        if redeal.keep_ok:
            return False
        if redeal.scramble:
            self.not_followed(
                "scramble",
                "A new card was turned instead of using the four scrambled flop cards.",
                ("Scramble the four cards; one becomes the burn, three are the flop.",),
                of="board_too_many_cards",
            )
            return True
        if not redeal.all_removed and street == redeal.street:
            self.not_followed(
                f"take-back-{redeal.street}",
                f"The {STREET_NAMES[redeal.street]} was dealt again before the cards turned by "
                "mistake were taken back.",
                ("Take the cards turned by mistake back and mix them with the stub.",),
                of=redeal.code,
            )
            self._street_progress()
            return True
        return False

    def _premature(self, uid: str, street: int, alert: str | None = None) -> None:
        """A street turned before its betting round was complete (``alert``: the one already
        raised, for a street dealt prematurely again)."""
        name = STREET_NAMES[street]
        code = f"premature_{name}"
        if alert is None:
            alert = self.raise_alert(
                code, f"The {name} was turned before the {STREET_NAMES[street - 1]} betting was complete."
            )
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

    def _too_many(self, uid: str, street: int) -> None:
        name = STREET_NAMES[street]
        live = [u for u in self.board if u not in self._taken() and u != uid]
        cards = frozenset((*live[BOARD_AT[street - 1] :], uid))
        alert = self.raise_alert(
            "board_too_many_cards",
            f"{len(cards)} cards were turned for the {name}, which takes "
            f"{BOARD_AT[street] - BOARD_AT[street - 1]}.",
        )
        scramble = self.profile == "tda" and street == 1
        self.redeal = BoardRedeal(
            alert, "board_too_many_cards", street, cards, resolve_at=street, scramble=scramble
        )
        if not scramble:
            self.burn_waived |= {street}

    def _missing_burn(self, uid: str, street: int) -> None:
        """A street turned without a burn: corrected before any action on it (taken back,
        burn, dealt again); once action is taken on it, it stands (RR; TDA 39-B), and the
        next streets are burned and dealt as usual."""
        name = STREET_NAMES[street]
        alert = self.raise_alert(
            "missing_burn",
            f"The {name} was turned without a burn card: before any action, take it back, burn "
            "and deal it again; once action is taken on it, it stands.",
        )
        self.redeal = BoardRedeal(
            alert, "missing_burn", street, frozenset({uid}), resolve_at=street, keep_ok=True
        )

    def _street_progress(self) -> None:
        """Board complete for a street: reset the burn count, resolve finished remedies."""
        live = len(self.live_board())
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
            self.showdown()
        elif self.rounds_done == street:
            self._open_round()

    def _arrive_burn(self, uid: str, old: str | None) -> None:
        self.burns = (*self.burns, uid)
        exposed = self.exposed_r
        if exposed is not None and uid == exposed.uid and self.running:
            self.exposed_r = replace(exposed, burned=True)
            self._count_burn(street_of(len(self.live_board())))
            self._check_exposed()
            return
        if not self._prelude(uid, "a card was burned"):
            return
        redeal = self.redeal
        if redeal is not None and redeal.scramble and uid in redeal.taken:
            # TDA 39-A: one of the four becomes the burn, the other three are the flop
            self.board = tuple(u for u in self.board if u != uid)
            self.book.resolve(redeal.alert, self.ts)
            self.redeal = None
            self._street_progress()
            return
        street = street_of(len(self.live_board()))
        extra = self.extra_r
        if extra is not None and uid == extra.uid:
            self.extra_r = None
            self.book.resolve(extra.alert, self.ts)
            self._count_burn(street)
            return
        if (extra is not None or (exposed is not None and not exposed.burned)) and street == 1:
            # Another card burned first: two burns once the right one follows (one goes back);
            # the flop says whether the remedy was followed.
            self._count_burn(street)
            return
        returned = self.extra_burn_r
        if returned is not None and returned.returned is not None and returned.street == street:
            # burned for the street it was put back from: two burns for it again (the alert
            # stays open until the hand is over)
            self.extra_burn_r = None
            if uid == returned.returned:
                self.not_followed(
                    "returned-burn-again",
                    f"The burn card put back on the deck was burned again for the "
                    f"{STREET_NAMES[min(street, 3)]}: it is the next street's burn.",
                    ("The burn card put back on the deck is the next street's burn.",),
                    of="extra_burn",
                )
                self.street_burns += 1
            else:
                self._count_burn(street)  # another second burn: extra_burn again
            return
        if returned is not None and returned.returned is not None:
            self.extra_burn_r = None
            if uid == returned.returned:
                self.book.resolve(returned.alert, self.ts)  # the remedy carried out
            else:  # the alert stays open until the hand is over
                self.not_followed(
                    "returned-burn",
                    f"The {STREET_NAMES[min(street, 3)]} was burned with another card: the burn "
                    "card put back on the deck is the next burn.",
                    ("The burn card put back on the deck is the next burn.",),
                    of="extra_burn",
                )
            self.street_burns += 1
            return
        if street in self.burn_waived:
            self.not_followed(
                f"no-burn-{street}",
                f"A burn card was dealt for the {STREET_NAMES[min(street, 3)]}, "
                "which must be dealt without burning.",
                ("Deal the street without burning a card.",),
                of=redeal.code if redeal is not None else None,
            )
            self.street_burns += 1
            return
        self._count_burn(street)

    def _count_burn(self, street: int) -> None:
        """One more burn for ``street``; the second is an extra burn (one goes back)."""
        self.street_burns += 1
        if self.street_burns == 2 and self.extra_burn_r is None:
            alert = self.raise_alert(
                "extra_burn",
                f"Two burn cards were dealt for the {STREET_NAMES[min(street, 3)]}.",
            )
            self.extra_burn_r = ExtraBurnRemedy(alert, street)
