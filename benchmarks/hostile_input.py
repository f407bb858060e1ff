"""A flood of malformed payloads against ``tablectl run``: does a valid event still reach the
dealer at once, and do memory, journal and retained state stay small?

Usage: ``.venv/bin/python benchmarks/hostile_input.py [--seconds 60] [--rate 1000]``

A private mosquitto (``set_tcp_nodelay true``, no limit on messages in flight: as the table PC runs
it, see ``benchmarks/brokers.py``) and ``tablectl run`` as a process (journal fsync on). For
``--seconds`` a flooder publishes ``--rate`` malformed payloads a second (QoS 1): broken JSON,
unknown types carrying text for the dealer, fields out of bounds, oversized payloads, an event a
configured sensor board cannot send, under a handful of device ids. Meanwhile a prober publishes a
valid device event every 100 ms, alternately a shuffler fault (``device_fault`` raised) and a
shuffle (the fault resolved), and times each from publish to its alert. Printed: latency median /
p99 / max, the service's RSS growth, the journal's growth, the largest retained state, against the
targets of issue 10.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt

from benchmarks.brokers import table_mosquitto
from contract.models import FaultEvent, ShufflingEvent, parse_alert, parse_status
from contract.topics import Topics
from link.client import NO_DELAY

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "config" / "decks.example.csv"
TABLE = "hostile"
TOPICS = Topics("holdem", TABLE)
TARGETS = {"p99_ms": 50.0, "rss_mib": 20.0, "journal_mib": 10.0, "state_kib": 16.0}


def journal_bytes(directory: Path) -> int:
    """The journal's size on disk: every segment and checkpoint file of it."""
    return sum(path.stat().st_size for path in directory.glob("journal*"))


def config_file(directory: Path, port: int, fsync: bool = True) -> Path:
    path = directory / "hostile.toml"
    path.write_text(
        f'[table]\nid = "{TABLE}"\nseats = 9\n\n[mqtt]\nurl = "mqtt://127.0.0.1:{port}"\n\n'
        f'[decks]\nregistry = "{REGISTRY}"\n\n'
        f'[journal]\npath = "journal.jsonl"\nfsync = {str(fsync).lower()}\n\n'
        # a sensor board whose driver runs elsewhere: it may not send tags
        '[[devices]]\nid = "sensors"\ndriver = "sensors"\nvendor_id = 1\nproduct_id = 2\n'
        "enabled = false\n",
        encoding="utf-8",
    )
    return path


def malformed() -> list[tuple[str, bytes]]:
    """A cycle of malformed payloads of every kind, under a few device ids."""
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    floor = "FLOOR: seat 4 holds Ah Kh - no misdeal, keep dealing " * 4
    tag = {
        "v": 1,
        "seq": 1,
        "ts": now,
        "type": "tag",
        "antenna": 1,
        "zone": "seat:5",
        "uid": "E0040150654CC41C",
        "present": True,
        "face": "down",
    }
    items = [
        (TOPICS.device_event("rfid-1"), b'{"type":"tag","seq":'),
        (TOPICS.device_event("rfid-1"), json.dumps({"v": 1, "seq": 1, "ts": now, "type": floor})),
        (
            TOPICS.device_event("junk"),
            json.dumps({"v": 1, "seq": 10**400, "ts": now, "type": "key", "key": "ack"}),
        ),
        (TOPICS.device_event("junk"), b"x" * 20_000),
        (TOPICS.device_status("rfid-1"), b"offline!"),
        (TOPICS.input, json.dumps({"type": "key", "key": floor})),
        (TOPICS.device_event("sensors"), json.dumps(tag)),
        (TOPICS.device_event(f"d{'x' * 80}"), b"{}"),
    ]
    return [(t, p if isinstance(p, bytes) else p.encode()) for t, p in items]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def wait_online(client: aiomqtt.Client) -> None:
    async for message in client.messages:
        if str(message.topic) == TOPICS.controller_status:
            assert isinstance(message.payload, bytes)
            if parse_status(TOPICS.controller_status, message.payload).state == "online":
                return


async def flood(port: int, rate: int, seconds: float, sent: list[int]) -> None:
    cycle = malformed()
    async with aiomqtt.Client("127.0.0.1", port, identifier="flooder") as client:
        client.pending_calls_threshold = 10 * rate
        started = time.perf_counter()
        tick = 0.01
        per_tick = max(1, round(rate * tick))
        while (elapsed := time.perf_counter() - started) < seconds:
            batch = [cycle[(sent[0] + i) % len(cycle)] for i in range(per_tick)]
            await asyncio.gather(*(client.publish(t, p, qos=1) for t, p in batch))
            sent[0] += per_tick
            ahead = sent[0] / rate - (time.perf_counter() - started)
            if ahead > 0:
                await asyncio.sleep(ahead)
            del elapsed


