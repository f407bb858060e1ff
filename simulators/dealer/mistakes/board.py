"""Mistakes on the board: a street turned too early, a card too many, a burn missing or extra."""

from __future__ import annotations

from simulators.dealer.hand import PACE, HandPlay
from simulators.dealer.mistakes.base import Mistake
from simulators.dealer.mistakes.registry import register

_BEFORE: dict[str, str] = {"flop": "preflop", "turn": "flop", "river": "turn"}


class _Premature(Mistake):
    """A street turned before the betting round before it was complete, and the remedy."""

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.street = (self.code or "").removeprefix("premature_")
        self.premature = True

    def deal_street(self, play: HandPlay, street: str, count: int) -> None:
        hand = play.hand
        play.burn()
        uids = [play.board(hand.shoe.draw(), self.code if i == 0 else None) for i in range(count)]
        play.ack()
        if street == "turn" and play.settings.profile == "roberts":
            self._turn_set_aside(play, uids[0])
            return
        hand.shoe.reshuffle_with(play.unboard(uids))
        play.complete_round(_BEFORE[street])
        if self.ignore_remedy and street == "flop":
            # remedy_not_followed: a burn before the new flop, which is dealt without one.
            burn = play.place(hand.shoe.draw(), "burn", "down", PACE["burn"], "remedy_not_followed")
            play.ack()
            card = hand.card_of[burn]
            assert card is not None
            play.remove(burn, PACE["fix"])
            hand.shoe.reshuffle_with([card])
        play.street(count, burn=False)

    @staticmethod
    def _turn_set_aside(play: HandPlay, aside: str) -> None:
        """Robert's Rules: the early turn is out of play for that round; what would have been
        the river becomes the turn, and the set-aside card is shuffled back for the river."""
        hand = play.hand
        card = hand.card_of[aside]
        assert card is not None
        hand.board.remove(card)
        play.move(aside, "aside", "down", PACE["fix"])
        play.complete_round("flop")
        play.street(1)
        play.betting("turn", complete=True, keep_two=True, allow_all_in=False)
        play.remove(aside, PACE["fix"])
        hand.shoe.reshuffle_with([card])
        play.board(hand.shoe.draw())  # the river, without a burn
        play.betting("river", complete=True, keep_two=True, allow_all_in=False)
        hand.board_done = True


@register
class PrematureFlop(_Premature):
    code = "premature_flop"
    ignorable = True


@register
class PrematureTurn(_Premature):
    code = "premature_turn"


@register
class PrematureRiver(_Premature):
    code = "premature_river"


class _StreetMistake(Mistake):
    """A mistake on one street, chosen at random among ``streets``."""

    streets: tuple[str, ...] = ("flop", "turn")

    def plan_streets(self, play: HandPlay) -> None:
        self.street = play.rng.choice(list(self.streets))


@register
class MissingBurn(_StreetMistake):
    """The first card lands face down on the board with no burn under it: it becomes the burn."""

    code = "missing_burn"
    streets = ("flop", "turn", "river")

    def deal_street(self, play: HandPlay, street: str, count: int) -> None:
        uid = play.place(play.hand.shoe.draw(), "board", "down", PACE["board"], self.code)
        play.ack()
        play.move(uid, "burn", "down", PACE["fix"])
        play.street(count, burn=False)


@register
class ExtraBurn(_StreetMistake):
    """Two burns: the second goes back on the deck to be the next burn."""

    code = "extra_burn"

    def deal_street(self, play: HandPlay, street: str, count: int) -> None:
        hand = play.hand
        play.burn()
        spare = hand.shoe.draw()
        uid = play.place(spare, "burn", "down", PACE["burn"], self.code)
        play.ack()
        play.remove(uid, PACE["fix"])
        hand.next_burn = spare
        play.street(count, burn=False)


@register
class BoardTooManyCards(_StreetMistake):
    """One card too many turned on a street, and each rulebook's remedy."""

    code = "board_too_many_cards"

    def plan_streets(self, play: HandPlay) -> None:
        # Where chips are read, a second turn card looks exactly like a turn checked around and
        # a river turned without a burn (a check moves nothing), and a fourth flop card like a
        # turn: only a second river card is unmistakably one too many.
        self.street = "river" if play.money is not None else play.rng.choice(list(self.streets))

    def deal_street(self, play: HandPlay, street: str, count: int) -> None:
        hand = play.hand
        play.burn()
        uids = [play.board(hand.shoe.draw(), self.code if i == count else None) for i in range(count + 1)]
        play.ack()
        if play.settings.profile == "tda" and street == "flop":
            # TDA 39-A: the four are scrambled face down where they lie; one chosen at random
            # goes to the burn, the other three are the flop.
            chosen = play.rng.choice(uids)
            card = hand.card_of[chosen]
            assert card is not None
            hand.board.remove(card)
            play.move(chosen, "burn", "down", PACE["fix"])
        else:
            hand.shoe.reshuffle_with(play.unboard(uids))
            play.street(count, burn=False)
