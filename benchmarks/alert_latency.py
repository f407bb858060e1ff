"""Alert latency through the table PC's broker: device event published -> alert received.

Usage: ``.venv/bin/python benchmarks/alert_latency.py [--samples N] [--fsync on|off|both]``

The path measured is the production one: a driver's link (``link.device.DeviceLink``, the one
every driver publishes through) hands a device event to the broker; the broker is mosquitto
with the shipped table PC configuration (``deploy/mosquitto/table-pc.conf``: TCP_NODELAY,
persistence); the controller is ``tablectl run`` in its own process (journal on, fsync as
asked); the alert it publishes is received by a subscriber (a client of ``link.client``). Each
sample is a ``fault`` event from the shuffler (``device_fault`` raised, then updated: one alert
per event), timed from the call that publishes it to the arrival of its alert. The first 20
samples warm up and are not counted. Target (issue 9): p50 <= 2 ms, p99 <= 5 ms.
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

from config.models import MqttSection
from contract.models import FaultEvent, Status, parse_alert, parse_status
from contract.topics import Topics
from link.client import make_client
from link.device import DeviceLink
from testing.mosquitto import TABLE_PC_CONF, running_mosquitto

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "config" / "decks.example.csv"
TOPICS = Topics("holdem", "lat")
WARM_UP = 20
DEVICE = "shuffler"


def config_file(directory: Path, url: str, fsync: bool) -> Path:
    path = directory / f"latency-{fsync}.toml"
    path.write_text(
        f'[table]\nid = "{TOPICS.table}"\nseats = 9\n\n[mqtt]\nurl = "{url}"\n\n'
        f'[decks]\nregistry = "{REGISTRY}"\n\n'
        f'[journal]\npath = "{directory / f"journal-{fsync}.jsonl"}"\nfsync = {str(fsync).lower()}\n'
        '\n[logging]\nlevel = "WARNING"\n',
        encoding="utf-8",
    )
    return path


async def measure(url: str, directory: Path, samples: int, fsync: bool) -> list[float]:
    service = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "tablectl"),
        "run",
        "--config",
        str(config_file(directory, url, fsync)),
        stderr=asyncio.subprocess.DEVNULL,
    )
    mqtt = MqttSection(url=url)
    link = DeviceLink(mqtt, TOPICS, DEVICE, identifier=f"latency-{DEVICE}-{fsync}")
    linking = asyncio.create_task(link.run())
    times: list[float] = []
    try:
        async with make_client(mqtt, f"latency-subscriber-{fsync}") as client:
            await client.subscribe([(TOPICS.controller_status, 1), (TOPICS.alerts, 1)])
            async with asyncio.timeout(30):
                async for message in client.messages:
                    if str(message.topic) == TOPICS.controller_status:
                        assert isinstance(message.payload, bytes)
                        if parse_status(TOPICS.controller_status, message.payload).state == "online":
                            break
            link.set_status(Status(state="online", ts=datetime.now(UTC), session=1))
            await asyncio.wait_for(link.ready.wait(), 10)
            for seq in range(1, samples + WARM_UP + 1):
                event = FaultEvent(seq=seq, ts=datetime.now(UTC), session=1, code="jam", text="bench")
                started = time.perf_counter()
                link.publish_event(event)
                async with asyncio.timeout(10):
                    async for message in client.messages:
                        if str(message.topic) != TOPICS.alerts:
                            continue
                        assert isinstance(message.payload, bytes)
                        alert = parse_alert(TOPICS.alerts, message.payload)
                        if alert.device == DEVICE and alert.ts == event.ts:
                            break
                if seq > WARM_UP:
                    times.append((time.perf_counter() - started) * 1000)
    finally:
        linking.cancel()
        await asyncio.gather(linking, return_exceptions=True)
        service.terminate()
        await asyncio.wait_for(service.wait(), 10)
    return times


def report(times: list[float], fsync: bool) -> None:
    times.sort()
    p99 = times[max(0, int(len(times) * 0.99) - 1)]
    print(
        f"alert latency, journal fsync {'on' if fsync else 'off'}: {len(times)} events: "
        f"p50 {statistics.median(times):.2f} ms, p90 {times[int(len(times) * 0.9) - 1]:.2f} ms, "
        f"p99 {p99:.2f} ms, max {times[-1]:.2f} ms (target p50 <= 2 ms, p99 <= 5 ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--fsync", choices=("on", "off", "both"), default="both")
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"driver link -> mosquitto ({TABLE_PC_CONF.relative_to(REPO)}) -> tablectl run -> "
        f"mosquitto -> subscriber, on loopback; load average {load[0]:.1f} on {os.cpu_count()} cores"
    )
    modes = {"on": (True,), "off": (False,), "both": (False, True)}[args.fsync]
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        broker_dir = directory / "broker"
        broker_dir.mkdir()
        with running_mosquitto(broker_dir, config=TABLE_PC_CONF) as broker:
            for fsync in modes:
                report(asyncio.run(measure(broker.url, directory, args.samples, fsync)), fsync)


if __name__ == "__main__":
    main()
