"""``tablectl run`` with a ``[[devices]]`` sensor board: its driver runs inside the service.

The board is the simulator, served on a unix socket by the test (``backend = "sim:PATH"``); the
driver in the service process reaches it through the pyusb backend, exactly as it would reach
real hardware through libusb. The lamp follows the alerts; keys and sensors feed the engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from contract.models import FaultEvent, parse_state, parse_status
from simulators.sensors import Lamp, SensorBoardSimulator
from testing.mosquitto import Mosquitto
from tests.service.conftest import StartService
from tests.service.support import probe, until, write_config


@pytest.fixture
async def board(tmp_path: Path) -> AsyncIterator[SensorBoardSimulator]:
    simulator = SensorBoardSimulator(0x1209, 0x7AB1)
    yield simulator
    await simulator.close()


async def test_sensor_board_driver_in_the_service_lamp_buzzer_and_keys(
    mosquitto: Mosquitto,
    tmp_path: Path,
    start_service: StartService,
    board: SensorBoardSimulator,
) -> None:
    backend = board.serve(tmp_path / "board.sock")
    config = write_config(tmp_path, mosquitto.url, sensors_board=True, board_backend=backend)
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        board_status = p.topics.device_status("sensors")
        await p.wait_for(
            lambda m: m.topic == board_status and parse_status(m.topic, m.payload).state == "online"
        )
        await until(lambda: board.lamp == Lamp("green", False), what="lamp green at start")

        # A warning from another device: amber, blinking until acknowledged.
        await p.event("shoe-1", FaultEvent, code="door_open", text="door open")
        await p.alert("device_fault")
        await until(lambda: board.lamp == Lamp("amber", True), what="lamp amber, blinking")

        # The dealer acknowledges on the board's keypad: the key reaches the engine.
        await asyncio.to_thread(board.press, "ack")
        acknowledged = await p.alert("device_fault", status="acknowledged")
        assert acknowledged.device == "shoe-1"
        await until(lambda: board.lamp == Lamp("amber", False), what="lamp amber, steady")

        # Seat sensors reach the engine too.
        await asyncio.to_thread(board.set_occupied, 5, True)
        await p.wait_for(
            lambda m: m.topic == p.topics.state and parse_state(m.topic, m.payload).seats[4].occupied
        )

        mark = len(p.messages)
        service.stop()
        await p.status("offline", after=mark)
        await p.wait_for(
            lambda m: m.topic == board_status and parse_status(m.topic, m.payload).state == "offline",
            after=mark,
        )
    assert service.wait() == 0
    assert "driver sensors (sensors) started" in service.log
    assert "Traceback" not in service.log
