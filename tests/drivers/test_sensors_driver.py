"""The sensor board driver against the simulated board through pyusb, without a broker.

The board is simulated in this process behind a pyusb backend (the driver runs its production
pyusb path), or served on a unix socket (``sim:PATH``); what the driver publishes is kept by a
:class:`testing.memory_link.MemoryLink`. ``test_sensors_e2e.py`` adds the broker and processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

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
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import Driver, DriverOptions, stop_task
from drivers.sensors.driver import SensorBoard, sensor_board_driver
from simulators.sensors import Lamp, SensorBoardSimulator
from testing.memory_link import MemoryLink

VID, PID = 0x1209, 0x7AB1
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
    """A board, its driver and the driver's link."""

    def __init__(self, link: MemoryLink, board: SensorBoardSimulator) -> None:
        self.link = link
        self.board = board

    def events(self) -> list[DeviceEvent]:
        return self.link.events

    def keys(self) -> list[tuple[str, int | None]]:
        return [(e.key, e.seat) for e in self.events() if isinstance(e, KeyEvent)]

    async def wait_events(self, count: int, within: float = 5.0) -> None:
        await self.link.wait_for(lambda: len(self.link.events) >= count, within)

    async def wait_keys(self, count: int, within: float = 5.0) -> None:
        await self.link.wait_for(lambda: len(self.keys()) >= count, within)

    async def wait_status(self, state: str, after: int = 0, within: float = 5.0) -> None:
        def seen() -> bool:
            return any(s.state == state for s in self.link.statuses[after:])

        await self.link.wait_for(seen, within)

    @property
    def status_count(self) -> int:
        return len(self.link.statuses)


def make_driver(
    board: SensorBoardSimulator,
    device: SensorBoardDevice | None = None,
    options: DriverOptions = OPTIONS,
    *,
    in_process: bool = True,
    **kwargs: Any,
) -> tuple[Driver[SensorBoard], MemoryLink]:
    link = MemoryLink("sensors", log=logging.getLogger("drivers.sensors"))
    driver = sensor_board_driver(
        device or board_config(),
        MqttSection(),
        Topics("holdem", "sb"),
        options,
        usb_backend=board.backend if in_process else None,
        link=link,
        **kwargs,
    )
    return driver, link


@contextlib.asynccontextmanager
async def running(
    board: SensorBoardSimulator | None = None,
    device: SensorBoardDevice | None = None,
    in_process: bool = True,
    options: DriverOptions = OPTIONS,
) -> AsyncIterator[tuple[Harness, Driver[SensorBoard]]]:
    board = board or SensorBoardSimulator(VID, PID)
    driver, link = make_driver(board, device, options, in_process=in_process)
    harness = Harness(link, board)
    task = asyncio.create_task(driver.run())
    try:
        await harness.wait_status("online")
        yield harness, driver
    finally:
        await stop_task(task)


async def test_state_changes_and_keys_become_contract_events() -> None:
    async with running() as (h, _):
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
        common = {"v", "seq", "ts", "type", "session"}
        described = [(type(e).__name__, e.model_dump(exclude=common)) for e in events[1:]]
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


async def test_presses_between_polls_are_all_published_once_in_order() -> None:
    async with running() as (h, _):
        pressed = [("new_hand", None), ("all_in", 7), ("exposed", 2), ("declare_board", 9)]
        pressed += [("round_complete", None)] * 8 + [("misdeal", None), ("ack", None)]
        for key, seat in pressed:  # 14 presses at once: more than one report carries
            h.board.press(key, seat)
        await h.wait_keys(len(pressed))
        await asyncio.sleep(0.2)  # resends, had they been published twice, would show now
        assert h.keys() == pressed
        assert h.board.pending_keys == 0  # all acknowledged


async def test_a_press_is_acknowledged_to_the_board_only_once_the_broker_has_its_event() -> None:
    board = SensorBoardSimulator(VID, PID)
    driver, link = make_driver(board)
    link.broker_acks = False  # the broker is away: events wait for their PUBACK
    h = Harness(link, board)
    task = asyncio.create_task(driver.run())
    try:
        await h.wait_status("online")
        board.press("new_hand")
        await h.wait_keys(1)
        key = next(e for e in h.events() if isinstance(e, KeyEvent))
        assert key.session == driver.session.number
        # The board resends the press every 50 ms; after several more reports it still holds it.
        seen = driver.device.port.frames_received
        await asyncio.wait_for(_until(lambda: driver.device.port.frames_received >= seen + 4), 5)
        assert board.pending_keys == 1
        assert h.keys() == [("new_hand", None)]  # resent by the board, published once
        link.acknowledge()  # PUBACK
        await asyncio.wait_for(_until(lambda: board.pending_keys == 0), 5)
        # An ack lost on the wire: the board goes on resending, the driver acknowledges again.
        board.press("ack")
        await h.wait_keys(2)
        board.corrupt_commands(1)
        link.acknowledge()
        await asyncio.wait_for(_until(lambda: board.out_errors == 1), 5)
        await asyncio.wait_for(_until(lambda: board.pending_keys == 0), 5)
        assert h.keys() == [("new_hand", None), ("ack", None)]
    finally:
        await stop_task(task)


