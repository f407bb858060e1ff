"""Which folder may import which (docs/architecture.md), checked by reading every import.

Layers import downwards only: contract <- config <- link / engine <- drivers <- controller. The
simulators and the demo sit on top of the production code; production code never imports them,
nor the test tooling in ``testing/``. The engine is pure: no I/O, no clock, no randomness, no
logging, so it imports none of the modules that provide them. Inside ``controller/``, subfolders
included, no module imports itself through others (no import circle): a part that needs one
above it takes it through an interface it defines (a ``Protocol``) or a value it is given.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

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
    "simulators": frozenset({"contract", "config", "link", "engine", "drivers"}),
    "testing": frozenset({"contract", "config", "link", "engine", "drivers", "controller", "simulators"}),
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
def test_the_check_reads_imports_inside_functions_too(tmp_path: Path, source: str, allowed: bool) -> None:
    lazy = tmp_path / "lazy.py"
    lazy.write_text(f"def later() -> None:\n    {source}")
    found = {module.split(".")[0] for _, module in imports(lazy)}
    assert ("simulators" not in found) == allowed


def module_name(path: Path, root: Path) -> str:
    """``controller/journal/writer.py`` -> ``controller.journal.writer`` (a package: its folder)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (lazy and type-checking imports too; a
    name imported from a module counts as that module, or as the submodule it names)."""
    paths = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}

    def known(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        targets: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                target = known(name) if name.split(".")[0] == package else None
                if target is not None and target != module:
                    targets.add(target)
        graph[module] = targets
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``graph``: each strongly connected group of two or more modules, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(circles)


def test_no_import_circle_inside_the_controller() -> None:
    graph = import_graph(REPO, "controller")
    assert "controller.journal.writer" in graph  # subfolders are read
    circles = import_circles(graph)
    described = [" -> ".join(f"{m} (imports {sorted(graph[m] & set(c))})" for m in c) for c in circles]
    assert described == []


CIRCLE: Final = {
    "pkg/__init__.py": "",
    "pkg/a.py": "from pkg.sub.b import B\n",
    "pkg/sub/__init__.py": "",
    # type-checking and lazy imports close a circle too
    "pkg/sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
    "pkg/c.py": "def later() -> None:\n    from pkg import d\n",
    "pkg/d.py": "import pkg.c\n",
    "pkg/e.py": "import pkg.a\n",  # imports into a circle, is not in one
}


def test_the_circle_check_finds_circles_across_subfolders(tmp_path: Path) -> None:
    for name, text in CIRCLE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert import_circles(import_graph(tmp_path, "pkg")) == [
        ["pkg.a", "pkg.sub.b"],
        ["pkg.c", "pkg.d"],
    ]
