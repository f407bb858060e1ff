"""Figures of the controller service: journal replay speed, end-to-end throughput, alert latency.

Usage: ``.venv/bin/python benchmarks/service_throughput.py [--hands N] [--latency K]``

1. Replay: a journal of ``N`` random legal hands (9-seat table, two decks, folds, run-outs, reader
   noise) is replayed by ``TableController.replay()`` (the audit's full replay, ``--replay-only``):
   records per second. (Start-up reads only the tail after the newest checkpoint: see
   ``benchmarks/restart.py``.)
2. Throughput: a private mosquitto, ``tablectl run`` as a process (journal fsync on, then off); the
   same hands published by one client (QoS 1, pipelined); events per second from the first
   publish until the journal holds the last message.
3. Latency: ``K`` times a device fault (ten device ids in turn, each fault resolved by the
   device's ``online`` status before the next), waiting each time for the raised
   ``device_fault`` alert: median, 95th and 99th percentile from publish to alert, in
   milliseconds, through a mosquitto with ``set_tcp_nodelay true`` (as the table PC runs it): with
   the journal fsynced as usual, then on a disk whose fsync takes 20 ms (``fsync_delay_ms``, a
   testing option); last, for comparison, through a mosquitto without ``set_tcp_nodelay``.
4. Floor: the same round trip through the same broker with a client that only echoes each message
   (no engine, no journal): what the machine and the broker alone cost, for reading the above on
   a loaded machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt

from benchmarks.brokers import table_mosquitto
from config.loader import load_table
from config.registry import load_registry
from contract.models import FaultEvent, Status, parse_alert, parse_status
from contract.topics import Topics
from controller.journal import JournalFiles, JournalOptions, open_journal, read_journal
from controller.service.table import TableController
from link.client import NO_DELAY
from testing.mosquitto import running_mosquitto
from testing.sessions import dealer_session

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "config" / "decks.example.csv"
TABLE = "bench"
TOPICS = Topics("holdem", TABLE)


def config_file(directory: Path, port: int, fsync: bool, name: str = "", fsync_delay_ms: float = 0) -> Path:
    """A config with a journal of its own (``journal-{fsync}{name}.jsonl``)."""
    path = directory / f"bench-{fsync}{name}.toml"
    path.write_text(
        f'[table]\nid = "{TABLE}"\nseats = 9\n\n[mqtt]\nurl = "mqtt://127.0.0.1:{port}"\n\n'
        f'[decks]\nregistry = "{REGISTRY}"\n\n'
        f'[journal]\npath = "journal-{fsync}{name}.jsonl"\nfsync = {str(fsync).lower()}\n'
        f"fsync_delay_ms = {fsync_delay_ms}\n",
        encoding="utf-8",
    )
    return path


def hands(count: int, seed: int = 7) -> list[tuple[str, bytes]]:
    """(topic, payload) of ``count`` legal hands of the virtual dealer on a 9-seat table."""
    messages, _ = dealer_session(load_registry(REGISTRY), seats=9, hands=count, seed=seed, noise=True)
    return [m.wire(TOPICS) for m in messages]


def bench_replay(directory: Path, messages: list[tuple[str, bytes]]) -> None:
    config = config_file(directory, 1883, fsync=False)
    journal = open_journal(JournalFiles(directory / "journal-False.jsonl"), JournalOptions(fsync=False))
    at = datetime(2026, 11, 30, tzinfo=UTC)
    for topic, payload in messages:
        journal.received(topic, payload, at)
    journal.close()
    table_config, registry = load_table(config)
    controller = TableController(table_config, registry)
    started = time.perf_counter()
    recovery = controller.replay()
    elapsed = time.perf_counter() - started
    assert recovery.replayed == len(messages), recovery
    print(
        f"replay: {len(messages)} journal records in {elapsed:.2f} s = "
        f"{len(messages) / elapsed:,.0f} records/s (read, parse, engine)"
    )
    (directory / "journal-False.jsonl").unlink()


async def wait_online(client: aiomqtt.Client) -> None:
    async for message in client.messages:
        if str(message.topic) == TOPICS.controller_status:
            assert isinstance(message.payload, bytes)
            if parse_status(TOPICS.controller_status, message.payload).state == "online":
                return


async def bench_throughput(
    directory: Path, port: int, messages: list[tuple[str, bytes]], fsync: bool
) -> None:
    config = config_file(directory, port, fsync)
    journal = directory / f"journal-{fsync}.jsonl"
    service = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "tablectl"),
        "run",
        "--config",
        str(config),
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with aiomqtt.Client(
            "127.0.0.1", port, identifier=f"bench-{fsync}", socket_options=NO_DELAY
        ) as client:
            client.pending_calls_threshold = 1_000
            await client.subscribe(TOPICS.controller_status, qos=1)
            await asyncio.wait_for(wait_online(client), 10)
            started = time.perf_counter()
            for start in range(0, len(messages), 200):
                batch = messages[start : start + 200]
                await asyncio.gather(*(client.publish(t, p, qos=1) for t, p in batch))
            published = time.perf_counter() - started
            for _ in range(100_000):  # the journal is a file: poll it
                if read_journal(journal).received_count >= len(messages):
                    break
                await asyncio.sleep(0.05)
            elapsed = time.perf_counter() - started
        print(
            f"throughput (fsync {'on' if fsync else 'off'}): {len(messages)} events in "
            f"{elapsed:.2f} s = {len(messages) / elapsed:,.0f} events/s end to end "
            f"(publishing alone took {published:.2f} s)"
        )
    finally:
        service.terminate()
        await asyncio.wait_for(service.wait(), 10)


async def alert_change(client: aiomqtt.Client, device: str, status: str) -> None:
    """Wait for the alert change ``status`` of ``device``."""
    async for message in client.messages:
        if str(message.topic) != TOPICS.alerts:
            continue
        assert isinstance(message.payload, bytes)
        alert = parse_alert(TOPICS.alerts, message.payload)
        if alert.device == device and alert.status == status:
            return


async def bench_latency(
    directory: Path, port: int, count: int, broker: str, fsync_delay_ms: float = 0
) -> None:
    config = config_file(
        directory, port, fsync=True, name=f"-latency-{port}-{fsync_delay_ms}", fsync_delay_ms=fsync_delay_ms
    )
    service = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "tablectl"),
        "run",
        "--config",
        str(config),
        stderr=asyncio.subprocess.DEVNULL,
    )
    samples: list[float] = []
    try:
        async with aiomqtt.Client(
            "127.0.0.1", port, identifier="bench-latency", socket_options=NO_DELAY
        ) as client:
            await client.subscribe(TOPICS.controller_status, qos=1)
            await client.subscribe(TOPICS.alerts, qos=1)
            await asyncio.wait_for(wait_online(client), 10)
            for index in range(count):
                # Ten devices in turn: each fault is raised, measured, then resolved by the
                # device's status, so that the table never has more than one alert active.
                device = f"dev-{index % 10}"
                event = FaultEvent(seq=index // 10 + 1, ts=datetime.now(UTC), code="jam", text="bench")
                started = time.perf_counter()
                await client.publish(TOPICS.device_event(device), event.to_json(), qos=1)
                await alert_change(client, device, "raised")
                samples.append((time.perf_counter() - started) * 1000)
                online = Status(state="online", ts=datetime.now(UTC), session=1)
                await client.publish(TOPICS.device_status(device), online.to_json(), qos=1)
                await alert_change(client, device, "resolved")
    finally:
        service.terminate()
        await asyncio.wait_for(service.wait(), 10)
    samples.sort()
    p95 = samples[int(len(samples) * 0.95) - 1]
    p99 = samples[int(len(samples) * 0.99) - 1]
    disk = f"fsync +{fsync_delay_ms:g} ms" if fsync_delay_ms else "fsync on"
    print(
        f"alert latency (mosquitto {broker}, {disk}, {count} faults): "
        f"p50 {statistics.median(samples):.2f} ms, p95 {p95:.2f} ms, p99 {p99:.2f} ms, "
        f"max {samples[-1]:.2f} ms (publish -> alert received)"
    )


ECHO = """
import asyncio, socket, sys
import aiomqtt
NO_DELAY = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)
async def main(port):
    async with aiomqtt.Client("127.0.0.1", port, identifier="echo", socket_options=NO_DELAY) as c:
        await c.subscribe("bench/in", qos=1)
        await c.publish("bench/ready", b"1", qos=1, retain=True)
        async for m in c.messages:
            await c.publish("bench/out", m.payload, qos=1)
