"""Throughput of the pure engine core, in events per second on one core.

Usage: ``.venv/bin/python benchmarks/engine_throughput.py [--hands N] [--repeat R] [--chips]``

Random legal hands of the virtual dealer (2 to 10 players joining and leaving, two decks, folds,
all-in run-outs, showdowns, reader noise) are rendered once into contract messages; the timed
part is only ``Engine.handle`` on each of them, including building every alert and public state
the step returns.

``--chips``: the betting followed from chips instead. Random PokerKit hands (no-limit, pot-limit,
fixed-limit; 2 to 10 players, all-ins, side pots; testing.oracle_hand) rendered as card reads and
chip movements (every chip read into a betting area, swept, pushed, collected; a busy hand has
hundreds of chip reads), each fed to an engine with the chip registry and the hand's stakes.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from config.registry import load_registry
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    EngineSettings,
    InputReceived,
    Received,
)
from engine.core import Engine
from testing.sessions import dealer_session

REGISTRY = Path(__file__).resolve().parents[1] / "config" / "decks.example.csv"


def build(hands: int, seed: int) -> tuple[int, list[list[Received]]]:
    """Tables of 2 to 10 players, 50 hands each, until ``hands`` hands: one message list each."""
    registry = load_registry(REGISTRY)
    rng = random.Random(seed)
    at = datetime(2026, 11, 30, tzinfo=UTC)
    sessions: list[list[Received]] = []
    seats = 10
    done = 0
    while done < hands:
        count = min(50, hands - done)
        messages, _ = dealer_session(
            registry, seats=seats, hands=count, seed=rng.randrange(1 << 30), noise=True
        )
        received: list[Received] = []
        for message in messages:
            if message.kind == "event":
                received.append(DeviceEventReceived(message.device or "", message.payload, at))  # type: ignore[arg-type]
            elif message.kind == "status":
                received.append(DeviceStatusReceived(message.device or "", message.payload, at))  # type: ignore[arg-type]
            elif message.kind == "input":
                received.append(InputReceived(message.payload, at))  # type: ignore[arg-type]
        sessions.append(received)
        done += count
    return seats, sessions


def build_chips(hands: int) -> list[tuple[EngineSettings, list[Received]]]:
    """``hands`` PokerKit hands rendered as chip moves, each with the settings it is played under."""
    from testing.engine_oracle import CHIPS, registry, rendered
    from testing.oracle_hand import TABLE_SEATS, play_hand

    out = []
    for seed in range(hands):
        hand = play_hand(seed)
        settings = EngineSettings(seats=TABLE_SEATS, profile="roberts", registry=registry(),
                                  chips=CHIPS, stakes=hand.stakes)
        out.append((settings, rendered(hand, "chips")))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000, help="hands to replay (default 2000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best is reported")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chips", action="store_true", help="hands with chips (PokerKit's)")
    args = parser.parse_args()
    if args.chips:
        runs = build_chips(args.hands)
        seats = 10
    else:
        seats, sessions = build(args.hands, args.seed)
        registry = load_registry(REGISTRY)
        settings = EngineSettings(seats=seats, profile="roberts", registry=registry)
        runs = [(settings, received) for received in sessions]
    events = sum(len(received) for _, received in runs)
    best = cpu_best = float("inf")
    alerts = states = 0
    for _ in range(args.repeat):
        alerts = states = 0
        start, cpu_start = time.perf_counter(), time.process_time()
        for settings, received in runs:
            engine = Engine(settings)
            for item in received:
                outputs = engine.handle(item)
                alerts += len(outputs.alerts)
                states += outputs.state is not None
        best = min(best, time.perf_counter() - start)
        cpu_best = min(cpu_best, time.process_time() - cpu_start)
    rate = events / best
    what = "hands with chips" if args.chips else "hands"
    print(f"events:        {events} ({args.hands} {what}, {seats}-seat table)")
    print(f"best of {args.repeat}:     {best:.3f} s")
    print(f"throughput:    {rate:,.0f} events/s on one core")
    # CPU time: what a shared machine's other load does not change (the wall clock is above).
    print(f"CPU time:      {events / cpu_best:,.0f} events/s ({cpu_best:.3f} s of CPU)")
    print(f"per event:     {best / events * 1e6:.2f} µs")
    print(f"outputs:       {states} public states, {alerts} alert changes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
