"""The RFID driver with a chip load, against the reader simulator on a null-modem cable (no pty,
no broker): 300 chips on the pot's antenna, chips swept from the betting areas, cards beside.

The simulator runs the anti-collision ten times faster than a real reader (``speed=10``: the pot
of 300 takes 0.2 to 0.3 s instead of 2 to 3), still far longer than the driver's hold time, so a
tracker that let time rather than missed sweeps decide would fail here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from config.models import MqttSection, RfidReaderDevice
from contract.models import TagEvent
from contract.topics import Topics
from drivers.driver import Driver, stop_task
from drivers.rfid.driver import RfidReader, rfid_driver
from simulators.rfid import RfidReaderSimulator
from testing.memory_link import MemoryLink
from tests.drivers.waiting import until

ANTENNAS = {1: "seat:1", 2: "seat:2", 3: "bet:1", 4: "bet:2", 5: "pot", 6: "rake"}
SEAT1, SEAT2, BET1, BET2, POT = 1, 2, 3, 4, 5
CARD = "E0040150654CC41C"


def chips(count: int, first: int = 1) -> list[str]:
    return [f"E0070000{n:08X}" for n in range(first, first + count)]


@dataclass
class Rig:
    sim: RfidReaderSimulator
    driver: Driver[RfidReader]
    link: MemoryLink

    def tags(self) -> list[TagEvent]:
        return [e for e in self.link.events if isinstance(e, TagEvent)]

    def present(self) -> dict[str, str]:
        """UID -> zone, from the events so far."""
        where: dict[str, str] = {}
        for event in self.tags():
            if event.present:
                where[event.uid] = event.zone
            elif where.get(event.uid) == event.zone:
                del where[event.uid]
        return where

    async def sweeps(self, count: int) -> None:
        """Wait until the reader has swept ``count`` more times (a positive marker)."""
        target = self.sim.sweeps + count
        await until(lambda: self.sim.sweeps >= target, within=10 + count)


@pytest.fixture
async def rig(request: pytest.FixtureRequest) -> AsyncIterator[Rig]:
    noise: dict[str, float] = getattr(request, "param", {})
    sim = RfidReaderSimulator(antenna_count=6, dwell_ms=10, seed=11, cable="nullmodem", speed=10)
    for knob, value in noise.items():
        setattr(sim, knob, value)
    await sim.start()
    device = RfidReaderDevice(
        id="rfid-1",
        driver="rfid",
        port=sim.port,
        antennas=ANTENNAS,
        hold_ms=100,  # far shorter than the pot's dwell
        dwell_ms=10,
        fault_crc_errors=1000,
        reconnect_max_s=0.2,
    )
    link = MemoryLink("rfid-1", log=logging.getLogger("drivers.rfid"))
    driver = rfid_driver(device, MqttSection(), Topics("holdem", "tc1"), link=link)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        yield Rig(sim, driver, link)
    finally:
        await stop_task(task)
        await sim.close()


NOISY = {"miss_rate": 0.1, "duplicate_rate": 0.05, "crosstalk_rate": 0.05, "corrupt_rate": 0.03}


@pytest.mark.parametrize("rig", [{}, NOISY], indirect=True, ids=["clean", "noisy"])
async def test_three_hundred_chips_on_one_antenna_are_present_and_stay(rig: Rig) -> None:
    pot = chips(300)
    rig.sim.place_all(pot, POT)
    rig.sim.place(CARD, SEAT1, face="down")
    await rig.link.wait_for(lambda: len(rig.tags()) >= 301, within=20)
    # Twelve sweeps more (more than K for a clean reader and as many as K at 20 % missed):
    # nothing leaves, nothing is reported twice.
    await rig.sweeps(12)
    if rig.sim.corrupt_rate:  # and some pages were lost on the line
        await until(lambda: rig.driver.device.tracker.broken_dwells >= 2)
    tags = rig.tags()
    assert all(e.present for e in tags), [(e.uid, e.zone) for e in tags if not e.present]
    assert len(tags) == 301
    assert rig.present() == dict.fromkeys(pot, "pot") | {CARD: "seat:1"}


async def test_chips_swept_into_the_pot_are_reported_there_first(rig: Rig) -> None:
    pot, bet1, bet2 = chips(300), chips(20, 1001), chips(10, 2001)
    rig.sim.place_all(pot, POT)
    rig.sim.place_all(bet1, BET1)
    rig.sim.place_all(bet2, BET2)
    await rig.link.wait_for(lambda: len(rig.tags()) == 330, within=20)
    await rig.sweeps(2)
    before = len(rig.tags())
    swept_at = rig.sim.sweeps
    rig.sim.move_all(bet1 + bet2, POT)  # the dealer's sweep
    await rig.link.wait_for(lambda: len(rig.tags()) == before + 60, within=20)
    # A sweep or two (the one the move happened in, and one more; one of slack for a busy
    # machine): bounded however long the pot's inventory takes.
    assert rig.sim.sweeps - swept_at <= 3
    moves = rig.tags()[before:]
    for uid in bet1 + bet2:
        mine = [(e.zone, e.present) for e in moves if e.uid == uid]
        old = "bet:1" if uid in bet1 else "bet:2"
        assert mine == [("pot", True), (old, False)], uid
    assert rig.present() == dict.fromkeys(pot + bet1 + bet2, "pot")


async def test_a_card_beside_a_full_pot_and_chips_taken_away(rig: Rig) -> None:
    pot = chips(300)
    rig.sim.place_all(pot, POT)
    await rig.link.wait_for(lambda: len(rig.tags()) == 300, within=20)
    rig.sim.place(CARD, SEAT2, face="down")
    await rig.link.wait_for(lambda: len(rig.tags()) == 301)
    assert (rig.tags()[-1].uid, rig.tags()[-1].zone) == (CARD, "seat:2")
    rig.sim.remove(CARD)
    await rig.link.wait_for(lambda: len(rig.tags()) == 302)
    assert (rig.tags()[-1].uid, rig.tags()[-1].zone, rig.tags()[-1].present) == (CARD, "seat:2", False)
    # Twenty chips leave the table (a player colours up): each is reported gone, once.
    rig.sim.remove_all(pot[:20])
    await rig.link.wait_for(lambda: len(rig.tags()) == 322, within=20)
    gone = rig.tags()[302:]
    assert sorted(e.uid for e in gone) == pot[:20]
    assert all((e.zone, e.present) == ("pot", False) for e in gone)
    assert rig.present() == dict.fromkeys(pot[20:], "pot")
