"""Shared fixtures: a private mosquitto broker per test (or per session), the example config."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.mosquitto import Mosquitto, running_mosquitto

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_CONFIG = REPO / "config" / "table.example.toml"
EXAMPLE_REGISTRY = REPO / "config" / "decks.example.csv"


@pytest.fixture(scope="session")
def mosquitto_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    """One private broker shared by the tests of a session (use distinct table ids per test)."""
    with running_mosquitto(tmp_path_factory.mktemp("mosquitto")) as broker:
        yield broker


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A private broker for one test, free to be restarted by it."""
    with running_mosquitto(tmp_path) as broker:
        yield broker
