"""The ``sim:`` USB transport's pyusb backend: a simulated device, found as libusb finds hardware.

``usb.core.find(idVendor=..., idProduct=..., backend=SimulatedBackend(model))`` finds the model's
device exactly as it would find real hardware through libusb: descriptors, string descriptors,
configuration, interface claiming, interrupt transfers, and the same ``USBError`` (ENODEV when the
device is unplugged, ``USBTimeoutError`` when an IN transfer gets no data in time). So the driver
runs its production pyusb path against a simulator.

A :class:`UsbDeviceModel` is the simulated device. It lives either in this process (the backend
calls it directly: tests, the demo) or in another one, served on a unix socket by
``simulators.usb_server`` (``tablectl simulate``); :class:`RemoteDevice` is then the model's
stand-in in the driver's process (``backend = "sim:PATH"``, transport URL ``sim:PATH``).
The device models themselves live in ``simulators/``; drivers never import them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import threading
from dataclasses import dataclass
from typing import Any, Final, Protocol

import usb.backend
import usb.core

log = logging.getLogger(__name__)

EP_IN: Final = 0x81
EP_OUT: Final = 0x02
MAX_PACKET: Final = 64
LANGID_EN_US: Final = 0x0409
SIM_PREFIX: Final = "sim:"


class DeviceGone(Exception):
    """The device is unplugged, or the handle belongs to an earlier plug-in."""


class TransferTimeout(Exception):
    """No data within the transfer's timeout."""


@dataclass(frozen=True, slots=True)
class UsbIdentity:
    """What enumeration shows of a plugged-in device; ``address`` changes at every plug-in."""

    vendor_id: int
    product_id: int
    address: int
    serial_number: str
    manufacturer: str = "tablectl"
    product: str = "Simulated device"
    bcd_device: int = 0x0100


class UsbDeviceModel(Protocol):
    """A simulated device with one interrupt IN and one interrupt OUT endpoint."""

    def identity(self) -> UsbIdentity | None:
        """The device as enumerated, or None while it is unplugged."""

    def read_in(self, address: int, size: int, timeout_ms: int) -> bytes:
        """One IN transfer; raises :class:`DeviceGone` or :class:`TransferTimeout`."""

    def write_out(self, address: int, data: bytes, timeout_ms: int) -> int:
        """One OUT transfer; returns the bytes accepted; raises :class:`DeviceGone`."""


# --------------------------------------------------------------------------------------------
# Descriptors as pyusb expects them (objects with the descriptor fields as attributes)
# --------------------------------------------------------------------------------------------


class _Descriptor:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def _device_descriptor(ident: UsbIdentity) -> _Descriptor:
    return _Descriptor(
        bLength=18,
        bDescriptorType=1,
        bcdUSB=0x0200,
        bDeviceClass=0,
        bDeviceSubClass=0,
        bDeviceProtocol=0,
        bMaxPacketSize0=64,
        idVendor=ident.vendor_id,
        idProduct=ident.product_id,
        bcdDevice=ident.bcd_device,
        iManufacturer=1,
        iProduct=2,
        iSerialNumber=3,
        bNumConfigurations=1,
        bus=1,
        address=ident.address,
        port_number=1,
        port_numbers=(1,),
        speed=2,  # full speed
    )


_CONFIG = _Descriptor(
    bLength=9,
    bDescriptorType=2,
    wTotalLength=9 + 9 + 7 + 7,
    bNumInterfaces=1,
    bConfigurationValue=1,
    iConfiguration=0,
    bmAttributes=0x80,
    bMaxPower=50,
    extra_descriptors=[],
)
_INTERFACE = _Descriptor(
    bLength=9,
    bDescriptorType=4,
    bInterfaceNumber=0,
    bAlternateSetting=0,
    bNumEndpoints=2,
    bInterfaceClass=0xFF,  # vendor specific: no kernel HID driver grabs it
    bInterfaceSubClass=0,
    bInterfaceProtocol=0,
    iInterface=0,
    extra_descriptors=[],
)
_ENDPOINTS = (
    _Descriptor(
        bLength=7,
        bDescriptorType=5,
        bEndpointAddress=EP_IN,
        bmAttributes=0x03,  # interrupt
        wMaxPacketSize=MAX_PACKET,
        bInterval=1,
        bRefresh=0,
        bSynchAddress=0,
        extra_descriptors=[],
    ),
    _Descriptor(
        bLength=7,
        bDescriptorType=5,
        bEndpointAddress=EP_OUT,
        bmAttributes=0x03,
        wMaxPacketSize=MAX_PACKET,
        bInterval=1,
        bRefresh=0,
        bSynchAddress=0,
        extra_descriptors=[],
    ),
)


