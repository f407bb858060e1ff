"""``tablectl run`` gives its devices ``[table] startup_grace_s`` to come up (controller/service/grace.py).

At every start a driver says ``offline`` until its device answers, and the broker hands over the
``offline`` the driver left when the service last stopped: without the grace each start raised and
resolved a ``device_offline`` per device, and the lamp command reached the sensor board's driver
before the board had answered (an ERROR in the log). The board here is the simulator behind the
real driver in the service process (``backend = "sim:PATH"``), as in test_devices.py.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from config.writer import render_toml
from contract.models import parse_alert, parse_status
from controller.demo.setup import demo_config
from controller.service.grace import StartupGrace
from simulators.sensors import Lamp, SensorBoardSimulator
from simulators.table import SimulatedTable
from testing.mosquitto import Mosquitto
from tests.service.conftest import StartService
from tests.service.support import Probe, probe, until, write_config

GRACE_OVER = "start-up grace over"


@pytest.fixture
async def board(tmp_path: Path) -> AsyncIterator[SensorBoardSimulator]:
    simulator = SensorBoardSimulator(0x1209, 0x7AB1)
    yield simulator
    await simulator.close()


def _grace(config: Path, seconds: float) -> None:
    text = config.read_text(encoding="utf-8")
    text = text.replace("[table]\n", f"[table]\nstartup_grace_s = {seconds}\n", 1)
    config.write_text(text, encoding="utf-8")


def _device_offline(p: Probe) -> list[str]:
    return [
        f"{alert.status} {alert.device}: {alert.message}"
        for m in p.messages
        if m.topic == p.topics.alerts and (alert := parse_alert(m.topic, m.payload)).code == "device_offline"
    ]


async def test_devices_up_within_the_grace_raise_nothing_and_the_lamp_waits_for_the_board(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService, board: SensorBoardSimulator
) -> None:
    backend = board.serve(tmp_path / "board.sock")
    config = write_config(tmp_path, mosquitto.url, sensors_board=True, board_backend=backend)
    _grace(config, 3.0)
    board_status = "holdem/t1/dev/sensors/status"
    async with probe(mosquitto.port, "t1") as p:
        # Twice: the second start also gets the ``offline`` the driver left retained at the stop.
        for start in (1, 2):
            mark = len(p.messages)
            service = start_service(config)
            await p.status("online", after=mark)
            await p.wait_for(
                lambda m: m.topic == board_status and parse_status(m.topic, m.payload).state == "online",
                after=mark,
            )
            await until(lambda: board.lamp == Lamp("green", False), what="lamp green at start")
            # the positive signal: the grace is over, with no device left offline
            await until(
                lambda s=service, n=start: s.log.count(GRACE_OVER) == n,  # type: ignore[misc]
                within=10,
                what="the grace's end",
            )
            assert f"{GRACE_OVER}: none offline" in service.log
            service.stop()
            assert service.wait() == 0
            await p.wait_for(
                lambda m: m.topic == board_status and parse_status(m.topic, m.payload).state == "offline",
                after=mark,
            )
            # a power cycle puts the lamp out: the next start must light it again
            board.unplug()
            board.replug()
            assert board.lamp == Lamp("off", False)
    # the board did say ``offline`` at each start (the grace had something to hold)...
    offline = [
        m
        for m in p.messages
        if m.topic == board_status and parse_status(m.topic, m.payload).state == "offline"
    ]
    assert len(offline) >= 2
    # ...and yet no alert, and the lamp command was not refused
    assert _device_offline(p) == []
    assert " ERROR " not in service.log, service.log
    assert "held, the device has until the start-up grace ends" in service.log
    assert "Traceback" not in service.log


async def test_a_device_that_never_comes_is_raised_offline_once_after_the_grace(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    # the board's driver runs, but no board answers on its socket
    config = write_config(
        tmp_path, mosquitto.url, sensors_board=True, board_backend=f"sim:{tmp_path / 'nobody.sock'}"
    )
    grace = 2.0
    _grace(config, grace)
    async with probe(mosquitto.port, "t1") as p:
        started = time.monotonic()
        service = start_service(config)
        raised = await p.alert("device_offline")
        # not before the grace ran out (it began after the process started)
        assert time.monotonic() - started >= grace
        assert raised.device == "sensors"
        assert "not being tracked" in raised.message
        await until(lambda: f"{GRACE_OVER}: still offline: sensors" in service.log, what="the grace's end")
        mark = len(p.messages)
        service.stop()
        await p.status("offline", after=mark)
    assert service.wait() == 0
    assert [line.split(":")[0] for line in _device_offline(p)] == ["raised sensors"]
    assert "Traceback" not in service.log


def test_the_grace_holds_only_an_offline_of_a_device_not_yet_heard_from() -> None:
    t0 = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)
    grace = StartupGrace()
    assert not grace.status("rfid", True, "dev/rfid/status", b"off", t0)  # before the start: no grace
    grace.start(t0, 5.0)
    assert grace.status("rfid", True, "dev/rfid/status", b"off-1", t0)
    assert grace.status("rfid", True, "dev/rfid/status", b"off-2", t0 + timedelta(seconds=1))
    assert grace.status("shoe", True, "dev/shoe/status", b"off", t0)
    # the shoe comes up: its offline is dropped; going away again, it is offline for real
    assert not grace.status("shoe", False, "dev/shoe/status", b"on", t0 + timedelta(seconds=2))
    assert not grace.status("shoe", True, "dev/shoe/status", b"off-again", t0 + timedelta(seconds=3))
    assert grace.waiting_for("rfid", t0 + timedelta(seconds=4))
    assert not grace.waiting_for("shoe", t0 + timedelta(seconds=4))
    assert grace.ended(t0 + timedelta(seconds=4.9)) is None
    # at the end, once: the rfid reader's latest offline
    assert grace.ended(t0 + timedelta(seconds=5)) == {"rfid": ("dev/rfid/status", b"off-2")}
    assert grace.ended(t0 + timedelta(seconds=6)) is None
    assert not grace.status("rfid", True, "dev/rfid/status", b"off-3", t0 + timedelta(seconds=6))
    # 0: no grace at all
    grace.start(t0, 0)
    assert not grace.status("rfid", True, "dev/rfid/status", b"off", t0)
    assert grace.ended(t0) is None


def test_an_event_is_a_device_heard_from() -> None:
    t0 = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)
    grace = StartupGrace()
    grace.start(t0, 5.0)
    assert grace.status("reader", True, "dev/reader/status", b"off", t0)
    grace.event("reader")  # it reads tags: up, whatever the broker still held for it
    assert not grace.waiting_for("reader", t0)
    # a new session's offline mid-hand is a device going away: raised at once
    assert not grace.status("reader", True, "dev/reader/status", b"off-2", t0 + timedelta(seconds=1))
    assert grace.ended(t0 + timedelta(seconds=5)) == {}


async def test_a_whole_table_started_twice_raises_nothing(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    """The issue's table: shuffler, RFID reader and sensor board, three simulators behind the
    production drivers inside ``tablectl run``, which is started, stopped and started again."""
    config = demo_config(
        seats=6, profile="roberts", broker_url=mosquitto.url, workdir=tmp_path, table_id="t1"
    )
    # INFO: the grace says when it ends (the demo logs warnings only)
    config = config.model_copy(update={"logging": config.logging.model_copy(update={"level": "INFO"})})
    table = SimulatedTable(config, seed=1)
    config = await table.start()
    try:
        path = tmp_path / "table.toml"
        path.write_text(render_toml(config, "the demo's table on simulators"), encoding="utf-8")
        devices = [d.id for d in config.devices if d.enabled]
        assert len(devices) == 3
        async with probe(mosquitto.port, "t1") as p:
            for start in (1, 2):
                mark = len(p.messages)
                service = start_service(path)
                await p.status("online", after=mark)
                for device in devices:
                    topic = p.topics.device_status(device)
                    await p.wait_for(
                        lambda m, t=topic: (
                            m.topic == t  # type: ignore[misc]
                            and parse_status(m.topic, m.payload).state == "online"
                        ),
                        after=mark,
                    )
                await until(
                    lambda s=service, n=start: s.log.count(GRACE_OVER) == n,  # type: ignore[misc]
                    within=15,
                    what="the grace's end",
                )
                service.stop()
                assert service.wait() == 0
        assert _device_offline(p) == []
        assert service.log.count("held, the device has until the start-up grace ends") >= 3
        assert " ERROR " not in service.log, service.log
        assert "Traceback" not in service.log
    finally:
        await table.close()
