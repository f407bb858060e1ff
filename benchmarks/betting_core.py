"""Betting core throughput: random PokerKit hands as chip moves (tag by tag), timed through
:class:`engine.betting.hand.Money` alone.

    .venv/bin/python benchmarks/betting_core.py [HANDS]

Prints the calls per second (each chip move, deal, fold, street, hand tabled, finish is one
call; a chip move is one engine event), alone and each followed by the queries the public state
reads (to_act, bets, pots, shows_first); per second of CPU time (the figure a shared, busy
machine does not distort) and of wall time. The hands are recorded first, PokerKit outside the
timing.
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from engine.betting.hand import Money
from tests.engine.betting.pokerkit_play import Mode, PlayedHand, play, replay


def record(hands: int) -> list[tuple[PlayedHand, list[tuple[str, tuple[Any, ...]]]]]:
    out = []
    for seed in range(hands):
        structure = ("no_limit", "pot_limit", "fixed_limit")[seed % 3]
        hand = play(random.Random(seed), structure)  # type: ignore[arg-type]
        mode: Mode = "chips" if seed % 2 else "stacks"
        log: list[tuple[str, tuple[Any, ...]]] = []
        replay(hand, mode, log)
        out.append((hand, log))
    return out


def main() -> None:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    recorded = record(hands)
    calls = sum(len(log) for _, log in recorded)
    moves = sum(1 for _, log in recorded for name, _ in log if name == "move")
    for with_queries in (False, True):
        wall, cpu = time.perf_counter(), time.process_time()
        for hand, log in recorded:
            money = Money.begin(
                stakes=hand.stakes,
                seats=hand.seats,
                button=hand.button,
                table_seats=10,
                profile="tda",
                odd_chip="left_of_button",
            )
            for name, args in log:
                money = getattr(money, name)(*args)[0]
                if with_queries:
                    # What the machine reads for the public state after each event.
                    _ = (money.to_act, money.bets, money.pots, money.shows_first)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        what = "calls + state queries" if with_queries else "calls"
        print(f"{what}: {calls / cpu:,.0f}/s of CPU time ({calls / wall:,.0f}/s wall, {wall:.2f} s)")
    print(f"hands: {hands}, calls: {calls} ({moves} chip moves, {calls / hands:.0f} per hand)")


if __name__ == "__main__":
    main()
