"""How the cards are handled (seeds 000, 001): a fold that leaves a card behind, a live hole card
kept off the table, a burn card turned face up. Warnings and notes, never a misdeal.

Both are judged on the reader's own time (``read_ts``, the time of the last tag read applied: the
reader's events are applied in their order even after a gap is filled, so messages the broker
delivered late judge nothing): a half-done fold once the dealer's reaction time has passed
since its first card reached the muck (a reader reports a card's move only when it has left its
old antenna, some hundreds of milliseconds apart for two cards), a card off the table once the
house limit has. Cards a remedy sends back to the deck (an extra card, an exposed card) are not
hole cards any more.

The concern is :class:`Handling`, over its part :class:`HandlingState` (reset with each hand); it
reads the hand from the machine it is attached to and is called by it explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from contract.cards import zone_seat

if TYPE_CHECKING:
    from engine.dispatcher import Machine
    from engine.table import Table


@dataclass(slots=True)
class HandlingState:
    """The handling findings of the hand. Its dicts are replaced, never updated, when they
    change (a copy shares them)."""

    #: Seats whose first card reached the muck, and when (the reader's time).
    half_folds: dict[int, datetime] = field(default_factory=dict)
    #: Live hole cards read by no antenna, since when.
    off_table: dict[str, datetime] = field(default_factory=dict)
    #: The alert of each finding raised (``fold:3``, ``off:UID``, ``burn:UID``).
    alerts: dict[str, str] = field(default_factory=dict)

    def copy(self) -> HandlingState:
        return HandlingState(self.half_folds, self.off_table, self.alerts)

    def reset(self) -> None:
        """A new hand: nothing found yet."""
        self.half_folds, self.off_table, self.alerts = {}, {}, {}


class Handling:
    """fold_incomplete, hole_card_off_table, burn_face_up (see the module docstring)."""

    __slots__ = ("machine", "state", "table")

    def __init__(self, state: HandlingState, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table  # the time, the settings, the alerts
        self.machine = machine  # the hand it judges, its cards, the results told of folds

    def muck_arrival(self, seat: int) -> None:
        """A card of ``seat`` reached the muck: a fold is complete once both have."""
        table, state = self.table, self.state
        machine = self.machine
        hand = machine.hand_part
        if not (hand.running or hand.phase == "showdown") or seat not in hand.in_hand:
            return
        if self.live_cards(seat):
            if seat not in state.half_folds:
                state.half_folds = {**state.half_folds, seat: table.read_ts}
                if hand.phase != "showdown":
                    # for the betting the seat has folded (a player does not muck one card and
                    # play on): the next seat's chips are in turn while the other card follows
                    machine.results.fold(seat)
            return
        if seat in state.half_folds:
            state.half_folds = {s: t for s, t in state.half_folds.items() if s != seat}
        self._handled(f"fold:{seat}")

    def card_lifted(self, uid: str, zone: str) -> None:
        """A hole card of a live seat is read by no antenna: players lift their cards to look."""
        table, state = self.table, self.state
        machine = self.machine
        hand = machine.hand_part
        seat = zone_seat(zone)
        if seat is None or not hand.running or seat not in hand.in_hand or seat in hand.folded:
            return
        if uid not in self.live_cards(seat):
            return  # back on the deck by a remedy
        if uid not in state.off_table:
            state.off_table = {**state.off_table, uid: table.read_ts}

    def card_read(self, uid: str) -> None:
        """A card read again: it is back on the table."""
        state = self.state
        if uid in state.off_table:
            state.off_table = {u: t for u, t in state.off_table.items() if u != uid}
            self._handled(f"off:{uid}")

    def burn_face_up(self, uid: str) -> None:
        """A burn card read face up."""
        table, state = self.table, self.state
        machine = self.machine
        key = f"burn:{uid}"
        if key in state.alerts or not machine.hand_part.running or uid in machine.deal_state.face_up:
            return  # an exposed hole card made the burn (the remedy) is face up by nature
        state.alerts = {
            **state.alerts,
            key: table.raise_alert(
                "burn_face_up",
                "A burn card was turned face up: it stays the burn; deal the next board card as normal.",
            ),
        }

    def live_cards(self, seat: int) -> tuple[str, ...]:
        """The seat's hole cards, without those a remedy sends back to the deck."""
        machine = self.machine
        cards = machine.card_state.seat_cards.get(seat, ())
        away = {r.uid for r in (machine.deal_state.extra, machine.deal_state.exposed) if r is not None}
        return tuple(uid for uid in cards if uid not in away) if away else cards

    def half_folds_due(self, seat: int | None) -> None:
        """Judge the folds left half done: ``seat`` None at the hand's end (all of them), else
        those whose first card reached the muck longer ago than the reaction time."""
        table, state = self.table, self.state
        for folding, since in tuple(state.half_folds.items()):
            if seat is not None and table.read_ts - since <= table.reaction:
                continue
            key = f"fold:{folding}"
            state.half_folds = {s: t for s, t in state.half_folds.items() if s != folding}
            if key not in state.alerts and self.live_cards(folding):
                state.alerts = {
                    **state.alerts,
                    key: table.raise_alert(
                        "fold_incomplete",
                        f"Seat {folding} folded but only one of its cards reached the muck.",
                        folding,
                    ),
                }

    def timers(self) -> None:
        """Judge the cards off the table at the reader's time."""
        table, state = self.table, self.state
        machine = self.machine
        hand = machine.hand_part
        limit = timedelta(seconds=table.settings.hole_card_off_s)
        for uid, since in tuple(state.off_table.items()):
            key = f"off:{uid}"
            if key in state.alerts or table.read_ts - since <= limit:
                continue
            holder = next((s for s, cards in machine.card_state.seat_cards.items() if uid in cards), None)
            if holder is None or holder in hand.folded or not hand.running:
                state.off_table = {u: t for u, t in state.off_table.items() if u != uid}
                continue
            state.alerts = {
                **state.alerts,
                key: table.raise_alert(
                    "hole_card_off_table",
                    f"A hole card of seat {holder} has been off the table for more than "
                    f"{table.settings.hole_card_off_s:g} seconds.",
                    holder,
                ),
            }

    def _handled(self, key: str) -> None:
        """The handling finding ``key`` was put right: its alert is resolved."""
        state = self.state
        alert = state.alerts.get(key)
        if alert is not None:
            self.table.book.resolve(alert, self.table.ts)
            state.alerts = {k: a for k, a in state.alerts.items() if k != key}
