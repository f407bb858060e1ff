"""The driver base against a real mosquitto, with a tiny in-memory device written for the test."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from config.models import MqttSection
from contract.models import DeviceCommand, KeyEvent, LampCommand, ShuffleCommand
from contract.topics import Topics
from drivers.base import (
    CommandRejected,
    DeviceLost,
    DeviceUnavailable,
    Driver,
    DriverOptions,
    cancel_and_wait,
    utc_now,
)
from testing.mosquitto import Mosquitto
from tests.drivers.mqtt_helpers import publish, subscribed


class QueueDevice(Driver):
    """A device made of an asyncio queue: put a key name to press it, None to unplug it."""

    kind = "testdev"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.plugged = True
        self.presses: asyncio.Queue[str | None] = asyncio.Queue()
        self.executed: list[DeviceCommand] = []

    async def connect(self) -> None:
        if not self.plugged:
            raise DeviceUnavailable("unplugged")

    async def serve(self) -> None:
        while True:
            key = await self.presses.get()
            if key is None:
                raise DeviceLost("unplugged")
            if key == "corrupt":
                self.report_error("crc_errors", "corrupt frame")
                continue
            self.emit(KeyEvent, key=key)

    async def disconnect(self) -> None:
        return None

    async def execute(self, command: DeviceCommand) -> None:
        if not isinstance(command, LampCommand):
            raise CommandRejected("lamp only")
        self.executed.append(command)


async def until_ready(driver: Driver) -> None:
    """Device online and the broker connection subscribed with the current session's will."""
    for _ in range(250):
        if driver.online and driver.broker_ready.is_set():
            return
        await asyncio.sleep(0.02)
    raise TimeoutError("driver not ready")


def make(broker: Mosquitto, table: str, **options: object) -> tuple[QueueDevice, Topics]:
    topics = Topics("holdem", table)
    driver = QueueDevice(
        "dev", MqttSection(url=broker.url), topics, DriverOptions(**options)  # type: ignore[arg-type]
    )
    return driver, topics


async def test_events_status_session_and_clean_offline(mosquitto: Mosquitto) -> None:
    driver, topics = make(mosquitto, "tb1")
    status, events = topics.device_status("dev"), topics.device_event("dev")
    async with subscribed(mosquitto.port, status, events) as got:
        task = asyncio.create_task(driver.run())
        await got.wait_for(lambda: any(s.state == "online" for s in got.statuses(status)))
        driver.presses.put_nowait("new_hand")
        driver.presses.put_nowait("ack")
        await got.wait_for(lambda: len(got.on(events)) == 2)
        assert [(e.seq, getattr(e, "key", None)) for e in got.events(events)] == [
            (1, "new_hand"),
            (2, "ack"),
        ]
        first_session = got.statuses(status)[-1].session
        # Unplug, replug: offline, then online with the next session; seq starts again.
        driver.plugged = False
        driver.presses.put_nowait(None)
        await got.wait_for(lambda: got.statuses(status)[-1].state == "offline")
        driver.plugged = True
        await got.wait_for(lambda: got.statuses(status)[-1].state == "online", within=5)
        assert got.statuses(status)[-1].session == first_session + 1
        driver.presses.put_nowait("misdeal")
        await got.wait_for(lambda: len(got.on(events)) == 3)
        assert got.events(events)[-1].seq == 1
        await cancel_and_wait(task)
        await got.wait_for(lambda: got.statuses(status)[-1].state == "offline")
        assert got.statuses(status)[-1].detail == "driver stopped"

    # A process restart continues the numbering from the retained status.
    again, _ = make(mosquitto, "tb1")
    async with subscribed(mosquitto.port, status) as got:
        task = asyncio.create_task(again.run())
        await got.wait_for(lambda: any(s.state == "online" for s in got.statuses(status)))
        assert [s.session for s in got.statuses(status) if s.state == "online"] == [
            first_session + 2
        ]
        await cancel_and_wait(task)


