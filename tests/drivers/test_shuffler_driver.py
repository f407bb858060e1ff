"""The shuffler driver against the shuffler simulator on a null-modem cable (no pty, no broker)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from config.models import MqttSection, ShufflerDevice
from contract.cards import ALL_CARDS
from contract.models import FaultEvent, ShuffleCommand, ShuffleCompleteEvent, ShufflingEvent
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import Driver, stop_task
from drivers.framing import Frame
from drivers.shuffler.driver import Shuffler, shuffler_driver
from drivers.shuffler.protocol import StartShuffle
from drivers.transport.nullmodem import LineNoise
from simulators.shuffler import ShufflerSimulator
from testing.memory_link import MemoryLink


@dataclass
class Rig:
    sim: ShufflerSimulator
    driver: Driver[Shuffler]
    link: MemoryLink

    def state(self) -> str | None:
        return self.link.state()


async def start(
    line: LineNoise | None = None, heartbeat_s: float = 0.5
) -> tuple[ShufflerSimulator, Driver[Shuffler], MemoryLink]:
    sim = ShufflerSimulator(shuffle_s=0.2, cable="nullmodem", line=line, heartbeat_s=heartbeat_s)
    await sim.start()
    device = ShufflerDevice(id="shuffler", driver="shuffler", port=sim.port, reconnect_max_s=0.2)
    link = MemoryLink("shuffler", log=logging.getLogger("drivers.shuffler"))
    driver = shuffler_driver(device, MqttSection(), Topics("holdem", "ts"), link=link)
    return sim, driver, link


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    sim, driver, link = await start()
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        yield Rig(sim, driver, link)
    finally:
        await stop_task(task)
        await sim.close()


async def test_shuffle_command_gives_shuffling_then_complete(rig: Rig) -> None:
    rig.sim.load_deck("A", ALL_CARDS)
    rig.link.command(ShuffleCommand(ts=utc_now(), deck="A"))
    await rig.link.wait_for(lambda: len(rig.link.events) == 2)
    shuffling, complete = rig.link.events
    assert isinstance(shuffling, ShufflingEvent)
    assert shuffling.deck == "A"
    assert isinstance(complete, ShuffleCompleteEvent)
    assert (complete.deck, complete.count, complete.ok) == ("A", 52, True)
    assert (complete.missing, complete.duplicates) == ([], [])
    assert [shuffling.seq, complete.seq] == [1, 2]


class WatchingShuffler(ShufflerSimulator):
    """The simulator, noting whether the driver already waited for the reply to each command
    when the command's bytes reached the device (a zero-delay cable answers within the write)."""

    driver: Driver[Shuffler] | None = None
    waited_before_arrival: list[bool]

    def _handle(self, frame: Frame) -> None:
        if isinstance(frame.message, StartShuffle) and self.driver is not None:
            self.waited_before_arrival.append(self.driver.device.exchange.awaits_reply(frame.seq))
        super()._handle(frame)