async def test_keys_survive_corrupt_reports() -> None:
    async with running() as (h, _):
        h.board.corrupt_reports(2)
        h.board.press("misdeal")
        h.board.press("ack")
        await h.wait_keys(2)
        await asyncio.sleep(0.2)
        assert h.keys() == [("misdeal", None), ("ack", None)]


async def test_lamp_and_buzzer_commands_drive_the_board() -> None:
    async with running() as (h, _):
        command = LampCommand(ts=utc_now(), colour="red", blink=True)
        h.link.command(command)
        await asyncio.wait_for(_until(lambda: h.board.lamp == Lamp("red", True)), 5)
        buzz = BuzzerCommand(ts=utc_now(), duration_ms=3000)
        h.link.command(buzz)
        await asyncio.wait_for(_until(lambda: h.board.buzzer_active), 5)
        silence = BuzzerCommand(ts=utc_now(), duration_ms=0)
        h.link.command(silence)
        await asyncio.wait_for(_until(lambda: not h.board.buzzer_active), 5)


async def test_bad_commands_are_rejected_with_the_topic_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR)
    async with running() as (h, _):
        h.link.raw_command(b'{"cmd": "lamp", "colour": "pink"}')
        h.link.command(ShuffleCommand(ts=utc_now()))
        topic = h.link.cmd_topic
        await asyncio.wait_for(_until(lambda: sum(topic in r.getMessage() for r in caplog.records) >= 2), 5)
        # Still serving: a key press goes through.
        h.board.press("ack")
        await h.wait_keys(1)
    messages = [r.getMessage() for r in caplog.records if topic in r.getMessage()]
    assert any("colour" in m for m in messages)
    assert any("shuffle" in m for m in messages)


async def test_unplug_replug_new_session_nothing_lost_lamp_restored() -> None:
    async with running() as (h, driver):
        h.link.command(LampCommand(ts=utc_now(), colour="amber"))
        await asyncio.wait_for(_until(lambda: h.board.lamp == Lamp("amber")), 5)
        h.board.press("new_hand")
        await h.wait_keys(1)
        first = h.link.statuses[-1].session
        before = h.status_count
        h.board.unplug()
        await h.wait_status("offline", after=before)
        h.board.set_occupied(6, True)  # changes while unplugged
        h.board.replug()
        h.board.press("misdeal")  # right after the replug, before the driver is back
        await h.wait_status("online", after=before)
        await h.wait_keys(2)
        statuses = h.link.statuses[before:]
        online = next(s for s in statuses if s.state == "online")
        assert online.session == first + 1
        second = [e for e in h.events() if e.seq == 1]
        assert len(second) == 2  # seq restarted at 1 with the new session
        new_session = h.events()[h.events().index(second[1]) :]
        assert [e.seq for e in new_session] == list(range(1, len(new_session) + 1))
        assert any(isinstance(e, SeatEvent) and e.seat == 6 and e.occupied for e in new_session)
        assert ("misdeal", None) in [(e.key, e.seat) for e in new_session if isinstance(e, KeyEvent)]
        await asyncio.wait_for(_until(lambda: h.board.lamp == Lamp("amber")), 5)
        assert driver.session.number == first + 1


async def test_burst_of_corrupt_reports_raises_a_fault() -> None:
    # A short window (0.5 s): it goes quiet again sooner.
    options = DriverOptions(reconnect_max_s=0.3, fault_errors=5, fault_window_s=0.5)
    async with running(options=options) as (h, _):
        before = h.status_count
        h.board.corrupt_reports(8)
        await h.wait_status("fault", after=before)
        await h.link.wait_for(lambda: any(isinstance(e, FaultEvent) for e in h.events()))
        fault = next(e for e in h.events() if isinstance(e, FaultEvent))
        assert fault.code == "crc_errors"
        # The window goes quiet again: back online.
        await h.wait_status("online", after=before + 1, within=6)


