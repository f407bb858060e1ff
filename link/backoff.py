"""Exponential backoff, shared by every reconnect loop (broker and devices)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Backoff:
    """Delays of ``first`` seconds, doubling up to ``ceiling``; ``reset()`` after a success."""

    first: float = 0.1
    ceiling: float = 5.0
    _next: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.ceiling:
            raise ValueError(f"backoff needs 0 < first ({self.first}) <= ceiling ({self.ceiling})")
        self._next = self.first

    def next(self) -> float:
        """The delay before the next attempt (then doubled for the one after)."""
        delay = self._next
        self._next = min(self._next * 2, self.ceiling)
        return delay

    def reset(self) -> None:
        self._next = self.first
