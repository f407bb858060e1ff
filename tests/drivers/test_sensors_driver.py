"""The sensor board driver against the simulated board (pyusb backend) and a real mosquitto."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from config.models import MqttSection, SensorBoardDevice
from contract.models import (
    BlindEvent,
    ButtonEvent,
    BuzzerCommand,
    DeviceEvent,
    FaultEvent,
    KeyEvent,
    LampCommand,
    SeatEvent,
    ShuffleCommand,
)
from contract.topics import Topics
from drivers.base import DriverOptions, cancel_and_wait, utc_now
from drivers.registry import open_driver
from drivers.sensors.driver import SensorBoardDriver
from simulators.sensors import Lamp, SensorBoardSimulator
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
    """A board, its driver and a subscriber to the driver's topics."""

    def __init__(self, got: Received, topics: Topics, board: SensorBoardSimulator) -> None:
        self.got = got
        self.board = board
        self.events_topic = topics.device_event("sensors")
        self.status_topic = topics.device_status("sensors")
        self.cmd_topic = topics.device_cmd("sensors")

    def events(self) -> list[DeviceEvent]:
        return self.got.events(self.events_topic)

    def keys(self) -> list[tuple[str, int | None]]:
        return [(e.key, e.seat) for e in self.events() if isinstance(e, KeyEvent)]

    async def wait_events(self, count: int, within: float = 5.0) -> None:
        await self.got.wait_for(lambda: len(self.got.on(self.events_topic)) >= count, within)

    async def wait_keys(self, count: int, within: float = 5.0) -> None:
        await self.got.wait_for(lambda: len(self.keys()) >= count, within)

    async def wait_status(self, state: str, after: int = 0, within: float = 5.0) -> None:
        def seen() -> bool:
            return any(s.state == state for s in self.got.statuses(self.status_topic)[after:])

        await self.got.wait_for(seen, within)

    @property
    def status_count(self) -> int:
        return len(self.got.on(self.status_topic))


@contextlib.asynccontextmanager
async def running(
    broker: Mosquitto,
    table: str,
    board: SensorBoardSimulator | None = None,
    device: SensorBoardDevice | None = None,
    in_process: bool = True,
) -> AsyncIterator[tuple[Harness, SensorBoardDriver]]:
    board = board or SensorBoardSimulator(VID, PID)
    topics = Topics("holdem", table)
    driver = SensorBoardDriver(
        device or board_config(),
        MqttSection(url=broker.url),
        topics,
        OPTIONS,
        usb_backend=board.backend if in_process else None,
    )
    harness = Harness(Received(), topics, board)
    async with subscribed(broker.port, harness.events_topic, harness.status_topic) as got:
        harness.got = got
        task = asyncio.create_task(driver.run())
        try:
            await harness.wait_status("online")
            yield harness, driver
        finally:
            await cancel_and_wait(task)


async def test_state_changes_and_keys_become_contract_events(mosquitto: Mosquitto) -> None:
    async with running(mosquitto, "sb1") as (h, _):
        await h.wait_events(1)  # the session states the button once
        first = h.events()[0]
        assert isinstance(first, ButtonEvent)
        assert first.seat is None
        h.board.move_button(4)
        h.board.set_occupied(2, True)
        h.board.set_blind(5, True)
        h.board.press("exposed", seat=3)
        await h.wait_events(5)
        h.board.set_occupied(2, False)
        h.board.move_button(None)
        await h.wait_events(7)
        events = h.events()
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        described = [(type(e).__name__, e.model_dump(exclude={"v", "seq", "ts", "type"})) for e in events[1:]]
        assert set(map(str, described[:4])) == {
            str(("ButtonEvent", {"seat": 4})),
            str(("SeatEvent", {"seat": 2, "occupied": True})),
            str(("BlindEvent", {"seat": 5, "present": True})),
            str(("KeyEvent", {"key": "exposed", "seat": 3})),
        }
        assert described[4:] == [
            ("SeatEvent", {"seat": 2, "occupied": False}),
            ("ButtonEvent", {"seat": None}),
        ] or described[4:] == [
            ("ButtonEvent", {"seat": None}),
            ("SeatEvent", {"seat": 2, "occupied": False}),
        ]


