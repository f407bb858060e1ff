"""One journal, one writer; one table, one controller on the broker (issue 20, point 4).

A second ``tablectl run`` on the same journal refuses to start (one line naming the journal and
the holder's pid) instead of appending to the same hash chain; a lock left by a dead process is
taken over; the readers read while the service runs. A second controller of the same table on
the same broker (another journal) refuses instead of taking the first one's client id in turn.
"""

from __future__ import annotations

import asyncio
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from contract.models import FaultEvent, Status, parse_status
from testing.mosquitto import Mosquitto
from tests.engine.scenario import initial_statuses
from tests.service.conftest import StartService
from tests.service.support import TABLECTL, WAIT_S, new_table, probe, script, until, write_config

SETUP = ("sit 1 2 3 4", "shuffle A", "shuffle B", "button 1", "blinds", "new_hand")


def _tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TABLECTL), *args], capture_output=True, text=True, check=False)


async def _run_second(config: Path) -> tuple[int, list[str]]:
    """``tablectl run`` that is expected to refuse: its exit status and its ERROR lines."""
    process = await asyncio.create_subprocess_exec(
        str(TABLECTL), "run", "--config", str(config), stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await asyncio.wait_for(process.communicate(), WAIT_S)
    errors = [line for line in stderr.decode().splitlines() if "ERROR" in line]
    assert process.returncode is not None
    return process.returncode, errors


def _statuses(log: list[tuple[str, bytes]], topic: str) -> list[str]:
    return [parse_status(topic, payload).state for t, payload in log if t == topic]


async def test_a_second_run_on_the_same_journal_refuses_and_a_dead_ones_lock_is_taken_over(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    async with probe(mosquitto.port, "t1") as p:
        first = start_service(config)
        await p.status("online")
        await p.play(initial_statuses() + script(new_table(), *SETUP))

        returncode, refusal = await _run_second(config)
        assert returncode == 1
        assert len(refusal) == 1, refusal
        assert str(tmp_path / "journal.jsonl") in refusal[0]
        assert f"pid {first.process.pid if first.process else 0}" in refusal[0]
        assert first.running()

        # The readers read while it runs, and the chain is whole.
        verify = _tablectl("journal", "verify", "--config", str(config))
        assert verify.returncode == 0, verify.stdout + verify.stderr
        export = _tablectl("journal", "export", "--config", str(config))
        assert export.returncode == 0
        assert '"kind":"received"' in export.stdout.replace(" ", "")
        history = _tablectl("history", "--config", str(config))
        assert history.returncode == 0, history.stderr

        # kill -9 leaves the lock file behind, not the lock: the next run takes it over.
        first.kill()
        mark = len(p.messages)
        start_service(config)
        status = await p.status("online", after=mark)
        assert status.session == 2
    verify = _tablectl("journal", "verify", "--config", str(config))
    assert verify.returncode == 0, verify.stdout


async def test_a_second_controller_of_the_table_on_the_broker_refuses_instead_of_fighting(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first_config = write_config(tmp_path / "a", mosquitto.url)
    second_config = write_config(tmp_path / "b", mosquitto.url)  # the same table, its own journal
    async with probe(mosquitto.port, "t1") as p:
        first = start_service(first_config)
        await p.status("online")
        mark = len(p.messages)

        returncode, refusal = await _run_second(second_config)
        assert returncode == 1
        assert len(refusal) == 1, refusal
        assert "another controller is online" in refusal[0]
        assert first.running()
        # The first kept its connection: it was never kicked off, and still serves.
        event = FaultEvent(seq=1, ts=datetime.now(UTC), code="jam", text="still here")
        await p.publish(p.topics.device_event("shuffler"), event.to_json())
        await p.alert("device_fault", after=mark)
        topic = p.topics.controller_status
        assert _statuses([(m.topic, m.payload) for m in p.messages[mark:]], topic) == []
    await until(lambda: "device_fault" in first.log)
    assert first.log.count("connected to") == 1, first.log


async def test_take_over_starts_in_place_of_a_controller_gone_without_saying_so(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    """A controller that vanished without its will (its PC lost power while the broker kept the
    retained ``online``): ``run`` refuses as for a live one; ``run --take-over`` starts and serves."""
    config = write_config(tmp_path, mosquitto.url)
    async with probe(mosquitto.port, "t1") as p:
        topic = p.topics.controller_status
        stale = Status(state="online", ts=datetime.now(UTC), session=7, instance="5ca1ab1e")
        await p.publish(topic, stale.to_json(), retain=True)
        await p.status("online")  # the probe saw the stale status: the broker holds it

        returncode, refusal = await _run_second(config)
        assert returncode == 1
        assert len(refusal) == 1, refusal
        assert "another controller is online" in refusal[0]
        assert "session 7" in refusal[0]

        mark = len(p.messages)
        service = start_service(config, extra_args=("--take-over",))
        status = await p.status("online", after=mark)
        assert status.instance not in (None, "5ca1ab1e")
        event = FaultEvent(seq=1, ts=datetime.now(UTC), code="jam", text="taken over")
        await p.publish(p.topics.device_event("shuffler"), event.to_json())
        await p.alert("device_fault", after=mark)
        assert service.running()
