"""Device commands received on ``dev/{id}/cmd``: validated, then queued in order, bounded.

A driver executes its commands one at a time in the order they arrived (a lamp set to red and
then to green ends green). A malformed payload is rejected with an error naming the topic; when
``limit`` commands already wait (a device that hangs on one), a new one is rejected the same
way. Nothing is dropped silently.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from contract.models import DeviceCommand, PayloadError, parse_command


@dataclass(frozen=True, slots=True)
class ReceivedCommand:
    """A valid command and the topic it came on (for the log)."""

    topic: str
    command: DeviceCommand


class CommandQueue:
    """The ordered, bounded queue of one device's commands."""

    def __init__(self, limit: int, log: logging.Logger, name: str) -> None:
        self._queue: asyncio.Queue[ReceivedCommand] = asyncio.Queue(maxsize=limit)
        self.log = log
        self.name = name
        self.rejected = 0

    def deliver(self, topic: str, payload: bytes | str) -> ReceivedCommand | None:
        """Validate a ``cmd`` payload and queue it; None (with an error logged) if rejected."""
        try:
            command = parse_command(topic, payload)
        except PayloadError as error:
            self.rejected += 1
            self.log.error("%s: rejected malformed command: %s", self.name, error)
            return None
        received = ReceivedCommand(topic, command)
        try:
            self._queue.put_nowait(received)
        except asyncio.QueueFull:
            self.rejected += 1
            self.log.error(
                "%s: %s: rejected %r: %d commands already wait for the device",
                self.name,
                topic,
                command.cmd,
                self._queue.maxsize,
            )
            return None
        return received

    def again(self, received: ReceivedCommand) -> None:
        """Queue ``received`` once more (a lasting setting made again when the device is back);
        when the queue is full it is left out, and the log says so."""
        try:
            self._queue.put_nowait(received)
        except asyncio.QueueFull:
            left = "%s: %s: %r not set again: the queue is full"
            self.log.info(left, self.name, received.topic, received.command.cmd)

    async def get(self) -> ReceivedCommand:
        """The oldest waiting command (waits for one)."""
        return await self._queue.get()

    def __len__(self) -> int:
        return self._queue.qsize()