async def test_error_burst_raises_fault(mosquitto: Mosquitto) -> None:
    driver, topics = make(mosquitto, "tb2", fault_errors=3, fault_window_s=5.0)
    status, events = topics.device_status("dev"), topics.device_event("dev")
    async with subscribed(mosquitto.port, status, events) as got:
        task = asyncio.create_task(driver.run())
        await got.wait_for(lambda: any(s.state == "online" for s in got.statuses(status)))
        for _ in range(3):
            driver.presses.put_nowait("corrupt")
        await got.wait_for(lambda: got.statuses(status)[-1].state == "fault")
        await got.wait_for(lambda: len(got.on(events)) == 1)
        fault = got.events(events)[0]
        assert fault.type == "fault"
        assert fault.code == "crc_errors"
        await cancel_and_wait(task)


async def test_broker_restart_queues_events_and_resubscribes(mosquitto: Mosquitto) -> None:
    driver, topics = make(mosquitto, "tb3")
    events, cmd = topics.device_event("dev"), topics.device_cmd("dev")
    task = asyncio.create_task(driver.run())
    await until_ready(driver)
    await asyncio.to_thread(mosquitto.stop)
    await asyncio.sleep(0.2)
    driver.presses.put_nowait("new_hand")
    driver.presses.put_nowait("ack")
    await asyncio.sleep(0.2)
    assert driver.outbox_size >= 2
    await asyncio.to_thread(mosquitto.start)
    async with subscribed(mosquitto.port, events) as got:
        # The events were produced before this subscriber existed only if the driver flushed
        # too early; it cannot have: the broker was down. Wait for the flush after reconnection.
        await got.wait_for(lambda: len(got.on(events)) == 2, within=10)
        assert [e.seq for e in got.events(events)] == [1, 2]
        await until_ready(driver)
        await publish(mosquitto.port, cmd, LampCommand(ts=utc_now(), colour="red").to_json())
        await asyncio.sleep(0.3)
        assert [c.colour for c in driver.executed if isinstance(c, LampCommand)] == ["red"]
    await cancel_and_wait(task)


async def test_malformed_and_unsupported_commands_are_logged(
    mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    driver, topics = make(mosquitto, "tb4")
    cmd = topics.device_cmd("dev")
    task = asyncio.create_task(driver.run())
    await until_ready(driver)
    with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
        await publish(mosquitto.port, cmd, b'{"cmd": "lamp", "colour": "purple"}')
        await publish(mosquitto.port, cmd, ShuffleCommand(ts=utc_now()).to_json())
        await asyncio.sleep(0.3)
    messages = [r.getMessage() for r in caplog.records]
    assert any("malformed" in m and cmd in m for m in messages)
    assert any("rejected 'shuffle'" in m and "lamp only" in m for m in messages)
    assert driver.executed == []
    await cancel_and_wait(task)


async def test_state_file_numbers_sessions_without_broker(tmp_path: Path) -> None:
    state = tmp_path / "dev.session"
    state.write_text("41\n")
    topics = Topics("holdem", "tb5")
    # No broker at all on this port: the device still gets a session from the state file.
    driver = QueueDevice(
        "dev", MqttSection(url="mqtt://127.0.0.1:9"), topics, DriverOptions(state_file=state)
    )
    task = asyncio.create_task(driver.run())
    driver.presses.put_nowait("ack")
    for _ in range(50):
        if driver.seq == 1:
            break
        await asyncio.sleep(0.02)
    assert driver.session == 42
    assert driver.outbox_size >= 2  # status + the event wait for the broker
    assert state.read_text().strip() == "42"
    await cancel_and_wait(task)


async def test_outbox_overflow_drops_oldest_with_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "dev.session"
    state.write_text("1\n")
    driver = QueueDevice(
        "dev",
        MqttSection(url="mqtt://127.0.0.1:9"),  # nobody listens: the broker is down
        Topics("holdem", "tb6"),
        DriverOptions(state_file=state, outbox_limit=3),
    )
    with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
        task = asyncio.create_task(driver.run())
        for key in ("new_hand", "ack", "misdeal", "exposed"):
            driver.presses.put_nowait(key)
        for _ in range(50):
            if driver.seq == 4:
                break
            await asyncio.sleep(0.02)
        await cancel_and_wait(task)
    assert driver.outbox_size == 3
    assert driver.dropped_events == 2  # the online status and the first event went first
    assert sum("outbox full" in r.getMessage() for r in caplog.records) == 2
