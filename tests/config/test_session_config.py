"""The session's configuration (docs/rules.md, "The session"): blinds between one and two small
blinds, tournament levels that rise, each refusal naming its line; and what the engine gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.errors import ConfigError
from config.loader import load_config
from config.registry import load_registry
from engine.api import EngineSettings
from engine.session import Level
from tests.config.test_config import MINIMAL, write_config

LEVELS = """
[[stakes.levels]]
small_blind = 25
big_blind = 50
minutes = 20

[[stakes.levels]]
small_blind = 50
big_blind = 100
ante = 10
minutes = 20
"""


def _refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, MINIMAL + text))
    return str(caught.value)


def _line_of(text: str, needle: str) -> int:
    """The line of ``needle`` in the configuration ``MINIMAL + text`` (1-based)."""
    lines = (MINIMAL + text).splitlines()
    return max(i for i, line in enumerate(lines, start=1) if needle in line)


@pytest.mark.parametrize(
    ("blinds", "why"),
    [
        ("small_blind = 5\nbig_blind = 2\n", "big_blind 2 is below small_blind 5"),
        ("small_blind = 5\nbig_blind = 11\n", "big_blind 11 is more than twice small_blind 5"),
    ],
)
def test_a_big_blind_out_of_one_to_two_small_blinds_is_refused_at_its_line(
    tmp_path: Path, blinds: str, why: str
) -> None:
    text = "\n[stakes]\n" + blinds
    message = _refusal(tmp_path, text)
    assert why in message
    assert f"table.toml:{_line_of(text, 'big_blind')}: stakes.big_blind: " in message


def test_levels_that_do_not_rise_are_refused_at_the_level(tmp_path: Path) -> None:
    text = (
        "\n[stakes]\nsmall_blind = 25\nbig_blind = 50\n"
        + LEVELS
        + ("\n[[stakes.levels]]\nsmall_blind = 50\nbig_blind = 100\nante = 5\nminutes = 20\n")
    )
    message = _refusal(tmp_path, text)
    assert "level 3 (50/100 ante 5) does not rise above level 2 (50/100 ante 10)" in message
    assert f"table.toml:{_line_of(text, 'big_blind')}: stakes.levels.2.big_blind: " in message


def test_a_level_with_a_big_blind_over_twice_the_small_is_refused(tmp_path: Path) -> None:
    text = "\n[stakes]\n[[stakes.levels]]\nsmall_blind = 10\nbig_blind = 30\nminutes = 15\n"
    assert "big_blind 30 is more than twice small_blind 10" in _refusal(tmp_path, text)


def test_the_engine_gets_the_session_rules(tmp_path: Path) -> None:
    text = MINIMAL.replace("[table]\n", "[table]\nmax_absence_s = 600\n", 1) + (
        "\n[stakes]\nsmall_blind = 25\nbig_blind = 50\nmin_buy_in = 2000\nmax_rebuy = 5000\n" + LEVELS
    )
    config = load_config(write_config(tmp_path, text))
    settings = EngineSettings.from_config(config, load_registry(tmp_path / "decks.csv"))
    rules = settings.session
    assert (rules.min_buy_in, rules.max_rebuy, rules.max_absence_s) == (2000, 5000, 600)
    assert rules.levels == (Level(25, 50, 0, 20), Level(50, 100, 10, 20))
    assert rules.stack_seats == frozenset()  # no antenna covers a stack:N zone


def test_config_check_says_which_session_codes_stay_silent(tmp_path: Path) -> None:
    from config.check import check

    text = MINIMAL.replace("[table]\n", "[table]\nmax_absence_s = 600\n", 1) + (
        "\n[stakes]\nmin_buy_in = 200\n"
    )
    report = check(write_config(tmp_path, text))
    assert report.ok
    assert any("[stakes] min_buy_in set but no antenna covers a stack:N zone" in w for w in report.warnings)
    assert any("max_absence_s is set but no sensors device" in w for w in report.warnings)
    assert "stacks not read (buy-in and rebuy codes silent)" in report.summary
