"""The blocking pyusb side of the sensor board: find, claim, read and write interrupt transfers.

Every BoardLink method blocks: the driver reads through :class:`InTransferThread` and writes
through ``asyncio.to_thread``. USB errors become the base driver's exceptions: not found ->
DeviceUnavailable, gone -> DeviceLost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import Any

import usb.core
import usb.util

from drivers.base import DeviceLost, DeviceUnavailable

log = logging.getLogger(__name__)

INTERFACE = 0
MAX_PACKET = 64


def _find(vendor_id: int, product_id: int, serial_number: str | None, backend: Any) -> Any:
    def matches(dev: Any) -> bool:
        if serial_number is None:
            return True
        try:
            return bool(dev.serial_number == serial_number)
        except (usb.core.USBError, ValueError):
            return False

    try:
        return usb.core.find(idVendor=vendor_id, idProduct=product_id, backend=backend, custom_match=matches)
    except usb.core.NoBackendError:
        raise DeviceUnavailable("no libusb backend installed") from None
    except usb.core.USBError as error:
        raise DeviceUnavailable(f"USB enumeration failed: {error}") from None


@dataclass
class BoardLink:
    """A claimed sensor board with its interrupt IN and OUT endpoints."""

    device: Any
    ep_in: int
    ep_out: int

    @classmethod
    def open(cls, vendor_id: int, product_id: int, serial_number: str | None, backend: Any) -> BoardLink:
        """Find the board and claim its interface; DeviceUnavailable when it is not there."""
        what = f"USB device {vendor_id:04x}:{product_id:04x}" + (
            f" serial {serial_number}" if serial_number else ""
        )
        device = _find(vendor_id, product_id, serial_number, backend)
        if device is None:
            raise DeviceUnavailable(f"no {what}")
        try:
            with contextlib.suppress(NotImplementedError, usb.core.USBError):
                if device.is_kernel_driver_active(INTERFACE):
                    device.detach_kernel_driver(INTERFACE)
            device.set_configuration()
            usb.util.claim_interface(device, INTERFACE)
            interface = device.get_active_configuration()[(INTERFACE, 0)]
            ep_in = usb.util.find_descriptor(
                interface,
                custom_match=lambda ep: (
                    usb.util.endpoint_direction(ep.bEndpointAddress) == usb.util.ENDPOINT_IN
                ),
            )
            ep_out = usb.util.find_descriptor(
                interface,
                custom_match=lambda ep: (
                    usb.util.endpoint_direction(ep.bEndpointAddress) == usb.util.ENDPOINT_OUT
                ),
            )
        except usb.core.USBError as error:
            usb.util.dispose_resources(device)
            raise DeviceUnavailable(f"{what}: cannot claim interface {INTERFACE}: {error}") from None
        if ep_in is None or ep_out is None:
            usb.util.dispose_resources(device)
            raise DeviceUnavailable(f"{what} lacks an interrupt IN or OUT endpoint")
        return cls(device, int(ep_in.bEndpointAddress), int(ep_out.bEndpointAddress))

    def read(self, timeout_ms: int) -> bytes | None:
        """One IN transfer, or None when the board had nothing within ``timeout_ms``."""
        try:
            return bytes(self.device.read(self.ep_in, MAX_PACKET, timeout_ms))
        except usb.core.USBTimeoutError:
            return None
        except usb.core.USBError as error:
            raise DeviceLost(f"USB read failed: {error}") from None

    def write(self, data: bytes, timeout_ms: int = 500) -> None:
        """One OUT transfer carrying ``data``."""
        try:
            written = self.device.write(self.ep_out, data, timeout_ms)
        except usb.core.USBError as error:
            raise DeviceLost(f"USB write failed: {error}") from None
        if written != len(data):
            raise DeviceLost(f"USB write took {written} of {len(data)} bytes")

    def close(self) -> None:
        """Release the interface and the handle; never raises."""
        with contextlib.suppress(usb.core.USBError):
            usb.util.release_interface(self.device, INTERFACE)
        with contextlib.suppress(usb.core.USBError):
            usb.util.dispose_resources(self.device)


class InTransferThread:
    """Issues IN transfers back to back in a thread of its own and hands the data to the loop.

    One thread for the life of a connection instead of a worker-thread hop per poll: the event
    loop wakes only when the board sent something. ``poll_ms`` (the transfer timeout) bounds how
    long :meth:`stop` waits.
    """

    def __init__(self, link: BoardLink, timeout_ms: int, name: str) -> None:
        self._link = link
        self._timeout_ms = timeout_ms
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[bytes | DeviceLost] = asyncio.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._link.read(self._timeout_ms)
            except DeviceLost as error:
                self._deliver(error)
                return
            except Exception as error:  # a backend failure is a lost device, not a dead thread
                self._deliver(DeviceLost(f"USB read failed: {error!r}"))
                return
            if data is not None:
                self._deliver(data)

    def _deliver(self, item: bytes | DeviceLost) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens any more
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    async def get(self, timeout_s: float) -> bytes | None:
        """The next transfer's data, or None after ``timeout_s``; raises DeviceLost."""
        try:
            item = await asyncio.wait_for(self._queue.get(), timeout_s)
        except TimeoutError:
            return None
        if isinstance(item, DeviceLost):
            raise item
        return item

    async def stop(self) -> None:
        """Stop issuing transfers and wait for the one in flight."""
        self._stop.set()
        await asyncio.to_thread(self._thread.join)
