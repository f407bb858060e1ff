"""``tablectl history`` on a long journal: the time to list the last hands and to show one.

Usage: ``.venv/bin/python benchmarks/history.py [--hands 2000] [--per-hand 100]``

A journal is written with the journal's own writer (fsync off) as a busy table's would look:
for every hand, ``--per-hand`` received messages, each followed by the published state it
caused (a state of a few hundred bytes), a couple of alert changes, and the hand's result. Then
``tablectl history --last 20`` and ``tablectl history show`` run as processes and are timed
(best of three, process start included).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from contract.models import PublicState, SeatState
from controller.journal import JournalFiles, JournalOptions, open_journal
from tests.history.support import TOPICS, alert, showdown_hand

TABLECTL = Path(sys.executable).parent / "tablectl"
PHASES = ("dealing", "preflop", "flop", "turn", "river", "showdown")
EVENT = (
    b'{"v":1,"seq":1,"ts":"2026-11-30T20:00:00Z","type":"tag","antenna":3,"zone":"seat:3",'
    b'"uid":"E0040150A1B2C3D4","present":true,"face":"down"}'
)


def build(path: Path, hands: int, per_hand: int) -> int:
    journal = open_journal(JournalFiles(path), JournalOptions(fsync=False))
    journal.start(1, datetime(2026, 11, 30, tzinfo=UTC), "t1")
    at = datetime(2026, 11, 30, 20, tzinfo=UTC)
    step = timedelta(milliseconds=200)
    seats = [SeatState(seat=s, occupied=True, in_hand=True, cards=2) for s in range(1, 10)]
    for hand in range(1, hands + 1):
        for i in range(per_hand):
            at += step
            cause = journal.received(TOPICS.device_event("rfid-1"), EVENT, at)
            phase = PHASES[min(i * len(PHASES) // per_hand, len(PHASES) - 1)]
            state = PublicState(ts=at, hand=hand, phase=phase, button=1, seats=seats)
            journal.published("state", cause, TOPICS.state, state.to_json(), retain=True, when=at)
            if i in (5, 40):
                change = alert(hand, "exposed_card", at, seat=3, status="raised" if i == 5 else "resolved")
                journal.published("alert", cause, TOPICS.alerts, change.to_json(), retain=False, when=at)
        result = showdown_hand(hand, at)
        journal.published("hand", cause, TOPICS.hands, result.to_json(), retain=False, when=at)
    journal.close()
    return hands * (per_hand * 2 + 3) + 1


def best_of_three(*args: str) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([str(TABLECTL), "history", *args], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--per-hand", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tablectl-history-") as directory:
        root = Path(directory)
        root.chmod(0o700)
        records = build(root / "journal.jsonl", args.hands, args.per_hand)
        size = sum(p.stat().st_size for p in root.iterdir())
        config = root / "t1.toml"
        (root / "decks.csv").write_text("uid,deck,card\n", encoding="utf-8")
        config.write_text(
            '[table]\nid = "t1"\nseats = 9\n\n[mqtt]\nurl = "mqtt://127.0.0.1:1883"\n\n'
            '[decks]\nregistry = "decks.csv"\n\n[journal]\npath = "journal.jsonl"\n',
            encoding="utf-8",
        )
        listing = best_of_three("--config", str(config), "--last", "20")
        show = best_of_three("show", str(args.hands // 2), "--config", str(config))
    print(
        f"journal: {args.hands} hands, ~{records} records, {size / 1e6:.0f} MB; "
        f"history --last 20: {listing:.2f} s; history show: {show:.2f} s"
    )


if __name__ == "__main__":
    main()
