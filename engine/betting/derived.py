"""Answers derived from a hand's state, remembered by the identity of the state parts they were
derived from: the last answer of each query, held by the engine (``engine.dispatcher.Machine``
holds one :class:`BettingAnswers` and passes it to :meth:`engine.betting.hand.Money.move` and
:meth:`~engine.betting.hand.Money.finish`), never part of the state (never serialised).

Why: the engine asks the same queries of each new money value (whose turn it is, the uncalled
part, who wins each pot and whether the pushes match), and most chip moves (every chip of a
sweep and of a push) change only where the chips lie: the betting part is the same object and so
is the answer. The state's parts are immutable, so the same objects always give the same answer.
What each is worth (``benchmarks/betting_derived.py``; by callgrind, 100 hands with chips, the
instructions with it asked afresh): the award +68 %, the uncalled part +3.5 %, whose turn it is
+1.5 %, the push's check +1.2 %.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from engine.betting.terms import PotAward, Verdicts

T = TypeVar("T")
A = TypeVar("A")


class LastAnswer(Generic[T]):
    """The last answer of one query, with the (up to four) objects it was derived from."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[object, object, object, object, T] | None = None

    def get(
        self,
        first: object,
        second: object,
        third: object,
        fourth: object,
        compute: Callable[[A], T],
        argument: A,
    ) -> T:
        """The answer for these objects (compared by identity): the last one, or
        ``compute(argument)``."""
        last = self._last
        if (
            last is not None
            and last[0] is first
            and last[1] is second
            and last[2] is third
            and last[3] is fourth
        ):
            return last[4]
        answer = compute(argument)
        self._last = (first, second, third, fourth, answer)
        return answer


class BettingAnswers:
    """The betting core's remembered answers (see the module docstring): one engine's, or one
    caller's (a call given none makes its own)."""

    __slots__ = ("awards", "due", "push_check", "to_act")

    def __init__(self) -> None:
        #: Whose turn it is, by the seating, the betting and whether the hand is finished
        #: (engine.betting.rounds.to_act_now).
        self.to_act: LastAnswer[int | None] = LastAnswer()
        #: The uncalled part, by the seating and the betting (engine.betting.rounds.uncalled_due).
        self.due: LastAnswer[tuple[int, int] | None] = LastAnswer()
        #: The award and the rake, by the seating, the betting, the hands shown and the board
        #: (engine.betting.payout.awards).
        self.awards: LastAnswer[tuple[tuple[PotAward, ...], int]] = LastAnswer()
        #: The pushes' check, by the award, the pushed counts, the rake taken and the rake due
        #: (engine.betting.payout).
        self.push_check: LastAnswer[Verdicts] = LastAnswer()
