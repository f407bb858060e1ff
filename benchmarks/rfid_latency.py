"""Latency of the RFID path, simulator -> pty -> driver -> mosquitto -> subscriber.

Places cards one by one on random card antennas of the example table (25 antennas with the chip
zones, 20 ms dwell, no chips on it; benchmarks/rfid_chips.py has a chip load) and measures the
time from ``place`` to the ``tag`` event on the broker, then from ``remove`` to the
``present: false`` event; clean reader, then one missing 20 % of reads.

Run: .venv/bin/python benchmarks/rfid_latency.py   (needs mosquitto on the PATH)
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiomqtt

from config.loader import load_table
from config.models import MqttSection, RfidReaderDevice
from contract.cards import is_chip_zone
from contract.models import TagEvent, parse_event
from contract.topics import Topics
from drivers.driver import stop_task
from drivers.rfid.driver import rfid_driver
from simulators.rfid import RfidReaderSimulator
from testing.mosquitto import running_mosquitto

REPO = Path(__file__).resolve().parent.parent
CARDS = 30


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return (
        f"p50 {statistics.median(ordered) * 1000:6.0f} ms  p95 {p95 * 1000:6.0f} ms  "
        f"max {ordered[-1] * 1000:6.0f} ms"
    )


async def _run(port: int, miss_rate: float) -> None:
    config, registry = load_table(REPO / "config" / "table.example.toml")
    device = next(d for d in config.devices if isinstance(d, RfidReaderDevice))
    sim = RfidReaderSimulator(
        antenna_count=max(device.antennas), dwell_ms=device.dwell_ms, seed=1, miss_rate=miss_rate
    )
    await sim.start()
    topics = Topics("holdem", f"bench{int(miss_rate * 100)}")
    driver = rfid_driver(
        device.model_copy(update={"port": sim.port}),
        MqttSection(url=f"mqtt://127.0.0.1:{port}"),
        topics,
    )
    task = asyncio.create_task(driver.run())
    seen: dict[tuple[str, bool], float] = {}
    async with aiomqtt.Client("127.0.0.1", port) as client:
        await client.subscribe(topics.device_event(device.id), qos=1)

        async def collect() -> None:
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                event = parse_event(message.topic.value, message.payload)
                if isinstance(event, TagEvent):
                    seen[(event.uid, event.present)] = time.perf_counter()

        collector = asyncio.create_task(collect())
        while not driver.online:  # noqa: ASYNC110 - polling is what is measured against
            await asyncio.sleep(0.05)
        rng = random.Random(2)
        card_antennas = [a for a, zone in device.antennas.items() if not is_chip_zone(zone)]
        uids = [registry.uid_of("A", card) for card in list(registry.decks["A"])[:CARDS]]
        arrive: list[float] = []
        leave: list[float] = []
        for uid in uids:
            start = time.perf_counter()
            sim.place(uid, rng.choice(card_antennas))
            while (uid, True) not in seen:  # noqa: ASYNC110
                await asyncio.sleep(0.002)
            arrive.append(seen[(uid, True)] - start)
        for uid in uids[:10]:
            start = time.perf_counter()
            sim.remove(uid)
            while (uid, False) not in seen:  # noqa: ASYNC110
                await asyncio.sleep(0.002)
            leave.append(seen[(uid, False)] - start)
        collector.cancel()
    await stop_task(task)
    await sim.close()
    print(f"miss rate {miss_rate:.0%}: placed -> tag present  {_quantiles(arrive)}  ({CARDS} cards)")
    print(
        f"miss rate {miss_rate:.0%}: removed -> tag absent  {_quantiles(leave)}  (10 cards, "
        f"K = {driver.device.tracker.missed_dwells_to_leave} missed sweeps, hold {device.hold_ms} ms)"
    )


def main() -> None:
    config, _ = load_table(REPO / "config" / "table.example.toml")
    device = next(d for d in config.devices if isinstance(d, RfidReaderDevice))
    count = len(device.antennas)
    print(
        f"example reader: {count} antennas x {device.dwell_ms} ms = {count * device.dwell_ms} ms "
        "per sweep (longer where an antenna's anti-collision outlasts the dwell)"
    )
    with running_mosquitto(Path(tempfile.mkdtemp())) as broker:
        for miss_rate in (0.0, 0.2):
            asyncio.run(_run(broker.port, miss_rate))


if __name__ == "__main__":
    main()
