"""The pyusb link: USB failures become the driver base's exceptions, with the device named."""

from __future__ import annotations

import asyncio
import errno
from typing import Any

import pytest
import usb.core

from config.models import SensorBoardDevice
from drivers.base import DeviceLost, DeviceUnavailable
from drivers.sensors.driver import usb_backend_for
from drivers.transport.usb import BoardLink, InTransferThread
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
        BoardLink.open(VID, PID + 1, None, board.backend)
    with pytest.raises(DeviceUnavailable, match="serial B2"):
        BoardLink.open(VID, PID, "B2", board.backend)
    link = BoardLink.open(VID, PID, "A1", board.backend)
    assert (link.ep_in, link.ep_out) == (0x81, 0x02)
    link.close()


def test_enumeration_failure_is_unavailable_not_a_crash() -> None:
    board = SensorBoardSimulator(VID, PID)
    with pytest.raises(DeviceUnavailable, match="enumeration failed"):
        BoardLink.open(VID, PID, None, BrokenBus(board))


def test_transfers_on_an_unplugged_board_are_device_lost() -> None:
    board = SensorBoardSimulator(VID, PID)
    link = BoardLink.open(VID, PID, None, board.backend)
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
    link = BoardLink.open(VID, PID, None, board.backend)
    reader = InTransferThread(link, 5, "test-reader")
    try:
        assert await reader.get(1.0) is not None
        board.unplug()

        async def drain() -> None:
            while True:  # data still queued before the unplug, then the loss
                await reader.get(1.0)

        with pytest.raises(DeviceLost):
            await asyncio.wait_for(drain(), 5)
    finally:
        await asyncio.wait_for(reader.stop(), 2)
        link.close()


def test_backend_from_the_config() -> None:
    plain = SensorBoardDevice(id="s", driver="sensors", vendor_id=VID, product_id=PID)
    assert usb_backend_for(plain) is None  # libusb, chosen by pyusb
    simulated = plain.model_copy(update={"backend": "sim:/run/board.sock"})
    backend = usb_backend_for(simulated)
    assert isinstance(backend, SimulatedBackend)
