"""The reader simulator under a chip load, seen from the host end of its null-modem cable: pages
that respect the frame size, the anti-collision time, the UART's pace, the physical API."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from drivers.framing import Frame
from drivers.rfid.protocol import (
    CODEC,
    MAX_PAYLOAD,
    Inventory,
    InventoryPage,
    ReaderError,
    ReaderErrorCode,
)
from drivers.transport import Transport, open_transport
from simulators.rfid import DEFAULT_PAGE_READS, RfidReaderSimulator
from tests.drivers.waiting import until

POT_CHIPS = [f"E0070000{n:08X}" for n in range(1, 301)]


@dataclass
class Host:
    """The host end of the cable: every frame, with the time it was decoded."""

    transport: Transport
    frames: list[tuple[float, Frame]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    async def run(self) -> None:
        stream = CODEC.stream()
        while True:
            data = await self.transport.read()
            now = time.monotonic()
            for frame in stream.feed(data):
                self.frames.append((now, frame))
                self.sizes.append(len(frame.to_bytes()))
            assert stream.drain_errors() == []

    def messages(self, kind: type) -> list[tuple[float, object]]:
        return [(t, f.message) for t, f in self.frames if isinstance(f.message, kind)]


@pytest.fixture
async def pot() -> AsyncIterator[tuple[RfidReaderSimulator, Host]]:
    # Antenna 1 empty, antenna 2 the pot with 300 chips; a tenth of the real anti-collision time.
    sim = RfidReaderSimulator(antenna_count=2, dwell_ms=10, cable="nullmodem", speed=10)
    sim.place_all(POT_CHIPS, 2)
    await sim.start()
    host = Host(await open_transport(sim.port))
    task = asyncio.create_task(host.run())
    try:
        yield sim, host
    finally:
        task.cancel()
        await host.transport.close()
        await sim.close()


def last_pages(host: Host) -> list[float]:
    return [t for t, m in host.messages(InventoryPage) if isinstance(m, InventoryPage) and m.last]


async def test_three_hundred_chips_come_in_numbered_pages_of_at_most_32(
    pot: tuple[RfidReaderSimulator, Host],
) -> None:
    _, host = pot
    await until(lambda: len(last_pages(host)) >= 2)
    pages = [m for _, m in host.messages(InventoryPage) if isinstance(m, InventoryPage)]
    # The second dwell of the pot: the pages after the first last page, up to the next.
    ends = [i for i, p in enumerate(pages) if p.last]
    dwell = pages[ends[0] + 1 : ends[1] + 1]
    assert [p.page for p in dwell] == list(range(len(dwell)))
    assert [p.last for p in dwell] == [False] * (len(dwell) - 1) + [True]
    assert {p.antenna for p in dwell} == {2}
    assert len({p.round for p in dwell}) == 1
    assert all(len(p.reads) <= DEFAULT_PAGE_READS for p in dwell)
    uids = [read.uid for p in dwell for read in p.reads]
    assert sorted(uids) == POT_CHIPS  # each once
    assert len(dwell) == 10  # nine full pages of 32 and the last with 12
    assert max(host.sizes) <= 6 + MAX_PAYLOAD + 2
    # The empty antenna still sends one plain Inventory per dwell.
    empty = [m for _, m in host.messages(Inventory) if isinstance(m, Inventory)]
    assert empty
    assert all(m.antenna == 1 and m.reads == () for m in empty)


async def test_the_pot_takes_its_anti_collision_time(pot: tuple[RfidReaderSimulator, Host]) -> None:
    sim, host = pot
    await until(lambda: len(last_pages(host)) >= 2)
    run = sim.anticollision(POT_CHIPS)
    # The pot's pages follow the anti-collision: the first is due when its 32nd tag is
    # identified, the last when the whole of it is done. Checked on the simulator's own record of
    # when each page was due and when it left: the host's read times only blur that pace (a busy
    # event loop, two test workers on two cores, hands late pages over together).
    closing = next(p for p in sim.recent_pages if p.antenna == 2 and p.last)
    dwell = [p for p in sim.recent_pages if p.antenna == 2 and p.round == closing.round]
    assert [p.page for p in dwell] == list(range(10))
    first_full = run.found[DEFAULT_PAGE_READS - 1][0]
    # Each full page is due when its last tag is identified, the last page at the dwell's end:
    # pages sent at once would all be due together.
    due_at = [run.found[k * DEFAULT_PAGE_READS - 1][0] for k in range(1, 10)] + [run.duration_s]
    assert [p.due - dwell[0].due for p in dwell] == pytest.approx(
        [(t - first_full) / sim.speed for t in due_at]
    )
    # None leaves before it is due, and they leave in order.
    assert all(p.sent >= p.due for p in dwell)
    assert [p.sent for p in dwell] == sorted(p.sent for p in dwell)
    # The host got them, in order, no earlier than they left.
    received = [
        (t, m.page)
        for t, m in host.messages(InventoryPage)
        if isinstance(m, InventoryPage) and m.antenna == 2 and m.round == closing.round
    ]
    assert [page for _, page in received] == list(range(10))
    assert all(t >= p.sent for (t, _), p in zip(received, dwell, strict=True))
    # Consecutive UIDs, as from one production batch (docs/protocols/rfid.md: 2.08 s).
    assert run.duration_s == pytest.approx(2.08, abs=0.05)


async def test_the_uart_sends_no_faster_than_its_baud_rate() -> None:
    sim = RfidReaderSimulator(antenna_count=1, dwell_ms=50, cable="nullmodem", baudrate=9600)
    await sim.start()
    host = Host(await open_transport(sim.port))
    task = asyncio.create_task(host.run())
    try:
        sent = time.monotonic()
        for _ in range(20):
            sim.inject_error(ReaderErrorCode.RF_OVERLOAD)
        await until(lambda: len(host.messages(ReaderError)) == 20)
        # 20 frames of 10 bytes, 10 bits each at 9600 baud: at least 0.21 s on the line.
        assert host.messages(ReaderError)[-1][0] - sent >= 20 * 10 * 10 / 9600 - 0.005
    finally:
        task.cancel()
        await host.transport.close()
        await sim.close()


def test_the_physical_api_moves_stacks_at_once_and_refuses_bad_input() -> None:
    sim = RfidReaderSimulator(antenna_count=6, cable="nullmodem")
    sim.place_all(POT_CHIPS[:20], 3)
    sim.place("E0040150654CC41C", 3, face="down")
    assert len(sim.on_antenna(3)) == 21
    sim.move_all(sim.on_antenna(3), 5)
    assert sim.on_antenna(3) == []
    assert sim.tags["E0040150654CC41C"].face == "down"  # moved with its face
    with pytest.raises(ValueError, match="not a tag UID"):
        sim.place_all([*POT_CHIPS[20:30], "XYZ"], 4)
    assert sim.on_antenna(4) == []  # all or nothing
    with pytest.raises(ValueError, match="antenna 9 does not exist"):
        sim.move_all(POT_CHIPS[:5], 9)
    assert len(sim.on_antenna(5)) == 21
    sim.remove_all(POT_CHIPS[:20])
    assert sim.on_antenna(5) == ["E0040150654CC41C"]
    with pytest.raises(ValueError, match="speed"):
        RfidReaderSimulator(speed=0, cable="nullmodem")
    with pytest.raises(ValueError, match="page_reads"):
        RfidReaderSimulator(page_reads=256, cable="nullmodem")


async def test_a_dwell_never_needs_more_pages_than_a_byte_numbers() -> None:
    # One read per page would take 300 pages: the reader fills them fuller instead.
    sim = RfidReaderSimulator(antenna_count=1, cable="nullmodem", speed=10, page_reads=1)
    sim.place_all(POT_CHIPS, 1)
    await sim.start()
    host = Host(await open_transport(sim.port))
    task = asyncio.create_task(host.run())
    try:
        await until(lambda: len(last_pages(host)) >= 1)
        pages = [m for _, m in host.messages(InventoryPage) if isinstance(m, InventoryPage)]
        dwell = pages[: next(i for i, p in enumerate(pages) if p.last) + 1]
        assert [p.page for p in dwell] == list(range(len(dwell)))
        assert len(dwell) <= 256
        assert sorted(r.uid for p in dwell for r in p.reads) == POT_CHIPS
    finally:
        task.cancel()
        await host.transport.close()
        await sim.close()
