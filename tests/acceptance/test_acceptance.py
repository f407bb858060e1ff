"""Acceptance probes: ``tablectl run`` with a bare config, fed raw contract JSON over mosquitto.

Each scenario gets its own service and table id (services run a few at a time); the alert
changes it publishes are judged on ``code``, ``seat``, ``severity`` and ``status``, in order.
"""

from __future__ import annotations

import dataclasses

import pytest

from testing.mosquitto import Mosquitto
from tests.acceptance.harness import Outcome, run_all
from tests.acceptance.scenarios import (
    COMMON,
    MORE,
    ROBERTS,
    RULES,
    SESSION,
    STYLES,
    TABLED,
    TDA,
)

#: The profile-independent scenarios under both profiles, then each profile's own.
CASES = [
    *COMMON,
    *(dataclasses.replace(s, name=f"tda_{s.name}", profile="tda") for s in COMMON),
    *MORE,
    *STYLES,
    *TABLED,
    *ROBERTS,
    *TDA,
    *RULES,
    SESSION,
]
TABLES = {f"acc{i}": s for i, s in enumerate(CASES)}


@pytest.fixture(scope="module")
def outcomes(mosquitto_session: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    return run_all(TABLES, mosquitto_session.port, tmp_path_factory.mktemp("acceptance"))


def test_names_are_distinct() -> None:
    assert len({s.name for s in CASES}) == len(CASES)


@pytest.mark.parametrize("table", TABLES, ids=[s.name for s in CASES])
def test_scenario(table: str, outcomes: dict[str, Outcome]) -> None:
    scenario, outcome = TABLES[table], outcomes[table]
    assert outcome.lines() == scenario.expect, f"service log:\n{outcome.log[-3000:]}"
    if not scenario.expect:
        assert not [a for a in outcome.alerts if a["severity"] != "info"]