async def test_presses_between_polls_are_all_published_once_in_order(
    mosquitto: Mosquitto,
) -> None:
    async with running(mosquitto, "sb2") as (h, _):
        pressed = [("new_hand", None), ("all_in", 7), ("exposed", 2), ("declare_board", 9)]
        pressed += [("round_complete", None)] * 8 + [("misdeal", None), ("ack", None)]
        for key, seat in pressed:  # 14 presses at once: more than one report carries
            h.board.press(key, seat)
        await h.wait_keys(len(pressed))
        await asyncio.sleep(0.2)  # resends, had they been published twice, would show now
        assert h.keys() == pressed
        assert h.board.pending_keys == 0  # all acknowledged


async def test_keys_survive_corrupt_reports(mosquitto: Mosquitto) -> None:
    async with running(mosquitto, "sb3") as (h, _):
        h.board.corrupt_reports(2)
        h.board.press("misdeal")
        h.board.press("ack")
        await h.wait_keys(2)
        await asyncio.sleep(0.2)
        assert h.keys() == [("misdeal", None), ("ack", None)]


async def test_lamp_and_buzzer_commands_drive_the_board(mosquitto: Mosquitto) -> None:
    async with running(mosquitto, "sb4") as (h, _):
        command = LampCommand(ts=utc_now(), colour="red", blink=True)
        await publish(mosquitto.port, h.cmd_topic, command.to_json())
        await asyncio.wait_for(_until(lambda: h.board.lamp == Lamp("red", True)), 5)
        buzz = BuzzerCommand(ts=utc_now(), duration_ms=3000)
        await publish(mosquitto.port, h.cmd_topic, buzz.to_json())
        await asyncio.wait_for(_until(lambda: h.board.buzzer_active), 5)
        silence = BuzzerCommand(ts=utc_now(), duration_ms=0)
        await publish(mosquitto.port, h.cmd_topic, silence.to_json())
        await asyncio.wait_for(_until(lambda: not h.board.buzzer_active), 5)


