"""Byte transports chosen by URL, the way python-can picks an interface by name.

Every transport has three coroutines: ``read()`` (the next bytes; raises
:class:`~drivers.errors.DeviceLost` when the device went away), ``write(data)`` and ``close()``.
A *packet* transport (``packets = True``) returns one whole transfer per read, and a frame never
spans two of them; a stream transport returns whatever bytes arrived.

- ``/dev/ttyUSB0``, ``serial:///dev/ttyUSB0``: a serial port (:mod:`drivers.transport.serial`);
  pyserial's URL handlers ``socket://host:port``, ``rfc2217://host:port``, ``loop://`` too;
- ``usb:VID:PID[?serial=SN]``: USB interrupt transfers through libusb, in a thread (packets;
  :mod:`drivers.transport.usb`);
- ``sim:PATH``: the same pyusb path to a board simulated on the unix socket PATH;
- ``nullmodem:NAME``: an in-process null-modem cable to a simulated device
  (:mod:`drivers.transport.nullmodem`).

A transport's module is imported only when a URL of its scheme is opened: a table without a USB
board never loads pyusb, one without serial devices never loads pyserial.
"""

from __future__ import annotations

import importlib
from typing import Any, Final, Protocol

from drivers.errors import DeviceUnavailable


class Transport(Protocol):
    """An open connection to a device."""

    url: str
    #: True: every read is one whole transfer (USB); False: a byte stream (serial).
    packets: bool

    async def read(self) -> bytes:
        """The next bytes (waits for them); raise DeviceLost when the device is gone."""
        ...

    async def write(self, data: bytes) -> None:
        """Send bytes (one transfer on a packet transport); raise DeviceLost on failure."""
        ...

    async def close(self) -> None:
        """Release the device; never raises."""
        ...


#: URL scheme -> (module, coroutine function opening it).
TRANSPORTS: Final[dict[str, tuple[str, str]]] = {
    "serial": ("drivers.transport.serial", "open_serial"),
    "socket": ("drivers.transport.serial", "open_serial"),
    "rfc2217": ("drivers.transport.serial", "open_serial"),
    "loop": ("drivers.transport.serial", "open_serial"),
    "usb": ("drivers.transport.usb", "open_usb"),
    "sim": ("drivers.transport.usb", "open_simulated_usb"),
    "nullmodem": ("drivers.transport.nullmodem", "open_null_modem"),
}


def scheme_of(url: str) -> str:
    """The scheme a URL names; a plain device path is ``serial``."""
    if url.startswith("/") or ":" not in url:
        return "serial"
    return url.split(":", 1)[0].lower()


async def open_transport(url: str, **options: Any) -> Transport:
    """Open the transport ``url`` names; options go to it (``baudrate``, ``timeout_ms``, ...).

    Raises DeviceUnavailable when the device is not there, or the scheme is unknown.
    """
    scheme = scheme_of(url)
    entry = TRANSPORTS.get(scheme)
    if entry is None:
        known = ", ".join(sorted(TRANSPORTS))
        raise DeviceUnavailable(f"{url}: no transport for scheme {scheme!r} (known: {known})")
    module, function = entry
    opener = getattr(importlib.import_module(module), function)
    transport: Transport = await opener(url, **options)
    return transport
