"""Mistakes in handling the cards (seeds 000, 001): half a fold, a hole card kept off the table,
a burn card turned face up.

The engine's timers run on the card reader's time: a half fold is judged once the dealer's
reaction time has passed, a card off the table once the house limit has, both at the reader's
next report after the wait (another seat's fold; the other hole card lifted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contract.cards import seat_zone
from simulators.dealer.betting import Choice
from simulators.dealer.hand import PACE, HandPlay
from simulators.dealer.mistakes.chipbase import ChipMistake, money_of, next_in_turn, wait
from simulators.dealer.mistakes.registry import register
from simulators.dealer.steps import Remove

if TYPE_CHECKING:
    from simulators.dealer.dealer import VirtualDealer


@register
class FoldIncomplete(ChipMistake):
    """Preflop the first seat to act folds, but only one card reaches the muck; the engine judges
    the half fold at the card reader's next report after the dealer's reaction time: the next
    seat's fold. The dealer then pushes the other card into the muck."""

    code = "fold_incomplete"
    players = 4

    def act(self, play: HandPlay, seat: int) -> bool:
        _, ledger = money_of(play)
        if self.done or ledger.street != "preflop" or len(ledger.live) <= 3:
            return False
        after = next_in_turn(ledger, seat)
        if after is None:
            return False
        self.done = True
        ledger.apply(seat, Choice("fold"))
        hand = play.hand
        hand.active.remove(seat)
        first, second = hand.hole[seat]
        play.move(first, "muck", "down", PACE["fold"])
        wait(play, play.settings.reaction_s + 0.5)
        ledger.apply(after, Choice("fold"))
        hand.active.remove(after)
        for i, uid in enumerate(hand.hole[after]):  # its first card is the reader's next report
            play.move(
                uid, "muck", "down", PACE["fold"] if i == 0 else PACE["muck"], self.code if i == 0 else None
            )
        play.ack()
        play.move(second, "muck", "down", PACE["fix"])
        return True


@register
class HoleCardOffTable(ChipMistake):
    """On the flop a player lifts a hole card off the table longer than the house allows, then
    the other to look at both (the engine judges the first on the reader's time, at its next
    report), then puts them back. Needs the house limit short in the demo (``hole_card_off_s``)."""

    code = "hole_card_off_table"

    def act(self, play: HandPlay, seat: int) -> bool:
        _, ledger = money_of(play)
        if self.done or ledger.street != "flop":
            return False
        self.done = True
        hand = play.hand
        first, second = hand.hole[seat]
        settings = play.settings
        play.remove(first, PACE["fix"])
        wait(play, settings.hole_card_off_s + settings.hold_s + 0.5)
        play.emit(Remove(uid=second, card=hand.card_of.get(second), pause_s=PACE["fix"], mistake=self.code))
        del hand.on_table[second]
        play.ack()
        for uid in (first, second):
            play.place_uid(uid, hand.card_of.get(uid), seat_zone(seat), play.face("down"), PACE["fix"], None)
        return False  # then the seat acts


@register
class BurnFaceUp(ChipMistake):
    """A burn card dealt face up (seed 001: burned without opening); it stays the burn."""

    code = "burn_face_up"

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if not dealer.settings.reader_reports_face:
            return f"{cls.code}: the reader cannot tell a card's face"
        return super().infeasible(dealer)

    def plan_streets(self, play: HandPlay) -> None:
        self.street = play.rng.choice(["flop", "turn", "river"])

    def deal_street(self, play: HandPlay, street: str, count: int) -> None:
        hand = play.hand
        if hand.flop_burn_done and street == "flop":
            play.street(count)
            return
        card = hand.next_burn or hand.shoe.draw()
        hand.next_burn = None
        play.place(card, "burn", "up", PACE["burn"], self.code)
        play.ack()
        play.street(count, burn=False)
