"""The board and the burns: streets, premature and extra board cards, burns, and their remedies.

The concern is :class:`Board`, over its part :class:`BoardState` (reset with each hand); the
dispatcher (:mod:`engine.dispatcher`) tells it the cards that arrive on the board and in the burn,
and those that leave; it reads the hand (its phase, its betting rounds, the dealing remedies in
force) from the table it is attached to, and raises its alerts through it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from contract.cards import zone_seat
from engine.remedies import (
    BoardRedeal,
    ExtraBurnRemedy,
)
from engine.streets import BOARD_AT, STREET_NAMES, street_of

if TYPE_CHECKING:
    from engine.dispatcher import Machine
    from engine.table import Table


@dataclass(slots=True)
class BoardState:
    """The hand's board and burns. Every value is immutable (a copy shares them)."""

    #: The board cards turned, in order, and the burns.
    cards: tuple[str, ...] = ()
    burns: tuple[str, ...] = ()
    #: Burns dealt for the street being dealt.
    street_burns: int = 0
    #: The board remedy in force (a street taken back and dealt again), and an extra burn's.
    redeal: BoardRedeal | None = None
    extra_burn: ExtraBurnRemedy | None = None
    #: Streets a remedy says to deal without a burn.
    waived: frozenset[int] = frozenset()

    def copy(self) -> BoardState:
        return BoardState(
            self.cards, self.burns, self.street_burns, self.redeal, self.extra_burn, self.waived
        )

    def new_hand(self) -> None:
        """A new hand: no board yet."""
        self.cards, self.burns, self.street_burns = (), (), 0
        self.redeal, self.extra_burn, self.waived = None, None, frozenset()