async def test_bad_commands_are_rejected_with_the_topic_named(
    mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    async with running(mosquitto, "sb5") as (h, _):
        await publish(mosquitto.port, h.cmd_topic, b'{"cmd": "lamp", "colour": "pink"}')
        shuffle = ShuffleCommand(ts=utc_now())
        await publish(mosquitto.port, h.cmd_topic, shuffle.to_json())
        await asyncio.wait_for(
            _until(lambda: sum(h.cmd_topic in r.getMessage() for r in caplog.records) >= 2), 5
        )
        # Still serving: a key press goes through.
        h.board.press("ack")
        await h.wait_keys(1)
    messages = [r.getMessage() for r in caplog.records if h.cmd_topic in r.getMessage()]
    assert any("colour" in m for m in messages)
    assert any("shuffle" in m for m in messages)


async def test_unplug_replug_new_session_nothing_lost_lamp_restored(mosquitto: Mosquitto) -> None:
    async with running(mosquitto, "sb6") as (h, driver):
        await publish(mosquitto.port, h.cmd_topic, LampCommand(ts=utc_now(), colour="amber").to_json())
        await asyncio.wait_for(_until(lambda: h.board.lamp == Lamp("amber")), 5)
        h.board.press("new_hand")
        await h.wait_keys(1)
        first = h.got.statuses(h.status_topic)[-1].session
        before = h.status_count
        h.board.unplug()
        await h.wait_status("offline", after=before)
        h.board.set_occupied(6, True)  # changes while unplugged
        h.board.replug()
        h.board.press("misdeal")  # right after the replug, before the driver is back
        await h.wait_status("online", after=before)
        await h.wait_keys(2)
        statuses = h.got.statuses(h.status_topic)[before:]
        online = next(s for s in statuses if s.state == "online")
        assert online.session == first + 1
        second = [e for e in h.events() if e.seq == 1]
        assert len(second) == 2  # seq restarted at 1 with the new session
        new_session = h.events()[h.events().index(second[1]) :]
        assert [e.seq for e in new_session] == list(range(1, len(new_session) + 1))
        assert any(isinstance(e, SeatEvent) and e.seat == 6 and e.occupied for e in new_session)
        assert ("misdeal", None) in [(e.key, e.seat) for e in new_session if isinstance(e, KeyEvent)]
        await asyncio.wait_for(_until(lambda: h.board.lamp == Lamp("amber")), 5)
        assert driver.session == first + 1


async def test_burst_of_corrupt_reports_raises_a_fault(mosquitto: Mosquitto) -> None:
    async with running(mosquitto, "sb7") as (h, _):
        before = h.status_count
        h.board.corrupt_reports(8)
        await h.wait_status("fault", after=before)
        await h.got.wait_for(lambda: any(isinstance(e, FaultEvent) for e in h.events()))
        fault = next(e for e in h.events() if isinstance(e, FaultEvent))
        assert fault.code == "crc_errors"
        # The window goes quiet again: back online.
        await h.wait_status("online", after=before + 1, within=6)


async def test_driver_reaches_a_board_in_another_process_by_socket(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    board = SensorBoardSimulator(VID, PID, serial_number="SB-42")
    spec = board.serve(tmp_path / "board.sock")
    try:
        device = board_config(backend=spec, serial_number="SB-42")
        async with running(mosquitto, "sb8", board, device, in_process=False) as (h, _):
            h.board.set_blind(1, True)
            h.board.press("declare_board", 4)
            await h.wait_keys(1)
            assert h.keys() == [("declare_board", 4)]
            assert any(isinstance(e, BlindEvent) and e.seat == 1 for e in h.events())
            await publish(mosquitto.port, h.cmd_topic, LampCommand(ts=utc_now(), colour="green").to_json())
            await asyncio.wait_for(_until(lambda: board.lamp == Lamp("green")), 5)
    finally:
        await board.close()


async def test_wrong_serial_number_is_not_taken_for_the_board(
    mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="drivers.sensors")
    board = SensorBoardSimulator(VID, PID, serial_number="SB-1")
    topics = Topics("holdem", "sb9")
    driver = SensorBoardDriver(
        board_config(serial_number="SB-2"),
        MqttSection(url=mosquitto.url),
        topics,
        OPTIONS,
        usb_backend=board.backend,
    )
    status = topics.device_status("sensors")
    async with subscribed(mosquitto.port, status) as got:
        task = asyncio.create_task(driver.run())
        try:
            await got.wait_for(lambda: bool(got.statuses(status)))
            await asyncio.sleep(0.5)
            assert {s.state for s in got.statuses(status)} == {"offline"}
            assert any("no USB device 1209:7ab1 serial SB-2" in r.getMessage() for r in caplog.records)
        finally:
            await cancel_and_wait(task)


async def _until(predicate: Callable[[], bool], step: float = 0.01) -> None:
    # The board's state changes in the driver's worker threads: nothing to await but time.
    while not predicate():  # noqa: ASYNC110
        await asyncio.sleep(step)


async def test_a_lamp_command_lost_on_the_wire_is_sent_again(mosquitto: Mosquitto) -> None:
    async with running(mosquitto, "sb10") as (h, _):
        h.board.corrupt_commands(1)
        command = LampCommand(ts=utc_now(), colour="white", blink=False)
        await publish(mosquitto.port, h.cmd_topic, command.to_json())
        await asyncio.wait_for(_until(lambda: h.board.out_errors == 1), 5)
        assert h.board.lamp == Lamp()
        await asyncio.wait_for(_until(lambda: h.board.lamp == Lamp("white")), 5)


async def test_presses_while_the_broker_restarts_are_queued_not_lost(mosquitto: Mosquitto) -> None:
    topics = Topics("holdem", "sb11")
    board = SensorBoardSimulator(VID, PID)
    driver = SensorBoardDriver(
        board_config(), MqttSection(url=mosquitto.url), topics, OPTIONS, usb_backend=board.backend
    )
    task = asyncio.create_task(driver.run())
    try:
        await asyncio.wait_for(driver.broker_ready.wait(), 5)
        await asyncio.to_thread(mosquitto.stop)
        board.press("all_in", 3)
        board.press("exposed", 3)
        await asyncio.wait_for(_until(lambda: board.pending_keys == 0), 5)  # read and acknowledged
        await asyncio.to_thread(mosquitto.start)
        async with subscribed(mosquitto.port, topics.device_event("sensors")) as got:
            events_topic = topics.device_event("sensors")

            def keys() -> list[tuple[str, int | None]]:
                return [(e.key, e.seat) for e in got.events(events_topic) if isinstance(e, KeyEvent)]

            await got.wait_for(lambda: len(keys()) == 2, within=10)
            assert keys() == [("all_in", 3), ("exposed", 3)]
    finally:
        await cancel_and_wait(task)


async def test_many_presses_amid_corrupt_reports_arrive_once_each_in_order(
    mosquitto: Mosquitto,
) -> None:
    rng = random.Random(7)
    keys = ["new_hand", "round_complete", "all_in", "exposed", "misdeal", "declare_board", "ack"]
    pressed = [(rng.choice(keys), rng.choice([None, rng.randint(1, 10)])) for _ in range(120)]
    options = DriverOptions(reconnect_max_s=0.3, fault_errors=1000, fault_window_s=1.0)
    # Presses come faster than any dealer's here; a queue deeper than the board's 32 keeps a
    # loaded test machine from overflowing it (overflow has its own test in the simulator's).
    board = SensorBoardSimulator(VID, PID, seed=3, key_queue=120)
    topics = Topics("holdem", "sb12")
    driver = SensorBoardDriver(
        board_config(), MqttSection(url=mosquitto.url), topics, options, usb_backend=board.backend
    )
    harness = Harness(Received(), topics, board)
    async with subscribed(mosquitto.port, harness.events_topic) as got:
        harness.got = got
        task = asyncio.create_task(driver.run())
        try:
            await asyncio.wait_for(driver.broker_ready.wait(), 5)
            for index, (key, seat) in enumerate(pressed):
                board.press(key, seat)
                if index % 10 == 0:
                    board.corrupt_reports(1)
                await asyncio.sleep(rng.choice([0, 0, 0.001, 0.01]))
            with contextlib.suppress(TimeoutError):  # the asserts below say what went wrong
                await harness.wait_keys(len(pressed), within=15)
            await asyncio.sleep(0.2)
            assert [e for e in harness.events() if isinstance(e, FaultEvent)] == []
            assert harness.keys() == pressed
            assert driver.decoder.errors >= 1
        finally:
            await cancel_and_wait(task)


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
        assert isinstance(driver, SensorBoardDriver)
        harness = Harness(Received(), topics, SensorBoardSimulator())  # board lives elsewhere
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
                await cancel_and_wait(task)
        await tell("quit")
        assert await asyncio.wait_for(process.wait(), 5) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_a_board_that_stops_reporting_is_dropped_and_reopened(mosquitto: Mosquitto) -> None:
    board = SensorBoardSimulator(VID, PID)
    topics = Topics("holdem", "sb14")
    driver = SensorBoardDriver(
        board_config(),
        MqttSection(url=mosquitto.url),
        topics,
        OPTIONS,
        usb_backend=board.backend,
        silence_s=0.4,
    )
    status = topics.device_status("sensors")
    async with subscribed(mosquitto.port, status) as got:
        task = asyncio.create_task(driver.run())
        try:
            await got.wait_for(lambda: any(s.state == "online" for s in got.statuses(status)))
            session = driver.session
            board.freeze()
            await got.wait_for(lambda: got.statuses(status)[-1].state == "offline")
            await asyncio.sleep(1.0)  # still hung: it stays offline, no session opens
            assert got.statuses(status)[-1].state == "offline"
            assert driver.session == session
            board.freeze(False)
            await got.wait_for(lambda: got.statuses(status)[-1].state == "online")
            assert got.statuses(status)[-1].session == session + 1
        finally:
            await cancel_and_wait(task)
