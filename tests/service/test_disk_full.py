"""A full disk under ``tablectl run``, mid-session and at start-up (RLIMIT_FSIZE of the process).

No message whose record was lost is acknowledged to the broker (those held in memory are, and
written late), the alerts still go out (from memory), the status says ``fault`` with the reason
until the disk is back, without flapping, and
``journal verify`` shows what the outage cost.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from contract.models import parse_status
from controller.journal import read_journal
from testing.mosquitto import Mosquitto
from testing.script import Message
from tests.engine.scenario import initial_statuses
from tests.service.conftest import StartService
from tests.service.support import (
    TABLECTL,
    Probe,
    new_table,
    probe,
    script,
    until,
    write_config,
)

SETUP = ("sit 1 2 3 4", "shuffle A", "shuffle B", "button 1", "blinds", "new_hand")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TABLECTL), *args], capture_output=True, text=True, check=False)


def _verify(config: Path) -> subprocess.CompletedProcess[str]:
    return _run("journal", "verify", "--config", str(config))


def _payloads(messages: list[Message]) -> list[bytes]:
    out = []
    for message in messages:
        payload = message.payload
        out.append(payload.encode() if isinstance(payload, str) else payload.to_json())
    return out


def _journaled(path: Path) -> list[bytes]:
    return [r.payload for r in read_journal(path).received]


def _statuses(p: Probe) -> list[str]:
    topic = p.topics.controller_status
    return [parse_status(topic, m.payload).state for m in p.messages if m.topic == topic]


async def test_disk_full_mid_session_nothing_acknowledged_unjournaled_alerts_go_on(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    # A small backlog: beyond two records held in memory, records are lost (and declared lost).
    config = write_config(tmp_path, mosquitto.url, journal="backlog = 2\n")
    journal = tmp_path / "journal.jsonl"
    table = new_table()
    before = initial_statuses() + script(table, *SETUP)
    during = script(table, "deal 2 3:up 4")
    after = script(table, "deal 1 2", "deal 3 4:up")
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        await p.play(before)
        await until(lambda: len(_journaled(journal)) == len(before), what="the setup journaled")

        service.limit_file_size(journal.stat().st_size)  # the disk is full
        mark = len(p.messages)
        await p.play(during)
        fault = await p.status("fault", after=mark)
        assert fault.detail == f"journal {journal}: File too large"
        journal_alert = await p.alert("journal_fault", after=mark)
        assert journal_alert.id == "journal"
        exposed = await p.alert("exposed_card", after=mark)  # from memory
        assert exposed.seat == 3
        assert len(_journaled(journal)) == len(before)  # nothing of it could be written

        service.limit_file_size(None)  # the disk is back
        await p.status("online", after=mark)
        await p.alert("journal_fault", status="resolved", after=mark)
        await p.play(after)
        misdeal = await p.alert("misdeal_exposed_multiple", after=mark)
        assert misdeal.hand == exposed.hand
        # One fault, held until the disk was back: no flapping.
        assert _statuses(p) == ["online", "fault", "online"]

    # What the outage cost is in the journal, and verify names it.
    contents = read_journal(journal)
    (outage,) = contents.outages
    assert outage.reason == "File too large"
    # Two records were held and written late, the rest of the outage lost: among them messages
    # received meanwhile (and outputs published from memory).
    assert outage.late == 2
    assert outage.lost >= 1
    journaled = _journaled(journal)
    assert set(_payloads(before + after)) <= set(journaled)
    assert [m for m in _payloads(during) if m not in journaled]
    result = _verify(config)
    assert result.returncode == 2, result.stdout
    assert f"records {outage.lost_from} to {outage.lost_to} LOST" in result.stdout

    # No message whose record was lost was acknowledged: the lost ones are still with the
    # broker, which delivers them to the restarted controller, and now they are journaled.
    service.stop()
    async with probe(mosquitto.port, "t1") as p:
        restarted = start_service(config)
        await p.status("online")
        everything = _payloads(before + during + after)
        await until(lambda: set(everything) <= set(_journaled(journal)), what="every message journaled")
    restarted.stop()
    replay = _run("run", "--config", str(config), "--replay-only")
    assert "1 outages" in replay.stdout
    assert "Traceback" not in service.log + restarted.log


async def test_disk_full_at_start_up_the_table_still_starts_and_alerts(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    journal = tmp_path / "journal.jsonl"
    table = new_table()
    before = initial_statuses() + script(table, *SETUP)
    during = script(table, "deal 2 3:up 4")
    async with probe(mosquitto.port, "t1") as p:
        first = start_service(config)
        await p.status("online")
        await p.play(before)
        await until(lambda: len(_journaled(journal)) == len(before), what="the setup journaled")
        first.stop()

        mark = len(p.messages)
        service = start_service(config, file_size_limit=journal.stat().st_size)
        fault = await p.status("fault", after=mark)
        assert fault.detail == f"journal {journal}: File too large"
        assert fault.session == 2
        await p.alert("journal_fault", after=mark)
        await p.play(during)
        exposed = await p.alert("exposed_card", after=mark)
        assert (exposed.seat, exposed.hand) == (3, 1)  # the hand recovered from the journal
        assert len(_journaled(journal)) == len(before)

        service.limit_file_size(None)
        await p.status("online", after=mark)
        await until(lambda: len(_journaled(journal)) == len(before + during), what="written late")
    service.stop()
    contents = read_journal(journal)
    assert contents.last_session == 2  # the start record was held and written late
    (outage,) = contents.outages
    assert (outage.lost, outage.reason) == (0, "File too large")
    assert outage.late >= len(during) + 1
    result = _verify(config)
    assert result.returncode == 0, result.stdout
    assert "outage:" in result.stdout
    assert "Traceback" not in service.log
