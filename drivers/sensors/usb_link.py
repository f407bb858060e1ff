"""The blocking pyusb side of the sensor board: find, claim, read and write interrupt transfers.

Every method blocks; the driver calls them through ``asyncio.to_thread``. USB errors are
translated into the base driver's exceptions: not found -> DeviceUnavailable, gone -> DeviceLost.
"""

from __future__ import annotations

import contextlib
import logging
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
