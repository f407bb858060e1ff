"""The driver running a tiny in-memory device without a broker: the device loop (sessions,
backoff, a driver bug), the command worker (one at a time, rejections, ``resend``)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from pathlib import Path

import pytest

from config.models import MqttSection
from contract.models import (
    BuzzerCommand,
    DeviceCommand,
    FaultEvent,
    LampCommand,
    ResendCommand,
    ShuffleCommand,
    Status,
    StatusCommand,
)
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import Driver, DriverOptions, stop_task
from drivers.errors import CommandRejected, DeviceLost
from drivers.session import DeviceSession
from testing.memory_link import MemoryLink
from tests.drivers.queue_device import QueueDevice, queue_driver
from tests.drivers.waiting import until


def make(**options: object) -> tuple[Driver[QueueDevice], MemoryLink]:
    link = MemoryLink(
        "dev",
        previous=options.pop("previous", None),  # type: ignore[arg-type]
        command_limit=int(options.get("command_limit", 100)),  # type: ignore[call-overload]
        log=logging.getLogger("drivers.testdev"),
    )
    driver = queue_driver(
        MqttSection(),
        Topics("holdem", "t"),
        DriverOptions(reconnect_max_s=0.05, **options),  # type: ignore[arg-type]
        link=link,
    )
    return driver, link


async def test_sessions_number_events_and_restart_seq_after_a_replug() -> None:
    driver, link = make()
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        driver.device.presses.put_nowait("new_hand")
        driver.device.presses.put_nowait("ack")
        await link.wait_for(lambda: len(link.events) == 2)
        assert [(e.seq, getattr(e, "key", None)) for e in link.events] == [(1, "new_hand"), (2, "ack")]
        first = link.statuses[-1].session
        # Unplug, replug: offline, then online with the next session; seq starts again.
        driver.device.plugged = False
        driver.device.presses.put_nowait(None)
        await link.wait_for(lambda: link.state() == "offline")
        assert link.statuses[-1].detail == "device lost: unplugged"
        driver.device.plugged = True
        await link.wait_for(lambda: link.state() == "online")
        assert link.statuses[-1].session == first + 1
        driver.device.presses.put_nowait("misdeal")
        await link.wait_for(lambda: len(link.events) == 3)
        assert link.events[-1].seq == 1
    finally:
        await stop_task(task)


async def test_sessions_continue_from_the_previous_status() -> None:
    previous = Status(state="offline", ts=utc_now(), session=41, detail="driver gone")
    driver, link = make(previous=previous)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        assert link.statuses[-1].session == 42
    finally:
        await stop_task(task)


async def test_a_fault_the_device_has_when_a_session_starts_is_its_first_status() -> None:
    driver, link = make()
    driver.device.faults_at_start = {"jam": "jammed"}
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "fault")
        # Never "online" in between: the device set the session up before its status went out.
        assert [(s.state, s.session) for s in link.statuses] == [("offline", 0), ("fault", 1)]
        assert [(e.type, getattr(e, "code", None), e.seq) for e in link.events] == [("fault", "jam", 1)]
        assert driver.device.sessions_started == 1
    finally:
        await stop_task(task)


async def test_error_burst_raises_one_fault_then_clears_when_quiet() -> None:
    driver, link = make(fault_errors=3, fault_window_s=0.3)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        for _ in range(5):
            driver.device.presses.put_nowait("corrupt")
        await link.wait_for(lambda: link.state() == "fault")
        assert [(e.type, getattr(e, "code", None)) for e in link.events] == [("fault", "crc_errors")]
        assert "3 errors within 0.3 s" in (link.statuses[-1].detail or "")
        await asyncio.sleep(0.4)  # the window goes quiet
        driver.session.tick_faults()
        await link.wait_for(lambda: link.state() == "online")
        assert len(link.of_type(FaultEvent)) == 1
    finally:
        await stop_task(task)


async def test_a_driver_bug_is_logged_and_the_device_reopened(caplog: pytest.LogCaptureFixture) -> None:
    driver, link = make()
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
            driver.device.presses.put_nowait("bug")
            await link.wait_for(lambda: link.statuses[-1].session == 2)
        assert "a driver bug" in caplog.text
        assert [(s.state, s.session) for s in link.statuses] == [
            ("offline", 0),  # the driver started; its device had not answered yet
            ("online", 1),
            ("offline", 1),
            ("online", 2),
        ]
        assert link.statuses[2].detail == "driver error: a driver bug"
    finally:
        await stop_task(task)


async def test_a_bug_while_connecting_is_logged_and_retried(caplog: pytest.LogCaptureFixture) -> None:
    driver, link = make()
    driver.device.buggy_connect = True
    task = asyncio.create_task(driver.run())
    try:
        with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
            await until(lambda: driver.connect_attempts >= 3, within=5)  # no status says it again
        assert "dev: driver error while connecting: 'a bug while connecting'" in caplog.text
        assert any(r.exc_info for r in caplog.records)  # with its traceback
        assert link.state() == "offline"
        assert driver.device.disconnects >= 2  # released after every failed attempt
        driver.device.buggy_connect = False
        await link.wait_for(lambda: link.state() == "online")
        assert link.statuses[-1].session == 1
    finally:
        await stop_task(task)


async def test_commands_run_one_at_a_time_in_order() -> None:
    driver, link = make()
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        driver.device.slow.clear()  # the first command hangs until released
        for colour in ("red", "amber", "green"):
            link.command(LampCommand(ts=utc_now(), colour=colour))
        for _ in range(100):
            if driver.device.started:
                break
            await asyncio.sleep(0.01)
        # The first hangs in the device: the others wait their turn.
        assert [c.colour for c in driver.device.started if isinstance(c, LampCommand)] == ["red"]
        assert len(link.commands) == 2
        driver.device.slow.set()
        for _ in range(100):
            if len(driver.device.executed) == 3:
                break
            await asyncio.sleep(0.01)
        assert [c.colour for c in driver.device.executed if isinstance(c, LampCommand)] == [
            "red",
            "amber",
            "green",
        ]
    finally:
        await stop_task(task)


async def test_bad_commands_are_logged_with_the_topic(caplog: pytest.LogCaptureFixture) -> None:
    driver, link = make()
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
            link.raw_command(b'{"cmd": "lamp", "colour": "purple"}')
            link.command(ShuffleCommand(ts=utc_now()))
            link.command(LampCommand(ts=utc_now(), colour="red"))  # a marker: processed after
            for _ in range(100):
                if driver.device.executed:
                    break
                await asyncio.sleep(0.01)
        messages = [r.getMessage() for r in caplog.records]
        assert any("malformed" in m and link.cmd_topic in m for m in messages)
        assert any("rejected 'shuffle'" in m and "lamp only" in m for m in messages)
        assert len(driver.device.executed) == 1
    finally:
        await stop_task(task)


async def test_commands_while_offline_and_beyond_the_queue_are_rejected_not_lost_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver, link = make(command_limit=2)
    driver.device.plugged = False
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "offline")
        with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
            link.command(BuzzerCommand(ts=utc_now(), duration_ms=500))
            for _ in range(100):
                if "device offline" in caplog.text:
                    break
                await asyncio.sleep(0.01)
        assert "cannot execute 'buzzer': device offline" in caplog.text
        # A device that hangs on a command: the queue holds two more, the fourth is rejected.
        driver.device.plugged = True
        await link.wait_for(lambda: link.state() == "online")
        driver.device.slow.clear()
        with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
            for _ in range(4):
                link.command(LampCommand(ts=utc_now(), colour="green"))
            assert "2 commands already wait" in caplog.text
        driver.device.slow.set()
    finally:
        await stop_task(task)


async def test_the_lamp_set_while_the_device_is_away_is_set_when_it_is_back_and_after_a_replug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The controller sets the lamp at its start, maybe before the board answers, and a
    replugged board starts dark: the latest lamp is kept while the device is away and set again
    at every connection (a buzz is not: it is refused while the device is away)."""
    driver, link = make()
    driver.device.plugged = False
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "offline")
        with caplog.at_level(logging.INFO, logger="drivers.testdev"):
            link.command(LampCommand(ts=utc_now(), colour="red"))
            link.command(LampCommand(ts=utc_now(), colour="amber", blink=True))
            await until(lambda: caplog.text.count("'lamp' kept until the device is back") == 2, within=5)
        assert driver.device.executed == []
        driver.device.plugged = True
        await link.wait_for(lambda: link.state() == "online")
        await until(lambda: len(driver.device.executed) == 1, within=5)
        assert [(c.colour, c.blink) for c in driver.device.executed if isinstance(c, LampCommand)] == [
            ("amber", True)
        ]
        # Unplugged and plugged again: the board starts dark, the lamp is set again.
        driver.device.plugged = False
        driver.device.presses.put_nowait(None)
        await link.wait_for(lambda: link.state() == "offline")
        driver.device.plugged = True
        await link.wait_for(lambda: link.state() == "online")
        await until(lambda: len(driver.device.executed) == 2, within=5)
        assert driver.device.executed[1] == driver.device.executed[0]
    finally:
        await stop_task(task)


