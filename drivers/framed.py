"""Drivers of devices that speak :mod:`drivers.framing` frames over a transport chosen by URL.

:class:`FramedDriver` fills in the device-session hooks of :class:`drivers.session.Driver` for
every device of the table (shuffler and RFID reader on serial lines, the sensor board on USB): it
opens the transport the URL names (:func:`drivers.transport.open_transport`), runs the subclass's
handshake, feeds what arrives to the protocol's frame decoder (a whole USB transfer at a time on a
packet transport), reports corrupt frames (logged with the device id, counted toward a
``crc_errors`` fault), and declares the device lost when no valid frame arrives for ``silence_s``.
Subclasses turn frames into events (:meth:`FramedDriver.on_frame`) and send messages with
:meth:`FramedDriver.send`.
"""

from __future__ import annotations

import abc
import asyncio
import time
from collections.abc import Callable
from typing import Any, Final

from config.models import MqttSection
from contract.topics import Topics
from drivers.driver import DriverOptions
from drivers.errors import DeviceLost, DeviceUnavailable
from drivers.framing import Codec, Frame, FrameError, FrameStream, Message
from drivers.old_session import Driver
from drivers.transport import Transport, open_transport

#: How often ``tick`` runs when the line is quiet.
TICK_S: Final = 0.05


class FramedDriver(Driver):
    """A driver for a framed device protocol over a transport; see the module docstring."""

    codec: Codec
    #: No valid frame for this long: the device is gone.
    silence_s: float = 1.5
    #: How often :meth:`tick` runs while the device is quiet.
    tick_s: float = TICK_S
    #: Whether bytes outside frames count toward the error burst (a USB transfer is one frame,
    #: so garbage there is an error; on a serial line it is line noise, logged only).
    garbage_is_error: bool = False

    def __init__(
        self,
        device_id: str,
        mqtt: MqttSection,
        topics: Topics,
        options: DriverOptions | None = None,
        *,
        transport_url: str,
        transport_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(device_id, mqtt, topics, options, **kwargs)
        self.transport_url = transport_url
        self.transport_options = transport_options or {}
        self.transport: Transport | None = None
        self.stream: FrameStream = self.codec.stream()
        self._early: list[Frame] = []
        self._tx_seq = 0
        self._write_lock = asyncio.Lock()
        self.frames_received = 0

    # ------------------------------------------------------------------ subclass hooks

    @abc.abstractmethod
    async def handshake(self) -> None:
        """Make sure the device answers (raise DeviceUnavailable if not); frames read meanwhile
        that are not the answer go to :meth:`keep_for_session`."""

    @abc.abstractmethod
    async def on_frame(self, frame: Frame) -> None:
        """Turn one received frame into events (called in order, in the session)."""

    def tick(self) -> None:
        """Called at least every ``tick_s`` while connected (time-based state, e.g. hold times)."""
        self.tick_faults()

    # ------------------------------------------------------------------ Driver hooks

    async def connect(self) -> None:
        try:
            self.transport = await open_transport(self.transport_url, **self.transport_options)
        except OSError as error:
            raise DeviceUnavailable(f"cannot open {self.transport_url}: {error}") from None
        self.stream = self.codec.stream()
        self._early.clear()
        self._tx_seq = 0
        await self.handshake()

    async def serve(self) -> None:
        # Frames that arrived during the handshake belong to this session.
        early, self._early = self._early, []
        for frame in early:
            await self.on_frame(frame)
        last_frame = time.monotonic()
        while True:
            frames = await self.read_frames(self.tick_s)
            now = time.monotonic()
            if frames:
                last_frame = now
            for frame in frames:
                await self.on_frame(frame)
            self.tick()
            if now - last_frame > self.silence_s:
                raise DeviceLost(f"no frame for {self.silence_s:g} s (heartbeat lost)")

    async def disconnect(self) -> None:
        transport, self.transport = self.transport, None
        if transport is not None:
            await transport.close()

    # ------------------------------------------------------------------ for subclasses

    def keep_for_session(self, frame: Frame) -> None:
        """A frame read during the handshake that the session must still see."""
        self._early.append(frame)

    async def send(self, message: Message, numbered: Callable[[int], None] | None = None) -> int:
        """Send one message in a frame of its own; returns the frame's sequence number.

        ``numbered`` is called with that number before the frame leaves (so that a reply that
        comes back at once finds its waiter).
        """
        transport = self.transport
        if transport is None:
            raise DeviceLost("not connected")
        async with self._write_lock:  # one write at a time, in order
            self._tx_seq = seq = (self._tx_seq + 1) & 0xFF
            if numbered is not None:
                numbered(seq)
            await transport.write(self.codec.encode(seq, message))
            return seq

    async def read_frames(self, wait_s: float) -> list[Frame]:
        """The frames of what arrives within ``wait_s`` (none: an empty list)."""
        transport = self.transport
        if transport is None:
            raise DeviceLost("not connected")
        # asyncio.timeout, not wait_for: in Python 3.11 wait_for can swallow a cancellation.
        try:
            async with asyncio.timeout(wait_s):
                data = await transport.read()
        except TimeoutError:
            return []
        stream = self.stream
        frames = stream.feed_transfer(data) if transport.packets else stream.feed(data)
        self.frames_received += len(frames)
        for error in stream.drain_errors():
            self._on_frame_error(error)
        return frames

    def _on_frame_error(self, error: FrameError) -> None:
        if error.kind == "garbage" and not self.garbage_is_error:
            self.log.warning("%s: skipped %s", self.device_id, error.detail)
        else:
            self.report_error("crc_errors", f"corrupt frame: {error.detail}")
