"""The order the suite's modules are handed to the pytest-xdist workers: the longest first.

``scripts/test`` runs ``--dist loadscope --no-loadscope-reorder``: a module stays on one worker,
and the workers take the modules in collection order, each the next one as it runs low. Left to
itself, xdist orders the modules by their number of tests, which put the longest ones of a single
test (a 60-hand demo, a service killed 20 times) at the end of the queue: one worker ran them
alone for a minute or two after the other had finished. Longest first, the last modules handed out
are short ones and the two workers finish close together.

A module's cost is the time its tests took in a recorded run (``tests/costs.json``, written by
``scripts/test --record-costs tests/costs.json``); a module the file does not know yet is taken
as costly (it goes first: a short one there costs nothing, a long one at the end would).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

COSTS = Path(__file__).resolve().parent.parent / "costs.json"


class Item(Protocol):
    @property
    def nodeid(self) -> str: ...


T = TypeVar("T", bound=Item)


def module_of(nodeid: str) -> str:
    """``tests/demo/test_x.py::test_y[1]`` -> ``tests/demo/test_x.py``."""
    return nodeid.split("::", 1)[0]


def load_costs(path: Path = COSTS) -> dict[str, float]:
    """Seconds per module path; empty when there is no such file."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(module): float(seconds) for module, seconds in data.items()}


def longest_first(items: Sequence[T], costs: dict[str, float]) -> list[T]:
    """The items, modules with the longest first (a module's items together and in their order);
    unknown modules before all known ones, in collection order."""
    unknown = float("inf")
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(module_of(item.nodeid), index)

    def key(item: T) -> tuple[float, int]:
        module = module_of(item.nodeid)
        return (-costs.get(module, unknown), first_seen[module])

    return sorted(items, key=key)  # stable: a module's own order is kept


def module_costs(durations: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Per module, the sum of its test phases' durations (setup, call, teardown), in seconds
    rounded to 0.1, longest first."""
    total: dict[str, float] = defaultdict(float)
    for nodeid, seconds in durations:
        total[module_of(nodeid)] += seconds
    ordered = sorted(total.items(), key=lambda pair: -pair[1])
    return {module: round(seconds, 1) for module, seconds in ordered}


def write_costs(path: Path, durations: Iterable[tuple[str, float]]) -> None:
    path.write_text(json.dumps(module_costs(durations), indent=1) + "\n", encoding="utf-8")