async def test_state_file_numbers_sessions_without_a_broker(tmp_path: Path) -> None:
    state = tmp_path / "dev.session"
    state.write_text("41\n")
    driver, link = make(state_file=state)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        assert driver.session.number == 42
        assert state.read_text().strip() == "42"
    finally:
        await stop_task(task)


async def test_events_name_their_session_and_a_resend_publishes_them_again_unchanged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver, link = make(resend_buffer=4)
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: link.state() == "online")
        session = driver.session.number
        for key in ("new_hand", "round_complete", "all_in", "exposed", "ack"):
            driver.device.presses.put_nowait(key)
        await link.wait_for(lambda: len(link.events) == 5)
        assert {e.session for e in link.events} == {session}
        first = list(link.events)
        # Unplugged: the device is gone, its ring buffer is not.
        driver.device.plugged = False
        driver.device.presses.put_nowait(None)
        await link.wait_for(lambda: link.state() == "offline")
        link.command(ResendCommand(ts=utc_now(), session=session, from_seq=3, to_seq=4))
        await link.wait_for(lambda: len(link.events) == 7)
        assert link.events[5:] == first[2:4]  # the same payloads: seq, ts and all
        # Seq 1 has left the ring (it keeps 4): what is still held is sent, the rest is named.
        with caplog.at_level(logging.WARNING, logger="drivers.testdev"):
            link.command(ResendCommand(ts=utc_now(), session=session, from_seq=1, to_seq=2))
            await link.wait_for(lambda: len(link.events) == 8)
            await link.wait_for(lambda: "no longer held" in caplog.text)
        assert link.events[7] == first[1]
        assert f"resend of session {session} events 1 to 2: 1 no longer held" in caplog.text
        assert driver.emitted == 5
        # Asked to say its status (the controller after the broker was away): said again,
        # unchanged but for its time and the ask it answers, with the device gone too.
        said = len(link.statuses)
        ask = StatusCommand(ts=utc_now())
        link.command(ask)
        await link.wait_for(lambda: len(link.statuses) == said + 1)
        again, before = link.statuses[-1], link.statuses[-2]
        assert (again.state, again.session, again.detail) == (before.state, session, before.detail)
        assert again.ts > before.ts
        assert (before.asked, again.asked) == (None, ask.ts)
    finally:
        await stop_task(task)


