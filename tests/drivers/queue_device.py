"""A tiny in-memory device for the tests of the driver and its session: a queue of key presses."""

from __future__ import annotations

import asyncio

from config.models import MqttSection
from contract.models import DeviceCommand, KeyEvent, LampCommand
from contract.topics import Topics
from drivers.driver import Driver, DriverOptions
from drivers.errors import CommandRejected, DeviceLost, DeviceUnavailable
from drivers.session import DeviceSession, DriverLink


class QueueDevice:
    """A device made of an asyncio queue: put a key name to press it, None to unplug it."""

    def __init__(self, session: DeviceSession) -> None:
        self.session = session
        self.plugged = True
        self.presses: asyncio.Queue[str | None] = asyncio.Queue()
        self.started: list[DeviceCommand] = []
        self.executed: list[DeviceCommand] = []
        self.slow = asyncio.Event()
        self.slow.set()
        self.sessions_started = 0
        #: Faults the device already has when a session starts (code -> text).
        self.faults_at_start: dict[str, str] = {}
        #: True: connecting hits a bug (an exception that is no device error).
        self.buggy_connect = False
        self.disconnects = 0

    async def connect(self) -> None:
        if self.buggy_connect:
            raise KeyError("a bug while connecting")
        if not self.plugged:
            raise DeviceUnavailable("unplugged")

    def session_started(self) -> None:
        self.sessions_started += 1
        for code, text in self.faults_at_start.items():
            self.session.raise_fault(code, text)

    async def serve(self) -> None:
        while True:
            key = await self.presses.get()
            if key is None:
                raise DeviceLost("unplugged")
            if key == "corrupt":
                self.session.report_error("crc_errors", "corrupt frame")
                continue
            if key == "bug":
                raise ZeroDivisionError("a driver bug")
            self.session.emit(KeyEvent, key=key)

    async def disconnect(self) -> None:
        self.disconnects += 1

    async def execute(self, command: DeviceCommand) -> None:
        if not isinstance(command, LampCommand):
            raise CommandRejected("lamp only")
        self.started.append(command)
        await self.slow.wait()
        self.executed.append(command)


def queue_driver(
    mqtt: MqttSection,
    topics: Topics,
    options: DriverOptions,
    *,
    link: DriverLink | None = None,
    device_id: str = "dev",
) -> Driver[QueueDevice]:
    """A driver of a :class:`QueueDevice` (its logger: ``drivers.testdev``)."""
    return Driver(device_id, "testdev", mqtt, topics, options, QueueDevice, link=link)
