"""A representative set of the engine's scenarios, replayed through the service and mosquitto.

The same YAML scenarios the pure core runs (``tests/engine/scenarios``), published by a test
client on a real broker to the service running in this process; the alerts it publishes are judged
on code, seat, severity and status, in order, exactly as the core's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.models import parse_state
from controller.journal import read_journal
from testing.mosquitto import Mosquitto
from tests.engine.scenario import ExpectedAlert, Scenario, load_scenarios, messages
from tests.service.support import probe, running_service, until, write_config

ALL = load_scenarios()
#: Every sixth scenario of each file: all files, both profiles, clean hands, alerts and remedies.
SAMPLE = [s for f in dict.fromkeys(s.file for s in ALL) for s in [x for x in ALL if x.file == f][::6]]


def test_the_sample_is_representative() -> None:
    assert len(SAMPLE) >= 10
    assert {s.profile for s in SAMPLE} == {"roberts", "tda"}
    assert {s.file for s in SAMPLE} == {s.file for s in ALL}
    assert any(not s.expect for s in SAMPLE)
    assert any(len(s.expect) >= 2 for s in SAMPLE)


@pytest.mark.parametrize("scenario", SAMPLE, ids=[s.id for s in SAMPLE])
async def test_scenario_through_the_service(
    scenario: Scenario, mosquitto_session: Mosquitto, tmp_path: Path
) -> None:
    table = f"sc{SAMPLE.index(scenario)}"
    config = write_config(
        tmp_path,
        mosquitto_session.url,
        table=table,
        seats=scenario.table_seats,
        profile=scenario.profile,
        action_feed=scenario.action_feed,
        fsync=False,
    )
    journal = tmp_path / "journal.jsonl"
    async with probe(mosquitto_session.port, table) as p, running_service(config) as service:
        await p.status("online")
        sent = await p.play(messages(scenario))
        # Everything received and processed, every output published ...
        await until(
            lambda: read_journal(journal).received_count == sent and service.idle,
            what=f"{sent} messages processed",
        )
        published = list(read_journal(journal).published)
        alerts = [r for r in published if r.what == "alert"]
        last_state = [r.payload for r in published if r.what == "state"][-1]
        # ... and delivered back to the test client.
        await until(
            lambda: (
                len(p.alerts()) == len(alerts)
                and any(m.payload == last_state for m in p.messages if m.topic == p.topics.state)
            ),
            what="alerts and the last state delivered",
        )
        got = [str(ExpectedAlert(a.code, a.seat, a.severity, a.status)) for a in p.alerts()]
        assert got == [str(e) for e in scenario.expect]
        if scenario.phase is not None:
            assert parse_state(p.topics.state, last_state).phase == scenario.phase
