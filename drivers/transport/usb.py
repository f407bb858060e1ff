"""The USB transport: interrupt transfers through pyusb (libusb), the blocking calls in threads.

``usb:VID:PID`` (hexadecimal, optionally ``?serial=SN``) finds the device through libusb;
``sim:PATH`` finds a simulated board served on the unix socket PATH through the same pyusb path
(:mod:`drivers.transport.usb_sim`). A ``backend=`` option gives pyusb another backend (a board
simulated in this process). Each :meth:`UsbTransport.read` returns one IN transfer, each
:meth:`UsbTransport.write` is one OUT transfer: a packet transport.

Every :class:`UsbLink` method blocks: IN transfers run back to back in a thread of the
connection's own (:class:`InTransferThread`), OUT transfers in worker threads. USB errors become
the drivers' exceptions: not found -> DeviceUnavailable, gone -> DeviceLost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import Any, Final

import usb.core
import usb.util

from drivers.errors import DeviceLost, DeviceUnavailable

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
class UsbLink:
    """A claimed device with its interrupt IN and OUT endpoints."""

    device: Any
    ep_in: int
    ep_out: int

    @classmethod
    def open(cls, vendor_id: int, product_id: int, serial_number: str | None, backend: Any) -> UsbLink:
        """Find the device and claim its interface; DeviceUnavailable when it is not there."""
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


#: IN transfers read but not yet taken by the event loop, at most.
IN_QUEUE_LIMIT: Final = 64


class InTransferThread:
    """Issues IN transfers back to back in a thread of its own and hands the data to the loop.

    One thread for the life of a connection instead of a worker-thread hop per poll: the event
    loop wakes only when the device sent something. ``poll_ms`` (the transfer timeout) bounds how
    long :meth:`stop` waits.

    At most :data:`IN_QUEUE_LIMIT` transfers wait for the loop: with that many the thread issues
    no more, so a loop that falls behind leaves the device's data on the device (as a host that
    does not poll an interrupt endpoint does) instead of piling up stale reports in memory.
    """

    def __init__(self, link: UsbLink, timeout_ms: int, name: str) -> None:
        self._link = link
        self._timeout_ms = timeout_ms
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[bytes | DeviceLost] = asyncio.Queue()
        self._room = threading.Semaphore(IN_QUEUE_LIMIT)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._room.acquire(timeout=self._timeout_ms / 1000):
                continue  # the loop is behind: no transfer until it takes one
            try:
                data = self._link.read(self._timeout_ms)
            except DeviceLost as error:
                self._deliver(error)
                return
            except Exception as error:  # a backend failure is a lost device, not a dead thread
                self._deliver(DeviceLost(f"USB read failed: {error!r}"))
                return
            if data is None:
                self._room.release()
            else:
                self._deliver(data)

    def _deliver(self, item: bytes | DeviceLost) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens any more
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    async def get(self) -> bytes:
        """The next transfer's data (waits for it); raises DeviceLost."""
        item = await self._queue.get()
        if isinstance(item, DeviceLost):
            raise item
        self._room.release()
        return item

    async def stop(self) -> None:
        """Stop issuing transfers and wait for the one in flight."""
        self._stop.set()
        await asyncio.to_thread(self._thread.join)


def parse_usb_url(url: str) -> tuple[int, int, str | None]:
    """``usb:VID:PID[?serial=SN]`` -> (vendor id, product id, serial number or None)."""
    rest, _, query = url.removeprefix("usb:").partition("?")
    parts = rest.split(":")
    serial = query.removeprefix("serial=") if query.startswith("serial=") else None
    if len(parts) != 2 or (query and serial is None):
        raise DeviceUnavailable(f"{url}: a USB transport is usb:VID:PID[?serial=SN]")
    try:
        return int(parts[0], 16), int(parts[1], 16), serial or None
    except ValueError:
        raise DeviceUnavailable(f"{url}: vendor and product ids are hexadecimal") from None


def usb_url(vendor_id: int, product_id: int, serial_number: str | None = None) -> str:
    """The transport URL of a USB device."""
    url = f"usb:{vendor_id:04x}:{product_id:04x}"
    return f"{url}?serial={serial_number}" if serial_number else url


class UsbTransport:
    """A claimed USB device: one IN transfer per read, one OUT transfer per write."""

    packets = True

    def __init__(self, url: str, link: UsbLink, timeout_ms: int) -> None:
        self.url = url
        self._link = link
        self._reader = InTransferThread(link, timeout_ms, f"usb-in {url}")
        self._closed = False

    async def read(self) -> bytes:
        return await self._reader.get()

    async def write(self, data: bytes) -> None:
        await asyncio.to_thread(self._link.write, data)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._reader.stop()
        await asyncio.to_thread(self._link.close)


async def open_usb(
    url: str,
    *,
    backend: Any = None,
    timeout_ms: int = 10,
    vendor_id: int | None = None,
    product_id: int | None = None,
    serial_number: str | None = None,
    **_: Any,
) -> UsbTransport:
    """Open ``usb:VID:PID[?serial=SN]`` (or, with the ids given, any ``sim:`` device)."""
    if vendor_id is None or product_id is None:
        vendor_id, product_id, serial_number = parse_usb_url(url)
    link = await asyncio.to_thread(UsbLink.open, vendor_id, product_id, serial_number, backend)
    return UsbTransport(url, link, timeout_ms)


async def open_simulated_usb(
    url: str,
    *,
    vendor_id: int | None = None,
    product_id: int | None = None,
    serial_number: str | None = None,
    **options: Any,
) -> UsbTransport:
    """Open ``sim:PATH``: the board a simulator serves on the unix socket PATH, through pyusb."""
    from drivers.transport.usb_sim import backend_from_spec

    if vendor_id is None or product_id is None:
        raise DeviceUnavailable(f"{url}: a simulated USB board is opened with its vendor and product ids")

    options["backend"] = backend_from_spec(url)
    return await open_usb(
        url, vendor_id=vendor_id, product_id=product_id, serial_number=serial_number, **options
    )