class Board:
    """Board cards and burns, checked against the betting and the remedies in force."""

    __slots__ = ("machine", "state", "table")

    def __init__(self, state: BoardState, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table  # the time, the settings, the alerts
        self.machine = machine  # the hand's part, the deal's remedies, the results told

    # -- what the board shows ------------------------------------------------------------------

    def started(self) -> bool:
        """A board card or a burn is out."""
        return bool(self.state.cards or self.state.burns)

    def live(self) -> tuple[str, ...]:
        """The board cards in play (not those a remedy takes back)."""
        state = self.state
        redeal = state.redeal
        if redeal is None or redeal.keep_ok:
            return state.cards
        return tuple(u for u in state.cards if u not in redeal.taken)

    def street(self) -> int:
        """Completed board streets: 0 none, 1 flop, 2 turn, 3 river."""
        live = len(self.live())
        return 3 if live >= 5 else 2 if live == 4 else 1 if live >= 3 else 0

    def taken(self) -> frozenset[str]:
        """The board cards a remedy takes back."""
        redeal = self.state.redeal
        return redeal.taken if redeal is not None else frozenset()

    def cleared(self) -> bool:
        """No board card is read on the board any more."""
        present = self.machine.card_state.present
        return not any("board" in present.get(uid, ()) for uid in self.state.cards)

    def leave(self, uid: str, zone: str) -> None:
        """A card left the board or the burn."""
        state = self.state
        if zone == "board":
            state.cards = tuple(u for u in state.cards if u != uid)
            redeal = state.redeal
            if redeal is not None and uid in redeal.taken:
                state.redeal = replace(redeal, removed=redeal.removed | {uid})
        elif zone == "burn":
            state.burns = tuple(u for u in state.burns if u != uid)

    def burn_moved(self, uid: str, new: str) -> None:
        """A burn card read moving from the burn to ``new`` (the board, the muck, aside or a
        seat): while a premature flop is redealt, the flop's burn stays the burn (docs/rules.md,
        ``premature_flop``). A burn read nowhere may be a missed read: not judged."""
        redeal = self.state.redeal
        if redeal is None or uid not in redeal.burns:
            return
        seat = zone_seat(new)
        where = f"seat {seat}" if seat is not None else "the board" if new == "board" else f"the {new}"
        self.table.not_followed(
            "premature-flop-burn",
            f"The flop's burn card was moved from the burn to {where} after the premature flop: "
            "the burn card stays.",
            (
                "Put the burn card back in the burn; deal the new flop from the reshuffled stub "
                "without burning.",
            ),
            of=redeal.code,
        )

    def end_remedies(self) -> None:
        """The hand is over or void: no board remedy is followed any more."""
        self.state.redeal = None
        self.state.extra_burn = None

    def lifted(self, uid: str, zone: str) -> None:
        """A board card or a burn read by no antenna: taken away if a remedy says so; the board
        cleared after the river ends the hand."""
        state, table = self.state, self.table
        machine = self.machine
        redeal = state.redeal
        extra_burn = state.extra_burn
        if zone == "board" and redeal is not None and uid in redeal.taken:
            machine.cards.take_away(uid, zone)
        elif zone == "burn" and extra_burn is not None and extra_burn.returned is None:
            machine.cards.take_away(uid, zone)
            state.street_burns = max(0, state.street_burns - 1)
            if extra_burn.street >= 3:
                # the river's: no burn comes after it, putting it back is the whole remedy
                table.book.resolve(extra_burn.alert, table.ts)
                state.extra_burn = None
            else:
                # back on the deck, it is the next burn (RR; TDA 38), before the street's cards
                # or after them: the alert stays open until it is burned (arrive_burn)
                state.extra_burn = replace(extra_burn, returned=uid)
        elif zone == "board" and machine.hand_part.phase in ("river", "showdown") and self.cleared():
            machine.hands.board_cleared()  # the river was out and the board has been cleared

    def action(self, action: str) -> None:
        """An action input: action taken on an unburned street, which then stands (RR; TDA
        39-B)."""
        redeal = self.state.redeal
        if redeal is not None and redeal.code == "missing_burn" and action != "post" and not redeal.removed:
            self.table.book.resolve(redeal.alert, self.table.ts)
            self.state.redeal = None

    def round_complete(self) -> None:
        """A betting round is complete: action took place on the unburned card, it stands (TDA
        39-B)."""
        redeal = self.state.redeal
        if redeal is not None and redeal.keep_ok and not redeal.removed:
            self.table.book.resolve(redeal.alert, self.table.ts)
            self.state.redeal = None

    # -- cards arriving --------------------------------------------------------------------------

    def _prelude(self, uid: str, done: str) -> bool:
        """Before a burn or board card: the deal must be over and the hand alive.

        After a misdeal the card joins the void hand; once the dealer's reaction time is over,
        what was ``done`` is a remedy not followed.
        """
        table = self.table
        machine = self.machine
        hand = machine.hand_part
        if hand.phase == "misdeal":
            machine.hands.void_card(uid)
            if not table.reacting():
                table.not_followed(
                    "misdeal-play",
                    f"Play went on after the misdeal ({done}): the hand is void.",
                    ("Stop: retrieve all cards.", "Reshuffle, cut and redeal with the same button."),
                    of=table.misdeal_code(),
                )
            return False
        if hand.phase == "dealing":
            machine.dealing.deal_end()
        return hand.running

    def arrive(self, uid: str) -> None:
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        state.cards = (*state.cards, uid)
        if not self._prelude(uid, "a board card was turned"):
            return
        redeal = state.redeal
        if redeal is not None and uid in redeal.removed:
            # a card taken back, reshuffled and dealt again is a new card; it stays in
            # ``removed``: its taking back happened (the redeal is no longer the first turn-up)
            redeal = replace(redeal, taken=redeal.taken - {uid})
            state.redeal = redeal
        live_before = len(self.live()) - 1
        street = street_of(live_before)
        first_of_street = live_before in (0, 3, 4)
        if first_of_street and street == 1:
            machine.dealing.flop_came()
        extra_burn = state.extra_burn
        if extra_burn is not None and extra_burn.returned is None:
            table.not_followed(
                "extra-burn",
                "A board card was dealt while both burn cards were still in the burn.",
                ("Put one burn card back on the deck: it is the next burn.",),
                of="extra_burn",
            )
        elif extra_burn is not None and uid == extra_burn.returned:
            state.extra_burn = None  # the alert stays open until the hand is over
            table.not_followed(
                "returned-burn",
                "The burn card put back on the deck was turned on the board instead of being the next burn.",
                ("The burn card put back on the deck is the next burn.",),
                of="extra_burn",
            )
        if redeal is not None and self._redeal_card(redeal, uid, street):
            return
        if redeal is not None and first_of_street and street == 3:
            self._set_aside_check(redeal, uid)
        if first_of_street and street <= 3 and machine.results.street(street):
            # the betting core saw the previous round complete (from chips or actions)
            machine.hands.rounds_over(street)
        premature = not hand.all_in and hand.rounds_done < min(street, 4)
        if premature and redeal is not None and redeal.street == street:
            table.not_followed(
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
                state.redeal = None  # the alert stays open until the hand is over
        elif street == 4 or (premature and first_of_street and street >= 2 and state.street_burns == 0):
            self._too_many(uid, street - 1)
        elif premature:
            self._premature(uid, street)
        elif first_of_street and state.street_burns == 0 and street not in state.waived:
            redealt = redeal is not None and redeal.street == street
            if redeal is not None and redealt and redeal.code in ("missing_burn", "premature_turn"):
                # (RR premature turn: what would have been the river is burned and turned)
                table.not_followed(
                    f"burn-{street}",
                    f"The {STREET_NAMES[street]} was dealt again without a burn card.",
                    ("Burn one card, then deal the street.",),
                    of=redeal.code,
                )
                if redeal.code == "missing_burn":
                    state.redeal = None  # the alert stays open until the hand is over
            else:
                self._missing_burn(uid, street)
        self.progress()

    def _set_aside_check(self, redeal: BoardRedeal, uid: str) -> None:
        """RR premature turn: the river comes from the stub reshuffled with the set-aside card."""
        table = self.table
        machine = self.machine
        if redeal.code != "premature_turn" or table.profile != "roberts":
            return
        aside = [u for u in redeal.taken if u != uid and "aside" in machine.card_state.present.get(u, ())]
        if aside:
            table.not_followed(
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
        state, table = self.state, self.table
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
            state.redeal = replace(redeal, taken=redeal.taken | {uid})
            if redeal.keep_ok:
                self.progress()  # an unburned street stands once action is taken
            return True
        if redeal.keep_ok:
            return False
        if redeal.scramble:
            table.not_followed(
                "scramble",
                "A new card was turned instead of using the four scrambled flop cards.",
                ("Scramble the four cards; one becomes the burn, three are the flop.",),
                of="board_too_many_cards",
            )
            return True
        if not redeal.all_removed and street == redeal.street:
            table.not_followed(
                f"take-back-{redeal.street}",
                f"The {STREET_NAMES[redeal.street]} was dealt again before the cards turned by "
                "mistake were taken back.",
                ("Take the cards turned by mistake back and mix them with the stub.",),
                of=redeal.code,
            )
            self.progress()
            return True
        return False

    def _premature(self, uid: str, street: int, alert: str | None = None) -> None:
        """A street turned before its betting round was complete (``alert``: the one already
        raised, for a street dealt prematurely again)."""
        state, table = self.state, self.table
        name = STREET_NAMES[street]
        code = f"premature_{name}"
        if alert is None:
            alert = table.raise_alert(
                code, f"The {name} was turned before the {STREET_NAMES[street - 1]} betting was complete."
            )
        if street == 1:
            taken = frozenset(u for u in state.cards if u not in self.taken())
            # "the burn card stays": the flop's burns (the first of the hand) while it is redealt
            burns = frozenset(state.burns)
            state.redeal = BoardRedeal(alert, code, 1, taken, resolve_at=1, burns=burns)
            state.waived |= {1}
        elif street == 2 and table.profile == "roberts":
            state.redeal = BoardRedeal(alert, code, 2, frozenset({uid}), resolve_at=3)
            state.street_burns = 0  # burn and turn what would have been the river
            state.waived |= {3}
        else:
            state.redeal = BoardRedeal(alert, code, street, frozenset({uid}), resolve_at=street)
            state.waived |= {street}

    def _too_many(self, uid: str, street: int) -> None:
        state, table = self.state, self.table
        name = STREET_NAMES[street]
        live = [u for u in state.cards if u not in self.taken() and u != uid]
        cards = frozenset((*live[BOARD_AT[street - 1] :], uid))
        alert = table.raise_alert(
            "board_too_many_cards",
            f"{len(cards)} cards were turned for the {name}, which takes "
            f"{BOARD_AT[street] - BOARD_AT[street - 1]}.",
        )
        scramble = table.profile == "tda" and street == 1
        state.redeal = BoardRedeal(
            alert, "board_too_many_cards", street, cards, resolve_at=street, scramble=scramble
        )
        if not scramble:
            state.waived |= {street}

    def _missing_burn(self, uid: str, street: int) -> None:
        """A street turned without a burn: corrected before any action on it (taken back,
        burn, dealt again); once action is taken on it, it stands (RR; TDA 39-B), and the
        next streets are burned and dealt as usual."""
        state, table = self.state, self.table
        name = STREET_NAMES[street]
        alert = table.raise_alert(
            "missing_burn",
            f"The {name} was turned without a burn card: before any action, take it back, burn "
            "and deal it again; once action is taken on it, it stands.",
        )
        state.redeal = BoardRedeal(
            alert, "missing_burn", street, frozenset({uid}), resolve_at=street, keep_ok=True
        )

    def progress(self) -> None:
        """Board complete for a street: reset the burn count, resolve finished remedies."""
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        live = len(self.live())
        street = {3: 1, 4: 2, 5: 3}.get(live)
        if street is None:
            return
        state.street_burns = 0
        machine.hands.street_out(street)
        redeal = state.redeal
        if redeal is not None and redeal.resolve_at == street and redeal.all_removed:
            table.book.resolve(redeal.alert, table.ts)
            state.redeal = None
        elif redeal is not None and redeal.resolve_at < street:
            state.redeal = None
        if street == 3 and hand.all_in:
            machine.hands.showdown()
        elif hand.rounds_done == street:
            machine.rounds.open_round()

    def arrive_burn(self, uid: str, old: str | None) -> None:
        state, table = self.state, self.table
        machine = self.machine
        state.burns = (*state.burns, uid)
        exposed = machine.deal_state.exposed
        if exposed is not None and uid == exposed.uid and machine.hand_part.running:
            machine.dealing.exposed_burned()
            self._count_burn(street_of(len(self.live())))
            machine.dealing.check_exposed()
            return
        if not self._prelude(uid, "a card was burned"):
            return
        redeal = state.redeal
        if redeal is not None and redeal.scramble and uid in redeal.taken:
            # TDA 39-A: one of the four becomes the burn, the other three are the flop
            state.cards = tuple(u for u in state.cards if u != uid)
            table.book.resolve(redeal.alert, table.ts)
            state.redeal = None
            self.progress()
            return
        street = street_of(len(self.live()))
        extra = machine.deal_state.extra
        if extra is not None and uid == extra.uid:
            machine.dealing.extra_burned()
            self._count_burn(street)
            return
        if (extra is not None or (exposed is not None and not exposed.burned)) and street == 1:
            # Another card burned first: two burns once the right one follows (one goes back);
            # the flop says whether the remedy was followed.
            self._count_burn(street)
            return
        returned = state.extra_burn
        if returned is not None and returned.returned is not None and returned.street == street:
            # burned for the street it was put back from: two burns for it again (the alert
            # stays open until the hand is over)
            state.extra_burn = None
            if uid == returned.returned:
                table.not_followed(
                    "returned-burn-again",
                    f"The burn card put back on the deck was burned again for the "
                    f"{STREET_NAMES[min(street, 3)]}: it is the next street's burn.",
                    ("The burn card put back on the deck is the next street's burn.",),
                    of="extra_burn",
                )
                state.street_burns += 1
            else:
                self._count_burn(street)  # another second burn: extra_burn again
            return
        if returned is not None and returned.returned is not None:
            state.extra_burn = None
            if uid == returned.returned:
                table.book.resolve(returned.alert, table.ts)  # the remedy carried out
            else:  # the alert stays open until the hand is over
                table.not_followed(
                    "returned-burn",
                    f"The {STREET_NAMES[min(street, 3)]} was burned with another card: the burn "
                    "card put back on the deck is the next burn.",
                    ("The burn card put back on the deck is the next burn.",),
                    of="extra_burn",
                )
            state.street_burns += 1
            return
        if street in state.waived:
            table.not_followed(
                f"no-burn-{street}",
                f"A burn card was dealt for the {STREET_NAMES[min(street, 3)]}, "
                "which must be dealt without burning.",
                ("Deal the street without burning a card.",),
                of=redeal.code if redeal is not None else None,
            )
            state.street_burns += 1
            return
        self._count_burn(street)

    def _count_burn(self, street: int) -> None:
        """One more burn for ``street``; the second is an extra burn (one goes back)."""
        state, table = self.state, self.table
        state.street_burns += 1
        if state.street_burns == 2 and state.extra_burn is None:
            alert = table.raise_alert(
                "extra_burn",
                f"Two burn cards were dealt for the {STREET_NAMES[min(street, 3)]}.",
            )
            state.extra_burn = ExtraBurnRemedy(alert, street)
