"""The shuffler driver end to end: the simulator on a real pty, a real mosquitto, processes.

The driver's behaviour is tested on a null-modem cable (``test_shuffler_driver.py``); these tests
keep the production path whole: pyserial on a pty, commands and events through the broker, and
a driver process killed with SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from config.models import MqttSection, ShufflerDevice
from contract.cards import ALL_CARDS
from contract.models import ShuffleCommand, ShuffleCompleteEvent, ShufflingEvent
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import Driver, stop_task
from drivers.shuffler.driver import Shuffler, shuffler_driver
from simulators.shuffler import ShufflerSimulator
from testing.mosquitto import Mosquitto
from tests.conftest import REPO
from tests.drivers.mqtt_helpers import Received, driver_online, publish, subscribed


@dataclass
class Rig:
    sim: ShufflerSimulator
    driver: Driver[Shuffler]
    got: Received
    topics: Topics
    port: int

    @property
    def events(self) -> str:
        return self.topics.device_event("shuffler")

    @property
    def status(self) -> str:
        return self.topics.device_status("shuffler")

    @property
    def cmd(self) -> str:
        return self.topics.device_cmd("shuffler")


@pytest.fixture
async def rig(mosquitto: Mosquitto) -> AsyncIterator[Rig]:
    sim = ShufflerSimulator(shuffle_s=0.2)
    await sim.start()
    topics = Topics("holdem", "ts1")
    device = ShufflerDevice(id="shuffler", driver="shuffler", port=sim.port, reconnect_max_s=0.2)
    driver = shuffler_driver(device, MqttSection(url=mosquitto.url), topics)
    async with driver_online(driver, mosquitto.port) as got:
        yield Rig(sim, driver, got, topics, mosquitto.port)
    await sim.close()


async def test_shuffle_command_gives_shuffling_then_complete(rig: Rig) -> None:
    rig.sim.load_deck("A", ALL_CARDS)
    await publish(rig.port, rig.cmd, ShuffleCommand(ts=utc_now(), deck="A").to_json())
    await rig.got.wait_for(lambda: len(rig.got.on(rig.events)) == 2)
    shuffling, complete = rig.got.events(rig.events)
    assert isinstance(shuffling, ShufflingEvent)
    assert shuffling.deck == "A"
    assert isinstance(complete, ShuffleCompleteEvent)
    assert (complete.deck, complete.count, complete.ok) == ("A", 52, True)
    assert (complete.missing, complete.duplicates) == ([], [])
    assert [shuffling.seq, complete.seq] == [1, 2]


async def test_sessions_keep_growing_after_a_replug_and_a_crash(mosquitto: Mosquitto, tmp_path: Path) -> None:
    sim = ShufflerSimulator(directory=tmp_path)
    await sim.start()
    topics = Topics("holdem", "ts2")
    status = topics.device_status("shuffler")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.drivers.shuffler_driver_process",
        sim.port,
        mosquitto.url,
        "ts2",
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        async with subscribed(mosquitto.port, status) as got:

            def online() -> list[int]:
                """Sessions announced online (a broker reconnect announces one again)."""
                return sorted({s.session for s in got.statuses(status) if s.state == "online"})

            await got.wait_for(lambda: len(online()) == 1, within=10)
            sim.unplug()
            await got.wait_for(lambda: got.statuses(status)[-1].state == "offline")
            sim.replug()
            await got.wait_for(lambda: len(online()) == 2)
            await asyncio.sleep(0.2)
            process.kill()  # no clean disconnect: the broker publishes the last will
            await process.wait()
            await got.wait_for(lambda: got.statuses(status)[-1].state == "offline")
            assert got.statuses(status)[-1].session == online()[1]  # the will names session 2
            # A restarted driver numbers on from there: never a session number twice.
            device = ShufflerDevice(id="shuffler", driver="shuffler", port=sim.port)
            driver = shuffler_driver(device, MqttSection(url=mosquitto.url), topics)
            task = asyncio.create_task(driver.run())
            await got.wait_for(lambda: len(online()) == 3, within=10)
            await stop_task(task)
            first = online()[0]
            assert online() == [first, first + 1, first + 2]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await sim.close()
