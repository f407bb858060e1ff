"""The whole engine against PokerKit: N random hands, agreement counts per structure and path.

Usage: ``.venv/bin/python benchmarks/pokerkit_engine.py [--hands N] [--first SEED] [--straddle]``

``--straddle`` plays the straddle series instead (its own seeds, no-limit and pot-limit: two in
three hands of 3+ players have a straddle, ``play_hand(..., straddle=True)``).

Each hand (testing.oracle_hand) is played in PokerKit, rendered as card reads and chip movements
and, separately, as card reads and ``action`` inputs with and without the keypad's ``new_hand``
(testing.oracle_render), and fed to a new pure engine; the hand result must equal PokerKit's (odd
chips mapped to the house rule) and no alert may be raised (testing.engine_oracle). Prints the
agreement counts, what the hands held (showdowns, uncontested, split pots, side pots, all-ins),
the first disagreements, and the time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testing.engine_oracle import PATHS, disagreements, feed, rendered
from testing.oracle_hand import play_hand
from testing.pokerkit_oracle import STRUCTURES


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000, help="hands to play (default 10,000)")
    parser.add_argument("--first", type=int, default=0, help="the first hand's seed")
    parser.add_argument("--straddle", action="store_true", help="the straddle series")
    args = parser.parse_args()
    agree: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    kinds: Counter[str] = Counter()
    failures: list[str] = []
    events = 0
    engine_s = 0.0
    start = time.perf_counter()
    structures = ("no_limit", "pot_limit") if args.straddle else STRUCTURES
    for seed in range(args.first, args.first + args.hands):
        hand = play_hand(seed, structures[seed % len(structures)], straddle=args.straddle)
        expected = hand.expected
        if args.straddle:
            kinds["straddled"] += len(hand.seats) >= 3 and any(
                a.action == "post" and a.amount == 2 * hand.stakes.big_blind for a in expected.actions
            )
        kinds[expected.result] += 1
        kinds["split pot"] += any(len(p.winners) > 1 for p in expected.pots)
        kinds["side pots"] += len(expected.pots) > 1
        kinds["all-in"] += any(a.action == "all_in" for a in expected.actions)
        kinds["raked"] += expected.rake > 0
        for path in PATHS:
            received = rendered(hand, path)
            events += len(received)
            began = time.process_time()
            played = feed(hand, path, received)
            engine_s += time.process_time() - began
            problems = disagreements(hand, path, played)
            key = (hand.stakes.structure, path)
            total[key] += 1
            agree[key] += not problems
            failures += [f"hand {seed} {path}: {p}" for p in problems[:1]]
    elapsed = time.perf_counter() - start
    last = args.first + args.hands - 1
    series = " of the straddle series" if args.straddle else ""
    print(f"hands: {args.hands}{series} (seeds {args.first}..{last}), each fed as {', '.join(PATHS)}")
    for structure in structures:
        for path in PATHS:
            key = (structure, path)
            print(f"  {structure:12} {path:8} {agree[key]:6,} / {total[key]:,} agree")
    print(f"  all                   {sum(agree.values()):6,} / {sum(total.values()):,} agree")
    print("held: " + ", ".join(f"{name} {count:,}" for name, count in sorted(kinds.items())))
    print(
        f"time: {elapsed:.1f} s; engine {events:,} messages in {engine_s:.1f} s of CPU "
        f"({events / engine_s:,.0f} messages/s)"
    )
    for line in failures[:10]:
        print("DISAGREES", line[:400])
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