class FailsAtOnce:
    """A device that answers, then breaks at once (a flaky cable, a firmware crash loop)."""

    def __init__(self, session: DeviceSession) -> None:
        self.connected_at: list[float] = []

    async def connect(self) -> None:
        self.connected_at.append(time.monotonic())

    def session_started(self) -> None:
        return None

    async def serve(self) -> None:
        raise DeviceLost("gone again")

    async def disconnect(self) -> None:
        return None

    async def execute(self, command: DeviceCommand) -> None:
        raise CommandRejected("no commands")


async def test_a_device_failing_right_after_connecting_is_retried_with_growing_delays() -> None:
    link = MemoryLink("dev", log=logging.getLogger("drivers.testdev"))
    driver = Driver(
        "dev",
        "testdev",
        MqttSection(),
        Topics("holdem", "t"),
        DriverOptions(reconnect_max_s=0.8, stable_session_s=5.0),
        FailsAtOnce,
        link=link,
    )
    task = asyncio.create_task(driver.run())
    try:
        await link.wait_for(lambda: len(driver.device.connected_at) >= 5, within=10)
    finally:
        await stop_task(task)
    at = driver.device.connected_at
    gaps = [later - earlier for earlier, later in itertools.pairwise(at)][:4]
    # 0.1, 0.2, 0.4, 0.8 s: doubling up to reconnect_max_s, not a tight loop
    assert [round(g, 1) >= want for g, want in zip(gaps, (0.1, 0.2, 0.4, 0.8), strict=True)] == [True] * 4
    assert [s.session for s in link.statuses if s.state == "online"][:5] == [1, 2, 3, 4, 5]