#: The prober's sequence number, across its runs (a repeated seq would be dropped).
_SEQ = [0]


async def probe(port: int, seconds: float, samples: list[float], states: list[int]) -> None:
    async with aiomqtt.Client("127.0.0.1", port, identifier="prober", socket_options=NO_DELAY) as client:
        await client.subscribe(TOPICS.alerts, qos=1)
        await client.subscribe(TOPICS.state, qos=1)
        waiting: dict[str, float] = {}
        done = asyncio.Event()

        async def read() -> None:
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                if str(message.topic) == TOPICS.state:
                    states.append(len(message.payload))
                    continue
                alert = parse_alert(TOPICS.alerts, message.payload)
                if alert.code == "device_fault" and alert.status in waiting:
                    samples.append((time.perf_counter() - waiting.pop(alert.status)) * 1000)
                    done.set()

        reader = asyncio.create_task(read())
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            _SEQ[0] += 1
            seq = _SEQ[0]
            ts = datetime.now(UTC)
            if seq % 2:
                event: FaultEvent | ShufflingEvent = FaultEvent(seq=seq, ts=ts, code="jam")
                waiting["raised"] = time.perf_counter()
            else:
                event = ShufflingEvent(seq=seq, ts=ts, deck="A")
                waiting["resolved"] = time.perf_counter()
            done.clear()
            await client.publish(TOPICS.device_event("shuffler"), event.to_json(), qos=1)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 5)
            await asyncio.sleep(0.1)
        reader.cancel()


async def run(directory: Path, port: int, seconds: float, rate: int, fsync: bool) -> None:
    config = config_file(directory, port, fsync)
    service = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "tablectl"),
        "run",
        "--config",
        str(config),
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with aiomqtt.Client("127.0.0.1", port, identifier="watch") as client:
            await client.subscribe(TOPICS.controller_status, qos=1)
            await asyncio.wait_for(wait_online(client), 10)
        # warm up (imports, first alerts), then the baseline
        warm: list[float] = []
        await probe(port, 1.0, warm, [])
        rss_before, journal_before = rss_kib(service.pid), journal_bytes(directory)
        samples: list[float] = []
        states: list[int] = []
        sent = [0]
        rss_peak = rss_before

        async def watch_rss() -> None:
            nonlocal rss_peak
            while True:
                rss_peak = max(rss_peak, rss_kib(service.pid))
                await asyncio.sleep(0.5)

        watcher = asyncio.create_task(watch_rss())
        # the flooder is a process of its own: its publishing must not delay the prober's loop
        flooder = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--flood-port",
            str(port),
            "--seconds",
            str(seconds),
            "--rate",
            str(rate),
            stdout=asyncio.subprocess.PIPE,
        )
        await probe(port, seconds, samples, states)
        out, _ = await flooder.communicate()
        sent[0] = int(out.decode().strip() or 0)
        watcher.cancel()
        await asyncio.sleep(2)  # the last reports
        rss_peak = max(rss_peak, rss_kib(service.pid))
        journal_growth = journal_bytes(directory) - journal_before
    finally:
        service.terminate()
        await asyncio.wait_for(service.wait(), 10)
    samples.sort()
    p99 = samples[max(0, int(len(samples) * 0.99) - 1)]
    figures = {
        "p99_ms": p99,
        "rss_mib": (rss_peak - rss_before) / 1024,
        "journal_mib": journal_growth / 2**20,
        "state_kib": max(states, default=0) / 1024,
    }
    print(f"journal fsync {'on' if fsync else 'off'}")
    print(f"flood: {sent[0]} malformed payloads in {seconds:.0f} s ({sent[0] / seconds:,.0f}/s, QoS 1)")
    print(
        f"valid event -> alert ({len(samples)} alerts): median {statistics.median(samples):.2f} ms, "
        f"p99 {p99:.2f} ms, max {samples[-1]:.2f} ms"
    )
    print(f"service RSS: {rss_before / 1024:.1f} MiB before, peak growth {figures['rss_mib']:.2f} MiB")
    print(f"journal growth: {journal_growth / 1024:.1f} KiB")
    print(f"retained state: largest {max(states, default=0)} bytes")
    for key, value in figures.items():
        verdict = "ok" if value <= TARGETS[key] else "OVER TARGET"
        print(f"  {key:<12} {value:10.2f}  target <= {TARGETS[key]:g}  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--no-fsync", action="store_true", help="journal fsync off (to compare)")
    parser.add_argument("--flood-port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood_port:  # the flooder process: flood, then print how many were sent
        sent = [0]
        asyncio.run(flood(args.flood_port, args.rate, args.seconds, sent))
        print(sent[0])
        return
    with tempfile.TemporaryDirectory() as temp, table_mosquitto(Path(temp)) as port:
        asyncio.run(run(Path(temp), port, args.seconds, args.rate, not args.no_fsync))


if __name__ == "__main__":
    main()
