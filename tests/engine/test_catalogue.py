"""The catalogue against the rules it mirrors: ``docs/rules/irregularities.md``: every code of its
tables is in the catalogue with its severity, and every code of the catalogue is in its tables, in
both profiles with a remedy and a rule reference."""

from __future__ import annotations

import re

import pytest

from engine.catalogue import CATALOGUE, CHIP_CODES, DEALING_CODES, SESSION_CODES
from tests.conftest import REPO

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
    assert CATALOGUE["unknown_chip"].remedy == ("Remove it; it is not a chip of this table.",)


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
