"""Every scenario of tests/engine/scenarios, run against the pure core."""

from __future__ import annotations

import pytest

from engine.catalogue import CATALOGUE, CHIP_CODES, SESSION_CODES
from tests.engine.game_codes import CASES as GAME_CASES
from tests.engine.runner import run
from tests.engine.scenario import ExpectedAlert, Scenario, load_scenarios, messages
from tests.engine.test_session import raised_by_case

SCENARIOS = load_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario(scenario: Scenario) -> None:
    engine, alerts = run(messages(scenario), scenario.profile, scenario.table_seats, scenario.action_feed)
    got = [str(ExpectedAlert(a.code, a.seat, a.severity, a.status)) for a in alerts]
    assert got == [str(e) for e in scenario.expect], "\n".join(
        f"{a.code} seat={a.seat} {a.severity} {a.status}: {a.message}" for a in alerts
    )
    if scenario.phase is not None:
        assert engine.public_state().phase == scenario.phase


def test_every_catalogue_code_is_raised_by_a_scenario_under_each_profile() -> None:
    raised: dict[str, set[str]] = {"roberts": set(), "tda": set()}
    for scenario in SCENARIOS:
        raised[scenario.profile].update(e.code for e in scenario.expect if e.status == "raised")
    # the chip codes: the scripted hands of tests/engine/test_game_codes.py, under both profiles
    for codes in raised.values():
        codes.update(case.code for case in GAME_CASES)
    # the session's codes: the scripted cases of tests/engine/test_session.py, both profiles
    for profile, codes in raised.items():
        for code in SESSION_CODES:
            codes.update(raised_by_case(code, profile))  # type: ignore[arg-type]
    assert set(CHIP_CODES) <= {case.code for case in GAME_CASES}
    assert set(CATALOGUE) <= raised["roberts"] | raised["tda"]
    # the codes whose handling differs by profile are raised under both
    for code in (
        "misdeal_exposed_early",
        "exposed_card",
        "misdeal_wrong_count",
        "button_misplaced",
        "premature_turn",
        "board_too_many_cards",
        "missing_burn",
        "fouled_deck",
        "board_claim_forfeited",
        "deck_check_failed",
        "extra_burn",
        "premature_river",
    ):
        assert code in raised["roberts"], code
        assert code in raised["tda"], code
    assert len(SCENARIOS) >= 60
