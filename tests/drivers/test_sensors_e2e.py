"""The sensor board driver end to end: a real mosquitto, the board in another process.

Its behaviour is tested without a broker in ``test_sensors_driver.py``; these tests keep the
production path whole: the registry opens the driver the configuration names, the board is
reached over ``sim:PATH`` from another process, commands and events go through the broker.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

from config.models import MqttSection, SensorBoardDevice
from contract.models import DeviceEvent, KeyEvent, LampCommand
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import DriverOptions, stop_task
from drivers.registry import open_driver
from drivers.sensors.driver import SensorBoard, sensor_board_driver
from simulators.sensors import SensorBoardSimulator
from testing.mosquitto import Mosquitto
from tests.drivers.mqtt_helpers import Received, publish, subscribed

VID, PID = 0x1209, 0x7AB1
REPO = Path(__file__).resolve().parents[2]
OPTIONS = DriverOptions(reconnect_max_s=0.3, fault_errors=5, fault_window_s=2.0)


def board_config(**overrides: object) -> SensorBoardDevice:
    fields: dict[str, object] = {
        "id": "sensors",
        "driver": "sensors",
        "vendor_id": VID,
        "product_id": PID,
        "poll_ms": 20,
    }
    fields.update(overrides)
    return SensorBoardDevice.model_validate(fields)


class Harness:
    """A subscriber to a sensor board driver's topics."""

    def __init__(self, got: Received, topics: Topics) -> None:
        self.got = got
        self.events_topic = topics.device_event("sensors")
        self.status_topic = topics.device_status("sensors")
        self.cmd_topic = topics.device_cmd("sensors")

    def events(self) -> list[DeviceEvent]:
        return self.got.events(self.events_topic)

    def keys(self) -> list[tuple[str, int | None]]:
        return [(e.key, e.seat) for e in self.events() if isinstance(e, KeyEvent)]

    async def wait_keys(self, count: int, within: float = 5.0) -> None:
        await self.got.wait_for(lambda: len(self.keys()) >= count, within)

    async def wait_status(self, state: str, after: int = 0, within: float = 5.0) -> None:
        def seen() -> bool:
            return any(s.state == state for s in self.got.statuses(self.status_topic)[after:])

        await self.got.wait_for(seen, within)

    @property
    def status_count(self) -> int:
        return len(self.got.on(self.status_topic))


async def _until(predicate: Callable[[], bool], step: float = 0.01) -> None:
    # The board's state changes in the driver's worker threads: nothing to await but time.
    while not predicate():  # noqa: ASYNC110
        await asyncio.sleep(step)


async def test_presses_while_the_broker_is_away_stay_on_the_board_until_it_has_them(
    mosquitto: Mosquitto,
) -> None:
    topics = Topics("holdem", "sb11")
    board = SensorBoardSimulator(VID, PID)
    driver = sensor_board_driver(
        board_config(), MqttSection(url=mosquitto.url), topics, OPTIONS, usb_backend=board.backend
    )
    task = asyncio.create_task(driver.run())
    try:
        await asyncio.wait_for(driver.broker_ready.wait(), 5)
        await asyncio.to_thread(mosquitto.stop)
        board.press("all_in", 3)
        board.press("exposed", 3)
        # Read and published, but the broker does not have them: the board keeps them queued.
        await asyncio.wait_for(_until(lambda: driver.emitted >= 3), 5)  # button, two keys
        seen = driver.device.port.frames_received
        await asyncio.wait_for(_until(lambda: driver.device.port.frames_received >= seen + 4), 5)
        assert board.pending_keys == 2
        await asyncio.to_thread(mosquitto.start)
        async with subscribed(mosquitto.port, topics.device_event("sensors")) as got:
            events_topic = topics.device_event("sensors")

            def keys() -> list[tuple[str, int | None]]:
                return [(e.key, e.seat) for e in got.events(events_topic) if isinstance(e, KeyEvent)]

            await got.wait_for(lambda: len(keys()) == 2, within=10)
            assert keys() == [("all_in", 3), ("exposed", 3)]
            # The broker has them now (PUBACK): acknowledged to the board.
            await asyncio.wait_for(_until(lambda: board.pending_keys == 0), 5)
    finally:
        await stop_task(task)


async def test_driver_and_board_in_separate_processes(mosquitto: Mosquitto, tmp_path: Path) -> None:
    sock = tmp_path / "board.sock"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.drivers.sensors_board_process",
        str(sock),
        hex(VID),
        hex(PID),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    assert process.stdin is not None
    assert process.stdout is not None

    async def tell(line: str) -> str:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(line.encode() + b"\n")
        await process.stdin.drain()
        return (await asyncio.wait_for(process.stdout.readline(), 5)).decode().strip()

    try:
        assert (await asyncio.wait_for(process.stdout.readline(), 10)).strip() == b"ready"
        device = board_config(backend=f"sim:{sock}")
        topics = Topics("holdem", "sb13")
        # The production path: the registry opens the driver the configuration names.
        driver = open_driver(device, MqttSection(url=mosquitto.url), topics, options=OPTIONS)
        assert isinstance(driver.device, SensorBoard)
        harness = Harness(Received(), topics)  # the board lives in the other process
        async with subscribed(mosquitto.port, harness.events_topic, harness.status_topic) as got:
            harness.got = got
            task = asyncio.create_task(driver.run())
            try:
                await harness.wait_status("online")
                assert await tell("press exposed 5") == "ok"
                await harness.wait_keys(1)
                assert harness.keys() == [("exposed", 5)]
                cmd = LampCommand(ts=utc_now(), colour="amber", blink=True)
                await publish(mosquitto.port, harness.cmd_topic, cmd.to_json())
                for _ in range(100):
                    answer = await tell("lamp?")
                    assert await asyncio.wait_for(process.stdout.readline(), 5) == b"ok\n"
                    if answer == "lamp amber True":
                        break
                    await asyncio.sleep(0.02)
                assert answer == "lamp amber True"
                before = harness.status_count
                assert await tell("unplug") == "ok"
                await harness.wait_status("offline", after=before)
                assert await tell("replug") == "ok"
                await harness.wait_status("online", after=before)
            finally:
                await stop_task(task)
        await tell("quit")
        assert await asyncio.wait_for(process.wait(), 5) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
