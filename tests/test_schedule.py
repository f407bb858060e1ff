"""The suite's module order (tests/support/schedule.py): longest first, modules kept whole."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.schedule import load_costs, longest_first, module_costs, write_costs


@dataclass(frozen=True)
class Node:
    nodeid: str


def ids(items: list[Node]) -> list[str]:
    return [item.nodeid for item in items]


def test_longest_module_first_each_module_whole_and_in_its_own_order() -> None:
    items = [
        Node("tests/a.py::test_1"),
        Node("tests/a.py::test_2"),
        Node("tests/b.py::test_1[x]"),
        Node("tests/b.py::test_1[y]"),
        Node("tests/c.py::TestC::test_1"),
    ]
    costs = {"tests/a.py": 1.0, "tests/b.py": 50.0, "tests/c.py": 3.0}
    assert ids(longest_first(items, costs)) == [
        "tests/b.py::test_1[x]",
        "tests/b.py::test_1[y]",
        "tests/c.py::TestC::test_1",
        "tests/a.py::test_1",
        "tests/a.py::test_2",
    ]


def test_a_module_of_unknown_cost_goes_before_the_known_ones() -> None:
    items = [Node("tests/a.py::t"), Node("tests/new.py::t"), Node("tests/newer.py::t")]
    assert ids(longest_first(items, {"tests/a.py": 99.0})) == [
        "tests/new.py::t",
        "tests/newer.py::t",
        "tests/a.py::t",
    ]


def test_costs_are_the_sums_of_every_phase_per_module_written_and_read_back(tmp_path: Path) -> None:
    durations = [
        ("tests/a.py::t", 0.5),  # setup
        ("tests/a.py::t", 2.0),  # call
        ("tests/a.py::t", 0.04),  # teardown
        ("tests/b.py::t[1]", 9.0),
    ]
    assert module_costs(durations) == {"tests/b.py": 9.0, "tests/a.py": 2.5}
    path = tmp_path / "costs.json"
    write_costs(path, durations)
    assert load_costs(path) == {"tests/b.py": 9.0, "tests/a.py": 2.5}
    assert load_costs(tmp_path / "none.json") == {}
