"""The journal in a fault: records held in memory (or lost beyond the backlog), probes, outages.

A failed write puts the journal in a fault with the reason. Records are then held, up to
``backlog`` of them; newer ones are lost (their numbers are declared by the ``outage`` record). Every
probe (1 s, doubling while it fails, up to 30 s) reopens the file and writes what is held, the
``outage`` record and an fsync; if all of that works, the fault ends. A fault that comes back within
a minute of the last one's end starts with twice the last probe delay: the status cannot flap.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from controller.journal.core import JournalCore, log
from controller.journal.records import time_text
from controller.journal.state import FLAP_WINDOW_S, Fault, Item, Marker, Outage, Record, reason


class FaultHandling(JournalCore):
    """Entering, holding through and leaving a fault (run by the writer thread)."""

    def _enter_fault(self, reason: str, unwritten: list[Item]) -> None:
        now = time.monotonic()
        if self._fault_ended and now - self._fault_ended < FLAP_WINDOW_S:
            self._probe_delay = min(self._probe_delay * 2, self.options.probe_max_s)
        else:
            self._probe_delay = self.options.probe_first_s
        self._fault = Fault(reason, datetime.now(UTC), reason, probe_at=now + self._probe_delay)
        log.error(
            "journal %s: %s; the table goes on, holding up to %d records in memory",
            self.files.active,
            reason,
            self.options.backlog,
        )
        with self._lock:
            self._fault_reason = reason
            pending = unwritten + list(self._queue)
            self._queue.clear()
            self._changed.notify_all()
        self._hold(pending)
        self._notify()

    def _hold(self, items: list[Item]) -> None:
        """Keep records in memory while the journal is in a fault; beyond ``backlog``, lose them."""
        fault = self._fault
        assert fault is not None
        lost = False
        for item in items:
            if isinstance(item, Marker):
                continue  # a checkpoint needs its place in the file: one is taken afterwards
            if isinstance(item, Outage) or (
                fault.dropping is None and fault.held_records < self.options.backlog
            ):
                fault.held.append(item)
                if isinstance(item, Record):
                    fault.held_records += 1
                    fault.held_through = item.n
                continue
            if fault.dropping is None:
                fault.dropping = [item.n, item.n]
            fault.dropping[1] = item.n
            fault.lost += 1
            lost = True
        with self._lock:
            if lost and fault.dropping is not None:
                span = (fault.dropping[0], fault.dropping[1])
                if self._lost and self._lost[-1][0] == span[0]:
                    self._lost[-1] = span
                else:
                    self._lost.append(span)
            self._held = fault.held_records
            self._held_through = fault.held_through
        self._notify()  # what is held may be acknowledged

    def _recover(self) -> None:
        """Try to write what is held, the outage record and an fsync; end the fault if it all works."""
        fault = self._fault
        assert fault is not None
        with self._lock:
            self._probing = True
        try:
            self._probe(fault)
        finally:
            with self._lock:
                self._probing = False
                # A probe that failed gives back the spans its outage record would have named.
                self._early[:0] = self._early_taken
                self._early_taken = []

    def _probe(self, fault: Fault) -> None:
        # Opened afresh: after an I/O error or a remount the old descriptor may never work again.
        try:
            with self._fd_lock:
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None
                self._fd = self.files.open_active()
                self._size = os.fstat(self._fd).st_size
        except OSError as error:
            self._still_failing(fault, f"cannot open: {reason(error)}")
            return
        # Everything submitted so far is held or lost; the outage record comes right after it, so
        # that the numbers lost are declared by the record that follows them.
        with self._lock:
            pending: list[Item] = list(self._queue)
            self._queue.clear()
        self._hold(pending)
        if fault.dropping is not None or not any(isinstance(i, Outage) for i in fault.held):
            with self._lock:
                n = self._next_n
                self._next_n += 1
            lost = (fault.dropping[0], fault.dropping[1]) if fault.dropping is not None else None
            fault.held.append(Outage(n, fault.since, fault.cause, lost))
            fault.dropping = None
        held: list[Item] = list(fault.held)
        fault.held.clear()
        fault.held_records = 0
        self._fault, self._recovering = None, fault
        fault.rest = []
        written = self._write(held)
        self._recovering = None
        if not written:
            self._fault = fault
            for item in fault.rest:
                if not isinstance(item, Marker):
                    fault.held.append(item)
                    fault.held_records += isinstance(item, Record)
            with self._lock:
                self._held = fault.held_records
            self._still_failing(fault, fault.failure or fault.reason)
            return
        try:
            if self.options.fsync:
                with self._fd_lock:
                    if self._fd is not None:
                        os.fsync(self._fd)
        except OSError as error:
            self._fault = fault
            self._still_failing(fault, f"fsync failed: {reason(error)}")
            return
        self._fault_ended = time.monotonic()
        with self._lock:
            self._fault_reason = None
            self._durable = max(self._durable, self._written)
            self._held = 0
            self._held_through = 0
            self._early_taken = []
            self._held_marker.clear()  # the outage record names them now
            self._changed.notify_all()
            self._sync_work.notify()
        log.warning(
            "journal %s: writable again after an outage since %s (%s): %d records written late, "
            "%d lost",
            self.files.active,
            time_text(fault.since),
            fault.cause,
            fault.late,
            fault.lost,
        )
        self._notify()

    def _still_failing(self, fault: Fault, reason: str) -> None:
        self._probe_delay = min(self._probe_delay * 2, self.options.probe_max_s)
        fault.probe_at = time.monotonic() + self._probe_delay
        if reason != fault.reason:
            log.error("journal %s: still failing: %s", self.files.active, reason)
            fault.reason = reason
            with self._lock:
                self._fault_reason = reason
                self._changed.notify_all()
            self._notify()
