"""The catalogue against the rules it mirrors: ``docs/rules/irregularities.md``: every code of its
tables is in the catalogue with its severity, and every code of the catalogue is in its tables, in
both profiles with a remedy and a rule reference."""

from __future__ import annotations

import random
import re

import pytest

from contract.models import Profile
from engine.catalogue import CATALOGUE, CHIP_CODES, DEALING_CODES, SESSION_CODES
from testing.script import Table, setup_lines
from tests.conftest import REPO
from tests.engine.mistakes import Builder, Hand, exposed_not_burned, premature_flop_burned
from tests.engine.runner import run
from tests.engine.scenario import registry

#: The rules the catalogue mirrors, kept in the project: a copy of the reference rules the
#: project was given (docs/rules/), so that the check runs on any clone.
RULES = REPO / "docs" / "rules" / "irregularities.md"
ROW = re.compile(r"^\| `(?P<code>[a-z_]+)` \|.*\| (?P<severity>[a-z /]+) \|$")
#: Catalogue codes that are not rows of the rules' tables: device health and the contract (named
#: in "Beyond dealing"), ``unknown_chip`` (issue 13: a tag in a chip zone in no registry) and
#: ``hand_after_last`` (named in the text under "The session" table).
NOT_IN_TABLES = {"device_offline", "device_fault", "bad_payload", "unknown_chip", "hand_after_last"}


def rule_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in RULES.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line.strip())
        if match:
            rows[match["code"]] = [s.strip() for s in match["severity"].split("/")]
    return rows


def test_every_code_of_the_rules_is_in_the_catalogue_with_its_severity() -> None:
    rows = rule_rows()
    assert len(rows) >= 38
    for code, severities in rows.items():
        assert code in CATALOGUE, code
        assert CATALOGUE[code].severity in severities, (code, severities)


def test_every_catalogue_code_is_in_the_rules() -> None:
    rows = rule_rows()
    assert set(CATALOGUE) - NOT_IN_TABLES == set(rows)


def test_chip_codes_are_the_rules_chip_table_plus_unknown_chip() -> None:
    text = RULES.read_text(encoding="utf-8")
    chips = text[text.index("## Chips, pots and showdown") : text.index("## The session")]
    table = {m["code"] for m in map(ROW.match, chips.splitlines()) if m}
    assert set(CHIP_CODES) == table | {"unknown_chip"}
    assert not set(CHIP_CODES) & set(DEALING_CODES)


@pytest.mark.parametrize("code", CHIP_CODES)
def test_chip_codes_have_remedy_and_rule_in_both_profiles(code: str) -> None:
    entry = CATALOGUE[code]
    for profile in ("roberts", "tda"):
        assert entry.remedy_for(profile), (code, profile)
        assert entry.rule_for(profile), (code, profile)
        assert not entry.is_misdeal(profile)
    assert entry.severity_for("roberts") == entry.severity_for("tda")


def test_severities_of_the_chip_codes() -> None:
    assert CATALOGUE["pot_awarded_wrong"].severity == "critical"
    assert {c for c in CHIP_CODES if CATALOGUE[c].severity == "info"} == {
        "hole_card_off_table",
        "burn_face_up",
    }
    assert CATALOGUE["unknown_chip"].severity == "warning"
    assert CATALOGUE["unknown_chip"].remedy == (
        "Take the tag off the table: it is not a chip of this table.",
    )


def test_session_codes_are_the_rules_session_table_plus_hand_after_last() -> None:
    text = RULES.read_text(encoding="utf-8")
    session = text[text.index("## The session") :]
    table = {m["code"] for m in map(ROW.match, session.splitlines()) if m}
    assert set(SESSION_CODES) == table | {"hand_after_last"}
    assert "`hand_after_last`" in session
    assert not set(SESSION_CODES) & (set(DEALING_CODES) | set(CHIP_CODES))
    for code in SESSION_CODES:
        for profile in ("roberts", "tda"):
            assert CATALOGUE[code].remedy_for(profile), (code, profile)
            assert "Seed" not in CATALOGUE[code].rule_for(profile), code


#: How a rule line starts: as a dealer names a rule (docs/engine.md, "Rule references").
RULE_FORMS = ("Robert's Rules", "TDA ", "House rule (")
#: What the dealer must never read on a rule line: the project's own shorthands.
NOT_A_RULE = re.compile(r"\bseeds?\b|\bRR\b|See the alert", re.IGNORECASE)


@pytest.mark.parametrize("profile", ["roberts", "tda"])
@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_every_rule_line_names_a_rule_as_a_dealer_would(code: str, profile: Profile) -> None:
    entry = CATALOGUE[code]
    rule = entry.rule_for(profile)
    assert rule.startswith(RULE_FORMS), (code, profile, rule)
    assert not NOT_A_RULE.search(rule), (code, profile, rule)
    # the house rule's source in parentheses, then what it says
    if rule.startswith("House rule ("):
        assert re.match(r"House rule \([a-z ]+\): \S", rule), (code, profile, rule)
    for step in entry.remedy_for(profile):
        assert not NOT_A_RULE.search(step), (code, profile, step)
        assert step[0].isupper() or step.startswith("("), (code, profile, step)
        assert step.endswith((".", ".)")), (code, profile, step)


def test_the_rule_lines_of_the_two_profiles_differ_where_the_rulebooks_do() -> None:
    assert CATALOGUE["misdeal_exposed_early"].rule_for("roberts").startswith("Robert's Rules")
    assert CATALOGUE["misdeal_exposed_early"].rule_for("tda").startswith("TDA 35-A-7")
    # no TDA rule for an exposed card: the profile follows Robert's Rules and says so
    assert "(no TDA rule)" in CATALOGUE["exposed_card"].rule_for("tda")
    # the house's own rules apply under both
    assert CATALOGUE["blinds_missing"].rule_for("tda") == CATALOGUE["blinds_missing"].rule_for("roberts")


@pytest.mark.parametrize("profile", ["roberts", "tda"])
@pytest.mark.parametrize(
    ("builder", "belongs_to"),
    [(exposed_not_burned, "exposed_card"), (premature_flop_burned, "premature_flop")],
)
def test_a_remedy_not_followed_carries_the_rule_of_the_alert_it_belongs_to(
    builder: Builder, belongs_to: str, profile: Profile
) -> None:
    players, button, seats = [2, 4, 5, 7], 4, 9
    table = Table(registry(), table_seats=seats, seed=11)
    hand = Hand(players, button, seats, "A", "B", profile)
    built = builder(random.Random(11), hand)
    assert built is not None
    lines, _ = built
    _, alerts = run(table.run_all([*setup_lines(players, button, ["A", "B"]), *lines]), profile, seats)
    missed = [a for a in alerts if a.code == "remedy_not_followed" and a.status == "raised"]
    assert missed, [(a.code, a.message) for a in alerts]
    for alert in missed:
        assert alert.rule == CATALOGUE[belongs_to].rule_for(profile)
