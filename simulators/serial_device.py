"""What every simulated serial device has in common: its pty cable, its codec and its heartbeat."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from drivers.framing import Codec, Frame, Message
from simulators.pty import PtyPort

log = logging.getLogger("simulators")


class SerialDeviceSimulator(ABC):
    """The device end of a serial device on a pseudo-terminal; subclasses answer the frames.

    A subclass implements :meth:`_handle` (one decoded host frame) and :meth:`_heartbeat` (the
    protocol's heartbeat message), and may start more loops with :meth:`_spawn`.
    """

    def __init__(self, name: str, codec: Codec, heartbeat_s: float, directory: Path | None) -> None:
        self.name = name
        self.heartbeat_s = heartbeat_s
        self._codec = codec
        self._pty = PtyPort(name, self._on_data, directory)
        self._rx = codec.stream()
        self._tx_seq = 0
        self._started = time.monotonic()
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def port(self) -> str:
        """The path the driver opens (stable across unplug/replug)."""
        return str(self._pty.path)

    async def start(self) -> None:
        """Plug the cable in and start the heartbeat."""
        self._pty.plug()
        self._spawn(self._heartbeats(), "heartbeat")

    def unplug(self) -> None:
        """Pull the cable: the pty closes mid-stream. The device itself keeps running."""
        self._pty.unplug()

    def replug(self) -> None:
        """Plug the cable back in: a new pty behind the same path, a fresh receiver."""
        self._pty.plug()
        self._rx.reset()

    async def close(self) -> None:
        """Stop every loop of the device and remove its pty."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        self._pty.close()

    def _spawn(self, loop: Coroutine[Any, Any, None], what: str) -> asyncio.Task[None]:
        task = asyncio.create_task(loop, name=f"{self.name}-{what}")
        self._tasks = [t for t in self._tasks if not t.done()] + [task]
        return task

    def _frame(self, message: Message) -> bytes:
        """The next frame to the host (the device numbers its frames 1..255, wrapping)."""
        self._tx_seq = (self._tx_seq + 1) & 0xFF
        return self._codec.encode(self._tx_seq, message)

    def _send(self, message: Message) -> None:
        self._pty.write(self._frame(message))

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
