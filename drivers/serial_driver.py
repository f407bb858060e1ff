"""Drivers of framed serial devices (shuffler, RFID reader): handshake, heartbeats, Ack/Nak.

:class:`SerialDriver` is a :class:`drivers.framed.FramedDriver` for a device on a serial line (the
device's ``port``: a path such as ``/dev/ttyUSB0``, a pyserial URL such as ``socket://host:port``,
or ``nullmodem:NAME`` for a simulated device in this process). After opening the line it sends
the subclass's handshake request and waits ``handshake_timeout_s`` for the reply; three heartbeat
periods without a frame mean the device is gone; :meth:`SerialDriver.request` sends a command and
waits for its Ack/Nak.
"""

from __future__ import annotations

import abc
import asyncio
import time
from typing import Any

from config.models import MqttSection, SerialDevice
from contract.topics import Topics
from drivers.driver import DriverOptions
from drivers.errors import DeviceLost, DeviceUnavailable
from drivers.framed import FramedDriver
from drivers.framing import Frame, Message


class SerialDriver(FramedDriver):
    """A driver for a device that answers a handshake and acknowledges its commands."""

    handshake_timeout_s: float = 1.0
    request_timeout_s: float = 1.0

    def __init__(
        self,
        device: SerialDevice,
        mqtt: MqttSection,
        topics: Topics,
        options: DriverOptions | None = None,
        **kwargs: Any,
    ) -> None:
        options = options or DriverOptions(
            reconnect_max_s=device.reconnect_max_s, resend_buffer=device.resend_buffer
        )
        super().__init__(
            device.id,
            mqtt,
            topics,
            options,
            transport_url=device.port,
            transport_options={"baudrate": device.baudrate},
            **kwargs,
        )
        self.device = device
        self._waiting: dict[int, asyncio.Future[Message]] = {}
        self._serving = False

    # ------------------------------------------------------------------ subclass hooks

    @abc.abstractmethod
    def is_handshake_reply(self, message: Message) -> bool:
        """True for the message that answers the handshake request."""

    @abc.abstractmethod
    def handshake_request(self) -> Message:
        """The message sent right after opening the port (the device must answer it)."""

    @abc.abstractmethod
    async def on_handshake(self, message: Message) -> None:
        """Configure the device after it answered (runs before the session starts)."""

    @abc.abstractmethod
    def handle(self, frame: Frame) -> None:
        """Turn one received frame (not an Ack/Nak) into events."""

    @staticmethod
    def reply_ref(message: Message) -> int | None:
        """The ``ref`` of an Ack/Nak message, None for any other message."""
        ref = getattr(message, "ref", None)
        return ref if isinstance(ref, int) else None

    # ------------------------------------------------------------------ FramedDriver hooks

    async def handshake(self) -> None:
        await self.send(self.handshake_request())
        deadline = time.monotonic() + self.handshake_timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DeviceUnavailable(
                    f"{self.transport_url}: no answer to the handshake within "
                    f"{self.handshake_timeout_s:g} s"
                )
            for frame in await self.read_frames(remaining):
                if self.is_handshake_reply(frame.message):
                    await self.on_handshake(frame.message)
                    return
                self.keep_for_session(frame)

    async def serve(self) -> None:
        self._serving = True
        try:
            await super().serve()
        finally:
            self._serving = False

    async def disconnect(self) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(DeviceLost("device disconnected"))
        self._waiting.clear()
        await super().disconnect()

    async def on_frame(self, frame: Frame) -> None:
        ref = self.reply_ref(frame.message)
        if ref is None:
            self.handle(frame)
            return
        future = self._waiting.get(ref)
        if future is not None and not future.done():
            future.set_result(frame.message)
        else:
            self.log.warning("%s: reply to unknown command seq %d", self.device_id, ref)

    # ------------------------------------------------------------------ commands

    async def request(self, message: Message) -> Message:
        """Send a command and wait for its Ack/Nak (DeviceLost when none comes in time)."""
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        seq = await self.send(message, numbered=lambda number: self._waiting.update({number: future}))
        try:
            if self._serving:
                async with asyncio.timeout(self.request_timeout_s):
                    return await future
            # During the handshake nobody else reads: read here, keeping other frames for later.
            deadline = time.monotonic() + self.request_timeout_s
            while not future.done() and (remaining := deadline - time.monotonic()) > 0:
                for frame in await self.read_frames(remaining):
                    if self.reply_ref(frame.message) is not None:
                        await self.on_frame(frame)
                    else:
                        self.keep_for_session(frame)
            if not future.done():
                raise TimeoutError
            return future.result()
        except TimeoutError:
            raise DeviceLost(
                f"no reply to {type(message).__name__} within {self.request_timeout_s:g} s"
            ) from None
        finally:
            self._waiting.pop(seq, None)
