"""The request side of a serial device: the handshake that opens it, commands answered by Ack or
Nak, and the read loop that routes those answers.

The shuffler and the RFID reader (``docs/protocols/``) both answer a request sent right after the
line opens (``GetStatus``, ``GetInfo``) within ``handshake_timeout_s``, acknowledge every command
with an ``Ack`` or ``Nak`` naming its frame's sequence number (``ref``) within
``request_timeout_s``, and send heartbeats (the port's silence detection, three heartbeat periods,
declares them gone). A :class:`SerialExchange` is that part of their drivers, used by the device
objects over their :class:`~drivers.framed_port.FramedPort`:

- :meth:`SerialExchange.open` opens the port and waits for the handshake's answer; frames that
  are not the answer are kept for the session;
- :meth:`SerialExchange.serve` reads until the device is lost: Acks and Naks go to the commands
  waiting for them, every other frame to the device object;
- :meth:`SerialExchange.request` sends a command and waits for its Ack or Nak; the wait is
  registered before the bytes leave, and before the session (during the handshake, when nobody
  else reads) it reads for itself;
- :meth:`SerialExchange.close` fails the commands still waiting and closes the port.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Final, TypeVar

from config.models import SerialDevice
from drivers.errors import DeviceLost, DeviceUnavailable
from drivers.framed_port import FramedPort
from drivers.framing import Codec, Frame, Message
from drivers.session import DeviceSession

AnswerT = TypeVar("AnswerT")

HANDSHAKE_TIMEOUT_S: Final = 1.0
REQUEST_TIMEOUT_S: Final = 1.0


def reply_ref(message: Message) -> int | None:
    """The ``ref`` of an Ack/Nak message, None for any other message."""
    ref = getattr(message, "ref", None)
    return ref if isinstance(ref, int) else None


class SerialExchange:
    """Handshake, Ack/Nak commands and reply routing over one framed port; see the module."""

    def __init__(
        self,
        port: FramedPort,
        *,
        handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.port = port
        self.handshake_timeout_s = handshake_timeout_s
        self.request_timeout_s = request_timeout_s
        self._waiting: dict[int, asyncio.Future[Message]] = {}
        self._serving = False

    @classmethod
    def on_line(
        cls, config: SerialDevice, codec: Codec, session: DeviceSession, *, heartbeat_s: float
    ) -> SerialExchange:
        """The exchange over the serial line a device's configuration names (its ``port`` URL
        and ``baudrate``); three heartbeat periods without a frame mean the device is gone."""
        port = FramedPort(
            config.port,
            codec,
            session,
            silence_s=3 * heartbeat_s,
            transport_options={"baudrate": config.baudrate},
        )
        return cls(port)

    async def open(self, request: Message, answer: type[AnswerT]) -> AnswerT:
        """Open the port, send ``request`` and return the device's ``answer`` to it
        (DeviceUnavailable when none comes within ``handshake_timeout_s``)."""
        port = self.port
        await port.open()
        await port.send(request)
        deadline = time.monotonic() + self.handshake_timeout_s
        while (remaining := deadline - time.monotonic()) > 0:
            for frame in await port.read_frames(remaining):
                if isinstance(frame.message, answer):
                    return frame.message
                port.keep(frame)
        raise DeviceUnavailable(
            f"{port.url}: no answer to the handshake within {self.handshake_timeout_s:g} s"
        )

    async def close(self) -> None:
        """Fail the commands still waiting for a reply and close the port; never raises."""
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(DeviceLost("device disconnected"))
        self._waiting.clear()
        await self.port.close()

    async def serve(self, on_frame: Callable[[Frame], None], tick: Callable[[], None]) -> None:
        """Read until the device is lost (DeviceLost): replies go to their commands, every other
        frame to ``on_frame``, in order; ``tick`` runs after each read (at least every
        ``tick_s`` of the port)."""
        self._serving = True
        try:
            while True:
                for frame in await self.port.next_frames():
                    if not self._take_reply(frame):
                        on_frame(frame)
                tick()
        finally:
            self._serving = False

    async def request(self, message: Message) -> Message:
        """Send a command and return its Ack or Nak (DeviceLost when none comes in time)."""
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        seq = await self.port.send(message, numbered=lambda number: self._waiting.update({number: future}))
        try:
            if self._serving:
                async with asyncio.timeout(self.request_timeout_s):
                    return await future
            # During the handshake nobody else reads: read here, keeping other frames for later.
            deadline = time.monotonic() + self.request_timeout_s
            while not future.done() and (remaining := deadline - time.monotonic()) > 0:
                for frame in await self.port.read_frames(remaining):
                    if not self._take_reply(frame):
                        self.port.keep(frame)
            if not future.done():
                raise TimeoutError
            return future.result()
        except TimeoutError:
            raise DeviceLost(
                f"no reply to {type(message).__name__} within {self.request_timeout_s:g} s"
            ) from None
        finally:
            self._waiting.pop(seq, None)

    def awaits_reply(self, seq: int) -> bool:
        """True while a command sent in frame ``seq`` waits for its reply."""
        return seq in self._waiting

    def _take_reply(self, frame: Frame) -> bool:
        """Give an Ack/Nak to the command waiting for it; False for any other frame."""
        ref = reply_ref(frame.message)
        if ref is None:
            return False
        future = self._waiting.get(ref)
        if future is not None and not future.done():
            future.set_result(frame.message)
        else:
            session = self.port.session
            session.log.warning("%s: reply to unknown command seq %d", session.device_id, ref)
        return True
