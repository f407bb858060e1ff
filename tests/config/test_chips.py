"""The chip registry: one-line errors naming the file and line; a tag is a chip or a card."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.chips import load_chips
from config.errors import ConfigError
from tests.engine.scenario import registry


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "chips.csv"
    path.write_text(text)
    return path


def test_a_good_registry_gives_each_chip_its_value(tmp_path: Path) -> None:
    chips = load_chips(_write(tmp_path, "uid,value\nE0070000000001F4,25\ne0070000000001f5,100\n"))
    assert chips.value("E0070000000001F4") == 25
    assert chips.value("E0070000000001F5") == 100
    assert chips.value("E0070000000001F6") is None
    assert len(chips) == 2


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("uid,deck\nE0070000000001F4,25\n", "chips.csv:1: header must be 'uid,value'"),
        ("uid,value\nE0070000000001F4\n", "chips.csv:2: expected 2 columns"),
        ("uid,value\nXYZ,25\n", "chips.csv:2: uid 'XYZ' is not 8 to 20 hex digits"),
        ("uid,value\nE0070000000001F4,2.5\n", "chips.csv:2: value '2.5' is not a whole number"),
        ("uid,value\nE0070000000001F4,0\n", "chips.csv:2: value 0 is not between 1"),
        (
            "uid,value\nE0070000000001F4,5\nE0070000000001F4,5\n",
            "chips.csv:3: uid E0070000000001F4 already used on line 2",
        ),
        ("uid,value\n", "chips.csv: chip registry has no chips"),
    ],
)
def test_a_broken_registry_is_one_clear_error(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_chips(_write(tmp_path, text))
    assert error in str(caught.value)


def test_a_card_of_the_decks_cannot_also_be_a_chip(tmp_path: Path) -> None:
    card = next(iter(registry().by_uid))
    with pytest.raises(ConfigError, match="is also a card of the deck registry"):
        load_chips(_write(tmp_path, f"uid,value\n{card},25\n"), registry())


def test_stakes_with_a_small_blind_above_the_big_blind_are_refused() -> None:
    from pydantic import ValidationError

    from config.models import StakesSection

    assert StakesSection(small_blind=1, big_blind=2).structure == "no_limit"
    with pytest.raises(ValidationError, match="big_blind 2 is below small_blind 5"):
        StakesSection(small_blind=5, big_blind=2)
