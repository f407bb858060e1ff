"""Which folder may import which (docs/architecture.md), checked by reading every import.

Layers import downwards only: contract <- config <- link / engine <- drivers <- controller. The
simulators and the demo sit on top of the production code; production code never imports them,
nor the test tooling in ``testing/``. The engine is pure: no I/O, no clock, no randomness, no
logging, so it imports none of the modules that provide them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

#: Layer -> the project packages its modules may import (besides their own).
ALLOWED: dict[str, frozenset[str]] = {
    "contract": frozenset(),
    "config": frozenset({"contract"}),
    "link": frozenset({"contract", "config"}),
    "engine": frozenset({"contract", "config"}),
    "drivers": frozenset({"contract", "config", "link"}),
    "controller": frozenset({"contract", "config", "link", "engine", "drivers"}),
    # The demo runs a whole simulated table: the simulators and the virtual dealer are its parts.
    "controller.demo": frozenset(
        {"contract", "config", "link", "engine", "drivers", "controller", "simulators"}
    ),
    "simulators": frozenset({"contract", "config", "engine", "drivers"}),
    "testing": frozenset(
        {"contract", "config", "link", "engine", "drivers", "controller", "simulators"}
    ),
}
PROJECT = frozenset(
    {"contract", "config", "link", "engine", "drivers", "controller", "simulators", "testing", "tests"}
)
#: Standard modules that would give the engine I/O, time, chance or a log.
IMPURE = frozenset(
    {"asyncio", "logging", "os", "pathlib", "random", "socket", "subprocess", "threading", "time"}
)


def layer_of(path: Path) -> str:
    parts = path.relative_to(REPO).parts
    if parts[:2] == ("controller", "demo"):
        return "controller.demo"
    return parts[0]


def modules() -> Iterator[Path]:
    for top in ALLOWED:
        if "." not in top:
            yield from sorted((REPO / top).rglob("*.py"))


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of every absolute import in ``path``, lazy ones inside functions too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def test_every_layer_imports_only_the_layers_below_it() -> None:
    wrong = []
    for path in modules():
        layer = layer_of(path)
        own = layer.split(".")[0]
        for line, module in imports(path):
            top = module.split(".")[0]
            if top in PROJECT and top != own and top not in ALLOWED[layer]:
                wrong.append(f"{path.relative_to(REPO)}:{line}: {layer} imports {module}")
    assert wrong == []


def test_no_production_code_imports_the_simulators_or_the_test_tooling() -> None:
    production = ("contract", "config", "link", "engine", "drivers", "controller")
    wrong = [
        f"{path.relative_to(REPO)}:{line}: {module}"
        for path in modules()
        if path.relative_to(REPO).parts[0] in production and layer_of(path) != "controller.demo"
        for line, module in imports(path)
        if module.split(".")[0] in {"simulators", "testing", "tests"}
    ]
    assert wrong == []


def test_the_engine_is_pure() -> None:
    wrong = [
        f"{path.relative_to(REPO)}:{line}: {module}"
        for path in sorted((REPO / "engine").rglob("*.py"))
        for line, module in imports(path)
        if module.split(".")[0] in IMPURE
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("source", "allowed"),
    [("from simulators.table import SimulatedTable\n", False), ("import contract.models\n", True)],
)
def test_the_check_reads_imports_inside_functions_too(
    tmp_path: Path, source: str, allowed: bool
) -> None:
    lazy = tmp_path / "lazy.py"
    lazy.write_text(f"def later() -> None:\n    {source}")
    found = {module.split(".")[0] for _, module in imports(lazy)}
    assert ("simulators" not in found) == allowed
