"""The serial exchange on a null-modem cable to a scripted device: the handshake, commands
answered by Ack/Nak before and during the session, replies routed, waits failed on close."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest

from drivers.errors import DeviceLost, DeviceUnavailable
from drivers.exchange import SerialExchange
from drivers.framed_port import FramedPort
from drivers.framing import Frame, Message
from drivers.shuffler.protocol import (
    CODEC,
    Ack,
    GetStatus,
    Heartbeat,
    MachineState,
    Nak,
    NakReason,
    Shuffling,
    StartShuffle,
    StatusReport,
)
from tests.drivers.line_device import LineDevice, online_session

IDLE = StatusReport(MachineState.IDLE, loaded=52)


def shuffler_like(frame: Frame) -> list[Message]:
    """Answers GetStatus with a heartbeat and its status, StartShuffle with Ack (deck "A") or
    Nak (any other deck), and stays silent to StartShuffle("mute")."""
    message = frame.message
    if isinstance(message, GetStatus):
        return [Heartbeat(1), IDLE]
    if isinstance(message, StartShuffle):
        if message.deck == "mute":
            return []
        if message.deck == "A":
            return [Ack(frame.seq), Shuffling("A")]
        return [Nak(frame.seq, NakReason.NO_DECK)]
    return []


@dataclass
class Rig:
    device: LineDevice
    exchange: SerialExchange
    seen: list[Frame] = field(default_factory=list)
    ticks: int = 0

    def on_frame(self, frame: Frame) -> None:
        self.seen.append(frame)

    def tick(self) -> None:
        self.ticks += 1

    async def serving(self) -> asyncio.Task[None]:
        task = asyncio.create_task(self.exchange.serve(self.on_frame, self.tick))
        await asyncio.sleep(0)
        return task


def make(answer: Callable[[Frame], list[Message]] = shuffler_like) -> Rig:
    session, _ = online_session()
    exchange: SerialExchange | None = None
    device = LineDevice(answer, awaiting=lambda seq: exchange is not None and exchange.awaits_reply(seq))
    port = FramedPort(device.url, CODEC, session, silence_s=5.0, tick_s=0.02)
    exchange = SerialExchange(port, handshake_timeout_s=0.3, request_timeout_s=0.3)
    return Rig(device, exchange)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    rig = make()
    try:
        yield rig
    finally:
        await rig.exchange.close()
        rig.device.close()


async def test_the_handshake_answer_is_returned_and_frames_before_it_kept(rig: Rig) -> None:
    assert await rig.exchange.open(GetStatus(), StatusReport) == IDLE
    assert [f.message for f in rig.device.received] == [GetStatus()]
    # The heartbeat that came before the answer is the session's first frame.
    assert [f.message for f in await rig.exchange.port.next_frames()] == [Heartbeat(1)]


async def test_no_answer_to_the_handshake_is_a_device_unavailable() -> None:
    rig = make(lambda frame: [Heartbeat(1)])  # alive, but not answering
    try:
        with pytest.raises(DeviceUnavailable, match=r"no answer to the handshake within 0\.3 s"):
            await rig.exchange.open(GetStatus(), StatusReport)
    finally:
        await rig.exchange.close()
        rig.device.close()


async def test_a_request_before_the_session_reads_its_own_reply(rig: Rig) -> None:
    await rig.exchange.open(GetStatus(), StatusReport)
    assert await rig.exchange.request(StartShuffle("A")) == Ack(2)
    assert await rig.exchange.request(StartShuffle("B")) == Nak(3, NakReason.NO_DECK)
    # Nobody else read meanwhile: what was not a reply waits for the session, in order.
    kept = await rig.exchange.port.next_frames()
    assert [f.message for f in kept] == [Heartbeat(1), Shuffling("A")]


async def test_during_the_session_replies_go_to_their_commands_and_the_rest_to_the_device(
    rig: Rig,
) -> None:
    await rig.exchange.open(GetStatus(), StatusReport)
    task = await rig.serving()
    try:
        assert await rig.exchange.request(StartShuffle("A")) == Ack(2)
        for _ in range(100):
            if len(rig.seen) == 2:
                break
            await asyncio.sleep(0.01)
        assert [f.message for f in rig.seen] == [Heartbeat(1), Shuffling("A")]
        assert rig.ticks >= 1
        # Each command's wait was registered before its bytes reached the device.
        assert rig.device.awaited_on_arrival == [False, True]  # GetStatus is not a command
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_a_command_without_a_reply_is_a_device_lost(rig: Rig) -> None:
    await rig.exchange.open(GetStatus(), StatusReport)
    task = await rig.serving()
    try:
        with pytest.raises(DeviceLost, match=r"no reply to StartShuffle within 0\.3 s"):
            await rig.exchange.request(StartShuffle("mute"))
        assert not rig.exchange.awaits_reply(2)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_a_reply_nobody_waits_for_is_logged_not_passed_on(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    await rig.exchange.open(GetStatus(), StatusReport)
    task = await rig.serving()
    try:
        with caplog.at_level(logging.WARNING, logger="drivers.testdev"):
            rig.device.send(Ack(77), Heartbeat(2))
            for _ in range(100):
                if len(rig.seen) == 2:
                    break
                await asyncio.sleep(0.01)
        assert [f.message for f in rig.seen] == [Heartbeat(1), Heartbeat(2)]
        assert "dev: reply to unknown command seq 77" in caplog.text
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_closing_fails_the_commands_still_waiting(rig: Rig) -> None:
    await rig.exchange.open(GetStatus(), StatusReport)
    task = await rig.serving()
    waiting = asyncio.create_task(rig.exchange.request(StartShuffle("mute")))
    for _ in range(100):
        if rig.exchange.awaits_reply(2):
            break
        await asyncio.sleep(0.01)
    await rig.exchange.close()
    with pytest.raises(DeviceLost, match="device disconnected"):
        await waiting
    with pytest.raises(DeviceLost):
        await task  # the serving loop finds its port closed
