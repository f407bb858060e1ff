"""The device link against a real mosquitto: events, statuses, the will, reconnects, commands."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import pytest

from config.models import MqttSection
from contract.models import LampCommand, StatusCommand
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import Driver, DriverOptions, stop_task
from link.aiomqtt_adapter import socket_of, tolerate_socket_race
from link.client import make_client
from link.device import DeviceLink
from testing.mosquitto import Mosquitto
from tests.drivers.mqtt_helpers import publish, subscribed
from tests.drivers.queue_device import QueueDevice, queue_driver


def make(url: str, table: str, **options: object) -> tuple[Driver[QueueDevice], Topics]:
    topics = Topics("holdem", table)
    driver = queue_driver(MqttSection(url=url), topics, DriverOptions(**options))  # type: ignore[arg-type]
    return driver, topics


async def until_ready(driver: Driver[QueueDevice]) -> None:
    """Device online and the link subscribed with the current session's will."""
    for _ in range(250):
        if driver.online and driver.broker_ready.is_set():
            return
        await asyncio.sleep(0.02)
    raise TimeoutError("driver not ready")


async def test_events_status_clean_offline_and_sessions_across_restarts(mosquitto: Mosquitto) -> None:
    driver, topics = make(mosquitto.url, "tl1")
    status, events = topics.device_status("dev"), topics.device_event("dev")
    async with subscribed(mosquitto.port, status, events) as got:
        task = asyncio.create_task(driver.run())
        await got.wait_for(lambda: any(s.state == "online" for s in got.statuses(status)))
        driver.device.presses.put_nowait("new_hand")
        driver.device.presses.put_nowait("ack")
        await got.wait_for(lambda: len(got.on(events)) == 2)
        assert [e.seq for e in got.events(events)] == [1, 2]
        first_session = got.statuses(status)[-1].session
        assert got.statuses(status)[-1].seq == 0  # online before its first event
        assert {e.session for e in got.events(events)} == {first_session}
        await stop_task(task)
        await got.wait_for(lambda: got.statuses(status)[-1].state == "offline")
        assert got.statuses(status)[-1].detail == "driver stopped"
        assert got.statuses(status)[-1].session == first_session

    # A process restart continues the numbering from the retained status.
    again, _ = make(mosquitto.url, "tl1")
    async with subscribed(mosquitto.port, status) as got:
        task = asyncio.create_task(again.run())
        await got.wait_for(lambda: any(s.state == "online" for s in got.statuses(status)))
        assert [s.session for s in got.statuses(status) if s.state == "online"] == [first_session + 1]
        await stop_task(task)


async def test_broker_restart_queues_events_and_resubscribes(mosquitto: Mosquitto) -> None:
    driver, topics = make(mosquitto.url, "tl2")
    events, cmd = topics.device_event("dev"), topics.device_cmd("dev")
    task = asyncio.create_task(driver.run())
    try:
        await until_ready(driver)
        # Asked to say its status before the broker goes: its answer names the ask.
        async with subscribed(mosquitto.port, topics.device_status("dev")) as got:
            ask = StatusCommand(ts=utc_now())
            await publish(mosquitto.port, cmd, ask.to_json())
            said = topics.device_status("dev")
            await got.wait_for(lambda: any(s.asked == ask.ts for s in got.statuses(said)))
        await asyncio.to_thread(mosquitto.stop)
        driver.device.presses.put_nowait("new_hand")
        driver.device.presses.put_nowait("ack")
        assert isinstance(driver.link, DeviceLink)
        for _ in range(50):
            if len(driver.link.outbox) >= 2:
                break
            await asyncio.sleep(0.02)
        assert len(driver.link.outbox) >= 2
        await asyncio.to_thread(mosquitto.start)
        async with subscribed(mosquitto.port, events) as got:
            # Produced while the broker was down: they can only come from the outbox.
            await got.wait_for(lambda: len(got.on(events)) == 2, within=10)
            assert [e.seq for e in got.events(events)] == [1, 2]
            await until_ready(driver)
        async with subscribed(mosquitto.port, topics.device_status("dev")) as got:
            # The status said again after the reconnection names the last event before it, and
            # no ask: it is news of the broker, not an answer (engine.sequences).
            await got.wait_for(lambda: bool(got.statuses(topics.device_status("dev"))))
            assert got.statuses(topics.device_status("dev"))[-1].seq == 2
            assert got.statuses(topics.device_status("dev"))[-1].asked is None
            await publish(mosquitto.port, cmd, LampCommand(ts=utc_now(), colour="red").to_json())
            for _ in range(100):
                if driver.device.executed:
                    break
                await asyncio.sleep(0.02)
            assert [c.colour for c in driver.device.executed if isinstance(c, LampCommand)] == ["red"]
    finally:
        await stop_task(task)


