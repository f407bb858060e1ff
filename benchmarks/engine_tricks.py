"""What each speed trick left in the engine is worth (issue 21: kept only where it is worth 5 %).

Usage: ``.venv/bin/python benchmarks/engine_tricks.py [--hands N] [--repeat R]``

The corpus is the throughput benchmark's ``--chips`` hands. Each variant puts the plain way back
in place of one trick, in this process; the variants run interleaved, ``--repeat`` rounds, and the
best CPU time of each is kept (a shared machine's load moves all of them alike). Prints events per
second of CPU time per variant and its change against the engine as it is:

- ``record: dataclasses.replace``: the betting parts' copy (``engine/betting/record.py``,
  ``_copy_with``) by ``dataclasses.replace``;
- ``state: model_construct``: the public state's models (``engine/state.py``, ``construct_valid``)
  by pydantic's ``model_construct``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.engine_throughput import build_chips
from engine import state
from engine.betting import record
from engine.step import Engine


def _replace(value: Any, **changes: Any) -> Any:
    return dataclasses.replace(value, **changes)


def _model_construct(cls: Any, values: dict[str, Any]) -> Any:
    return cls.model_construct(**values)


#: (label, [(owner, attribute, plain way)])
VARIANTS: tuple[tuple[str, tuple[tuple[Any, str, Callable[..., Any]], ...]], ...] = (
    (
        "record: dataclasses.replace",
        (
            (record, "_copy_with", _replace),
            (record.HandState, "with_", _replace),
            (record.Betting, "with_", _replace),
        ),
    ),
    ("state: model_construct", ((state, "_construct", _model_construct),)),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    corpus = build_chips(args.hands)
    events = sum(len(received) for _, received in corpus)
    variants = [("as it is", ()), *VARIANTS]
    best = {label: float("inf") for label, _ in variants}
    for _ in range(args.repeat):
        for label, swaps in variants:
            kept = [(owner, name, getattr(owner, name)) for owner, name, _ in swaps]
            for owner, name, plain in swaps:
                setattr(owner, name, plain)
            try:
                start = time.process_time()
                for settings, received in corpus:
                    engine = Engine(settings)
                    for item in received:
                        engine.handle(item)
                best[label] = min(best[label], time.process_time() - start)
            finally:
                for owner, name, value in kept:
                    setattr(owner, name, value)
    base = events / best["as it is"]
    print(f"events: {events} ({args.hands} hands with chips), best of {args.repeat}, CPU time")
    for label, _ in variants:
        rate = events / best[label]
        print(f"{label:30} {rate:10,.0f} events/s  {100 * (rate / base - 1):+6.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