async def test_driver_reaches_a_board_served_on_a_socket_by_url(tmp_path: Path) -> None:
    board = SensorBoardSimulator(VID, PID, serial_number="SB-42")
    spec = board.serve(tmp_path / "board.sock")
    try:
        device = board_config(backend=spec, serial_number="SB-42")
        async with running(board, device, in_process=False) as (h, driver):
            assert driver.device.port.url == spec  # sim:PATH, through pyusb
            h.board.set_blind(1, True)
            h.board.press("declare_board", 4)
            await h.wait_keys(1)
            assert h.keys() == [("declare_board", 4)]
            assert any(isinstance(e, BlindEvent) and e.seat == 1 for e in h.events())
            h.link.command(LampCommand(ts=utc_now(), colour="green"))
            await asyncio.wait_for(_until(lambda: board.lamp == Lamp("green")), 5)
    finally:
        await board.close()


async def test_wrong_serial_number_is_not_taken_for_the_board(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="drivers.sensors")
    board = SensorBoardSimulator(VID, PID, serial_number="SB-1")
    driver, link = make_driver(board, board_config(serial_number="SB-2"))
    task = asyncio.create_task(driver.run())
    try:
        await asyncio.wait_for(_until(lambda: "no USB device 1209:7ab1 serial SB-2" in caplog.text), 5)
        assert {s.state for s in link.statuses} == {"offline"}
    finally:
        await stop_task(task)


async def _until(predicate: Callable[[], bool], step: float = 0.01) -> None:
    # The board's state changes in the driver's worker threads: nothing to await but time.
    while not predicate():  # noqa: ASYNC110
        await asyncio.sleep(step)


async def test_a_lamp_command_lost_on_the_wire_is_sent_again() -> None:
    async with running() as (h, _):
        h.board.corrupt_commands(1)
        h.link.command(LampCommand(ts=utc_now(), colour="white", blink=False))
        await asyncio.wait_for(_until(lambda: h.board.out_errors == 1), 5)
        assert h.board.lamp == Lamp()
        await asyncio.wait_for(_until(lambda: h.board.lamp == Lamp("white")), 5)


async def test_many_presses_amid_corrupt_reports_arrive_once_each_in_order() -> None:
    rng = random.Random(7)
    keys = ["new_hand", "round_complete", "all_in", "exposed", "misdeal", "declare_board", "ack"]
    pressed = [(rng.choice(keys), rng.choice([None, rng.randint(1, 10)])) for _ in range(120)]
    options = DriverOptions(reconnect_max_s=0.3, fault_errors=1000, fault_window_s=1.0)
    # Presses come faster than any dealer's here; a queue deeper than the board's 32 keeps a
    # loaded test machine from overflowing it (overflow has its own test in the simulator's).
    board = SensorBoardSimulator(VID, PID, seed=3, key_queue=120)
    driver, link = make_driver(board, options=options)
    harness = Harness(link, board)
    task = asyncio.create_task(driver.run())
    try:
        await harness.wait_status("online")
        for index, (key, seat) in enumerate(pressed):
            board.press(key, seat)
            if index % 10 == 0:
                board.corrupt_reports(1)
            await asyncio.sleep(rng.choice([0, 0, 0.001, 0.01]))
        with contextlib.suppress(TimeoutError):  # the asserts below say what went wrong
            await harness.wait_keys(len(pressed), within=15)
        await asyncio.wait_for(_until(lambda: board.pending_keys == 0), 5)  # all acknowledged
        assert [e for e in harness.events() if isinstance(e, FaultEvent)] == []
        assert harness.keys() == pressed
        assert driver.device.port.stream.corrupt >= 1
    finally:
        await stop_task(task)


async def test_a_board_that_stops_reporting_is_dropped_and_reopened() -> None:
    board = SensorBoardSimulator(VID, PID)
    driver, link = make_driver(board, silence_s=0.4)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        session = driver.session.number
        board.freeze()
        await link.wait_for(lambda: link.state() == "offline")
        attempts = driver.connect_attempts
        # Still hung: the reopened board answers nothing, so no session opens.
        await asyncio.wait_for(_until(lambda: driver.connect_attempts >= attempts + 2), 5)
        assert link.state() == "offline"
        assert driver.session.number == session
        board.freeze(False)
        await link.wait_for(lambda: link.state() == "online")
        assert link.statuses[-1].session == session + 1
    finally:
        await stop_task(task)
