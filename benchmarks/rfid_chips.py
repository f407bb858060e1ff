"""The RFID path under a chip load: simulator -> pty -> production driver -> mosquitto -> subscriber.

The example table's reader (25 antennas x 20 ms, chips read on bet:1..9, pot and rake), its
simulator running the ISO 15693 anti-collision at the real pace (about 9 ms per tag) and sending
through a 115200-baud UART. Prints:

- the reader's time to report a pot of 200 chips: the 200 placed at once (random UIDs, at a
  random moment of the sweep) -> the last ``present`` event on the broker;
- placed -> present and removed -> absent for a card while 300 chips lie on the same antenna
  (the card pushed into the pot) and on another antenna (a seat).

Run: .venv/bin/python benchmarks/rfid_chips.py   (needs mosquitto on the PATH; about 3 minutes)
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiomqtt

from config.loader import load_table
from config.models import MqttSection, RfidReaderDevice
from contract.models import TagEvent, parse_event
from contract.topics import Topics
from drivers.driver import stop_task
from drivers.registry import open_driver
from drivers.rfid.driver import RfidReader
from simulators.iso15693 import inventory
from simulators.table import SimulatedTable
from testing.mosquitto import running_mosquitto

REPO = Path(__file__).resolve().parent.parent
CARD = "E0040150654CC41C"
POT_ROUNDS = 6
CARD_ROUNDS = 8
REMOVAL_ROUNDS = 3


class Events:
    """Every ``tag`` event with the time it reached the subscriber."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, TagEvent]] = []

    def first(self, since: float, uid: str, present: bool) -> float | None:
        return next((t for t, e in self.seen if t >= since and e.uid == uid and e.present == present), None)

    async def latency(self, since: float, uids: list[str], present: bool) -> float:
        """Seconds from ``since`` until every one of ``uids`` was reported (``present``)."""
        await wait(lambda: all(self.first(since, uid, present) is not None for uid in uids))
        return max(self.first(since, uid, present) or 0.0 for uid in uids) - since


async def wait(condition: Callable[[], bool], within: float = 120.0) -> None:
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 - polling is what is measured against
            await asyncio.sleep(0.002)


def random_chips(rng: random.Random, count: int) -> list[str]:
    return [f"E007{rng.getrandbits(48):012X}" for _ in range(count)]


def summary(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):5.2f} s  min {min(values):5.2f} s  "
        f"max {max(values):5.2f} s  ({len(values)} runs)"
    )


async def _pot(table: SimulatedTable, events: Events, rng: random.Random) -> list[float]:
    results: list[float] = []
    for _ in range(POT_ROUNDS):
        await asyncio.sleep(rng.uniform(0.0, 3.0))  # a random moment of the sweep
        chips = random_chips(rng, 200)
        start = time.perf_counter()
        table.place_chips(chips, "pot")
        results.append(await events.latency(start, chips, True))
        table.take_chips(chips)
    return results


async def _card(
    table: SimulatedTable, events: Events, rng: random.Random, zone: str, sweep_s: float
) -> tuple[list[float], list[float]]:
    placed: list[float] = []
    removed: list[float] = []
    for round_ in range(CARD_ROUNDS):
        # A moment of the sweep drawn uniformly: each wait starts from an event, which comes
        # at a fixed point of the sweep.
        await asyncio.sleep(rng.uniform(0.0, sweep_s))
        start = time.perf_counter()
        table.place(CARD, zone, face="down")
        placed.append(await events.latency(start, [CARD], True))
        await asyncio.sleep(rng.uniform(0.0, sweep_s))
        start = time.perf_counter()
        table.remove(CARD)
        gone = await events.latency(start, [CARD], False)  # wait for it in any case
        if round_ < REMOVAL_ROUNDS:
            removed.append(gone)
    return placed, removed


async def _run(port: int) -> None:
    config, _ = load_table(REPO / "config" / "table.example.toml")
    reader = next(d for d in config.devices if isinstance(d, RfidReaderDevice))
    config = config.model_copy(
        update={"devices": [reader], "mqtt": MqttSection(url=f"mqtt://127.0.0.1:{port}")}
    )
    topics = Topics("holdem", "benchchips")
    events = Events()
    rng = random.Random(7)
    async with SimulatedTable(config, seed=3) as table, aiomqtt.Client("127.0.0.1", port) as client:
        await client.subscribe(topics.device_event(reader.id), qos=1)

        async def collect() -> None:
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                event = parse_event(message.topic.value, message.payload)
                if isinstance(event, TagEvent):
                    events.seen.append((time.perf_counter(), event))

        collector = asyncio.create_task(collect())
        driver = open_driver(table.config.drivers()[0], table.config.mqtt, topics)
        assert isinstance(driver.device, RfidReader)
        task = asyncio.create_task(driver.run())
        try:
            await wait(lambda: driver.online, within=10)
            pot = await _pot(table, events, rng)
            print(f"pot of 200 chips placed -> last present on MQTT: {summary(pot)}")
            chips = random_chips(rng, 300)
            start = time.perf_counter()
            table.place_chips(chips, "pot")
            await events.latency(start, chips, True)
            others = len(reader.antennas) - 1
            sweep_s = others * reader.dwell_ms / 1000 + inventory(chips).duration_s
            for zone, what in (("pot", "the same antenna"), ("seat:3", "another antenna")):
                placed, removed = await _card(table, events, rng, zone, sweep_s)
                print(f"card, 300 chips on {what:17s}: placed -> present  {summary(placed)}")
                print(f"card, 300 chips on {what:17s}: removed -> absent  {summary(removed)}")
            print(
                f"  (K = {driver.device.tracker.missed_dwells_to_leave} missed sweeps to leave, "
                f"estimated miss rate {driver.device.tracker.miss_rate:.3f}, hold {reader.hold_ms} ms)"
            )
        finally:
            await stop_task(task)
            collector.cancel()


def main() -> None:
    antennas = 25
    for count in (200, 300):
        run = inventory(random_chips(random.Random(count), count))
        sweep = (antennas - 1) * 0.020 + run.duration_s
        print(
            f"anti-collision of {count} chips: {run.duration_s:.2f} s "
            f"({run.duration_s / count * 1000:.1f} ms per tag); example sweep with them "
            f"{sweep:.2f} s"
        )
    with running_mosquitto(Path(tempfile.mkdtemp())) as broker:
        asyncio.run(_run(broker.port))


if __name__ == "__main__":
    main()
