"""The demo's summary: mistakes injected vs alerts raised, precision, recall and alert latency."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile (``fraction`` in 0..1) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass
class Tally:
    """What the runner counted while the dealer played."""

    hands: int = 0
    steps: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    raised: Counter[str] = field(default_factory=Counter)
    detected: Counter[str] = field(default_factory=Counter)  # injected and raised in time
    missed: Counter[str] = field(default_factory=Counter)  # injected, never raised
    unexpected: Counter[str] = field(default_factory=Counter)  # raised, never injected
    other_alerts: Counter[str] = field(default_factory=Counter)  # device codes and the like
    latencies_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Summary:
    """The end-of-demo figures; ``as_json()`` is the one-line machine-readable form."""

    hands: int
    steps: int
    seconds: float
    injected: dict[str, int]
    raised: dict[str, int]
    detected: dict[str, int]
    missed: dict[str, int]
    unexpected: dict[str, int]
    other_alerts: dict[str, int]
    precision: float | None
    recall: float | None
    latency_ms: dict[str, float | None]
    seed: int | None = None
    profile: str | None = None
    broker: str | None = None
    game: str | None = None  # the stakes played, e.g. "no_limit 1/2, rake 5 % cap 3"
    notes: tuple[str, ...] = ()
    journal: str | None = None  # the folder of the journal and its table.toml

    @classmethod
    def from_tally(
        cls,
        tally: Tally,
        *,
        seed: int | None = None,
        profile: str | None = None,
        broker: str | None = None,
        game: str | None = None,
        journal: str | None = None,
    ) -> Summary:
        true_positives = sum(tally.detected.values())
        raised_total = true_positives + sum(tally.unexpected.values())
        injected_total = sum(tally.injected.values())
        lat = tally.latencies_ms
        return cls(
            hands=tally.hands,
            steps=tally.steps,
            seconds=round(tally.seconds, 3),
            injected=dict(sorted(tally.injected.items())),
            raised=dict(sorted(tally.raised.items())),
            detected=dict(sorted(tally.detected.items())),
            missed=dict(sorted(tally.missed.items())),
            unexpected=dict(sorted(tally.unexpected.items())),
            other_alerts=dict(sorted(tally.other_alerts.items())),
            precision=round(true_positives / raised_total, 4) if raised_total else None,
            recall=round(true_positives / injected_total, 4) if injected_total else None,
            latency_ms={
                "count": float(len(lat)),
                "p50": _round(percentile(lat, 0.50)),
                "p99": _round(percentile(lat, 0.99)),
                "max": _round(max(lat) if lat else None),
            },
            seed=seed,
            profile=profile,
            broker=broker,
            game=game,
            notes=tuple(tally.notes),
            journal=journal,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "hands": self.hands,
            "steps": self.steps,
            "seconds": self.seconds,
            "seed": self.seed,
            "profile": self.profile,
            "broker": self.broker,
            "game": self.game,
            "mistakes_injected": sum(self.injected.values()),
            "alerts_raised": sum(self.raised.values()),
            "precision": self.precision,
            "recall": self.recall,
            "latency_ms": self.latency_ms,
            "injected": self.injected,
            "raised": self.raised,
            "detected": self.detected,
            "missed": self.missed,
            "unexpected": self.unexpected,
            "other_alerts": self.other_alerts,
            "notes": list(self.notes),
            "journal": self.journal,
        }

    def as_json(self) -> str:
        """One line of JSON (the last line of ``tablectl demo --json``)."""
        return json.dumps(self.as_dict(), separators=(",", ":"), sort_keys=False)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
