"""``tablectl run`` on the command line: configuration errors, the embedded broker, --replay-only."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from config.loader import load_table
from contract.models import FaultEvent, parse_status
from controller.service.table import TableController
from testing.mosquitto import Mosquitto, free_port
from tests.engine.scenario import initial_statuses
from tests.service.conftest import StartService
from tests.service.support import RUN_COMMAND, new_table, probe, script, until, write_config

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RUN_COMMAND, *args], capture_output=True, text=True, timeout=30, check=False)


def test_a_bad_config_is_one_line_naming_the_place(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1883")
    config.write_text(config.read_text().replace("seats = 9", "seats = 9\nseets = 8"))
    result = _run("--config", str(config))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{config}:4: table.seets: unknown key" in lines[0]
    assert "Traceback" not in result.stderr


async def test_embedded_broker_in_the_service_process(tmp_path: Path, start_service: StartService) -> None:
    port = free_port()
    config = write_config(tmp_path, "embedded")
    service = start_service(config, extra_args=("--embedded-port", str(port)))
    await until(lambda: "online: subscribed" in service.log, what="the service online")
    async with probe(port, "t1") as p:
        online = await p.wait_for(lambda m: m.topic == p.topics.controller_status)
        assert parse_status(online.topic, online.payload).state == "online"
        await p.event("shoe-9", FaultEvent, code="jam", text="jam")
        assert (await p.alert("device_fault")).device == "shoe-9"
    service.stop()
    assert service.wait() == 0
    assert f"embedded broker: drivers on this machine publish to mqtt://127.0.0.1:{port}" in (service.log)
    assert "Traceback" not in service.log


def test_replay_only_prints_the_journal_figures_without_a_broker(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    table_config, registry = load_table(config)
    controller = TableController(table_config, registry)
    controller.recover(T0)
    topics = controller.topics
    lines = ("sit 1 2 3 4", "shuffle A", "shuffle B", "button 1", "blinds", "deal 2 3:up 4")
    messages = initial_statuses() + script(new_table(), *lines)
    for message in messages:
        assert not isinstance(message.payload, str)
        topic = (
            topics.device_status(message.device or "")
            if message.kind == "status"
            else topics.device_event(message.device or "")
        )
        for out in controller.receive(topic, message.payload.to_json(), T0).outgoing:
            controller.published(out, T0)
    controller.close()
    with (tmp_path / "journal.jsonl").open("ab") as file:
        file.write(b'{"kind":"rece')  # and a torn line

    result = _run("--config", str(config), "--replay-only")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert f"{len(messages)} received records, {len(messages)} replayed" in first
    assert "last session 1; hand 1, phase dealing, 1 active alerts" in first
    assert "1 unreadable lines; 0 divergences; 0 unpublished outputs" in first
    assert "journal.jsonl:" in result.stdout
    assert "torn record" in result.stdout


async def test_a_journal_that_cannot_be_opened_does_not_stop_the_table(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    (tmp_path / "blocker").write_text("a file where the journal's directory should be")
    config.write_text(config.read_text().replace('path = "journal.jsonl"', 'path = "blocker/j.jsonl"'))
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        fault = await p.status("fault")
        # (the path to the journal's directory is a file)
        assert fault.detail == f"journal {tmp_path / 'blocker' / 'j.jsonl'}: cannot open: Not a directory"
        alert = await p.alert("journal_fault")
        assert "cannot be written (cannot open: Not a directory)" in alert.message
        # The table goes on from memory. (The status, ``fault`` too, says the service is
        # subscribed: an event published at once is taken. One said before a new session's
        # SUBACK lost it, one run in four.)
        await p.event("shoe-1", FaultEvent, code="jam", text="jam")
        await p.alert("device_fault")
    assert service.running()
    assert "Traceback" not in service.log
