"""What a device or its transport can say went wrong (the driver base decides what follows)."""

from __future__ import annotations


class DeviceUnavailable(Exception):
    """The device cannot be opened or does not answer (unplugged, powered off, not found)."""


class DeviceLost(Exception):
    """A connected device went away (end of file, heartbeat loss, hang-up, a failed transfer)."""


class CommandRejected(Exception):
    """A well-formed command this driver cannot carry out now (wrong device, offline, busy)."""
