"""A device's faults: the ones it declares (jam, door open) and bursts of errors (corrupt frames).

Pure bookkeeping, no I/O; the driver base publishes what changes (a ``fault`` event, the status).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable


class ErrorBurst:
    """Counts errors in a sliding window; ``add`` says whether the burst threshold is reached."""

    def __init__(self, threshold: int, window_s: float, clock: Callable[[], float]) -> None:
        self.threshold = threshold
        self.window_s = window_s
        self._clock = clock
        self._times: deque[float] = deque()
        self.total = 0

    def _trim(self, now: float) -> None:
        while self._times and now - self._times[0] > self.window_s:
            self._times.popleft()

    def add(self) -> bool:
        now = self._clock()
        self.total += 1
        self._times.append(now)
        self._trim(now)
        return len(self._times) >= self.threshold

    def active(self) -> bool:
        """True while the window still holds a full burst."""
        self._trim(self._clock())
        return len(self._times) >= self.threshold

    def clear(self) -> None:
        self._times.clear()


class Faults:
    """The active faults of one device session, by code, with the error burst behind some."""

    def __init__(self, burst: ErrorBurst) -> None:
        self.burst = burst
        self.active: dict[str, str] = {}
        self._from_burst: set[str] = set()

    def error(self, code: str) -> str | None:
        """Count one error of ``code``: the fault text when it completes a burst (once)."""
        if self.burst.add() and code not in self.active:
            self._from_burst.add(code)
            return f"{self.burst.threshold} errors within {self.burst.window_s:g} s"
        return None

    def quiet_bursts(self) -> list[str]:
        """Burst faults whose window has gone quiet (to be cleared)."""
        if self._from_burst and not self.burst.active():
            return sorted(self._from_burst)
        return []

    def raise_(self, code: str, text: str) -> bool:
        """Enter fault ``code``; False when it was active already."""
        if code in self.active:
            return False
        self.active[code] = text
        return True

    def clear(self, code: str) -> bool:
        """Leave fault ``code``; False when it was not active."""
        if self.active.pop(code, None) is None:
            return False
        if code in self._from_burst:
            self._from_burst.discard(code)
            self.burst.clear()
        return True

    def reset(self) -> None:
        """A new session starts without faults."""
        self.active.clear()
        self._from_burst.clear()
        self.burst.clear()

    def describe(self) -> str:
        return "; ".join(f"{code}: {text}" for code, text in self.active.items())
