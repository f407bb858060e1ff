"""What every simulated serial device has in common: its cable, its codec and its heartbeat.

The cable is a pseudo-terminal (``cable="pty"``: the driver opens a ``/dev/pts`` path, exactly as
it opens real hardware) or an in-process null modem (``cable="nullmodem"``: the driver opens
``nullmodem:NAME``; fast, no pty, and its line can split, delay, drop and corrupt bytes).

Neither has a baud rate of its own. A device given ``baudrate`` sends like a UART: each frame
takes 10 bit times per byte (8N1) on the line and reaches the host when its last byte would,
frames queue behind each other, and the device's other work goes on meanwhile (a real reader's
UART sends by DMA while its radio works on the next antenna).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Final, Literal, Protocol, TypeAlias

from drivers.framing import Codec, Frame, Message
from drivers.transport.nullmodem import LineNoise, NullModemPort
from simulators.pty import PtyPort

CableKind: TypeAlias = Literal["pty", "nullmodem"]
_CABLES: Final = itertools.count(1)
#: Bits on the line per byte: start bit, 8 data bits, stop bit (8N1).
BITS_PER_BYTE: Final = 10


class Cable(Protocol):
    """The device end of a serial cable."""

    bytes_dropped: int

    def plug(self) -> None: ...
    def unplug(self) -> None: ...
    def write(self, data: bytes) -> bool: ...
    def close(self) -> None: ...


log = logging.getLogger("simulators")


class SerialDeviceSimulator(ABC):
    """The device end of a serial device on a pseudo-terminal; subclasses answer the frames.

    A subclass implements :meth:`_handle` (one decoded host frame) and :meth:`_heartbeat` (the
    protocol's heartbeat message), and may start more loops with :meth:`_spawn`.
    """

    def __init__(
        self,
        name: str,
        codec: Codec,
        heartbeat_s: float,
        directory: Path | None,
        *,
        cable: CableKind = "pty",
        line: LineNoise | None = None,
        baudrate: int | None = None,
    ) -> None:
        if baudrate is not None and baudrate <= 0:
            raise ValueError(f"baudrate {baudrate} must be positive (or None: no line delay)")
        self.name = name
        self.heartbeat_s = heartbeat_s
        self.baudrate = baudrate
        self._codec = codec
        self._cable: Cable
        if cable == "pty":
            pty = PtyPort(name, self._on_data, directory)
            self._port = str(pty.path)
            self._cable = pty
        else:
            # Numbered: simulators of one name in one process (tests) get cables of their own.
            null = NullModemPort(f"{name}-{next(_CABLES)}", self._on_data, to_host=line)
            self._port = null.url
            self._cable = null
        self._rx = codec.stream()
        self._tx_seq = 0
        self._started = time.monotonic()
        self._tasks: list[asyncio.Task[None]] = []
        # The UART (with a baudrate): frames on their way, each with the time its last byte
        # arrives, and the one timer that hands them to the cable.
        self._on_line: deque[tuple[float, bytes]] = deque()
        self._line_free_at = 0.0
        self._line_timer: asyncio.TimerHandle | None = None

    @property
    def port(self) -> str:
        """What the driver opens (stable across unplug/replug): a pty path or a null-modem URL."""
        return self._port

    async def start(self) -> None:
        """Plug the cable in and start the heartbeat."""
        self._cable.plug()
        self._spawn(self._heartbeats(), "heartbeat")

    def unplug(self) -> None:
        """Pull the cable: the pty closes mid-stream. The device itself keeps running."""
        self._cable.unplug()

    def replug(self) -> None:
        """Plug the cable back in: a new pty behind the same path, a fresh receiver."""
        self._cable.plug()
        self._rx.reset()

    async def close(self) -> None:
        """Stop every loop of the device and remove its pty."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self._line_timer is not None:
            self._line_timer.cancel()
            self._line_timer = None
        self._on_line.clear()
        self._cable.close()

    def _spawn(self, loop: Coroutine[Any, Any, None], what: str) -> asyncio.Task[None]:
        task = asyncio.create_task(loop, name=f"{self.name}-{what}")
        self._tasks = [t for t in self._tasks if not t.done()] + [task]
        return task

    def _frame(self, message: Message) -> bytes:
        """The next frame to the host (the device numbers its frames 1..255, wrapping)."""
        self._tx_seq = (self._tx_seq + 1) & 0xFF
        return self._codec.encode(self._tx_seq, message)

    def _send(self, message: Message) -> None:
        self._transmit(self._frame(message))

    def _transmit(self, data: bytes) -> None:
        """Put bytes on the line: at once, or (with a baudrate) when the UART gets them there."""
        if self.baudrate is None:
            self._cable.write(data)
            return
        loop = asyncio.get_running_loop()
        start = max(loop.time(), self._line_free_at)
        self._line_free_at = start + len(data) * BITS_PER_BYTE / self.baudrate
        self._on_line.append((self._line_free_at, data))
        if self._line_timer is None:
            self._line_timer = loop.call_at(self._line_free_at, self._deliver)

    def _deliver(self) -> None:
        """Hand the frames whose last byte has arrived to the cable, in order."""
        loop = asyncio.get_running_loop()
        self._line_timer = None
        ready: list[bytes] = []
        if self._on_line:  # the frame the timer was set for (timers may fire a hair early)
            ready.append(self._on_line.popleft()[1])
        now = loop.time()
        while self._on_line and self._on_line[0][0] <= now:
            ready.append(self._on_line.popleft()[1])
        if ready:  # one write: the host reads what arrived meanwhile at once
            self._cable.write(b"".join(ready))
        if self._on_line:
            self._line_timer = loop.call_at(self._on_line[0][0], self._deliver)

    @property
    def line_backlog(self) -> int:
        """Bytes sent but not yet through the UART (0 without a baudrate)."""
        return sum(len(data) for _, data in self._on_line)

    def _uptime_ms(self) -> int:
        return int((time.monotonic() - self._started) * 1000)

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            self._send(self._heartbeat())

    def _on_data(self, data: bytes) -> None:
        for frame in self._rx.feed(data):
            self._handle(frame)
        for error in self._rx.drain_errors():
            log.warning("%s: received %s: %s", self.name, error.kind, error.detail)

    @abstractmethod
    def _handle(self, frame: Frame) -> None:
        """Answer one decoded frame from the host."""

    @abstractmethod
    def _heartbeat(self) -> Message:
        """The protocol's heartbeat message, sent every ``heartbeat_s``."""
