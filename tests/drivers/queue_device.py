"""A tiny in-memory device for the driver base's tests: a queue of key presses."""

from __future__ import annotations

import asyncio

from contract.models import DeviceCommand, KeyEvent, LampCommand
from drivers.errors import CommandRejected, DeviceLost, DeviceUnavailable
from drivers.session import Driver


class QueueDevice(Driver):
    """A device made of an asyncio queue: put a key name to press it, None to unplug it."""

    kind = "testdev"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.plugged = True
        self.presses: asyncio.Queue[str | None] = asyncio.Queue()
        self.started: list[DeviceCommand] = []
        self.executed: list[DeviceCommand] = []
        self.slow = asyncio.Event()
        self.slow.set()

    async def connect(self) -> None:
        if not self.plugged:
            raise DeviceUnavailable("unplugged")

    async def serve(self) -> None:
        while True:
            key = await self.presses.get()
            if key is None:
                raise DeviceLost("unplugged")
            if key == "corrupt":
                self.report_error("crc_errors", "corrupt frame")
                continue
            if key == "bug":
                raise ZeroDivisionError("a driver bug")
            self.emit(KeyEvent, key=key)

    async def disconnect(self) -> None:
        return None

    async def execute(self, command: DeviceCommand) -> None:
        if not isinstance(command, LampCommand):
            raise CommandRejected("lamp only")
        self.started.append(command)
        await self.slow.wait()
        self.executed.append(command)
