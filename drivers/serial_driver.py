"""Drivers of framed serial devices (shuffler, RFID reader): the port, framing errors, heartbeats.

:class:`SerialDriver` fills in the :class:`drivers.base.Driver` hooks for a device on a serial
port (a path such as ``/dev/ttyUSB0`` or a pyserial URL such as ``socket://host:port``, through
pyserial-asyncio-fast): it opens the port, runs the subclass's handshake, feeds received bytes to
the protocol's frame decoder, reports corrupt frames (logged with the device id, counted toward a
``crc_errors`` fault), declares the device lost when no frame arrives for ``heartbeat_timeout_s``,
and matches Ack/Nak replies to the commands it sent.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import time
from typing import Any, Final

import serial_asyncio_fast

from config.models import MqttSection, SerialDevice
from contract.topics import Topics
from drivers.base import DeviceLost, DeviceUnavailable, Driver, DriverOptions
from drivers.framing import Codec, Frame, FrameStream, Message

READ_CHUNK: Final = 4096
#: How often ``tick`` runs when the line is quiet.
TICK_S: Final = 0.05


class SerialDriver(Driver):
    """A driver for a device that speaks :mod:`drivers.framing` frames over a serial port."""

    codec: Codec
    heartbeat_timeout_s: float = 1.5
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
        options = options or DriverOptions(reconnect_max_s=device.reconnect_max_s)
        super().__init__(device.id, mqtt, topics, options, **kwargs)
        self.device = device
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._stream: FrameStream = self.codec.stream()
        self._tx_seq = 0
        self._waiting: dict[int, asyncio.Future[Message]] = {}
        self._early: list[Frame] = []
        self._last_frame = 0.0
        self._serving = False
        self.frames_received = 0

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
        """Turn one received frame into events (called in order, in the session)."""

    def tick(self) -> None:
        """Called at least every TICK_S while connected (time-based state, e.g. hold times)."""
        self.tick_faults()

    @staticmethod
    def reply_ref(message: Message) -> int | None:
        """The ``ref`` of an Ack/Nak message, None for any other message."""
        ref = getattr(message, "ref", None)
        return ref if isinstance(ref, int) else None

    # ------------------------------------------------------------------ Driver hooks

    async def connect(self) -> None:
        try:
            self._reader, self._writer = await serial_asyncio_fast.open_serial_connection(
                url=self.device.port, baudrate=self.device.baudrate
            )
        except Exception as error:  # pyserial raises SerialException (an OSError) or ValueError
            raise DeviceUnavailable(f"cannot open {self.device.port}: {error}") from None
        self._stream = self.codec.stream()
        self._early.clear()
        self._tx_seq = 0
        await self.send(self.handshake_request())
        deadline = time.monotonic() + self.handshake_timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DeviceUnavailable(
                    f"{self.device.port}: no answer to the handshake within "
                    f"{self.handshake_timeout_s:g} s"
                )
            for frame in await self._read_frames(remaining):
                if self.is_handshake_reply(frame.message):
                    self._last_frame = time.monotonic()
                    await self.on_handshake(frame.message)
                    return
                self._early.append(frame)

    async def serve(self) -> None:
        # Frames that arrived during the handshake belong to this session.
        self._serving = True
        early, self._early = self._early, []
        for frame in early:
            self._dispatch(frame)
        self._last_frame = time.monotonic()
        while True:
            frames = await self._read_frames(TICK_S)
            now = time.monotonic()
            if frames:
                self._last_frame = now
            for frame in frames:
                self._dispatch(frame)
            self.tick()
            if now - self._last_frame > self.heartbeat_timeout_s:
                raise DeviceLost(f"no frame for {self.heartbeat_timeout_s:g} s (heartbeat lost)")

    async def disconnect(self) -> None:
        self._serving = False
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(DeviceLost("device disconnected"))
        self._waiting.clear()
        writer, self._writer, self._reader = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await writer.wait_closed()

    # ------------------------------------------------------------------ sending

    async def send(self, message: Message) -> int:
        """Send one message; returns its sequence number."""
        writer = self._writer
        if writer is None:
            raise DeviceLost("not connected")
        self._tx_seq = (self._tx_seq + 1) & 0xFF
        writer.write(self.codec.encode(self._tx_seq, message))
        await writer.drain()
        return self._tx_seq

    async def request(self, message: Message) -> Message:
        """Send a command and wait for its Ack/Nak (DeviceLost when none comes in time)."""
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        seq = await self.send(message)
        self._waiting[seq] = future
        try:
            if self._serving:
                async with asyncio.timeout(self.request_timeout_s):
                    return await future
            # During the handshake nobody else reads: read here, keeping other frames for later.
            deadline = time.monotonic() + self.request_timeout_s
            while not future.done() and (remaining := deadline - time.monotonic()) > 0:
                for frame in await self._read_frames(remaining):
                    if self.reply_ref(frame.message) is not None:
                        self._dispatch(frame)
                    else:
                        self._early.append(frame)
            if not future.done():
                raise TimeoutError
            return future.result()
        except TimeoutError:
            raise DeviceLost(
                f"no reply to {type(message).__name__} within {self.request_timeout_s:g} s"
            ) from None
        finally:
            self._waiting.pop(seq, None)

    # ------------------------------------------------------------------ receiving

    async def _read_frames(self, wait_s: float) -> list[Frame]:
        reader = self._reader
        if reader is None:
            raise DeviceLost("not connected")
        # asyncio.timeout, not wait_for: in Python 3.11 wait_for can swallow a cancellation.
        try:
            async with asyncio.timeout(wait_s):
                data = await reader.read(READ_CHUNK)
        except TimeoutError:
            return []
        if not data:
            raise DeviceLost(f"{self.device.port}: end of file (unplugged)")
        frames = self._stream.feed(data)
        self.frames_received += len(frames)
        for error in self._stream.drain_errors():
            if error.kind == "garbage":
                self.log.warning("%s: skipped %s", self.device_id, error.detail)
            else:
                self.report_error("crc_errors", f"corrupt frame: {error.detail}")
        return frames

    def _dispatch(self, frame: Frame) -> None:
        ref = self.reply_ref(frame.message)
        if ref is not None:
            future = self._waiting.get(ref)
            if future is not None and not future.done():
                future.set_result(frame.message)
            else:
                self.log.warning("%s: reply to unknown command seq %d", self.device_id, ref)
            return
        self.handle(frame)
