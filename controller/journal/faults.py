"""The journal in a fault: records held in memory (or lost beyond the backlog), probes, outages.

A failed write puts the journal in a fault with the reason. Records are then held, up to
``backlog`` of them; newer ones are lost (their numbers are declared by the ``outage`` record).
Every probe (1 s, doubling while it fails, up to 30 s) reopens the file and writes what is held,
the ``outage`` record and an fsync; if all of that works, the fault ends. A fault that comes back
within a minute of the last one's end starts with twice the last probe delay: the status cannot
flap.

:class:`FaultHandling` owns the fault's state and runs on the writer thread. It writes through the
:class:`~controller.journal.appender.Appender`, tells the others through
:class:`~controller.journal.positions.Positions` (the fault, what is held and lost), takes the
spans acknowledged early from :class:`~controller.journal.held.EarlyAcknowledgements` for the
outage record, and resumes the :class:`~controller.journal.sync.Syncer` when the fault ends.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from controller.journal.appender import Appender
from controller.journal.files import JournalFiles
from controller.journal.held import EarlyAcknowledgements
from controller.journal.positions import Positions
from controller.journal.records import encode_body, time_text
from controller.journal.segment import ActiveSegment
from controller.journal.state import (
    FLAP_WINDOW_S,
    Fault,
    Item,
    JournalOptions,
    Marker,
    Outage,
    Record,
    reason,
)
from controller.journal.submissions import Submissions
from controller.journal.sync import Syncer

log = logging.getLogger("controller.journal.writer")


class FaultHandling:
    """Entering, holding through and leaving a fault (the writer thread; see the module)."""

    def __init__(
        self,
        files: JournalFiles,
        options: JournalOptions,
        *,
        positions: Positions,
        queue: Submissions,
        segment: ActiveSegment,
        appender: Appender,
        syncer: Syncer,
        early: EarlyAcknowledgements,
    ) -> None:
        self.files = files
        self.options = options
        self.positions = positions
        self.queue = queue
        self.segment = segment
        self.appender = appender
        self.syncer = syncer
        self.early = early
        self._fault: Fault | None = None
        self._probe_delay = options.probe_first_s
        self._fault_ended = 0.0

    @property
    def active(self) -> bool:
        return self._fault is not None

    @property
    def probe_at(self) -> float | None:
        """When the next probe is due (:func:`time.monotonic`), None outside a fault."""
        return self._fault.probe_at if self._fault is not None else None

    @property
    def held_records(self) -> int:
        return self._fault.held_records if self._fault is not None else 0

    def enter(self, cause: str, unwritten: list[Item]) -> None:
        """A write failed (``cause``): hold ``unwritten`` and everything queued."""
        now = time.monotonic()
        if self._fault_ended and now - self._fault_ended < FLAP_WINDOW_S:
            self._probe_delay = min(self._probe_delay * 2, self.options.probe_max_s)
        else:
            self._probe_delay = self.options.probe_first_s
        self._fault = Fault(cause, datetime.now(UTC), cause, probe_at=now + self._probe_delay)
        log.error(
            "journal %s: %s; the table goes on, holding up to %d records in memory",
            self.files.active,
            cause,
            self.options.backlog,
        )
        self.positions.fault_began(cause)
        self.hold(unwritten + self.queue.drain())

    def hold(self, items: list[Item]) -> None:
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
        if lost and fault.dropping is not None:
            self.positions.lost((fault.dropping[0], fault.dropping[1]))
        # (what is held may be acknowledged: the service is told)
        self.positions.holding(fault.held_records, fault.held_through)

    def due(self) -> bool:
        return self._fault is not None and time.monotonic() >= self._fault.probe_at

    def probe(self) -> None:
        """Try to write what is held, the outage record and an fsync; end the fault if it all works."""
        fault = self._fault
        assert fault is not None
        self.positions.probing(True)
        try:
            self._probe(fault)
        finally:
            # A probe that failed gives back the spans its outage record would have named.
            self.early.give_back()
            self.positions.probing(False)

    def _probe(self, fault: Fault) -> None:
        try:
            self.segment.open()
        except OSError as error:
            self._still_failing(fault, f"cannot open: {reason(error)}")
            return
        # Everything submitted so far is held or lost; the outage record comes right after it, so
        # that the numbers lost are declared by the record that follows them.
        self.hold(self.queue.drain())
        if fault.dropping is not None or not any(isinstance(i, Outage) for i in fault.held):
            lost = (fault.dropping[0], fault.dropping[1]) if fault.dropping is not None else None
            fault.held.append(Outage(self.queue.reserve(), fault.since, fault.cause, lost))
            fault.dropping = None
        held: list[Item] = list(fault.held)
        fault.held.clear()
        fault.held_records = 0

        def outage_body(outage: Outage, late: int) -> bytes:
            return self._outage_body(outage, fault.late + late)

        appended = self.appender.append(held, outage_body)
        fault.late += appended.records
        if appended.failure is not None:
            for item in appended.unwritten:
                if not isinstance(item, Marker):
                    fault.held.append(item)
                    fault.held_records += isinstance(item, Record)
            self.positions.holding(fault.held_records)
            self._still_failing(fault, appended.failure)
            return
        try:
            if self.options.fsync:
                self.segment.fsync()
        except OSError as error:
            self._still_failing(fault, f"fsync failed: {reason(error)}")
            return
        self._end(fault)

    def _end(self, fault: Fault) -> None:
        self._fault = None
        self._fault_ended = time.monotonic()
        self.early.written()  # the outage record names them now
        self.positions.fault_ended()
        self.syncer.resume()
        log.warning(
            "journal %s: writable again after an outage since %s (%s): %d records written late, %d lost",
            self.files.active,
            time_text(fault.since),
            fault.cause,
            fault.late,
            fault.lost,
        )

    def _outage_body(self, outage: Outage, late: int) -> bytes:
        fields: dict[str, Any] = {
            "since": time_text(outage.since),
            "until": time_text(datetime.now(UTC)),
            "reason": outage.reason,
            "late": late,
        }
        if outage.lost is not None:
            fields["lost_from"], fields["lost_to"] = outage.lost
        early = self.early.take()
        if early:
            fields["acknowledged_early"] = early
        return encode_body("outage", outage.n, fields)

    def _still_failing(self, fault: Fault, why: str) -> None:
        self._probe_delay = min(self._probe_delay * 2, self.options.probe_max_s)
        fault.probe_at = time.monotonic() + self._probe_delay
        if why != fault.reason:
            log.error("journal %s: still failing: %s", self.files.active, why)
            fault.reason = why
            self.positions.fault_began(why)
