"""The betting core against PokerKit on many random hands: each hand fed as chip moves with the
keypad's all in, as chip moves with the stacks read, and as ``action`` inputs.

    .venv/bin/python benchmarks/betting_agreement.py [HANDS]     (default 10,000)

Prints, per feed, how many hands agree on everything (no alert on a legal hand, whose turn it is
at every point, the actions, the pots, every seat's winnings, the pushes and the settlement) and
the time. The test suite runs 1,020 of them (tests/engine/betting/test_hand_oracle.py).
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter

from tests.engine.betting.pokerkit_play import play
from tests.engine.betting.test_hand_oracle import MODES, STRUCTURES, disagreements


def main() -> None:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    agree: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    first: dict[str, str] = {}
    start = time.perf_counter()
    for seed in range(hands):
        structure = STRUCTURES[seed % len(STRUCTURES)]
        hand = play(random.Random(f"agreement-{seed}"), structure)
        for mode in MODES:
            problems = disagreements(hand, mode)
            if not problems:
                agree[mode] += 1
            for problem in problems:
                kind = problem.split(":")[0]
                kinds[f"{mode} {kind}"] += 1
                first.setdefault(f"{mode} {kind}", f"seed {seed} ({structure}): {problem[:300]}")
    elapsed = time.perf_counter() - start
    for mode in MODES:
        print(f"agreement ({mode}): {agree[mode]}/{hands}")
    for kind, count in sorted(kinds.items()):
        print(f"  {kind}: {count}; first: {first[kind]}")
    print(f"time: {elapsed:.1f} s ({hands * len(MODES) / elapsed:,.0f} hand feeds/s, PokerKit play included)")


if __name__ == "__main__":
    main()
