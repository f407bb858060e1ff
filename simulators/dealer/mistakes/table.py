"""Mistakes around the deal: the button, the blinds, the deck check, playing the board."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phevaluator import evaluate_cards

from contract.cards import RANKS, SUITS
from simulators.dealer.betting import Choice
from simulators.dealer.hand import PACE, HandPlay
from simulators.dealer.mistakes.base import DealPlan, Mistake
from simulators.dealer.mistakes.registry import register
from simulators.dealer.steps import AwaitShuffle, FailDeckCheck, MoveButton, SetBlind, Shuffle, Step

if TYPE_CHECKING:
    from simulators.dealer.dealer import VirtualDealer


@register
class ButtonMisplaced(Mistake):
    """The button is not moved (or moved to the wrong seat); the dealer moves it after the alert."""

    code = "button_misplaced"

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.button is None:
            return f"{cls.code}: the first hand has no due button seat; deal a hand first"
        return None

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        if len(dealer.occupied) < 2:
            dealer.join(steps)

    def place_button(self, dealer: VirtualDealer, steps: list[Step], due: int) -> None:
        old = dealer.button
        assert old is not None
        others = sorted(dealer.occupied - {due})
        wrong = old if old in others else dealer.rng.choice(others)
        if wrong != old:
            steps.append(MoveButton(seat=wrong, pause_s=PACE["button"]))

    def new_hand(self, play: HandPlay, due: int) -> None:
        play.press("new_hand", mistake=self.code)
        play.ack()
        play.emit(MoveButton(seat=due, pause_s=PACE["fix"]))


@register
class BlindsMissing(Mistake):
    """A blind zone is empty when the deal starts; the first card dealt shows it, and the blind
    is posted then. Where chips are read, the blind's chips lie in its betting area already (the
    engine takes chips arriving in a betting area for the end of the deal): the blind zone's
    sensor is what is late."""

    code = "blinds_missing"

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.unposted: int | None = None

    def unposted_blind(self, dealer: VirtualDealer, small: int, big: int) -> int | None:
        self.unposted = dealer.rng.choice((small, big))
        return self.unposted

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        return DealPlan(targets, tags={0: "blinds_missing"} if self.unposted is not None else {})

    def after_card(self, play: HandPlay, index: int) -> None:
        if index == 0 and self.unposted is not None:
            play.ack()
            play.emit(SetBlind(seat=self.unposted, present=True, pause_s=PACE["fix"]))
            play.hand.blinds.add(self.unposted)


@register
class DeckCheckFailed(Mistake):
    """The shuffler's deck check fails (a card missing); the floor finds it, the deck passes."""

    code = "deck_check_failed"

    def shuffle(self, play: HandPlay, dealer: VirtualDealer, deck: str) -> None:
        lost = play.rng.choice(sorted(dealer.decks[deck]))
        play.emit(FailDeckCheck(deck=deck, count=51, missing=(lost,), pause_s=PACE["shuffle"]))
        play.emit(AwaitShuffle(deck=deck, pause_s=0.0, mistake=self.code))
        play.ack()
        play.emit(Shuffle(deck=deck, pause_s=PACE["fix"]))


@register
class BoardClaimForfeited(Mistake):
    """A player whose best hand is the board mucks without declaring it."""

    code = "board_claim_forfeited"

    def rig_board(self, play: HandPlay) -> None:
        """Arrange the deck so that the board is one seat's best hand (``protected``).

        The shuffler never reports the order, so any order is a fair shuffle; the dealer picks
        one in which a straight on the board plays for someone.
        """
        rng, shoe, order = play.rng, play.hand.shoe, play.hand.order
        n = len(order)
        board_at = (2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7)
        while True:
            rng.shuffle(shoe.order)
            top = rng.randint(0, len(RANKS) - 5)
            ranks = RANKS[top : top + 5]
            suits = [s for s in SUITS for _ in range(2)]
            rng.shuffle(suits)
            wanted = [rank + suit for rank, suit in zip(ranks, suits, strict=False)]
            for position, card in zip(board_at, wanted, strict=True):
                here = shoe.order.index(card)
                shoe.order[here], shoe.order[position] = shoe.order[position], shoe.order[here]
            board = [shoe.order[i] for i in board_at]
            board_rank = evaluate_cards(*board)
            players = [
                seat
                for i, seat in enumerate(order)
                if evaluate_cards(*board, shoe.order[i], shoe.order[i + n]) == board_rank
            ]
            if players:
                self.protected = rng.choice(players)
                return

    def showdown_muck(self, play: HandPlay, seat: int) -> bool:
        if seat != self.protected:
            return False
        play.muck(seat, self.code)
        play.ack()
        return True

    def act(self, play: HandPlay, seat: int) -> bool:
        """With chips, on the river another seat bets and is called: it shows first, so the
        seat whose best hand is the board mucks at the showdown (before any hand is tabled a
        muck is a fold)."""
        money = play.money
        if money is None or money.ledger.street != "river":
            return False
        ledger = money.ledger
        if ledger.highest == 0 and seat == self.protected:
            money.act(seat, Choice("check"))
        elif ledger.highest == 0:
            money.act(seat, Choice("bet", ledger.min_to()))
        else:
            money.act(seat, Choice("call", min(ledger.highest, ledger.bet.get(seat, 0) + ledger.stack[seat])))
        return True
