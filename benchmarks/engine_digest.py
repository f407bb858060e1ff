"""A digest of everything the engine core outputs on a fixed corpus: a refactoring's proof.

Usage: ``.venv/bin/python benchmarks/engine_digest.py [--hands N] [--sessions S]``

The corpus is the throughput benchmark's: ``--hands`` PokerKit hands rendered as chip moves (each
with its own stakes) and ``--sessions`` dealer sessions of 50 hands with reader noise (seeded). Every
output of every message (alert changes, public states, device commands, hand results) is
serialised as JSON and hashed, per corpus and overall. Two commits whose engine behaves the same
print the same digests; run it in a worktree of the earlier commit to compare.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.engine_throughput import REGISTRY, build, build_chips
from config.registry import load_registry
from engine.api import EngineSettings, Outputs, Received
from engine.step import Engine


def _feed(digest: hashlib._Hash, settings: EngineSettings, received: list[Received]) -> int:
    """Feed one session to a fresh engine, hashing its outputs; return how many messages."""
    engine = Engine(settings)
    for item in received:
        outputs: Outputs = engine.handle(item)
        for alert in outputs.alerts:
            digest.update(alert.model_dump_json().encode())
        if outputs.state is not None:
            digest.update(outputs.state.model_dump_json().encode())
        for device, command in outputs.commands:
            digest.update(device.encode() + command.model_dump_json().encode())
        for hand in outputs.hands:
            digest.update(hand.model_dump_json().encode())
        digest.update(b"|")
    return len(received)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=300, help="chip hands (default 300)")
    parser.add_argument("--sessions", type=int, default=400, help="dealing hands (default 400)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    total = hashlib.sha256()
    chips = hashlib.sha256()
    messages = 0
    for settings, received in build_chips(args.hands):
        messages += _feed(chips, settings, received)
    print(f"chips:    {chips.hexdigest()} ({args.hands} hands)")
    dealing = hashlib.sha256()
    seats, sessions = build(args.sessions, args.seed)
    settings = EngineSettings(seats=seats, profile="roberts", registry=load_registry(REGISTRY))
    for received in sessions:
        messages += _feed(dealing, settings, received)
    print(f"dealing:  {dealing.hexdigest()} ({args.sessions} hands)")
    total.update(chips.digest() + dealing.digest())
    print(f"all:      {total.hexdigest()} ({messages} messages)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
