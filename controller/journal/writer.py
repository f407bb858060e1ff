"""The open journal: records handed over by the event loop, written by a thread, fsynced by another.

- :meth:`Journal.submit` (any thread) gives the record its number at once and queues it; it never
  blocks on the disk. The **writer thread** appends queued records to the active segment, chaining
  their hashes, rotating segments; the **syncer** fsyncs what was written (group commit: one
  fsync covers every record written before it, however many) and writes checkpoint files.
- :meth:`Journal.progress` says how far records are written (in the operating system: a crash of
  the process loses none) and durable (fsynced: a power cut loses none), and whether the journal is
  in a fault. The listener given to :meth:`Journal.open` is called (from those threads) whenever
  that changes.
- When a write fails (disk full, read-only, I/O error) the journal is in a **fault** with the
  reason. Records are then held in memory, up to ``backlog`` of them, newer ones are lost. Every
  ``probe`` seconds the writer tries again; once the disk takes the held records and an fsync, it
  writes an ``outage`` record (since, until, reason, how many were late, which were lost) and the
  fault ends. A fault that comes back within a minute of its end waits twice as long before the
  next probe: the status cannot flap.

:class:`Journal` is the public face; it composes parts, each one class in one file that owns its
state and talks to the others through small explicit calls:

- :class:`~controller.journal.submissions.Submissions`: the numbered queue (any thread submits,
  the writer thread takes);
- :class:`~controller.journal.appender.Appender`: the writer thread's appending, hash chain,
  rotation and retention, over the :class:`~controller.journal.segment.ActiveSegment` (the open
  file, fsynced by the syncer);
- :class:`~controller.journal.sync.Syncer`: its own thread, group commit and checkpoint files;
- :class:`~controller.journal.faults.FaultHandling`: the fault, the records held, probes and
  ``outage`` records, with :class:`~controller.journal.held.EarlyAcknowledgements` (what the
  service acknowledged before it was durable);
- :class:`~controller.journal.positions.Positions`: how far it all got (written, durable, fault,
  held, lost), under its own lock: what :meth:`Journal.progress` reads and waiters wait on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from controller.journal.appender import Appender
from controller.journal.faults import FaultHandling
from controller.journal.files import JournalFiles
from controller.journal.held import EarlyAcknowledgements
from controller.journal.positions import Positions
from controller.journal.reader import JournalReader, JournalScan
from controller.journal.records import PublishedWhat, payload_fields, received_body, time_text
from controller.journal.segment import ActiveSegment
from controller.journal.state import (
    CHECKPOINT_MAGIC,
    AppendPosition,
    JournalOptions,
    Marker,
    Progress,
    append_position,
    reason,
)
from controller.journal.submissions import Submissions
from controller.journal.sync import Syncer

__all__ = [
    "CHECKPOINT_MAGIC",
    "AppendPosition",
    "Journal",
    "JournalOptions",
    "Progress",
    "append_position",
    "open_journal",
]

log = logging.getLogger("controller.journal.writer")


def open_journal(files: JournalFiles, options: JournalOptions | None = None) -> Journal:
    """The journal opened after a full read of what it holds (tools and tests; start-up reads
    only the tail after the newest checkpoint, see ``controller.journal.recovery``)."""
    reader = JournalReader(files)
    scan = JournalScan()
    for _ in reader.scan(scan):
        pass
    journal = Journal(files, options)
    journal.open(append_position(reader, scan))
    return journal


class Journal:
    """The journal of one table, open for appending (see the module docstring)."""

    def __init__(self, files: JournalFiles, options: JournalOptions | None = None) -> None:
        self.files = files
        self.options = options or JournalOptions()
        #: The last record time formatted, and its text (:meth:`_time_text`).
        self._last_time: tuple[datetime | None, str] = (None, "")
        self._positions = Positions()
        self._queue = Submissions()
        self._segment = ActiveSegment(files)
        self._early = EarlyAcknowledgements(files.active)
        self._syncer = Syncer(
            files,
            self.options,
            self._segment,
            self._positions,
            submit=self._queue.submit,
            on_error=self._queue.sync_failed,
            on_checkpoint=self._checkpoint_taken,
        )
        self._appender = Appender(
            files,
            self.options,
            self._segment,
            self._positions,
            submit=self._queue.submit,
            checkpoint=self._syncer.checkpoint,
        )
        self._faults = FaultHandling(
            files,
            self.options,
            positions=self._positions,
            queue=self._queue,
            segment=self._segment,
            appender=self._appender,
            syncer=self._syncer,
            early=self._early,
        )
        self._threads: list[threading.Thread] = []

    # ---- opening and closing ---------------------------------------------------------------

    def open(self, position: AppendPosition, listener: Callable[[], None] | None = None) -> None:
        """Start the threads appending after ``position``; a file that cannot be opened is a fault."""
        # A previous run that died during a disk fault had acknowledged records it held in memory:
        # their numbers are declared lost (below) and never used again.
        died_holding = [(a, b) for a, b in self._early.left_by_previous_run() if b >= position.next_n]
        self._early.open()
        next_n = max([position.next_n] + [b + 1 for _, b in died_holding])
        self._queue.start_at(next_n)
        self._positions.start(next_n - 1, listener)
        self._appender.start(position)
        self._segment.start(position.active_first, position.active_size)
        try:
            self._segment.open()
        except OSError as error:
            self._faults.enter(f"cannot open: {reason(error)}", [])
        self._threads = [
            threading.Thread(target=self._guarded, args=(loop,), name=name, daemon=True)
            for loop, name in ((self._writer, "journal-writer"), (self._syncer.run, "journal-sync"))
        ]
        for thread in self._threads:
            thread.start()
        if position.torn_lost is not None and not died_holding:
            # A crash tore the last record: its number is declared lost, never used again.
            now = time_text(datetime.now(UTC))
            first, last = position.torn_lost
            self.submit(
                "outage",
                {
                    "since": now,
                    "until": now,
                    "reason": "the last record was torn by a crash during its write",
                    "late": 0,
                    "lost_from": first,
                    "lost_to": last,
                },
            )
        if died_holding:
            # One outage record for every number missing before it (a torn last record too).
            now = time_text(datetime.now(UTC))
            first_lost = position.torn_lost[0] if position.torn_lost is not None else position.next_n
            self.submit(
                "outage",
                {
                    "since": now,
                    "until": now,
                    "reason": "the controller stopped during a disk fault, holding records in "
                    "memory; the messages of those acknowledged early are lost",
                    "late": 0,
                    "lost_from": first_lost,
                    "lost_to": next_n - 1,
                    "acknowledged_early": [[max(a, first_lost), b] for a, b in died_holding],
                },
            )
            log.error(
                "journal %s: the last run died during a disk fault: records %d to %d are lost, "
                "among them messages it had acknowledged (%s)",
                self.files.active,
                first_lost,
                next_n - 1,
                ", ".join(f"{max(a, first_lost)}-{b}" for a, b in died_holding),
            )
        if not self._faults.active:
            self._appender.expire()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every record submitted so far is written and durable (or the journal is in a
        fault); True if that happened within ``timeout``."""

        def settled() -> bool:
            if not (self._queue.settled() and self._syncer.idle):
                return self._positions.fault is not None
            progress = self.progress()
            return progress.fault is not None or (
                progress.written >= progress.submitted and progress.durable >= progress.written
            )

        return self._positions.wait(settled, timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, stop the threads and close the file."""
        if not self._threads:
            return
        self.flush(timeout)
        self._queue.stop()
        self._syncer.stop()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []
        failed = self._segment.close(fsync=self.options.fsync)
        if failed is not None:
            log.error("journal %s: last fsync failed: %s", self.files.active, reason(failed))
        # A clean stop holds nothing: the file of early acknowledgements is blanked.
        self._early.close(clean=not self._faults.active)
        if self._faults.held_records:
            log.error(
                "journal %s: %d records held in memory are lost at shutdown (their messages were "
                "not acknowledged: the broker delivers them again)",
                self.files.active,
                self._faults.held_records,
            )

    # ---- what the service reads -------------------------------------------------------------

    def progress(self) -> Progress:
        """How far the journal got (a consistent snapshot of its positions)."""
        return self._positions.snapshot(lambda: self._queue.submitted)

    @property
    def fault(self) -> str | None:
        """Why the journal cannot be written, while it cannot."""
        return self._positions.fault

    def wait_written(self, n: int, timeout: float) -> bool:
        """Block the calling thread until record ``n`` is written (or the journal is in a
        fault), at most ``timeout`` seconds; True if it was."""
        return self._positions.wait_written(n, timeout)

    def acknowledged_early(self, n: int, *, extends: bool) -> None:
        """The message of record ``n`` was acknowledged while the record was held in memory
        (``extends``: so was every received record since the last one noted). The next
        ``outage`` record lists these spans."""
        self._early.note(n, extends=extends)

    # ---- submitting ------------------------------------------------------------------------

    def submit(self, kind: str, fields: dict[str, Any]) -> int:
        """Queue a record of ``kind``; return its number (never blocks on the disk)."""
        return self._queue.submit(kind, fields)

    def start(self, session: int, when: datetime, table: str) -> int:
        return self.submit("start", {"session": session, "ts": time_text(when), "table": table})

    def received(self, topic: str, payload: bytes, when: datetime) -> int:
        """Queue a received message; its number is the ``cause`` of what it produces."""
        text = self._time_text(when)
        return self._queue.submit_body(lambda n: received_body(n, topic, payload, text))

    def _time_text(self, when: datetime) -> str:
        """``time_text(when)``, made once for a run of records of the same time: the service
        takes one receive time for all the messages a pass of its intake classifies (about 40
        while a backlog drains), and formatting it was half of the received record's encoding
        on the event loop (1.4 of 2.6 us)."""
        last = self._last_time
        if last[0] is not when:
            last = self._last_time = (when, time_text(when))
        return last[1]

    def rejected(self, topic: str, device: str | None, count: int, error: str, when: datetime) -> int:
        """Queue a report of malformed input (an input of the engine, like a received message)."""
        return self.submit(
            "rejected",
            {"topic": topic, "device": device, "count": count, "error": error, "received": time_text(when)},
        )

    def time(self, now: datetime, when: datetime) -> int:
        """Queue a ``time`` record: event time ``now`` came with no message, by the controller's
        clock at ``when`` (an input of the engine, like a received message)."""
        return self.submit("time", {"now": time_text(now), "received": time_text(when)})

    def sample(self, topic: str, payload: bytes, error: str, when: datetime, *, keep: int) -> int:
        """Queue the first ``keep`` bytes of a malformed payload, for the audit.

        Like every record it is fsynced by the sync thread's group commit, never on the event
        loop: a flood of them costs no fsync of its own (and at most a few per report are kept).
        """
        return self.submit(
            "sample",
            {
                "topic": topic,
                **payload_fields(payload[:keep]),
                "size": len(payload),
                "error": error,
                "received": time_text(when),
            },
        )

    def published(
        self,
        what: PublishedWhat,
        cause: int,
        topic: str,
        payload: bytes,
        *,
        retain: bool,
        when: datetime,
    ) -> int:
        return self.submit(
            "published",
            {
                "what": what,
                "cause": cause,
                "topic": topic,
                **payload_fields(payload),
                "retain": retain,
                "ts": self._time_text(when),
            },
        )

    def checkpoint(self, covers: int, blob: bytes, session: int, when: datetime) -> None:
        """Take a checkpoint (the state after record ``covers``) once what precedes is written."""
        self._queue.mark(Marker(covers, blob, session, when))

    # ---- the writer thread -----------------------------------------------------------------

    def _guarded(self, body: Callable[[], None]) -> None:
        """Run a thread's loop; a bug in it is a fault of the journal, never a silent hang."""
        try:
            body()
        except Exception:
            log.exception("journal %s: %s failed", self.files.active, threading.current_thread().name)
            self._positions.fault_began(f"{threading.current_thread().name} failed (a bug: see the log)")

    def _writer(self) -> None:
        faults = self._faults
        while True:
            batch = self._queue.take(faults.probe_at)
            if batch.sync_error is not None and not faults.active:
                faults.enter(batch.sync_error, [])
            if not faults.active:
                appended = self._appender.append(batch.items)
                if appended.failure is not None:
                    faults.enter(appended.failure, appended.unwritten)
                self._syncer.wake()
            else:
                faults.hold(batch.items)
                if batch.stopping or faults.due():
                    faults.probe()
            finished = self._queue.done()
            if batch.stopping and finished:
                return

    def _checkpoint_taken(self, segment: int) -> None:
        """The syncer wrote a checkpoint whose replay starts in ``segment``: older ones may go."""
        self._appender.keep_from = segment
