"""Shared fixtures: a private mosquitto broker per test (or per session), the example config;
the modules' order, longest first (tests/support/schedule.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.mosquitto import Mosquitto, running_mosquitto
from tests.support.schedule import load_costs, longest_first, write_costs

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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-costs",
        metavar="PATH",
        default=None,
        help="write each module's test time in this run to PATH (JSON; tests/costs.json: the order of runs)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items[:] = longest_first(items, load_costs())


#: (node id, seconds) of every test phase reported to this process (with xdist: the controller).
_durations: list[tuple[str, float]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _durations.append((report.nodeid, report.duration))


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--record-costs")
    # A worker's own reports also reach the controller, which writes the file.
    if path and not hasattr(session.config, "workerinput"):
        write_costs(Path(path), _durations)
