"""The RFID driver against the reader simulator on a null-modem cable (no pty, no broker)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from config.models import MqttSection, RfidReaderDevice
from contract.models import FaultEvent, SweepCommand, TagEvent
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import Driver, stop_task
from drivers.rfid.driver import RfidReader, rfid_driver
from drivers.rfid.protocol import ReaderErrorCode
from simulators.rfid import RfidReaderSimulator
from testing.memory_link import MemoryLink

UID1, UID2, UID3 = "E0040150654CC41C", "E00401501EE63A2D", "E004015034E56C0F"
ANTENNAS = {1: "seat:1", 2: "seat:2", 3: "seat:3", 4: "board", 5: "muck"}


@dataclass
class Rig:
    sim: RfidReaderSimulator
    driver: Driver[RfidReader]
    link: MemoryLink

    def tags(self) -> list[TagEvent]:
        return [e for e in self.link.events if isinstance(e, TagEvent)]

    def last_state(self) -> str | None:
        return self.link.state()


@pytest.fixture
async def rig(request: pytest.FixtureRequest) -> AsyncIterator[Rig]:
    noise: dict[str, float] = getattr(request, "param", {})
    sim = RfidReaderSimulator(antenna_count=8, dwell_ms=10, seed=7, cable="nullmodem")
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
    link = MemoryLink("rfid-1", log=logging.getLogger("drivers.rfid"))
    driver = rfid_driver(device, MqttSection(), topics, link=link)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        yield Rig(sim, driver, link)
    finally:
        await stop_task(task)
        await sim.close()


async def test_card_placed_moved_removed(rig: Rig) -> None:
    assert rig.sim.sweep == (1, 2, 3, 4, 5)  # the driver set the sweep from its antenna map
    rig.sim.place(UID1, 2, face="down")
    await rig.link.wait_for(lambda: len(rig.tags()) == 1)
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
    await rig.link.wait_for(lambda: len(rig.tags()) == 3)
    left, arrived = rig.tags()[1:]
    assert (left.zone, left.present) == ("seat:2", False)
    assert (arrived.zone, arrived.present, arrived.face) == ("muck", True, "down")
    rig.sim.flip(UID1, "up")
    await rig.link.wait_for(lambda: len(rig.tags()) == 4)
    assert (rig.tags()[3].zone, rig.tags()[3].present, rig.tags()[3].face) == ("muck", True, "up")
    rig.sim.remove(UID1)
    await rig.link.wait_for(lambda: len(rig.tags()) == 5)
    assert (rig.tags()[4].uid, rig.tags()[4].present) == (UID1, False)
    assert [e.seq for e in rig.tags()] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    "rig", [{"miss_rate": 0.2, "duplicate_rate": 0.1, "crosstalk_rate": 0.3}], indirect=True
)
async def test_noisy_reads_do_not_flap(rig: Rig) -> None:
    placed = {UID1: 1, UID2: 2, UID3: 3}
    for uid, antenna in placed.items():
        rig.sim.place(uid, antenna)
    start = rig.sim.sweeps
    # 40 sweeps with a fifth of the reads missing: three times the misses in a row (K = 12)
    # the tracker waits for before it believes a card left.
    for _ in range(1000):
        if rig.sim.sweeps - start >= 40:
            break
        await asyncio.sleep(0.01)
    assert rig.sim.sweeps - start >= 40
    tags = rig.tags()
    assert all(e.present for e in tags), [(e.uid, e.zone, e.present) for e in tags]
    assert {e.uid: e.antenna for e in tags} == placed
    assert len(tags) == 3


async def test_corrupt_burst_is_a_fault_then_recovers(rig: Rig) -> None:
    rig.sim.corrupt_rate = 1.0
    await rig.link.wait_for(lambda: rig.last_state() == "fault")
    rig.sim.corrupt_rate = 0.0
    faults = [e for e in rig.link.events if isinstance(e, FaultEvent)]
    assert [f.code for f in faults] == ["crc_errors"]
    await rig.link.wait_for(lambda: rig.last_state() == "online")


async def test_unplug_replug_new_session_nothing_lost(rig: Rig) -> None:
    rig.sim.place(UID1, 1)
    await rig.link.wait_for(lambda: len(rig.tags()) == 1)
    session = rig.link.statuses[-1].session
    rig.sim.unplug()
    await rig.link.wait_for(lambda: rig.last_state() == "offline")
    await asyncio.sleep(0.3)
    rig.sim.replug()
    await rig.link.wait_for(lambda: rig.last_state() == "online")
    assert rig.link.statuses[-1].session == session + 1
    rig.sim.place(UID2, 3)
    # The new session reports what lies on the table afresh, from seq 1, and the new card.
    await rig.link.wait_for(lambda: len(rig.tags()) == 3)
    after = rig.tags()[1:]
    assert {(e.uid, e.zone, e.present) for e in after} == {
        (UID1, "seat:1", True),
        (UID2, "seat:3", True),
    }
    assert sorted(e.seq for e in after) == [1, 2]


async def test_sweep_command_reaches_the_reader(rig: Rig) -> None:
    rig.link.command(SweepCommand(ts=utc_now(), antennas=[4, 5], dwell_ms=15))
    for _ in range(50):
        if rig.sim.sweep == (4, 5):
            break
        await asyncio.sleep(0.02)
    assert (rig.sim.sweep, rig.sim.dwell_ms) == ((4, 5), 15)


async def test_unknown_uid_is_reported_as_read(rig: Rig) -> None:
    # Not in any deck registry: judging it (fouled deck) is the engine's business, not the driver's.
    rig.sim.place("0123456789ABCDEF01", 4, face="up")
    await rig.link.wait_for(lambda: len(rig.tags()) == 1)
    event = rig.tags()[0]
    assert (event.uid, event.zone, event.present, event.face) == ("0123456789ABCDEF01", "board", True, "up")


async def test_reader_errors_are_logged_and_counted(rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="drivers.rfid"):
        for _ in range(5):
            rig.sim.inject_error(ReaderErrorCode.ANTENNA_FAULT, 3)
        await rig.link.wait_for(lambda: rig.last_state() == "fault")
    assert any("antenna_fault on antenna 3" in r.getMessage() for r in caplog.records)
    faults = [e for e in rig.link.events if isinstance(e, FaultEvent)]
    assert [f.code for f in faults] == ["reader_error"]


async def _timed_sweeps(hold_ms: int, caplog: pytest.LogCaptureFixture) -> list[str]:
    """Run a driver with ``hold_ms`` against a reader sweeping 5 antennas of 10 ms (50 ms a
    sweep) until it has timed its first sweeps; the warnings it logged about hold_ms."""
    sim = RfidReaderSimulator(antenna_count=5, dwell_ms=10, seed=1, cable="nullmodem")
    await sim.start()
    device = RfidReaderDevice(
        id="rfid-9", driver="rfid", port=sim.port, antennas=ANTENNAS, hold_ms=hold_ms, dwell_ms=10
    )
    link = MemoryLink("rfid-9", log=logging.getLogger("drivers.rfid"))
    driver = rfid_driver(device, MqttSection(), Topics("holdem", "tr9"), link=link)
    task = asyncio.create_task(driver.run())
    try:
        with caplog.at_level(logging.WARNING, logger="drivers.rfid"):
            # No tag lies there, so nothing is published: poll until the sweeps are timed.
            async with asyncio.timeout(5):
                while driver.device.sweep_s is None:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
    finally:
        await stop_task(task)
        await sim.close()
    assert driver.device.sweep_s is not None
    assert 0.045 <= driver.device.sweep_s <= 0.2  # 5 x 10 ms, and what the loop adds
    return [r.getMessage() for r in caplog.records if "hold_ms" in r.getMessage()]


async def test_a_hold_time_under_three_timed_sweeps_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    warned = await _timed_sweeps(100, caplog)
    assert len(warned) == 1
    assert "rfid-9: hold_ms 100 is under three sweeps (5 antennas" in warned[0]


async def test_a_hold_time_of_three_sweeps_or_more_is_no_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert await _timed_sweeps(600, caplog) == []