def _gone() -> usb.core.USBError:
    return usb.core.USBError("No such device (it may have been disconnected)", -4, errno.ENODEV)


def _timeout() -> usb.core.USBError:
    return usb.core.USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT)


@dataclass(frozen=True, slots=True)
class _Handle:
    address: int


class SimulatedBackend(usb.backend.IBackend):  # type: ignore[misc]
    """pyusb backend over a :class:`UsbDeviceModel`: pass it as ``backend=`` to ``usb.core.find``."""

    def __init__(self, model: UsbDeviceModel) -> None:
        super().__init__()
        self.model = model

    # Enumeration and descriptors
    def enumerate_devices(self) -> list[UsbIdentity]:
        ident = self.model.identity()
        return [] if ident is None else [ident]

    def get_parent(self, dev: UsbIdentity) -> None:
        return None

    def get_device_descriptor(self, dev: UsbIdentity) -> _Descriptor:
        return _device_descriptor(dev)

    def get_configuration_descriptor(self, dev: UsbIdentity, config: int) -> _Descriptor:
        if config != 0:
            raise IndexError(f"configuration index {config}")
        return _CONFIG

    def get_interface_descriptor(self, dev: UsbIdentity, intf: int, alt: int, config: int) -> _Descriptor:
        if (intf, alt, config) != (0, 0, 0):
            raise IndexError(f"interface {intf} alt {alt} config {config}")
        return _INTERFACE

    def get_endpoint_descriptor(
        self, dev: UsbIdentity, ep: int, intf: int, alt: int, config: int
    ) -> _Descriptor:
        if (intf, alt, config) != (0, 0, 0) or not 0 <= ep < len(_ENDPOINTS):
            raise IndexError(f"endpoint {ep}")
        return _ENDPOINTS[ep]

    # Device handles
    def _check(self, handle: _Handle) -> UsbIdentity:
        ident = self.model.identity()
        if ident is None or ident.address != handle.address:
            raise _gone()
        return ident

    def open_device(self, dev: UsbIdentity) -> _Handle:
        handle = _Handle(dev.address)
        self._check(handle)
        return handle

    def close_device(self, dev_handle: _Handle) -> None:
        return None

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        self._check(dev_handle)
        if config_value not in (0, 1):
            raise usb.core.USBError("Invalid configuration", -2, errno.EINVAL)

    def get_configuration(self, dev_handle: _Handle) -> int:
        self._check(dev_handle)
        return 1

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        self._check(dev_handle)

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        self._check(dev_handle)
        if intf != 0:
            raise usb.core.USBError("Entity not found", -5, errno.ENOENT)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        return None

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        return False

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        return None

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        return None

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        self._check(dev_handle)

    def reset_device(self, dev_handle: _Handle) -> None:
        self._check(dev_handle)

    # Transfers
    def intr_read(self, dev_handle: _Handle, ep: int, intf: int, buff: Any, timeout: int) -> int:
        if ep != EP_IN:
            raise usb.core.USBError("Invalid parameter", -2, errno.EINVAL)
        try:
            data = self.model.read_in(dev_handle.address, len(buff), timeout or 1000)
        except DeviceGone:
            raise _gone() from None
        except TransferTimeout:
            raise _timeout() from None
        data = data[: len(buff)]
        buff[: len(data)] = type(buff)("B", data)
        return len(data)

    def intr_write(self, dev_handle: _Handle, ep: int, intf: int, data: Any, timeout: int) -> int:
        if ep != EP_OUT:
            raise usb.core.USBError("Invalid parameter", -2, errno.EINVAL)
        try:
            return self.model.write_out(dev_handle.address, bytes(data), timeout or 1000)
        except DeviceGone:
            raise _gone() from None

    def ctrl_transfer(
        self,
        dev_handle: _Handle,
        bmRequestType: int,  # pyusb passes these by keyword name
        bRequest: int,
        wValue: int,
        wIndex: int,
        data: Any,
        timeout: int,
    ) -> int:
        """Only GET_DESCRIPTOR of string descriptors (for ``dev.serial_number`` and friends)."""
        ident = self._check(dev_handle)
        if bmRequestType != 0x80 or bRequest != 0x06 or wValue >> 8 != 3:
            raise usb.core.USBError("Pipe error", -9, errno.EPIPE)
        index = wValue & 0xFF
        if index == 0:
            body = LANGID_EN_US.to_bytes(2, "little")
        else:
            strings = {1: ident.manufacturer, 2: ident.product, 3: ident.serial_number}
            if index not in strings:
                raise usb.core.USBError("Pipe error", -9, errno.EPIPE)
            body = strings[index].encode("utf-16-le")
        descriptor = (bytes([2 + len(body), 3]) + body)[: len(data)]
        data[: len(descriptor)] = type(data)("B", descriptor)
        return len(descriptor)


