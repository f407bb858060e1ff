"""Start-up from the journal: torn lines survived, sessions counted, the hand resumed after a crash."""

from __future__ import annotations

from pathlib import Path

from controller.journal import read_journal
from tests.service.conftest import StartService
from tests.service.support import probe, until, write_config
from tests.support.mosquitto import Mosquitto


async def test_torn_last_line_is_reported_and_the_service_goes_on(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    journal = tmp_path / "journal.jsonl"
    journal.write_bytes(
        b'{"kind":"start","session":7,"ts":"2026-11-30T01:00:00Z","table":"t1"}\n'
        b'{"kind":"received","n":1,"topic":"holdem/t1/in'  # the crash hit mid-write
    )
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        online = await p.status("online")
        assert online.session == 8
        await p.publish(p.topics.input, b"{}")
        await until(lambda: read_journal(journal).last_received == 1, what="record journaled")
    assert f"{journal}:2: torn record" in service.log
    service.stop()
    contents = read_journal(journal)
    assert len(contents.problems) == 1  # only the torn line; what followed is clean
    received = list(contents.received)
    assert [(r.n, r.topic, r.payload) for r in received] == [(1, p.topics.input, b"{}")]
    assert contents.last_session == 8
