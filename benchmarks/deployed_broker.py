"""Figures of the table PC's broker as ``tablectl deploy`` renders it.

Usage: ``.venv/bin/python benchmarks/deployed_broker.py [--hands N] [--latency K]``

1. Traffic: ``tablectl demo --hands N --speed 0`` against a private mosquitto, a subscriber
   counting every message: messages and bytes a hand, device and public topics apart. These are
   the figures behind the queue limits of the rendered mosquitto.conf (docs/deploy.md).
2. Alert latency through the rendered configuration (passwords, ACL, persistence,
   ``set_tcp_nodelay``): ``tablectl run`` on the rendered table configuration, ``K`` device faults
   published under the reader's own identity, each timed until its alert reaches a subscriber
   with the floor's identity.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt

from contract.models import FaultEvent, parse_alert, parse_status
from controller.deploy import mosquitto as rendered
from link.client import NO_DELAY
from testing.mosquitto import running_mosquitto
from tests.deploy.support import Deployment, free_port, install_dir

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "config" / "decks.example.csv"
TABLE = "bench"


async def bench_traffic(port: int, hands: int) -> None:
    base = f"holdem/{TABLE}"
    counts = {"device": 0, "public": 0}
    sizes = {"device": 0, "public": 0}
    async with aiomqtt.Client("127.0.0.1", port, identifier="bench-traffic") as client:
        await client.subscribe(f"{base}/#", qos=1)

        async def count() -> None:
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                kind = "device" if str(message.topic).startswith(f"{base}/dev/") else "public"
                counts[kind] += 1
                sizes[kind] += len(message.payload)

        counter = asyncio.create_task(count())
        demo = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "controller.cli",
            "demo",
            "--no-view",
            "--hands",
            str(hands),
            "--seed",
            "1",
            "--speed",
            "0",
            "--table",
            TABLE,
            "--broker",
            f"mqtt://127.0.0.1:{port}",
            cwd=REPO,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        await demo.wait()
        await asyncio.sleep(1.0)  # the last retained statuses
        counter.cancel()
    total = sum(counts.values())
    per_hand = total / hands
    print(
        f"traffic ({hands} demo hands, 2-9 players, no chips): {per_hand:.0f} messages a hand "
        f"({counts['device'] / hands:.0f} device, {counts['public'] / hands:.1f} public); "
        f"{sum(sizes.values()) / total:.0f} bytes on average (device "
        f"{sizes['device'] / max(counts['device'], 1):.0f}, public "
        f"{sizes['public'] / max(counts['public'], 1):.0f})"
    )
    print(
        f"queue limits rendered: {rendered.BUSY_HANDS_PER_HOUR} hands/h x "
        f"{rendered.MESSAGES_PER_HAND} messages/hand (chips: ~{rendered.MESSAGES_PER_HAND / per_hand:.0f}x "
        f"the measured rate) x {rendered.OUTAGE_HOURS} h = {rendered.QUEUED_MESSAGES} messages, "
        f"{rendered.QUEUED_BYTES / 1e6:.0f} MB"
    )


SOURCE = """\
[table]
id = "{table}"
seats = 9

[mqtt]
url = "mqtt://127.0.0.1:{port}"

[decks]
registry = "{registry}"

[journal]
path = "journal.jsonl"

[[devices]]
id = "rfid-1"
driver = "rfid"
port = "/dev/null"
enabled = false   # its identity is rendered; the benchmark publishes as it
[devices.antennas]
1 = "seat:1"
"""


async def bench_latency(table: Deployment, count: int) -> None:
    base = f"holdem/{TABLE}"
    service = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "controller.cli",
        "run",
        "--config",
        str(table.config),
        cwd=REPO,
        stderr=asyncio.subprocess.DEVNULL,
    )
    samples: list[float] = []
    try:
        floor = f"{TABLE}-floor"
        reader = f"{TABLE}-dev-rfid-1"
        async with (
            aiomqtt.Client(
                "127.0.0.1",
                table.port,
                username=floor,
                password=table.secret(floor),
                identifier="bench-floor",
                socket_options=NO_DELAY,
            ) as watcher,
            aiomqtt.Client(
                "127.0.0.1",
                table.port,
                username=reader,
                password=table.secret(reader),
                identifier="bench-reader",
                socket_options=NO_DELAY,
            ) as device,
        ):
            await watcher.subscribe(f"{base}/controller/status", qos=1)
            await watcher.subscribe(f"{base}/alerts", qos=1)
            async for message in watcher.messages:
                assert isinstance(message.payload, bytes)
                if (
                    str(message.topic).endswith("/controller/status")
                    and parse_status(str(message.topic), message.payload).state == "online"
                ):
                    break
            for index in range(count):
                # The alert names the fault's code, never the device's free text: a code per fault.
                code = f"bench{index}"
                event = FaultEvent(seq=index + 1, ts=datetime.now(UTC), code=code, text="bench")
                started = time.perf_counter()
                await device.publish(f"{base}/dev/rfid-1/event", event.to_json(), qos=1)
                async for message in watcher.messages:
                    if not str(message.topic).endswith("/alerts"):
                        continue
                    assert isinstance(message.payload, bytes)
                    if f"fault {code}." in parse_alert(str(message.topic), message.payload).message:
                        break
                samples.append((time.perf_counter() - started) * 1000)
    finally:
        service.terminate()
        await asyncio.wait_for(service.wait(), 10)
    samples.sort()
    print(
        f"alert latency through the rendered broker (passwords, ACL, persistence, nodelay; "
        f"{count} faults): median {statistics.median(samples):.2f} ms, "
        f"p95 {samples[int(len(samples) * 0.95) - 1]:.2f} ms, "
        f"p99 {samples[int(len(samples) * 0.99) - 1]:.2f} ms, max {samples[-1]:.2f} ms "
        "(device publish -> alert at the floor's subscriber)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--latency", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        with running_mosquitto(directory) as broker:
            asyncio.run(bench_traffic(broker.port, args.hands))
        with install_dir() as etc:
            port = free_port()
            source = directory / f"{TABLE}.toml"
            source.write_text(SOURCE.format(table=TABLE, port=port, registry=REGISTRY))
            table = Deployment(source, directory / "out", etc, port)
            table.render()
            table.start_broker()
            try:
                asyncio.run(bench_latency(table, args.latency))
            finally:
                table.stop()


if __name__ == "__main__":
    main()
