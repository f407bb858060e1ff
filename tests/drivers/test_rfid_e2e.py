"""The RFID driver end to end: the reader simulator on a real pty and a real mosquitto.

Its behaviour (noise, faults, replugs) is tested on a null-modem cable in
``test_rfid_driver.py``; these tests keep the production path whole.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from config.models import MqttSection, RfidReaderDevice
from contract.models import SweepCommand, TagEvent
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import Driver
from drivers.rfid.driver import RfidReader, rfid_driver
from simulators.rfid import RfidReaderSimulator
from testing.mosquitto import Mosquitto
from tests.drivers.mqtt_helpers import Received, driver_online, publish

UID1, UID2, UID3 = "E0040150654CC41C", "E00401501EE63A2D", "E004015034E56C0F"
ANTENNAS = {1: "seat:1", 2: "seat:2", 3: "seat:3", 4: "board", 5: "muck"}


@dataclass
class Rig:
    sim: RfidReaderSimulator
    driver: Driver[RfidReader]
    got: Received
    topics: Topics
    port: int

    @property
    def events(self) -> str:
        return self.topics.device_event("rfid-1")

    @property
    def status(self) -> str:
        return self.topics.device_status("rfid-1")

    def tags(self) -> list[TagEvent]:
        return [e for e in self.got.events(self.events) if isinstance(e, TagEvent)]

    def last_state(self) -> str:
        return self.got.statuses(self.status)[-1].state


@pytest.fixture
async def rig(mosquitto: Mosquitto, request: pytest.FixtureRequest) -> AsyncIterator[Rig]:
    noise: dict[str, float] = getattr(request, "param", {})
    sim = RfidReaderSimulator(antenna_count=8, dwell_ms=10, seed=7)
    sim.miss_rate = noise.get("miss_rate", 0.0)
    sim.duplicate_rate = noise.get("duplicate_rate", 0.0)
    sim.crosstalk_rate = noise.get("crosstalk_rate", 0.0)
    await sim.start()
    topics = Topics("holdem", "tr1")
    device = RfidReaderDevice(
        id="rfid-1",
        driver="rfid",
        port=sim.port,
        antennas=ANTENNAS,
        hold_ms=300,
        dwell_ms=10,
        fault_crc_errors=5,
        fault_window_s=0.5,
        reconnect_max_s=0.2,
    )
    driver = rfid_driver(device, MqttSection(url=mosquitto.url), topics)
    async with driver_online(driver, mosquitto.port) as got:
        yield Rig(sim, driver, got, topics, mosquitto.port)
    await sim.close()


async def test_card_placed_moved_removed(rig: Rig) -> None:
    assert rig.sim.sweep == (1, 2, 3, 4, 5)  # the driver set the sweep from its antenna map
    rig.sim.place(UID1, 2, face="down")
    await rig.got.wait_for(lambda: len(rig.tags()) == 1)
    first = rig.tags()[0]
    assert (first.seq, first.antenna, first.zone, first.uid, first.present, first.face) == (
        1,
        2,
        "seat:2",
        UID1,
        True,
        "down",
    )
    rig.sim.move(UID1, 5)
    await rig.got.wait_for(lambda: len(rig.tags()) == 3)
    left, arrived = rig.tags()[1:]
    assert (left.zone, left.present) == ("seat:2", False)
    assert (arrived.zone, arrived.present, arrived.face) == ("muck", True, "down")
    rig.sim.flip(UID1, "up")
    await rig.got.wait_for(lambda: len(rig.tags()) == 4)
    assert (rig.tags()[3].zone, rig.tags()[3].present, rig.tags()[3].face) == ("muck", True, "up")
    rig.sim.remove(UID1)
    await rig.got.wait_for(lambda: len(rig.tags()) == 5)
    assert (rig.tags()[4].uid, rig.tags()[4].present) == (UID1, False)
    assert [e.seq for e in rig.tags()] == [1, 2, 3, 4, 5]


async def test_sweep_command_reaches_the_reader(rig: Rig) -> None:
    cmd = rig.topics.device_cmd("rfid-1")
    await publish(rig.port, cmd, SweepCommand(ts=utc_now(), antennas=[4, 5], dwell_ms=15).to_json())
    for _ in range(50):
        if rig.sim.sweep == (4, 5):
            break
        await asyncio.sleep(0.02)
    assert (rig.sim.sweep, rig.sim.dwell_ms) == ((4, 5), 15)
