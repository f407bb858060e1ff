"""Restart of ``tablectl run`` with a long history: time to the retained ``online``, and memory.

Usage: ``.venv/bin/python benchmarks/restart.py [--records 10000 1000000] [--repeat 3]``

For each history size, a journal is built by the controller itself (``TableController`` with its
real journal writer, fsync off to build faster; checkpoints as configured) from one long random
legal session of the virtual dealer on a 9-seat table, until the journal holds that many records.
Then ``tablectl run`` is started against a mosquitto on loopback, and a subscriber measures the
time from the process start to the retained ``online`` status; the retained state it sees must be
the state the history ended in (hand, phase, seats, board, active alerts). The resident memory of
the process (VmRSS, and its peak VmHWM) is read once it is online. The recovery alone (checkpoint
and tail, in this process) is timed too: the part of a restart that could grow with the history.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt

from benchmarks.brokers import table_mosquitto
from config.loader import load_table
from config.registry import load_registry
from contract.models import parse_status
from contract.topics import Topics
from controller.journal import JournalFiles
from controller.service.table import TableController
from simulators.dealer import DealerSettings, VirtualDealer
from testing.events import DEFAULT_START, to_events
from testing.script import Message

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "config" / "decks.example.csv"
TABLE = "bench"
TOPICS = Topics("holdem", TABLE)


def config_file(directory: Path, port: int) -> Path:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, as on a table PC
    path = directory / "bench.toml"
    path.write_text(
        f'[table]\nid = "{TABLE}"\nseats = 9\n\n[mqtt]\nurl = "mqtt://127.0.0.1:{port}"\n\n'
        f'[decks]\nregistry = "{REGISTRY}"\n\n[journal]\npath = "journal.jsonl"\n',
        encoding="utf-8",
    )
    return path


def session(seed: int = 1) -> Iterator[Message]:
    """An endless legal session of the virtual dealer on a 9-seat table (reader noise included),
    rendered hand by hand: each device's ``seq`` and the clock run on from hand to hand."""
    dealer = VirtualDealer(load_registry(REGISTRY).decks, DealerSettings(seats=9), seed=seed)
    noise = random.Random(seed)
    seqs: Counter[str] = Counter()
    start = DEFAULT_START
    while True:
        events = to_events(dealer.next_hand(mistake=None).steps, start=start, noise=noise)
        for sourced in events:
            event = sourced.event.model_copy(update={"seq": sourced.event.seq + seqs[sourced.device]})
            yield Message("event", sourced.device, event)
        seqs.update(e.device for e in events)
        start = events[-1].event.ts + timedelta(seconds=1) if events else start


def build(config: Path, records: int, unchecked: int = 0) -> tuple[bytes, float]:
    """A journal of at least ``records`` records; the last public state and the build time.

    ``unchecked``: no checkpoint is taken in the last that many records (a long tail).
    """
    table_config, registry = load_table(config)
    fast = table_config.model_copy(
        update={"journal": table_config.journal.model_copy(update={"fsync": False})}
    )
    controller = TableController(fast, registry)
    started = time.perf_counter()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    controller.recover(at)
    assert controller.journal is not None
    for message in session():
        at += timedelta(milliseconds=50)
        topic, data = message.wire(TOPICS)
        if controller.journal.progress().submitted >= records - unchecked:
            controller.checkpoint = lambda covers, now: None  # type: ignore[method-assign]
        for out in controller.receive(topic, data, at).outgoing:
            controller.published(out, at)
        if controller.journal.progress().submitted >= records:
            break
    controller.close()
    state = controller._public(controller.state or controller.engine.public_state())
    return state.to_json(), time.perf_counter() - started


def recovery_time(config: Path) -> tuple[float, int]:
    """Seconds the controller takes to recover from the journal in this process (the part of a
    restart that could grow with history), and how many received records it replayed."""
    table_config, registry = load_table(config)
    controller = TableController(table_config, registry)
    started = time.perf_counter()
    recovery = controller.recover(datetime.now(UTC))
    elapsed = time.perf_counter() - started
    controller.close()
    return elapsed, recovery.replayed


def memory(pid: int) -> tuple[int, int]:
    """VmRSS and VmHWM of a process, in kB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


async def restart(config: Path, port: int, expected_state: bytes) -> tuple[float, int, int]:
    """Seconds from process start to the retained ``online``; RSS and its peak (kB) then."""
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"bench-restart-{time.time_ns()}") as client:
        started = time.perf_counter()
        service = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).parent / "tablectl"),
            "run",
            "--config",
            str(config),
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            await client.subscribe(f"{TOPICS.base}/#", qos=1)
            state = b""
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                if str(message.topic) == TOPICS.state:
                    state = message.payload
                if str(message.topic) == TOPICS.controller_status:
                    status = parse_status(TOPICS.controller_status, message.payload)
                    if status.state == "online" and not message.retain:
                        elapsed = time.perf_counter() - started
                        break
            rss, peak = memory(service.pid)
            assert state == expected_state, "the restarted state is not the one the history ended in"
        finally:
            service.terminate()
            await asyncio.wait_for(service.wait(), 10)
    return elapsed, rss, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3, help="restarts per size (median shown)")
    args = parser.parse_args()
    for records in args.records:
        with tempfile.TemporaryDirectory() as temp:
            directory = Path(temp)
            with table_mosquitto(directory) as port:
                config = config_file(directory, port)
                state, built = build(config, records)
                segments = JournalFiles(directory / "journal.jsonl").segments()
                size = sum(s.path.stat().st_size for s in segments)
                recovered, tail = recovery_time(config)
                runs = [asyncio.run(restart(config, port, state)) for _ in range(args.repeat)]
            # A long tail: a journal whose last checkpoint is 2,000 records back (more than
            # checkpoint_every allows), worse than any crash leaves.
            with table_mosquitto(directory) as port:
                worst = config_file(directory / "worst", port)
                build(worst, records, unchecked=2_000)
                bound, long_tail = recovery_time(worst)
            times = [r[0] for r in runs]
            print(
                f"load average {os.getloadavg()[0]:.1f}: {records:>9,} records ({len(segments)} "
                f"segments, {size / 2**20:,.0f} MiB, built in "
                f"{built:.0f} s): restart to retained online {statistics.median(times):.2f} s "
                f"(median of {len(runs)}, max {max(times):.2f} s); RSS {runs[-1][1] / 1024:.0f} MiB, "
                f"peak {max(r[2] for r in runs) / 1024:.0f} MiB; recovery alone {recovered * 1000:.0f} ms "
                f"({tail} received records after the checkpoint), {bound * 1000:.0f} ms with "
                f"{long_tail} after an older one"
            )


if __name__ == "__main__":
    main()
