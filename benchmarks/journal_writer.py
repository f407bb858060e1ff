"""Figures of the journal alone: records submitted, written and made durable per second.

Usage: ``.venv/bin/python benchmarks/journal_writer.py [--records N] [--rounds R]``

One thread submits ``N`` received records of a device event's size (about 170 bytes of payload)
as fast as it can, reading ``Journal.progress()`` after each (as the service's acknowledgements
do), then waits until all are durable (``flush``). Printed per setting (fsync on, fsync off):
records per second from the first submit until all are durable, and the event loop's cost per
record (submit plus progress, in microseconds), the median of ``R`` rounds. No broker, no engine:
what the journal's parts cost, for comparing versions of it on one machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.journal import JournalFiles, JournalOptions, open_journal

TOPIC = "holdem/t1/dev/rfid-1/event"
PAYLOAD = (
    b'{"v":1,"seq":416,"ts":"2026-01-01T20:05:43.740000Z","session":3,"type":"tag","antenna":13,'
    b'"zone":"burn","uid":"E004015068F26CD9","present":false,"face":null}'
)


def one_round(records: int, *, fsync: bool) -> tuple[float, float]:
    """(records per second until durable, event-loop microseconds per record)."""
    with tempfile.TemporaryDirectory() as directory:
        journal = open_journal(JournalFiles(Path(directory) / "journal.jsonl"), JournalOptions(fsync=fsync))
        when = datetime.now(UTC)
        began = time.perf_counter()
        for _ in range(records):
            journal.received(TOPIC, PAYLOAD, when)
            journal.progress()
        submitted = time.perf_counter()
        assert journal.flush(120.0)
        durable = time.perf_counter()
        journal.close()
    return records / (durable - began), (submitted - began) / records * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for fsync in (True, False):
        rounds = [one_round(args.records, fsync=fsync) for _ in range(args.rounds)]
        rate = statistics.median(r[0] for r in rounds)
        cost = statistics.median(r[1] for r in rounds)
        print(
            f"fsync {'on ' if fsync else 'off'}: {rate:9,.0f} records/s until durable; "
            f"{cost:5.1f} us per record on the submitting thread (submit + progress); "
            f"median of {args.rounds} rounds of {args.records:,}"
        )


if __name__ == "__main__":
    main()