async def test_a_request_waits_for_its_reply_before_its_bytes_leave(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sim = WatchingShuffler(shuffle_s=0.2, cable="nullmodem")
    sim.waited_before_arrival = []
    await sim.start()
    device = ShufflerDevice(id="shuffler", driver="shuffler", port=sim.port, reconnect_max_s=0.2)
    link = MemoryLink("shuffler", log=logging.getLogger("drivers.shuffler"))
    driver = sim.driver = shuffler_driver(device, MqttSection(), Topics("holdem", "ts"), link=link)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        sim.load_deck("A", ALL_CARDS)
        with caplog.at_level(logging.INFO, logger="drivers.shuffler"):
            link.command(ShuffleCommand(ts=utc_now(), deck="A"))
            await link.wait_for(lambda: bool(link.of_type(ShuffleCompleteEvent)))
        assert sim.waited_before_arrival == [True]
        assert "executed 'shuffle'" in caplog.text
        assert "reply to unknown command" not in caplog.text
    finally:
        await stop_task(task)
        await sim.close()


async def test_deck_check_reports_missing_and_duplicate_cards(rig: Rig) -> None:
    cards = [c for c in ALL_CARDS if c != "Td"] + ["As"]
    rig.sim.load_deck("B", cards)
    assert rig.sim.press_start() is None  # the machine's own button
    await rig.link.wait_for(lambda: len(rig.link.events) == 2)
    complete = rig.link.events[1]
    assert isinstance(complete, ShuffleCompleteEvent)
    assert (complete.deck, complete.count, complete.ok) == ("B", 52, False)
    assert (complete.missing, complete.duplicates) == (["Td"], ["As"])


async def test_forced_check_failure(rig: Rig) -> None:
    rig.sim.load_deck("A", ALL_CARDS)
    rig.sim.fail_check(count=51, missing=["2c"])
    rig.sim.press_start()
    await rig.link.wait_for(lambda: len(rig.link.events) == 2)
    complete = rig.link.events[1]
    assert isinstance(complete, ShuffleCompleteEvent)
    assert (complete.count, complete.ok, complete.missing) == (51, False, ["2c"])


async def test_jam_and_door_are_faults(rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    rig.sim.load_deck("A", ALL_CARDS)
    rig.sim.shuffle_s = 5.0
    rig.sim.press_start()
    rig.sim.jam()
    await rig.link.wait_for(lambda: rig.state() == "fault")
    await rig.link.wait_for(lambda: len(rig.link.events) == 2)
    shuffling, jam = rig.link.events
    assert isinstance(shuffling, ShufflingEvent)
    assert isinstance(jam, FaultEvent)
    assert jam.code == "jam"
    # A shuffle command while jammed is refused by the machine, and the driver says so.
    with caplog.at_level(logging.ERROR, logger="drivers.shuffler"):
        rig.link.command(ShuffleCommand(ts=utc_now()))
        for _ in range(100):
            if "refused to start: jammed" in caplog.text:
                break
            await asyncio.sleep(0.01)
    assert "refused to start: jammed" in caplog.text
    rig.sim.clear_jam()
    await rig.link.wait_for(lambda: rig.state() == "online")
    rig.sim.open_door()
    await rig.link.wait_for(lambda: len(rig.link.events) == 3)
    door = rig.link.events[2]
    assert isinstance(door, FaultEvent)
    assert door.code == "door_open"
    rig.sim.close_door()
    await rig.link.wait_for(lambda: rig.state() == "online")


async def test_unplug_replug_new_session_and_no_event_lost(rig: Rig) -> None:
    first = rig.link.statuses[-1].session
    rig.sim.unplug()
    await rig.link.wait_for(lambda: rig.state() == "offline")
    await asyncio.sleep(0.3)  # stays unplugged through a few reconnect attempts
    assert rig.state() == "offline"
    rig.sim.replug()
    await rig.link.wait_for(lambda: rig.state() == "online")
    assert rig.link.statuses[-1].session == first + 1
    rig.sim.load_deck("A", ALL_CARDS)
    rig.sim.press_start()
    await rig.link.wait_for(lambda: len(rig.link.events) == 2)
    assert [e.seq for e in rig.link.events] == [1, 2]


async def test_silent_device_is_offline_after_heartbeat_loss(rig: Rig) -> None:
    rig.driver.device.port.silence_s = 0.3  # three heartbeats of a faster machine (1.5 s at the real pace)
    rig.sim.heartbeat_s = 60.0  # the machine goes silent without closing the line
    await rig.link.wait_for(lambda: rig.state() == "offline", within=5.0)
    assert "no frame for 0.3 s (heartbeat lost)" in (rig.link.statuses[-1].detail or "")


async def test_a_line_that_splits_and_delays_every_byte_loses_nothing() -> None:
    sim, driver, link = await start(LineNoise(chunk=1, delay_s=0.001))
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        sim.load_deck("A", ALL_CARDS)
        sim.press_start()
        await link.wait_for(lambda: len(link.events) == 2)
        assert [e.type for e in link.events] == ["shuffling", "shuffle_complete"]
        assert driver.device.port.stream.corrupt == 0
    finally:
        await stop_task(task)
        await sim.close()


async def test_a_line_that_corrupts_and_drops_frames_only_costs_those_frames() -> None:
    # A fifth of the shuffler's writes arrive damaged or not at all; heartbeats keep coming
    # (every 20 ms here).
    sim, driver, link = await start(LineNoise(drop_rate=0.1, corrupt_rate=0.1, seed=3), 0.02)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online", within=10)
        await asyncio.sleep(1.0)
        assert driver.device.port.stream.corrupt >= 1
        assert link.state() == "online"
        assert link.events == []  # no damaged frame became an event
    finally:
        await stop_task(task)
        await sim.close()
