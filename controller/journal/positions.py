"""How far the journal got: written, durable, in a fault, held, lost — shared by its parts.

The writer (:mod:`~controller.journal.appender`), the syncer (:mod:`~controller.journal.sync`) and
the fault handling (:mod:`~controller.journal.faults`) each own their state; what the others and
the service need to know of it is reported here, under this object's own lock. Waiters
(:meth:`Positions.wait`) and the service's listener are told of every change; the listener is
called outside the lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from controller.journal.state import Progress

#: A waiter's condition is checked again at least this often.
_RECHECK_S: Final = 0.05


class Positions:
    """The journal's progress, thread-safe (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._written = 0
        self._durable = 0
        self._fault: str | None = None
        self._lost: list[tuple[int, int]] = []
        self._held = 0
        self._held_through = 0
        #: While a probe writes the held records, no message may be acknowledged early (the
        #: outage record it writes names exactly those that were).
        self._probing = False
        self._listener: Callable[[], None] | None = None
        #: Counts the changes told, so that a waiter misses none between two checks.
        self._generation = 0

    def start(self, last: int, listener: Callable[[], None] | None) -> None:
        """Records up to ``last`` are on disk (the journal as opened)."""
        with self._lock:
            self._written = self._durable = last
            self._listener = listener

    # ---- reading --------------------------------------------------------------------------

    def snapshot(self, submitted: Callable[[], int]) -> Progress:
        """A consistent snapshot; ``submitted`` (the queue's count, read under this lock after
        the positions) is never below what they show written."""
        with self._lock:
            return Progress(
                submitted=submitted(),
                written=self._written,
                durable=self._durable,
                fault=self._fault,
                lost=tuple(self._lost),
                held=self._held,
                held_through=(self._held_through if self._fault is not None and not self._probing else 0),
            )

    @property
    def fault(self) -> str | None:
        with self._lock:
            return self._fault

    def to_sync(self) -> int:
        """The newest written record to fsync (0: none, or the journal is in a fault)."""
        with self._lock:
            if self._fault is not None or self._written <= self._durable:
                return 0
            return self._written

    def unsynced(self) -> int:
        """How many records are written and not yet durable (0 during a fault)."""
        with self._lock:
            if self._fault is not None:
                return 0
            return max(0, self._written - self._durable)

    def wait(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``condition`` holds; True if it did within ``timeout``.

        ``condition`` may read other parts (under their own locks), so it is checked without
        this lock held: at every change told here, and every 50 ms besides.
        """
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                generation = self._generation
            if condition():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with self._changed:
                if self._generation == generation:
                    self._changed.wait(min(left, _RECHECK_S))

    def wait_written(self, n: int, timeout: float) -> bool:
        """Block until record ``n`` is written or the journal is in a fault; True if that
        happened within ``timeout`` (the caller's thread sleeps meanwhile, GIL released)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._written < n and self._fault is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    # ---- changes --------------------------------------------------------------------------

    def wrote(self, last: int, *, durable: bool) -> None:
        """Records up to ``last`` are written (``durable``: no fsync is asked for)."""
        with self._lock:
            self._written = max(self._written, last)
            if durable:
                self._durable = self._written
        self._told()

    def synced(self, target: int) -> None:
        """Records up to ``target`` are durable."""
        with self._lock:
            self._durable = max(self._durable, target)
        self._told()

    def all_durable(self) -> None:
        """Everything written is durable (a segment closed with an fsync)."""
        with self._lock:
            self._durable = max(self._durable, self._written)
        self._told()

    def fault_began(self, reason: str) -> None:
        """The journal cannot be written (or its reason changed)."""
        with self._lock:
            self._fault = reason
        self._told()

    def holding(self, held: int, through: int | None = None) -> None:
        """``held`` records are held in memory, the newest ``through`` (None: unchanged)."""
        with self._lock:
            self._held = held
            if through is not None:
                self._held_through = through
        self._told()

    def lost(self, span: tuple[int, int]) -> None:
        """Records of ``span`` are lost (a span with the same first record grows)."""
        with self._lock:
            if self._lost and self._lost[-1][0] == span[0]:
                self._lost[-1] = span
            else:
                self._lost.append(span)
        self._told()

    def probing(self, active: bool) -> None:
        with self._lock:
            self._probing = active
        self._told()

    def fault_ended(self) -> None:
        """Everything held is written and durable: the journal is writable again."""
        with self._lock:
            self._fault = None
            self._durable = max(self._durable, self._written)
            self._held = 0
            self._held_through = 0
        self._told()

    def told(self) -> None:
        """Another part changed what a waiter checks (the syncer finished a checkpoint)."""
        self._told()

    def _told(self) -> None:
        with self._changed:
            self._generation += 1
            self._changed.notify_all()
        listener = self._listener
        if listener is not None:
            listener()
