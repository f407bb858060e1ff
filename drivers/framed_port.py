"""A device's framed line: the transport its URL names and the protocol's frames on it.

Every device of the table (the shuffler and the RFID reader on serial lines, the sensor board on
USB) speaks :mod:`drivers.framing` frames over a transport chosen by URL
(:func:`drivers.transport.open_transport`). A :class:`FramedPort` is that part of a device's
driver, held by the device object (``drivers/<kind>/driver.py``):

- :meth:`FramedPort.open` opens the transport (:class:`~drivers.errors.DeviceUnavailable` when it
  cannot), with a fresh decoder and sequence numbers; :meth:`FramedPort.close` releases it;
- :meth:`FramedPort.send` sends one message in a frame of its own, one write at a time, calling
  ``numbered`` with the frame's number *before* the bytes leave (a reply that comes back at once
  finds its waiter);
- :meth:`FramedPort.read_frames` decodes what arrives within a wait (a whole USB transfer at a
  time on a packet transport); every corrupt frame is logged with the device id and counted
  toward the session's ``crc_errors`` fault; bytes outside frames are line noise on a stream
  (logged) but an error on a packet transport, where a transfer is one frame;
- :meth:`FramedPort.next_frames` is what a device's read loop calls: first the frames kept from
  the handshake (:meth:`FramedPort.keep`), then what arrives within ``tick_s``; no valid frame
  for ``silence_s`` means the device is gone (:class:`~drivers.errors.DeviceLost`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Final

from drivers.errors import DeviceLost, DeviceUnavailable
from drivers.framing import Codec, Frame, FrameError, FrameStream, Message
from drivers.session import DeviceSession
from drivers.transport import Transport, open_transport

#: How often a read loop gets control back while the line is quiet.
TICK_S: Final = 0.05


class FramedPort:
    """Frames of one protocol over one transport, for one device session; see the module."""

    def __init__(
        self,
        url: str,
        codec: Codec,
        session: DeviceSession,
        *,
        silence_s: float,
        transport_options: dict[str, Any] | None = None,
        tick_s: float = TICK_S,
        garbage_is_error: bool = False,
    ) -> None:
        self.url = url
        self.codec = codec
        self.session = session
        #: No valid frame for this long: the device is gone.
        self.silence_s = silence_s
        self.transport_options = transport_options or {}
        #: How long :meth:`next_frames` waits for bytes before it returns (maybe nothing).
        self.tick_s = tick_s
        #: Whether bytes outside frames count toward the error burst (a USB transfer is one
        #: frame, so garbage there is an error; on a serial line it is line noise, logged only).
        self.garbage_is_error = garbage_is_error
        self.transport: Transport | None = None
        self.stream: FrameStream = codec.stream()
        #: Frames decoded so far, all connections (diagnostics and tests).
        self.frames_received = 0
        self._kept: list[Frame] = []
        self._tx_seq = 0
        self._write_lock = asyncio.Lock()
        self._last_frame = time.monotonic()

    async def open(self) -> None:
        """Open the transport (DeviceUnavailable when it cannot be opened)."""
        try:
            self.transport = await open_transport(self.url, **self.transport_options)
        except OSError as error:
            raise DeviceUnavailable(f"cannot open {self.url}: {error}") from None
        self.stream = self.codec.stream()
        self._kept.clear()
        self._tx_seq = 0
        self._last_frame = time.monotonic()

    async def close(self) -> None:
        """Release the transport; never raises."""
        transport, self.transport = self.transport, None
        if transport is not None:
            await transport.close()

    async def send(self, message: Message, numbered: Callable[[int], None] | None = None) -> int:
        """Send one message in a frame of its own; returns the frame's sequence number.

        ``numbered`` is called with that number before the frame leaves.
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
        if frames:
            self.frames_received += len(frames)
            self._last_frame = time.monotonic()
        for error in stream.drain_errors():
            self._report(error)
        return frames

    def keep(self, frame: Frame) -> None:
        """A frame read before the session began (during the handshake) that it must still see."""
        self._kept.append(frame)

    async def next_frames(self) -> list[Frame]:
        """The session's next frames: those kept, else what arrives within ``tick_s`` (maybe
        none); DeviceLost when no valid frame came for ``silence_s``."""
        if self._kept:
            kept, self._kept = self._kept, []
            self._last_frame = time.monotonic()
            return kept
        frames = await self.read_frames(self.tick_s)
        if not frames and time.monotonic() - self._last_frame > self.silence_s:
            raise DeviceLost(f"no frame for {self.silence_s:g} s (heartbeat lost)")
        return frames

    def _report(self, error: FrameError) -> None:
        if error.kind == "garbage" and not self.garbage_is_error:
            self.session.log.warning("%s: skipped %s", self.session.device_id, error.detail)
        else:
            self.session.report_error("crc_errors", f"corrupt frame: {error.detail}")
