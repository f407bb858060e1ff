"""How the cards are handled (seeds 000, 001): a fold that leaves a card behind, a live hole card
kept off the table, a burn card turned face up. Warnings and notes, never a misdeal.

Both are judged on the reader's own time (``read_ts``, the time of the last tag read applied: the
reader's events are applied in their order even after a gap is filled, so messages the broker
delivered late judge nothing): a half-done fold once the dealer's reaction time has passed
since its first card reached the muck (a reader reports a card's move only when it has left its
old antenna, some hundreds of milliseconds apart for two cards), a card off the table once the
house limit has. Cards a remedy sends back to the deck (an extra card, an exposed card) are not
hole cards any more.
"""

from __future__ import annotations

from datetime import timedelta

from contract.cards import zone_seat
from engine.hands import HandRules


class HandlingRules(HandRules):
    """fold_incomplete, hole_card_off_table, burn_face_up."""

    def _muck_arrival(self, seat: int) -> None:
        """A card of ``seat`` reached the muck: a fold is complete once both have."""
        if not (self.running or self.phase == "showdown") or seat not in self.in_hand:
            return
        if self._live_cards(seat):
            if seat not in self.half_folds:
                self.half_folds = {**self.half_folds, seat: self.read_ts}
                if self.phase != "showdown":
                    # for the betting the seat has folded (a player does not muck one card and
                    # play on): the next seat's chips are in turn while the other card follows
                    self._money_fold(seat)
            return
        if seat in self.half_folds:
            self.half_folds = {s: t for s, t in self.half_folds.items() if s != seat}
        self._handled(f"fold:{seat}")

    def _card_lifted(self, uid: str, zone: str) -> None:
        """A hole card of a live seat is read by no antenna: players lift their cards to look."""
        seat = zone_seat(zone)
        if seat is None or not self.running or seat not in self.in_hand or seat in self.folded:
            return
        if uid not in self._live_cards(seat):
            return  # back on the deck by a remedy
        if uid not in self.off_table:
            self.off_table = {**self.off_table, uid: self.read_ts}

    def _card_read(self, uid: str) -> None:
        """A card read again: it is back on the table."""
        if uid in self.off_table:
            self.off_table = {u: t for u, t in self.off_table.items() if u != uid}
            self._handled(f"off:{uid}")

    def _burn_face_up(self, uid: str) -> None:
        key = f"burn:{uid}"
        if key in self.handling_alerts or not self.running or uid in self.face_up:
            return  # an exposed hole card made the burn (the remedy) is face up by nature
        self.handling_alerts = {
            **self.handling_alerts,
            key: self._raise(
                "burn_face_up",
                "A burn card was turned face up: it stays the burn; deal the next board card as "
                "normal.",
            ),
        }

    def _live_cards(self, seat: int) -> tuple[str, ...]:
        """The seat's hole cards, without those a remedy sends back to the deck."""
        cards = self.seat_cards.get(seat, ())
        away = {r.uid for r in (self.extra_r, self.exposed_r) if r is not None}
        return tuple(uid for uid in cards if uid not in away) if away else cards

    def _half_folds_due(self, seat: int | None) -> None:
        """Judge the folds left half done: ``seat`` None at the hand's end (all of them), else
        those whose first card reached the muck longer ago than the reaction time."""
        for folding, since in tuple(self.half_folds.items()):
            if seat is not None and self.read_ts - since <= self.reaction:
                continue
            key = f"fold:{folding}"
            self.half_folds = {s: t for s, t in self.half_folds.items() if s != folding}
            if key not in self.handling_alerts and self._live_cards(folding):
                self.handling_alerts = {
                    **self.handling_alerts,
                    key: self._raise(
                        "fold_incomplete",
                        f"Seat {folding} folded but only one of its cards reached the muck.",
                        folding,
                    ),
                }

    def _handling_timers(self) -> None:
        """Judge the cards off the table at the reader's time."""
        limit = timedelta(seconds=self.settings.hole_card_off_s)
        for uid, since in tuple(self.off_table.items()):
            key = f"off:{uid}"
            if key in self.handling_alerts or self.read_ts - since <= limit:
                continue
            holder = next((s for s, cards in self.seat_cards.items() if uid in cards), None)
            if holder is None or holder in self.folded or not self.running:
                self.off_table = {u: t for u, t in self.off_table.items() if u != uid}
                continue
            self.handling_alerts = {
                **self.handling_alerts,
                key: self._raise(
                    "hole_card_off_table",
                    f"A hole card of seat {holder} has been off the table for more than "
                    f"{self.settings.hole_card_off_s:g} seconds.",
                    holder,
                ),
            }

    def _handled(self, key: str) -> None:
        """The handling finding ``key`` was put right: its alert is resolved."""
        alert = self.handling_alerts.get(key)
        if alert is not None:
            self.book.resolve(alert, self.ts)
            self.handling_alerts = {k: a for k, a in self.handling_alerts.items() if k != key}
