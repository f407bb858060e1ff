"""The serial transport: a port or a pyserial URL, through pyserial-asyncio-fast.

``/dev/ttyUSB0`` or ``serial:///dev/ttyUSB0`` open a serial port; pyserial's own URL handlers
(``socket://host:port``, ``rfc2217://host:port``, ``loop://``) are passed through as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

import serial_asyncio_fast

from drivers.errors import DeviceLost, DeviceUnavailable

READ_CHUNK: Final = 4096


class SerialTransport:
    """An open serial port (a byte stream)."""

    packets = False

    def __init__(self, url: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.url = url
        self._reader = reader
        self._writer = writer

    async def read(self) -> bytes:
        data = await self._reader.read(READ_CHUNK)
        if not data:
            raise DeviceLost(f"{self.url}: end of file (unplugged)")
        return data

    async def write(self, data: bytes) -> None:
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (OSError, RuntimeError) as error:  # RuntimeError: the transport is closing
            raise DeviceLost(f"{self.url}: write failed: {error}") from None

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await self._writer.wait_closed()


async def open_serial(url: str, *, baudrate: int = 115200, **_: Any) -> SerialTransport:
    """Open a serial port or pyserial URL (DeviceUnavailable when it cannot be opened)."""
    port = url.removeprefix("serial://")
    try:
        reader, writer = await serial_asyncio_fast.open_serial_connection(url=port, baudrate=baudrate)
    except Exception as error:  # pyserial raises SerialException (an OSError) or ValueError
        raise DeviceUnavailable(f"cannot open {url}: {error}") from None
    return SerialTransport(url, reader, writer)
