"""Every scenario of tests/engine/scenarios, run against the pure core."""

from __future__ import annotations

import pytest

from tests.engine.runner import run
from tests.engine.scenario import ExpectedAlert, Scenario, load_scenarios, messages

SCENARIOS = load_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario(scenario: Scenario) -> None:
    engine, alerts = run(
        messages(scenario), scenario.profile, scenario.table_seats, scenario.action_feed
    )
    got = [str(ExpectedAlert(a.code, a.seat, a.severity, a.status)) for a in alerts]
    assert got == [str(e) for e in scenario.expect], "\n".join(
        f"{a.code} seat={a.seat} {a.severity} {a.status}: {a.message}" for a in alerts
    )
    if scenario.phase is not None:
        assert engine.public_state().phase == scenario.phase
