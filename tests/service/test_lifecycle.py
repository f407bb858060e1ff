"""``tablectl run`` as a real process against a real mosquitto: status, will, signals, reconnects."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from contract.models import FaultEvent, parse_state
from controller.journal import RejectedRecord, SampleRecord, read_journal
from testing.mosquitto import Mosquitto
from tests.service.conftest import StartService
from tests.service.support import probe, write_config


async def test_online_only_once_subscribed(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    async with probe(mosquitto.port, "t1") as p:
        start_service(config)
        status = await p.status("online")
        assert status.session == 1
        # No delay: the service promised it is subscribed.
        await p.event("shuffler-under-test", FaultEvent, code="jam", text="card jam")
        alert = await p.alert("device_fault")
        assert alert.severity in ("warning", "critical")
        assert alert.device in (None, "shuffler-under-test")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_signal_publishes_offline_and_exits_cleanly(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService, sig: int
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        mark = len(p.messages)
        service.signal(sig)
        offline = await p.status("offline", after=mark)
        assert offline.detail == "stopped"
        assert await asyncio.to_thread(service.wait) == 0
    assert "Traceback" not in service.log


async def test_last_will_offline_on_kill_9(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        mark = len(p.messages)
        service.kill()
        will = await p.status("offline", after=mark)
        assert will.detail == "lost"
        assert will.session == 1


async def test_session_grows_by_one_at_every_start(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    sessions = []
    async with probe(mosquitto.port, "t1") as p:
        for stop in ("sigterm", "kill", "sigterm"):
            mark = len(p.messages)
            service = start_service(config)
            sessions.append((await p.status("online", after=mark)).session)
            if stop == "kill":
                service.kill()
            else:
                service.stop()
            await p.status("offline", after=mark)
    assert sessions == [1, 2, 3]
    assert read_journal(tmp_path / "journal.jsonl").last_session == 3


async def test_retained_state_for_a_late_subscriber(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url, seats=6)
    async with probe(mosquitto.port, "t1") as p:
        start_service(config)
        await p.status("online")
    async with probe(mosquitto.port, "t1") as late:
        message = await late.wait_for(lambda m: m.topic == late.topics.state)
        assert message.retain
        state = parse_state(message.topic, message.payload)
        assert [s.seat for s in state.seats] == [1, 2, 3, 4, 5, 6]


async def test_reconnects_after_broker_restart(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    service = start_service(config)
    async with probe(mosquitto.port, "t1") as p:
        await p.status("online")
    await asyncio.to_thread(mosquitto.restart)
    # The broker keeps nothing (persistence off): what follows is what the service republished.
    async with probe(mosquitto.port, "t1") as p:
        online = await p.status("online")
        assert online.session == 1  # same process, same session
        await p.wait_for(lambda m: m.topic == p.topics.state)  # republished
        await p.event("shuffler-7", FaultEvent, code="door_open", text="door open")
        await p.alert("device_fault")
    assert service.running()
    assert "connected to" in service.log


async def test_malformed_payload_is_named_and_the_service_keeps_running(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        bad_topic = p.topics.device_event("rfid-x")
        await p.publish(bad_topic, b'{"type":"tag","seq":"one"')
        alert = await p.alert("bad_payload")
        assert bad_topic in alert.message or alert.device == "rfid-x"
        # Still processing.
        await p.event("shuffler", FaultEvent, code="jam", text="jam")
        await p.alert("device_fault")
    assert service.running()
    assert f"1 malformed message(s) on {bad_topic}" in service.log
    # Malformed input is journaled as a report (replayed) and a sample (for the audit).
    records = read_journal(tmp_path / "journal.jsonl").records
    reports = [r for r in records if isinstance(r, RejectedRecord)]
    samples = [r for r in records if isinstance(r, SampleRecord)]
    assert [(r.topic, r.count) for r in reports] == [(bad_topic, 1)]
    assert [(r.topic, r.payload) for r in samples] == [(bad_topic, b'{"type":"tag","seq":"one"')]
