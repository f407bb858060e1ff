"""What each remembered answer of the betting core (engine/betting/derived.py) is worth: the
engine with chips, with all of them, and with each one in turn asked afresh every time (the
engine's :class:`BettingAnswers` made with that one turned off).

Usage: ``.venv/bin/python benchmarks/betting_derived.py [--hands N] [--repeat R]``

The corpus is the throughput benchmark's ``--chips`` hands (random PokerKit hands rendered as
card reads and chip moves). The variants run interleaved in one process, ``--repeat`` rounds,
and the best CPU time of each is kept (a shared machine's load moves all of them alike). Prints
events per second of CPU time per variant and its change against all answers remembered.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine.dispatcher
from benchmarks.engine_throughput import build_chips
from engine.betting.derived import BettingAnswers, LastAnswer
from engine.step import Engine

#: The remembered answers (the slots of BettingAnswers).
ANSWERS: tuple[str, ...] = BettingAnswers.__slots__


class AskedAfresh(LastAnswer[Any]):
    """A remembered answer turned off: computed every time."""

    def get(
        self,
        first: object,
        second: object,
        third: object,
        fourth: object,
        compute: Callable[[Any], Any],
        argument: Any,
    ) -> Any:
        return compute(argument)


def _without(name: str) -> type[BettingAnswers]:
    """BettingAnswers with the answer ``name`` asked afresh."""

    class Without(BettingAnswers):
        __slots__ = ()

        def __init__(self) -> None:
            super().__init__()
            setattr(self, name, AskedAfresh())

    return Without


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    corpus = build_chips(args.hands)
    events = sum(len(received) for _, received in corpus)
    variants: list[tuple[str, str | None]] = [("all remembered", None)]
    variants += [(f"without {name}", name) for name in ANSWERS]
    best = {label: float("inf") for label, _ in variants}
    for _ in range(args.repeat):
        for label, off in variants:
            if off is not None:
                setattr(engine.dispatcher, "BettingAnswers", _without(off))  # noqa: B010 - a variant in place
            start = time.process_time()
            for settings, received in corpus:
                held = Engine(settings)
                for item in received:
                    held.handle(item)
            best[label] = min(best[label], time.process_time() - start)
            setattr(engine.dispatcher, "BettingAnswers", BettingAnswers)  # noqa: B010 - (as above)
    base = events / best["all remembered"]
    print(f"events: {events} ({args.hands} hands with chips), best of {args.repeat}, CPU time")
    for label, _ in variants:
        rate = events / best[label]
        print(f"{label:28} {rate:10,.0f} events/s  {100 * (rate / base - 1):+6.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
