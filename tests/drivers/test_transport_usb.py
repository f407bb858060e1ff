"""The USB transport: pyusb failures become the drivers' exceptions, with the device named."""

from __future__ import annotations

import asyncio
import errno
from typing import Any

import pytest
import usb.core

from config.models import SensorBoardDevice
from drivers.errors import DeviceLost, DeviceUnavailable
from drivers.sensors.driver import transport_url
from drivers.transport import open_transport
from drivers.transport.usb import InTransferThread, UsbLink, parse_usb_url, usb_url
from drivers.transport.usb_sim import SimulatedBackend
from simulators.sensors import SensorBoardSimulator

VID, PID = 0x1209, 0x7AB1


class BrokenBus(SimulatedBackend):
    """A backend whose enumeration itself fails (a USB stack in trouble)."""

    def enumerate_devices(self) -> list[Any]:
        raise usb.core.USBError("Input/Output Error", -1, errno.EIO)


def test_no_board_names_the_ids_and_serial() -> None:
    board = SensorBoardSimulator(VID, PID, serial_number="A1")
    with pytest.raises(DeviceUnavailable, match="no USB device 1209:7ab2"):
        UsbLink.open(VID, PID + 1, None, board.backend)
    with pytest.raises(DeviceUnavailable, match="serial B2"):
        UsbLink.open(VID, PID, "B2", board.backend)
    link = UsbLink.open(VID, PID, "A1", board.backend)
    assert (link.ep_in, link.ep_out) == (0x81, 0x02)
    link.close()


def test_enumeration_failure_is_unavailable_not_a_crash() -> None:
    board = SensorBoardSimulator(VID, PID)
    with pytest.raises(DeviceUnavailable, match="enumeration failed"):
        UsbLink.open(VID, PID, None, BrokenBus(board))


def test_transfers_on_an_unplugged_board_are_device_lost() -> None:
    board = SensorBoardSimulator(VID, PID)
    link = UsbLink.open(VID, PID, None, board.backend)
    assert link.read(100) is not None
    assert link.read(5) is None  # nothing new: a timeout is no data, not an error
    board.unplug()
    with pytest.raises(DeviceLost, match="read failed"):
        link.read(5)
    with pytest.raises(DeviceLost, match="write failed"):
        link.write(b"\x00")
    link.close()  # never raises
    link.close()


async def test_reader_thread_hands_over_data_then_the_loss() -> None:
    board = SensorBoardSimulator(VID, PID)
    link = UsbLink.open(VID, PID, None, board.backend)
    reader = InTransferThread(link, 5, "test-reader")
    try:
        assert await asyncio.wait_for(reader.get(), 1.0)
        board.unplug()

        async def drain() -> None:
            while True:  # data still queued before the unplug, then the loss
                await reader.get()

        with pytest.raises(DeviceLost):
            await asyncio.wait_for(drain(), 5)
    finally:
        await asyncio.wait_for(reader.stop(), 2)
        link.close()


def test_the_config_names_the_transport_url() -> None:
    plain = SensorBoardDevice(id="s", driver="sensors", vendor_id=VID, product_id=PID)
    assert transport_url(plain) == "usb:1209:7ab1"  # libusb, chosen by pyusb
    serial = plain.model_copy(update={"serial_number": "SB-9"})
    assert transport_url(serial) == "usb:1209:7ab1?serial=SB-9"
    simulated = plain.model_copy(update={"backend": "sim:/run/board.sock"})
    assert transport_url(simulated) == "sim:/run/board.sock"


def test_usb_urls_round_trip_and_bad_ones_are_named() -> None:
    assert parse_usb_url(usb_url(VID, PID, "A1")) == (VID, PID, "A1")
    assert parse_usb_url("usb:1209:7AB1") == (VID, PID, None)
    for bad in ("usb:1209", "usb:xyz:7ab1", "usb:1209:7ab1?port=3"):
        with pytest.raises(DeviceUnavailable, match="usb"):
            parse_usb_url(bad)


async def test_usb_transport_reads_transfers_and_writes_frames() -> None:
    board = SensorBoardSimulator(VID, PID, serial_number="A1")
    transport = await open_transport(usb_url(VID, PID, "A1"), backend=board.backend, timeout_ms=5)
    try:
        assert transport.packets
        first = await asyncio.wait_for(transport.read(), 2)
        assert first.startswith(b"\xa5\x5a\x01")  # an input report
        await transport.write(bytes.fromhex("a55a8105020301 0eda".replace(" ", "")))
        for _ in range(100):
            if board.lamp.colour == "red":
                break
            await asyncio.sleep(0.01)
        assert (board.lamp.colour, board.lamp.blink) == ("red", True)
    finally:
        await transport.close()
        await transport.close()  # closing twice is harmless
