"""Answers derived from a hand's state, remembered by the identity of the state parts they were
derived from: the last answer of each query, outside the state (never part of it, never
serialised).

Why: the engine asks the same queries of each new money value (whose turn, the uncalled part),
and most chip moves only change where chips lie: the betting part is the same object and so is
the answer. Each use is kept only where it is worth 5 % or more of the engine's rate with chips
(``benchmarks/betting_derived.py``). The state's parts are immutable, so the same object always gives
the same answer. One entry per query, a tuple read and replaced whole (consistent when engines
run in several threads); engines that interleave only ask again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

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
