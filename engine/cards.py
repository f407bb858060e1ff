"""The cards on the table as evidence: tag reads to zones, and each move told to the concern
it concerns.

Evidence model, in short (docs/engine.md has the long form):
- A card's *zone* is the last zone its tag was reported present in. A tag leaving an antenna
  does not move the card (players lift their cards, reads are missed); only a report in another
  zone does. A tag reported in a second zone while still present in the first is either a move
  or antenna crosstalk: the next absence decides (absent from the old zone: it moved; absent
  from the new one: crosstalk, nothing happened).
- Board cards a remedy says to take back count as removed once their tag leaves the board.

The concern is :class:`Cards`, over its part :class:`CardState`; the dispatcher
(:mod:`engine.dispatcher`) gives it the card tags read, and it tells the deal (a seat, the muck),
the board (the board, the burn) and the handling what arrived and left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contract.cards import RANKS, zone_seat

if TYPE_CHECKING:
    from engine.dispatcher import Machine
    from engine.table import Table


@dataclass(slots=True)
class CardState:
    """Where the cards are. Its dicts are updated in place (a copy copies them; a new hand
    replaces ``zone`` and ``seat_cards``)."""

    #: The logical zone of each card of this hand (its last zone read present).
    zone: dict[str, str] = field(default_factory=dict)
    #: The zones each tag is read present in now (every tag, of any hand).
    present: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The hole cards at each seat, in the order they arrived.
    seat_cards: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: The card dicts changed in this step (part of the state's data, kept as it was; the
    #: public state's change check reads ``Cards.seats_changed``, the seats' cards only).
    changed: bool = False
    #: Foreign tags reported this hand (``fouled_deck``: each said once a hand); replaced when
    #: it changes.
    fouled_seen: frozenset[str] = frozenset()

    def copy(self) -> CardState:
        return CardState(
            self.zone.copy(), self.present.copy(), self.seat_cards.copy(), False, self.fouled_seen
        )

    def new_hand(self) -> None:
        """A new hand: no card of it anywhere yet (what is read stays read), no foreign tag
        reported in it."""
        self.zone = {}
        self.seat_cards = {}
        self.fouled_seen = frozenset()


class Cards:
    """Card tags to zones, moves told to the deal, the board and the handling."""

    __slots__ = ("machine", "seats_changed", "state", "table")

    def __init__(self, state: CardState, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table  # the time, the settings, the alerts
        self.machine = machine  # the hand's part, and the concerns told of each move
        #: The seats' cards (``seat_cards``) changed in this step: what the public state's
        #: change check reads (most reads change only where a tag is present, which no public
        #: state shows: the seats' items are not listed again for them). Derived, never state:
        #: a new concern, each working copy, starts it False (its dict is a new one anyway).
        self.seats_changed = False

    def change(self) -> None:
        """The seats' cards are about to change in this step (see ``CardState.changed``, and
        ``seats_changed``; this concern's own methods set them themselves)."""
        self.state.changed = True
        self.seats_changed = True

    def leave(self, uid: str, zone: str) -> None:
        """A card left ``zone`` (moved, or taken away)."""
        seat = zone_seat(zone)
        if seat is not None:
            state = self.state
            state.changed = self.seats_changed = True
            seat_cards = state.seat_cards
            seat_cards[seat] = tuple(u for u in seat_cards.get(seat, ()) if u != uid)
        elif zone in ("board", "burn"):
            self.machine.board.leave(uid, zone)

    def take_away(self, uid: str, zone: str) -> None:
        """A card a remedy takes away (or a reshuffled deck's) is in no zone any more."""
        self.leave(uid, zone)
        state = self.state
        state.changed = True
        del state.zone[uid]

    def forget_where_seen(self) -> None:
        """A hand whose events were lost is forgotten (engine.hands): where each tag was last
        read too (an absence may be among what was lost)."""
        self.state.present = {}

    def seen(self, uid: str, zone: str, face_up: bool) -> None:
        """A card's tag read present in ``zone`` (face up or not)."""
        state, machine = self.state, self.machine
        zones = state.present.get(uid, ())
        if zone in zones:
            if face_up and state.zone.get(uid) == zone:
                machine.dealing.turned_up(uid, zone, arriving=False)
            return  # the same tag reported twice is one card
        state.changed = True
        state.present[uid] = (*zones, zone)
        if not self._genuine(uid, zone):
            return
        current = state.zone.get(uid)
        if current == zone:
            if machine.handling_state.off_table:
                machine.handling.card_read(uid)
            if face_up:
                machine.dealing.turned_up(uid, zone, arriving=False)
            return
        if zones:
            return  # still seen elsewhere: a move or crosstalk, the next absence tells
        if face_up and current is None and self._drawn_for_button(uid, zone):
            return
        self._move(uid, current, zone, face_up)
        if face_up and state.zone.get(uid) == zone:
            machine.dealing.turned_up(uid, zone, arriving=True)

    def _drawn_for_button(self, uid: str, zone: str) -> bool:
        """Seed 000: before the first hand each player is dealt a club face up for the button."""
        table = self.table
        machine = self.machine
        hand = machine.hand_part
        seat = zone_seat(zone)
        card = table.settings.registry.lookup(uid)
        if seat is None or card is None or table.hand != 0 or hand.phase not in ("idle", "shuffled"):
            return False
        if hand.button_known:
            return False  # the button is placed once the draw is over
        if card.card[1] != "c":
            return False
        machine.hands.drawn(seat, RANKS.index(card.card[0]))
        return True

    def unseen(self, uid: str, zone: str) -> None:
        """A card's tag read absent from ``zone``."""
        state, machine = self.state, self.machine
        zones = state.present.get(uid)
        if not zones or zone not in zones:
            return
        rest = tuple(z for z in zones if z != zone)
        state.changed = True
        if rest:
            state.present[uid] = rest
        else:
            del state.present[uid]
        current = state.zone.get(uid)
        if current != zone:
            return  # a crosstalk read ended: the card never left its zone
        if rest:
            self._move(uid, current, rest[-1], uid in machine.deal_state.face_up)
        else:
            self._lifted(uid, zone)

    def _genuine(self, uid: str, zone: str) -> bool:
        """False (and ``fouled_deck``) for an unknown tag or another deck's card in play."""
        state, table = self.state, self.table
        machine = self.machine
        hand = machine.hand_part
        if zone in ("muck", "aside"):
            return True
        card = table.settings.registry.lookup(uid)
        if card is None:
            if uid not in state.fouled_seen and (hand.running or zone_seat(zone) is not None):
                state.fouled_seen |= {uid}
                where = zone if zone_seat(zone) is None else f"seat {zone_seat(zone)}"
                # The UID stays out of the message: card identities never reach the alerts topic.
                self._foul(f"A tag that is not in the deck registry appeared in {where}: the deck is fouled.")
            return False
        if hand.hand_deck is not None and card.deck != hand.hand_deck and hand.running:  # (cheap first)
            if uid not in state.fouled_seen:
                state.fouled_seen |= {uid}
                where = zone if zone_seat(zone) is None else f"seat {zone_seat(zone)}"
                self._foul(
                    f"A card of deck {card.deck} appeared in {where} during a hand dealt from "
                    f"deck {hand.hand_deck}: the deck is fouled."
                )
            return False
        return True

    def _foul(self, message: str) -> None:
        table = self.table
        machine = self.machine
        if machine.hand_part.running:
            machine.hands.misdeal("fouled_deck", message)
        else:
            table.raise_alert("fouled_deck", message)

    def _lifted(self, uid: str, zone: str) -> None:
        """A tag left every antenna: lifted (seats, noise) unless a remedy takes it away."""
        machine = self.machine
        machine.handling.card_lifted(uid, zone)
        if zone in ("board", "burn"):
            machine.board.lifted(uid, zone)

    def _move(self, uid: str, old: str | None, new: str, face_up: bool = False) -> None:
        state, table = self.state, self.table
        machine = self.machine
        seat = zone_seat(new)
        if (
            seat is not None
            and old is None
            and not machine.hand_part.running
            and not machine.start_by_card(uid, seat)
        ):
            return
        if old is not None:
            if old == "burn":
                machine.board.burn_moved(uid, new)
            self.leave(uid, old)
        state.changed = True
        state.zone[uid] = new
        if seat is not None:
            machine.dealing.arrive_seat(uid, seat, old, face_up)
        elif new == "board":
            if old == "burn" and f"burn:{uid}" in machine.handling_state.alerts:
                # burn_face_up: "the card stays the burn" (it is never a board card)
                table.not_followed(
                    "burn-face-up",
                    "The burn card read face up was turned on the board: it stays the burn.",
                    ("Put it back in the burn; deal the board card from the deck.",),
                    of="burn_face_up",
                )
            machine.board.arrive(uid)
        elif new == "burn":
            machine.board.arrive_burn(uid, old)
            if face_up:
                machine.handling.burn_face_up(uid)
        elif new == "muck" and old is not None:
            machine.dealing.arrive_muck(uid, old)
            seat_left = zone_seat(old)
            if seat_left is not None:
                machine.handling.muck_arrival(seat_left)
