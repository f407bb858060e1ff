"""Mistakes of the session around the hands (docs/rules.md, "The session").

Only ``hand_after_last`` so far: it spans hands, so the dealer itself keeps the count of the
announced last hands (:attr:`VirtualDealer.hands_left`, the engine's ``hands_left`` mirrored) and
this injector only deals the hand that comes one too many.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulators.dealer.hand import HandPlay
from simulators.dealer.mistakes.base import Mistake
from simulators.dealer.mistakes.registry import register

if TYPE_CHECKING:
    from simulators.dealer.dealer import VirtualDealer


@register
class HandAfterLast(Mistake):
    """``last_hands`` was pressed and the three announced hands dealt; the dealer starts a fourth.

    The floor is called (the alert is acknowledged); the dealer then ends the game: every player
    stands up before the next hand and sits down again, a new game (see ``VirtualDealer``).
    """

    code = "hand_after_last"

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.hands_left != 0:
            return (f"{cls.code}: the last hands must be announced and dealt first "
                    "(announce_last_hands(), then three hands)")
        return None

    def new_hand(self, play: HandPlay, due: int) -> None:
        play.press("new_hand", mistake=self.code)
        play.ack()
