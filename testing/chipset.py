"""Chip registries for tests, the demo and benchmarks: deterministic tag UIDs per denomination."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from config.chips import ChipRegistry

#: Casino denominations in table units, largest first.
DENOMINATIONS: Final = (25_000, 5_000, 1_000, 500, 100, 25, 5, 1)


def chip_uid(value: int, index: int) -> str:
    """A chip tag UID: ``E00C`` + value (8 hex digits) + index (4 hex digits)."""
    return f"E00C{value:08X}{index:04X}"


def chip_registry(per_value: int = 400, values: Iterable[int] = DENOMINATIONS) -> ChipRegistry:
    """``per_value`` chips of each denomination."""
    return ChipRegistry(by_uid={chip_uid(v, i): v for v in values for i in range(per_value)})


def write_chip_registry(path: Path, registry: ChipRegistry) -> Path:
    """The registry as the CSV ``[chips] registry`` names (header ``uid,value``)."""
    lines = ["uid,value", *(f"{uid},{value}" for uid, value in registry.by_uid.items())]
    path.write_text("\n".join(lines) + "\n")
    return path