async def test_outbox_overflow_drops_events_with_an_error_never_the_status(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "dev.session"
    state.write_text("1\n")
    # Nobody listens on port 9: the broker is down the whole time.
    driver, _ = make("mqtt://127.0.0.1:9", "tl3", state_file=state, outbox_limit=3)
    assert isinstance(driver.link, DeviceLink)
    with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
        task = asyncio.create_task(driver.run())
        for key in ("new_hand", "ack", "misdeal", "exposed", "all_in"):
            driver.device.presses.put_nowait(key)
        for _ in range(100):
            if driver.session.seq == 5:
                break
            await asyncio.sleep(0.02)
        await stop_task(task)
    assert driver.session.number == 2
    assert driver.link.dropped == 2  # the first two events
    assert len(driver.link.outbox) == 4  # three events and the online status
    assert driver.link.outbox.status_pending
    assert sum("outbox full" in r.getMessage() for r in caplog.records) == 2


async def test_every_client_sets_tcp_nodelay_drivers_included(mosquitto: Mosquitto) -> None:
    # Every production client is built by link.client.make_client (tests/test_clients.py);
    # here the options reach the sockets: a plain client, the controller's kind, a driver's.
    plain = make_client(MqttSection(url=mosquitto.url), "nodelay-plain")
    persistent = make_client(MqttSection(url=mosquitto.url), "nodelay-persistent", persistent=True)
    async with plain, persistent:
        for client in (plain, persistent):
            sock = socket_of(client)
            assert sock is not None
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    driver, _ = make(mosquitto.url, "tl4")
    task = asyncio.create_task(driver.run())
    try:
        await until_ready(driver)
        assert isinstance(driver.link, DeviceLink)
        assert driver.link.client is not None
        sock = socket_of(driver.link.client)
        assert sock is not None
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        await stop_task(task)


async def test_the_socket_race_of_a_lost_connection_is_one_warning_not_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """aiomqtt asks the loop to watch its socket through call_soon_threadsafe; when the
    connection is lost first, the loop is asked to watch a closed descriptor (EBADF)."""
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    tolerate_socket_race(loop)
    try:
        closed = socket.socket()
        fd = closed.fileno()
        closed.close()
        caplog.set_level(logging.WARNING)
        loop.call_soon(loop.add_writer, fd, lambda: None)
        await asyncio.sleep(0.01)
        assert [(r.name, r.levelname) for r in caplog.records] == [("link.aiomqtt_adapter", "WARNING")]
        assert "connection lost" in caplog.records[0].getMessage()
        assert caplog.records[0].exc_info is None
        # anything else still goes to the loop's handler, with its traceback
        caplog.clear()

        def broken() -> None:
            raise ValueError("a bug")

        loop.call_soon(broken)
        await asyncio.sleep(0.01)
        assert [(r.name, r.levelname) for r in caplog.records] == [("asyncio", "ERROR")]
        assert caplog.records[0].exc_info is not None
    finally:
        loop.set_exception_handler(previous)


async def test_a_suback_for_a_subscribe_given_up_is_no_error_and_no_traceback(
    mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    """A subscribe cancelled before its SUBACK (a Ctrl-C in the first moments, a time limit on
    a loaded machine): aiomqtt logged the late SUBACK as an error with a traceback. The broker
    answers in order, so the SUBACK of a later subscribe on the same connection comes after it."""
    caplog.set_level(logging.INFO)
    mqtt = MqttSection(url=mosquitto.url)
    async with make_client(mqtt, "given-up") as client:
        given_up = asyncio.create_task(client.subscribe("given/up", qos=1))
        await asyncio.sleep(0)  # its SUBSCRIBE is queued, its SUBACK not read yet
        given_up.cancel()
        await asyncio.gather(given_up, return_exceptions=True)
        await client.subscribe("answered/after", qos=1)
    unexpected = [r for r in caplog.records if "Unexpected message ID" in r.getMessage()]
    assert unexpected == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
