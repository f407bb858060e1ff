"""The journal's queue: records numbered as they are submitted, taken by the writer thread.

Any thread submits (the event loop its records, the syncer a ``checkpoint`` record, the writer a
``retention`` record); the number and the place in the queue are given under one lock, so records
are written in the order of their numbers. The writer thread takes everything queued at once
(:meth:`Submissions.take`), waiting for work, a stop, the syncer's report of a failed fsync, or the
time of the next probe during a fault.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.journal.records import encode_body
from controller.journal.state import Item, Marker, Record


@dataclass(frozen=True, slots=True)
class Batch:
    """What the writer thread took: the items in order, and whether it is to stop."""

    items: list[Item] = field(default_factory=list)
    stopping: bool = False
    #: The syncer's fsync failed (the writer enters a fault), with why.
    sync_error: str | None = None


class Submissions:
    """The numbered queue between the submitters and the writer thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._items: deque[Item] = deque()
        self._next_n = 1
        self._stopping = False
        self._sync_error: str | None = None
        #: The writer holds a batch it took and has not finished with.
        self._in_hand = False

    def start_at(self, next_n: int) -> None:
        with self._lock:
            self._next_n = next_n

    # ---- submitters -----------------------------------------------------------------------

    def submit(self, kind: str, fields: dict[str, Any]) -> int:
        """Queue a record of ``kind``; return its number (never blocks on the disk)."""
        return self.submit_body(lambda n: encode_body(kind, n, fields))

    def submit_body(self, body: Callable[[int], bytes]) -> int:
        """Queue the record ``body(n)`` under the next number ``n``; return ``n``."""
        with self._lock:
            n = self._next_n
            self._next_n += 1
            self._items.append(Record(n, body(n)))
            if len(self._items) == 1:
                # The writer takes everything queued once it is woken: one wake-up a batch.
                self._work.notify()
        return n

    def mark(self, marker: Marker) -> None:
        """Queue a checkpoint, taken once every record submitted before it is written."""
        with self._lock:
            self._items.append(marker)
            if len(self._items) == 1:
                self._work.notify()

    def reserve(self) -> int:
        """A number for a record written out of the queue (a fault's ``outage`` record)."""
        with self._lock:
            n = self._next_n
            self._next_n += 1
        return n

    @property
    def submitted(self) -> int:
        """The number of the last record submitted (or reserved)."""
        with self._lock:
            return self._next_n - 1

    def settled(self) -> bool:
        """Nothing is queued, and the writer holds nothing it took."""
        with self._lock:
            return not self._items and not self._in_hand

    # ---- the writer thread ----------------------------------------------------------------

    def take(self, until: float | None) -> Batch:
        """Everything queued, once there is something, a stop or a sync error, or (``until``,
        a :func:`time.monotonic` time) once that time has come."""
        with self._lock:
            while not self._items and not self._stopping and self._sync_error is None:
                if until is None:
                    self._work.wait()
                    continue
                wait = until - time.monotonic()
                if wait <= 0:
                    break
                self._work.wait(wait)
            batch = Batch(list(self._items), self._stopping, self._sync_error)
            self._items.clear()
            self._sync_error = None
            self._in_hand = True
        return batch

    def done(self) -> bool:
        """The writer finished with its batch; True when it is to stop and nothing is left."""
        with self._lock:
            self._in_hand = False
            return self._stopping and not self._items

    def drain(self) -> list[Item]:
        """Everything queued now (the fault handling holds it)."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items

    def sync_failed(self, reason: str) -> None:
        """The syncer's report: an fsync failed (the writer thread enters a fault)."""
        with self._lock:
            self._sync_error = reason
            self._work.notify()

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._work.notify_all()
