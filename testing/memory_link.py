"""A driver's link without a broker: what the driver publishes is kept in memory, for fast tests.

It fills the same role as :class:`link.device.DeviceLink` (the ``DriverLink`` protocol of
:mod:`drivers.session`) and shares its command queue, so a driver test on a null-modem cable
needs neither a pty nor a broker::

    link = MemoryLink("shuffler")
    driver = shuffler_driver(device, MqttSection(), topics, link=link)   # drivers.shuffler.driver
    ...
    await link.wait_for(lambda: link.last_status.state == "online")
    link.command(ShuffleCommand(ts=utc_now(), deck="A"))
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from contract.models import DeviceCommand, DeviceEvent, EventBase, Status, parse_event
from link.commands import CommandQueue


class MemoryLink:
    """Events and statuses in lists; commands in the real ordered queue."""

    def __init__(
        self,
        device_id: str,
        *,
        previous: Status | None = None,
        command_limit: int = 100,
        log: logging.Logger | None = None,
    ) -> None:
        self.device_id = device_id
        self.events: list[DeviceEvent] = []
        self.statuses: list[Status] = []
        self.commands = CommandQueue(command_limit, log or logging.getLogger("testing.link"), device_id)
        self.ready = asyncio.Event()
        self.previous = previous
        self._changed = asyncio.Event()
        self.cmd_topic = f"test/dev/{device_id}/cmd"
        #: False: events stay unacknowledged (as with a broker that is away) until
        #: :meth:`acknowledge` is called.
        self.broker_acks = True
        self._unacknowledged: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ the DriverLink side

    @property
    def contacted(self) -> bool:
        return True

    def publish_event(self, event: EventBase, on_published: Callable[[], None] | None = None) -> None:
        # Through the wire format, as a subscriber would see it.
        self.events.append(parse_event("memory", event.to_json()))
        if on_published is not None:
            if self.broker_acks:
                on_published()
            else:
                self._unacknowledged.append(on_published)
        self._notify()

    def set_status(self, status: Status) -> None:
        self.statuses.append(status)
        self._notify()

    async def previous_status(self, wait_s: float) -> Status | None:
        return self.previous

    async def run(self) -> None:
        self.ready.set()
        await asyncio.Event().wait()  # until cancelled, like a connection that never fails

    # ------------------------------------------------------------------ the test side

    def acknowledge(self) -> int:
        """The broker acknowledges every event published so far; returns how many waited."""
        waiting, self._unacknowledged = self._unacknowledged, []
        for callback in waiting:
            callback()
        return len(waiting)

    def command(self, command: DeviceCommand) -> None:
        """A command arrives on the device's ``cmd`` topic."""
        self.commands.deliver(self.cmd_topic, command.to_json())

    def raw_command(self, payload: bytes | str) -> None:
        """Any payload arrives on the ``cmd`` topic (malformed ones are rejected and logged)."""
        self.commands.deliver(self.cmd_topic, payload)

    @property
    def last_status(self) -> Status | None:
        return self.statuses[-1] if self.statuses else None

    def state(self) -> str | None:
        """The state of the last status, None before any."""
        return self.statuses[-1].state if self.statuses else None

    def of_type(self, kind: type[EventBase]) -> list[DeviceEvent]:
        return [e for e in self.events if isinstance(e, kind)]

    async def wait_for(self, predicate: Callable[[], bool], within: float = 5.0) -> None:
        """Wait until ``predicate`` holds (checked at every event and status)."""

        async with asyncio.timeout(within):
            while not predicate():
                await self._changed.wait()

    def _notify(self) -> None:
        # Wake every waiter; they wait on the next event from now on.
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
