"""The start-up grace: devices get ``[table] startup_grace_s`` to come up before they count as
offline.

At every start each driver says ``offline`` (the device has not answered yet) and, a few
milliseconds later, ``online``; a broker also hands over the ``offline`` a driver left retained
when it stopped. Without a grace every start raised and resolved a ``device_offline`` per device,
and the lamp command, sent before the sensor board had answered, was refused by its driver.

The grace lives in the service, on the wall clock: the engine reads no clock of its own, and what
the grace decides is journaled as it is decided. An ``offline`` status of a device not yet heard
from since the start (an event, an ``online`` or ``fault`` status) is held, not journaled, not
given to the engine; a later status of that device replaces it, an event of it drops it. When
the grace ends, the statuses still held are journaled and given to the engine then, as received
then, so the journal holds exactly what the engine took and a replay repeats it. (Holding one is
safe: a status is retained on the broker, which hands it over again after a crash.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta


@dataclass
class StartupGrace:
    """Which devices were heard from since the start, and the ``offline`` statuses held."""

    #: The end of the grace (wall clock); None before the start and once it is over.
    until: datetime | None = None
    #: Devices heard from since the start: an event, an ``online`` or ``fault`` status.
    heard: set[str] = field(default_factory=set)
    #: Device -> (topic, payload) of its latest ``offline`` status held back.
    held: dict[str, tuple[str, bytes]] = field(default_factory=dict)

    def start(self, now: datetime, seconds: float) -> None:
        """The service starts: devices have ``seconds`` (0: no grace)."""
        self.until = now + timedelta(seconds=seconds) if seconds > 0 else None
        self.heard.clear()
        self.held.clear()

    def running(self, now: datetime) -> bool:
        return self.until is not None and now < self.until

    def waiting_for(self, device: str, now: datetime) -> bool:
        """Whether ``device`` has not been heard from yet and the grace still runs."""
        return self.running(now) and device not in self.heard

    def event(self, device: str) -> None:
        """An event of ``device``: it is up (whatever status the broker still holds for it)."""
        self.heard.add(device)
        self.held.pop(device, None)

    def status(self, device: str, offline: bool, topic: str, payload: bytes, now: datetime) -> bool:
        """A status of ``device`` arrived: True when it is held (an ``offline`` within the grace
        of a device not yet heard from)."""
        if not offline:
            self.heard.add(device)
            self.held.pop(device, None)  # superseded: the device came up
            return False
        if self.waiting_for(device, now):
            self.held[device] = (topic, payload)
            return True
        self.held.pop(device, None)  # a newer status than the one held: it goes through
        return False

    def ended(self, now: datetime) -> dict[str, tuple[str, bytes]] | None:
        """Once, when the grace is over: the statuses still held, device -> (topic, payload) in
        device order (None while it runs, and after it ended)."""
        if self.until is None or now < self.until:
            return None
        self.until = None
        due = {device: self.held[device] for device in sorted(self.held)}
        self.held.clear()
        return due
