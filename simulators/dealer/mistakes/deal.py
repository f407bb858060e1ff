"""Mistakes of the deal itself: exposed hole cards, cards to the wrong seat, a fouled deck.

Each of these but ``exposed_card`` is a misdeal: the dealer acknowledges the alert and the
legal dealer collects every card and redeals with the other deck (``remedy_not_followed``: one
more card dealt first).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from contract.cards import seat_zone
from simulators.dealer.hand import PACE, HandPlay
from simulators.dealer.mistakes.base import DealPlan, Mistake
from simulators.dealer.mistakes.registry import register
from simulators.dealer.steps import Step

if TYPE_CHECKING:
    from simulators.dealer.dealer import VirtualDealer


def _early(play: HandPlay) -> int:
    """How many first cards of the deal make an exposed card a misdeal (TDA: the first two)."""
    return 2 if play.settings.profile == "tda" else 1


@register
class MisdealExposedEarly(Mistake):
    """The first card of the deal (TDA: one of the first two) dealt face up."""

    code = "misdeal_exposed_early"
    ignorable = True

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        card = play.rng.randrange(_early(play))
        return DealPlan(targets, exposed={card: self.code or ""}, misdeal_after=card)


@register
class ExposedCard(Mistake):
    """A later hole card dealt face up: the deal goes on, the card becomes the flop's burn."""

    code = "exposed_card"

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        card = play.rng.randrange(_early(play), len(targets))
        return DealPlan(targets, exposed={card: "exposed_card"})


@register
class MisdealExposedMultiple(Mistake):
    """Two hole cards dealt face up: the second one makes it a misdeal."""

    code = "misdeal_exposed_multiple"
    ignorable = True

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        rng = play.rng
        first = rng.randrange(_early(play), len(targets) - 1)
        second = rng.randrange(first + 1, len(targets))
        return DealPlan(
            targets,
            exposed={first: "exposed_card", second: "misdeal_exposed_multiple"},
            misdeal_after=second,
        )


class _WrongSeat(Mistake, ABC):
    """A misdeal in which card ``index`` goes to another seat than it should."""

    ignorable = True

    @abstractmethod
    def wrong_card(self, play: HandPlay, targets: list[int]) -> int:
        """Send one card of ``targets`` elsewhere; return its index."""

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        card = self.wrong_card(play, targets)
        return DealPlan(targets, tags={card: self.code or ""}, misdeal_after=card)


@register
class MisdealWrongFirstSeat(_WrongSeat):
    code = "misdeal_wrong_first_seat"

    def wrong_card(self, play: HandPlay, targets: list[int]) -> int:
        targets[0] = play.rng.choice(play.hand.order[1:])
        return 0


@register
class MisdealEmptySeat(_WrongSeat):
    code = "misdeal_empty_seat"

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.settings.min_players >= dealer.settings.seats:
            return f"{cls.code}: every seat must be occupied at this table"
        return None

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        if len(dealer.occupied) >= dealer.settings.seats:
            dealer.leave(steps)

    def wrong_card(self, play: HandPlay, targets: list[int]) -> int:
        rng, order = play.rng, play.hand.order
        card = rng.randrange(1, len(targets))
        free = [s for s in range(1, play.settings.seats + 1) if s not in order]
        targets[card] = rng.choice(free)
        return card


@register
class MisdealSeatSkipped(_WrongSeat):
    code = "misdeal_seat_skipped"

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.settings.most_players < 3:
            return f"{cls.code}: needs at least three players"
        if dealer.button is None:
            # the first hand's players sit down as drawn (no seat changes): two may be all
            return f"{cls.code}: not at the first hand (three players are not sure to sit)"
        return None

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        if len(dealer.occupied) < 3:
            dealer.join(steps)

    def wrong_card(self, play: HandPlay, targets: list[int]) -> int:
        order, n = play.hand.order, len(play.hand.order)
        card = play.rng.choice([k for k in range(1, 2 * n - 1) if k % n != n - 1])
        targets[card] = order[card % n + 1]
        return card


@register
class MisdealOutOfSequence(_WrongSeat):
    code = "misdeal_out_of_sequence"

    def wrong_card(self, play: HandPlay, targets: list[int]) -> int:
        order = play.hand.order
        card = play.rng.randrange(1, len(order))
        targets[card] = order[card - 1]
        return card


@register
class FouledDeck(Mistake):
    """A card of no deck of the registry (another table's) turns up in the deal."""

    code = "fouled_deck"
    ignorable = True

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        card = play.rng.randrange(1, len(targets))
        return DealPlan(targets, tags={card: "fouled_deck"}, foreign=card, misdeal_after=card)


def _unfollowed(play: HandPlay, seat: int) -> None:
    """``remedy_not_followed``: after the misdeal is called the dealer deals one more card."""
    play.deal_on(seat_zone(seat))
    play.ack()


@register
class ExtraCard(Mistake):
    """One card too many, to the first seat (Robert's Rules: it becomes the flop's burn)."""

    code = "extra_card"
    profiles = ("roberts",)  # under TDA one extra card is already a misdeal (wrong count)

    def after_deal(self, play: HandPlay) -> bool:
        hand = play.hand
        extra = hand.shoe.draw()
        uid = play.place(extra, seat_zone(hand.order[0]), "down", PACE["hole"], "extra_card")
        play.ack()
        # The extra card goes back on the deck and becomes the flop's burn.
        play.remove(uid, PACE["fix"])
        hand.next_burn = extra
        # That seat stays in: the engine counts the card taken back as the seat's until it is
        # the burn, so a fold before the flop would look half done.
        self.protected = hand.order[0]
        return True


@register
class MisdealExtraCards(Mistake):
    """Two cards too many to the first seat: a misdeal."""

    code = "misdeal_extra_cards"
    profiles = ("roberts",)
    ignorable = True

    def after_deal(self, play: HandPlay) -> bool:
        first = seat_zone(play.hand.order[0])
        play.hole(first, "extra_card")
        play.ack()
        play.hole(first, "misdeal_extra_cards")
        play.ack()
        if self.ignore_remedy:
            _unfollowed(play, play.hand.order[1])
        return False


@register
class MisdealWrongCount(Mistake):
    """A seat gets a third card (TDA: any extra card is a wrong count): a misdeal."""

    code = "misdeal_wrong_count"
    ignorable = True

    def after_deal(self, play: HandPlay) -> bool:
        order = play.hand.order
        if play.settings.profile == "tda":
            play.hole(seat_zone(order[0]), "misdeal_wrong_count")
            play.ack()
            if self.ignore_remedy:
                _unfollowed(play, order[1])
            return False
        play.hole(seat_zone(play.rng.choice(order[1:])), "misdeal_wrong_count")
        play.ack()
        if self.ignore_remedy:
            _unfollowed(play, order[0])
        return False
