"""Agreement of the engine's pots and award with PokerKit on random hands.

Usage: ``.venv/bin/python benchmarks/pokerkit_agreement.py [--hands N] [--first SEED] [--show K]``

Plays N random hold'em hands in PokerKit (``testing.pokerkit_oracle``: no-limit, pot-limit and
fixed-limit, 2 to 10 players, unequal stacks, antes, folds, mucks, rake), then runs the engine's
``uncalled`` + ``build_pots`` + ``rake_for`` + ``award`` on each, under both odd-chip rules, and
prints how many agree with PokerKit on the pots and on the payoffs (PokerKit's odd-chip and rake
conventions mapped to the house rule, see the oracle's docstring), what the hands covered, and the
time: PokerKit's play and the engine's part apart.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.betting.terms import OddChip
from testing.pokerkit_oracle import PlayedHand, engine_result, judge, play

RULES: tuple[OddChip, ...] = ("first_shown", "left_of_button")


def covered(hand: PlayedHand) -> list[str]:
    found = [hand.stakes.structure, "showdown" if hand.showdown else "uncontested"]
    if len(hand.pots) > 1:
        found.append("side pots")
    if hand.mucked:
        found.append("mucks")
    if hand.raked:
        found.append("raked")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--first", type=int, default=0, help="seed of the first hand")
    parser.add_argument("--show", type=int, default=3, help="disagreements to print in full")
    args = parser.parse_args()

    pots = dict.fromkeys(RULES, 0)
    payoffs = dict.fromkeys(RULES, 0)
    seen: Counter[str] = Counter()
    shown = 0
    play_s = judge_s = 0.0
    begun = time.perf_counter()
    for seed in range(args.first, args.first + args.hands):
        started = time.perf_counter()
        hand = play(seed)
        played = time.perf_counter()
        results = [(rule, engine_result(hand, rule)) for rule in RULES]
        judge_s += time.perf_counter() - played
        play_s += played - started
        verdicts = [(rule, judge(hand, rule, ours)) for rule, ours in results]
        seen.update(covered(hand))
        for rule, verdict in verdicts:
            pots[rule] += verdict.pots_agree
            payoffs[rule] += verdict.payoffs_agree
            split = [a for a in verdict.awards if len(a.winners) > 1]
            if rule == RULES[0]:
                seen["split pots"] += bool(split)
            if not (verdict.pots_agree and verdict.payoffs_agree) and shown < args.show:
                shown += 1
                print(f"disagreement ({rule}):\n{verdict.detail}")
    n = args.hands
    for rule in RULES:
        print(f"odd chip {rule}: agreement: pots {pots[rule]}/{n}, payoffs {payoffs[rule]}/{n}")
    print("hands: " + ", ".join(f"{name} {count}" for name, count in sorted(seen.items())))
    per_hand_us = judge_s / (n * len(RULES)) * 1e6
    print(
        f"time: {time.perf_counter() - begun:.1f} s; PokerKit playing {play_s:.1f} s; the engine's "
        f"uncalled + build_pots + rake_for + award {judge_s:.2f} s ({per_hand_us:.0f} us per hand and rule)"
    )


if __name__ == "__main__":
    main()
