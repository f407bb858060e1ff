"""The framed port on a null-modem cable to a scripted device: opening, numbering, decoding,
corrupt frames and noise, frames kept from the handshake, silence."""

from __future__ import annotations

import asyncio
import logging

import pytest

from contract.models import FaultEvent
from drivers.errors import DeviceLost, DeviceUnavailable
from drivers.framed_port import FramedPort
from drivers.framing import Frame
from drivers.session import DeviceSession
from drivers.shuffler.protocol import CODEC, Ack, GetStatus, Heartbeat, MachineState, StatusReport
from drivers.transport.nullmodem import LineNoise
from tests.drivers.line_device import LineDevice, online_session


def port_to(device: LineDevice, session: DeviceSession, **settings: object) -> FramedPort:
    settings.setdefault("silence_s", 5.0)
    return FramedPort(device.url, CODEC, session, **settings)  # type: ignore[arg-type]


async def frames_within(port: FramedPort, count: int, *, session_reads: bool = False) -> list[Frame]:
    """The next ``count`` frames, by :meth:`FramedPort.read_frames` or, as a device's read loop
    reads, :meth:`FramedPort.next_frames`."""
    got: list[Frame] = []
    async with asyncio.timeout(2.0):
        while len(got) < count:
            got += await port.next_frames() if session_reads else await port.read_frames(0.05)
    return got


async def test_a_port_nobody_plugged_in_is_unavailable() -> None:
    session, _ = online_session()
    port = FramedPort("nullmodem:nothing-here", CODEC, session, silence_s=1.0)
    with pytest.raises(DeviceUnavailable, match="nullmodem:nothing-here: nothing plugged in"):
        await port.open()
    with pytest.raises(DeviceLost, match="not connected"):
        await port.send(GetStatus())


async def test_frames_are_numbered_from_one_on_each_opening_before_they_leave() -> None:
    session, _ = online_session()
    device = LineDevice()
    port = port_to(device, session)
    numbered: list[tuple[int, int]] = []  # (number, frames the device had then)
    try:
        await port.open()
        for _ in range(3):
            await port.send(GetStatus(), numbered=lambda n: numbered.append((n, len(device.received))))
        await asyncio.sleep(0.01)
        assert numbered == [(1, 0), (2, 1), (3, 2)]
        await port.close()
        await port.open()
        assert await port.send(GetStatus()) == 1
        await asyncio.sleep(0.01)
        assert [f.seq for f in device.received] == [1, 2, 3, 1]
        assert all(f.message == GetStatus() for f in device.received)
    finally:
        await port.close()
        device.close()


async def test_frames_split_into_single_bytes_are_decoded_whole() -> None:
    session, _ = online_session()
    device = LineDevice(to_host=LineNoise(chunk=1))
    port = port_to(device, session)
    try:
        await port.open()
        device.send(Heartbeat(7), StatusReport(MachineState.IDLE, loaded=52), Ack(1))
        frames = await frames_within(port, 3)
        assert [f.message for f in frames] == [
            Heartbeat(7),
            StatusReport(MachineState.IDLE, loaded=52),
            Ack(1),
        ]
        assert port.frames_received == 3
        assert port.stream.corrupt == 0
    finally:
        await port.close()
        device.close()


async def test_corrupt_frames_count_toward_a_crc_errors_fault(caplog: pytest.LogCaptureFixture) -> None:
    session, link = online_session(fault_errors=3, fault_window_s=5.0)
    device = LineDevice()
    port = port_to(device, session)
    good = CODEC.encode(1, Heartbeat(1))
    bad = good[:-1] + bytes([good[-1] ^ 0x01])
    try:
        await port.open()
        with caplog.at_level(logging.WARNING, logger="drivers.testdev"):
            device.send_bytes(bad + bad + good)
            frames = await frames_within(port, 1)
        assert [f.message for f in frames] == [Heartbeat(1)]  # the good one behind them
        assert "dev: corrupt frame: CRC mismatch in a frame of type 0x85, seq 1" in caplog.text
        assert link.state() == "online"  # two errors: not yet a burst
        device.send_bytes(bad + good)
        await frames_within(port, 1)
        assert link.state() == "fault"
        assert [getattr(e, "code", None) for e in link.events if isinstance(e, FaultEvent)] == ["crc_errors"]
    finally:
        await port.close()
        device.close()


@pytest.mark.parametrize("garbage_is_error", [False, True], ids=["stream", "packets"])
async def test_bytes_outside_frames_are_noise_on_a_stream_and_errors_where_a_transfer_is_a_frame(
    garbage_is_error: bool, caplog: pytest.LogCaptureFixture
) -> None:
    session, link = online_session(fault_errors=2)
    device = LineDevice()
    port = port_to(device, session, garbage_is_error=garbage_is_error)
    try:
        await port.open()
        with caplog.at_level(logging.WARNING, logger="drivers.testdev"):
            for uptime in (1, 2):
                device.send_bytes(b"\x00noise" + CODEC.encode(uptime, Heartbeat(uptime)))
                await frames_within(port, 1)
        if garbage_is_error:
            assert "dev: corrupt frame: 6 bytes before a start marker" in caplog.text
            assert link.state() == "fault"
        else:
            assert "dev: skipped 6 bytes before a start marker" in caplog.text
            assert link.state() == "online"
    finally:
        await port.close()
        device.close()


async def test_frames_kept_from_the_handshake_come_first_then_silence_is_the_device_lost() -> None:
    session, _ = online_session()
    device = LineDevice()
    port = port_to(device, session, silence_s=0.2, tick_s=0.02)
    try:
        await port.open()
        device.send(Heartbeat(1))
        (early,) = await frames_within(port, 1)
        port.keep(early)
        device.send(Heartbeat(2))
        assert [f.message for f in await port.next_frames()] == [Heartbeat(1)]
        assert [f.message for f in await frames_within(port, 1, session_reads=True)] == [Heartbeat(2)]
        quiet = 0

        async def read_until_lost() -> None:
            nonlocal quiet
            async with asyncio.timeout(2.0):
                while True:
                    assert await port.next_frames() == []
                    quiet += 1

        with pytest.raises(DeviceLost, match=r"no frame for 0\.2 s \(heartbeat lost\)"):
            await read_until_lost()
        assert quiet >= 5  # it returned every tick while it waited
    finally:
        await port.close()
        device.close()


async def test_a_device_that_hangs_up_is_lost() -> None:
    session, _ = online_session()
    device = LineDevice()
    port = port_to(device, session)
    try:
        await port.open()
        device.port.unplug()
        with pytest.raises(DeviceLost, match="hung up"):
            await port.read_frames(1.0)
    finally:
        await port.close()
        device.close()