asyncio.run(main(int(sys.argv[1])))
"""


async def bench_floor(port: int, count: int) -> None:
    """An echo client's round trip through the broker: the floor under the alert latency."""
    echo = await asyncio.create_subprocess_exec(sys.executable, "-c", ECHO, str(port))
    samples: list[float] = []
    try:
        async with aiomqtt.Client(
            "127.0.0.1", port, identifier="bench-floor", socket_options=NO_DELAY
        ) as client:
            await client.subscribe("bench/ready", qos=1)
            await client.subscribe("bench/out", qos=1)
            async for message in client.messages:
                if str(message.topic) == "bench/ready":
                    break
            for index in range(count):
                payload = str(index).encode()
                started = time.perf_counter()
                await client.publish("bench/in", payload, qos=1)
                async for message in client.messages:
                    if message.payload == payload:
                        break
                samples.append((time.perf_counter() - started) * 1000)
    finally:
        echo.terminate()
        await echo.wait()
    samples.sort()
    print(
        f"floor (echo client, same broker, {count} round trips): "
        f"p50 {statistics.median(samples):.2f} ms, p95 {samples[int(len(samples) * 0.95) - 1]:.2f} ms, "
        f"p99 {samples[int(len(samples) * 0.99) - 1]:.2f} ms, max {samples[-1]:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--latency", type=int, default=500)
    args = parser.parse_args()
    messages = hands(args.hands)
    print(f"{args.hands} legal hands = {len(messages)} messages; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        bench_replay(directory, messages)
        with running_mosquitto(directory) as broker:
            for fsync in (True, False):
                asyncio.run(bench_throughput(directory, broker.port, messages, fsync))
        with table_mosquitto(directory) as port:
            for delay in (0, 20):
                asyncio.run(bench_latency(directory, port, args.latency, "set_tcp_nodelay true", delay))
            asyncio.run(bench_floor(port, args.latency))
        with table_mosquitto(directory, nodelay=False) as port:
            asyncio.run(bench_latency(directory, port, args.latency, "without set_tcp_nodelay"))


if __name__ == "__main__":
    main()