# --------------------------------------------------------------------------------------------
# A board served by another process (``simulators.usb_server``): one JSON request per line
# --------------------------------------------------------------------------------------------


class RemoteDevice:
    """The :class:`UsbDeviceModel` served by another process on a unix socket.

    Each thread gets its own connection, so a blocking IN transfer does not hold up an OUT one.
    An unreachable server looks like an unplugged device.
    """

    def __init__(self, path: str | os.PathLike[str], connect_timeout_s: float = 1.0) -> None:
        self.path = str(path)
        self.connect_timeout_s = connect_timeout_s
        self._local = threading.local()

    def _call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        conn: tuple[socket.socket, Any] | None = getattr(self._local, "conn", None)
        try:
            if conn is None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(self.connect_timeout_s)
                sock.connect(self.path)
                conn = (sock, sock.makefile("rb"))
                self._local.conn = conn
            sock, reader = conn
            sock.settimeout(timeout_s)
            sock.sendall(json.dumps(request).encode() + b"\n")
            line = reader.readline()
            if not line:
                raise ConnectionError("simulator closed the connection")
            answer: dict[str, Any] = json.loads(line)
            return answer
        except (OSError, ValueError):
            self._drop()
            raise DeviceGone(f"simulator at {self.path} unreachable") from None

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with contextlib.suppress(OSError):
                conn[1].close()
                conn[0].close()

    @staticmethod
    def _raise(answer: dict[str, Any]) -> None:
        if answer.get("ok"):
            return
        error = answer.get("error")
        if error == "timeout":
            raise TransferTimeout
        raise DeviceGone(str(error))

    def identity(self) -> UsbIdentity | None:
        try:
            answer = self._call({"op": "identity"}, self.connect_timeout_s)
        except DeviceGone:
            return None
        self._raise(answer)
        ident = answer.get("identity")
        return None if ident is None else UsbIdentity(**ident)

    def read_in(self, address: int, size: int, timeout_ms: int) -> bytes:
        request = {"op": "read", "address": address, "size": size, "timeout_ms": timeout_ms}
        answer = self._call(request, timeout_ms / 1000 + self.connect_timeout_s)
        self._raise(answer)
        return bytes.fromhex(answer["data"])

    def write_out(self, address: int, data: bytes, timeout_ms: int) -> int:
        request = {"op": "write", "address": address, "data": data.hex(), "timeout_ms": timeout_ms}
        answer = self._call(request, timeout_ms / 1000 + self.connect_timeout_s)
        self._raise(answer)
        return int(answer["written"])


def backend_from_spec(spec: str) -> SimulatedBackend:
    """The backend a ``backend = "sim:PATH"`` config key names."""
    if not spec.startswith(SIM_PREFIX) or len(spec) == len(SIM_PREFIX):
        raise ValueError(f"USB backend {spec!r} must be 'sim:/path/to.sock'")
    return SimulatedBackend(RemoteDevice(spec[len(SIM_PREFIX) :]))
