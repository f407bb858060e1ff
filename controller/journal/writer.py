"""The open journal: records handed over by the event loop, written by a thread, fsynced by another.

- :meth:`Journal.submit` (any thread) gives the record its number at once and queues it; it never
  blocks on the disk. The **writer thread** appends queued records to the active segment, chaining
  their hashes, rotating segments; the **sync thread** fsyncs what was written (group commit: one
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
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from controller.journal.core import log
from controller.journal.faults import FaultHandling
from controller.journal.files import JournalFiles
from controller.journal.reader import JournalReader, JournalScan, Position, last_chained
from controller.journal.records import (
    GENESIS,
    PublishedWhat,
    chained_line,
    encode_body,
    payload_fields,
    received_body,
    time_text,
)
from controller.journal.state import (
    CHECKPOINT_MAGIC,
    FLAP_WINDOW_S,
    AppendPosition,
    Item,
    Job,
    JournalOptions,
    Marker,
    Outage,
    Progress,
    Record,
    append_position,
    reason,
)
from controller.journal.sync import SyncThread

__all__ = [
    "CHECKPOINT_MAGIC",
    "AppendPosition",
    "Journal",
    "JournalOptions",
    "Progress",
    "append_position",
    "open_journal",
]


def open_journal(files: JournalFiles, options: JournalOptions | None = None) -> Journal:
    """The journal opened after a full read of what it holds (tools and tests; start-up reads
    only the tail after the newest checkpoint, see ``controller.recovery``)."""
    reader = JournalReader(files)
    scan = JournalScan()
    for _ in reader.scan(scan):
        pass
    journal = Journal(files, options)
    journal.open(append_position(reader, scan))
    return journal


class Journal(FaultHandling, SyncThread):
    """The journal of one table, open for appending (see the module docstring)."""

    # ---- opening and closing ---------------------------------------------------------------

    def open(self, position: AppendPosition, listener: Callable[[], None] | None = None) -> None:
        """Start the threads appending after ``position``; a file that cannot be opened is a fault."""
        # A previous run that died during a disk fault had acknowledged records it held in memory:
        # their numbers are declared lost (below) and never used again.
        died_holding = [(a, b) for a, b in self._held_marker.read() if b >= position.next_n]
        self._held_marker.open()
        next_n = max([position.next_n] + [b + 1 for _, b in died_holding])
        self._next_n = next_n
        self._written = self._durable = next_n - 1
        self._last_h = position.last_h
        self._torn = position.torn
        self._active_first = position.active_first
        self._size = position.active_size
        self._keep_from = position.keep_from
        self._listener = listener
        if position.active_first is None:
            closed = [s for s in self.files.segments() if s.closed]
            if closed and closed[-1].first is not None:
                self._previous = (closed[-1].first, closed[-1].path.stat().st_size)
        try:
            self._fd = self.files.open_active()
        except OSError as error:
            self._enter_fault(f"cannot open: {reason(error)}", [])
        self._threads = [
            threading.Thread(target=self._guarded, args=(self._writer,), name="journal-writer", daemon=True),
            threading.Thread(target=self._guarded, args=(self._syncer,), name="journal-sync", daemon=True),
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
        if self._fault is None:
            self._expire()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every record submitted so far is written and durable (or the journal is in a
        fault); True if that happened within ``timeout``."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self._fault_reason is not None
                or (
                    not self._queue
                    and not self._jobs
                    and not self._busy
                    and self._written >= self._next_n - 1
                    and self._durable >= self._written
                ),
                timeout,
            )

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, stop the threads and close the file."""
        if not self._threads:
            return
        self.flush(timeout)
        with self._lock:
            self._stopping = True
            self._work.notify_all()
            self._sync_work.notify_all()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []
        with self._fd_lock:
            if self._fd is not None:
                try:
                    if self.options.fsync:
                        os.fsync(self._fd)
                except OSError as error:
                    log.error("journal %s: last fsync failed: %s", self.files.active, reason(error))
                os.close(self._fd)
                self._fd = None
        if self._fault is None:
            self._held_marker.clear()  # a clean stop: nothing held
        self._held_marker.close()
        if self._fault is not None and self._fault.held_records:
            log.error(
                "journal %s: %d records held in memory are lost at shutdown (their messages were "
                "not acknowledged: the broker delivers them again)",
                self.files.active,
                self._fault.held_records,
            )

    # ---- submitting ------------------------------------------------------------------------

    def submit(self, kind: str, fields: dict[str, Any]) -> int:
        """Queue a record of ``kind``; return its number (never blocks on the disk)."""
        return self._submit_body(lambda n: encode_body(kind, n, fields))

    def _submit_body(self, body: Callable[[int], bytes]) -> int:
        """Queue the record ``body(n)`` under the next number ``n``; return ``n``."""
        with self._lock:
            n = self._next_n
            self._next_n += 1
            self._queue.append(Record(n, body(n)))
            if len(self._queue) == 1:
                # The writer takes everything queued once it is woken: one wake-up a batch.
                self._work.notify()
        return n

    def start(self, session: int, when: datetime, table: str) -> int:
        return self.submit("start", {"session": session, "ts": time_text(when), "table": table})

    def received(self, topic: str, payload: bytes, when: datetime) -> int:
        """Queue a received message; its number is the ``cause`` of what it produces."""
        return self._submit_body(lambda n: received_body(n, topic, payload, when))

    def rejected(self, topic: str, device: str | None, count: int, error: str, when: datetime) -> int:
        """Queue a report of malformed input (an input of the engine, like a received message)."""
        return self.submit(
            "rejected",
            {"topic": topic, "device": device, "count": count, "error": error, "received": time_text(when)},
        )

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
                "ts": time_text(when),
            },
        )

    def checkpoint(self, covers: int, blob: bytes, session: int, when: datetime) -> None:
        """Take a checkpoint (the state after record ``covers``) once what precedes is written."""
        with self._lock:
            self._queue.append(Marker(covers, blob, session, when))
            self._work.notify()

    # ---- the writer thread -----------------------------------------------------------------

    def _guarded(self, body: Callable[[], None]) -> None:
        """Run a thread's loop; a bug in it is a fault of the journal, never a silent hang."""
        try:
            body()
        except Exception:
            log.exception("journal %s: %s failed", self.files.active, threading.current_thread().name)
            with self._lock:
                self._fault_reason = f"{threading.current_thread().name} failed (a bug: see the log)"
                self._changed.notify_all()
            self._notify()

    def _writer(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._stopping and self._sync_error is None:
                    if self._fault is None:
                        self._work.wait()
                        continue
                    wait = self._fault.probe_at - time.monotonic()
                    if wait <= 0:
                        break
                    self._work.wait(wait)
                items = list(self._queue)
                self._queue.clear()
                stopping = self._stopping
                sync_error, self._sync_error = self._sync_error, None
            if sync_error is not None and self._fault is None:
                self._enter_fault(sync_error, [])
            if self._fault is None:
                self._write(items)
            else:
                self._hold(items)
                if stopping or time.monotonic() >= self._fault.probe_at:
                    self._recover()
            if stopping:
                with self._lock:
                    if not self._queue:
                        return

    def _write(self, items: list[Item]) -> bool:
        """Append ``items`` in order; on failure enter the fault, holding what is not written."""
        lines: list[tuple[Record | Outage, str, bytes]] = []
        pending = 0
        for index, item in enumerate(items):
            if isinstance(item, Marker):
                if not self._append(lines, items[index:]):
                    return False
                lines, pending = [], 0
                with self._lock:
                    self._jobs.append(Job(item, self._position()))
                    self._sync_work.notify()
                continue
            if isinstance(item, Outage):
                # Its counts include the records written late just before it.
                if not self._append(lines, items[index:]):
                    return False
                lines, pending = [], 0
            body = item.body if isinstance(item, Record) else self._outage_body(item)
            previous = lines[-1][1] if lines else self._last_h
            digest, line = chained_line(previous, body)
            if self._size + pending + len(line) > self.options.segment_bytes and self._size + pending:
                if not self._append(lines, items[index:]):
                    return False
                lines, pending = [], 0
                self._rotate()
                digest, line = chained_line(self._last_h, body)
            lines.append((item, digest, line))
            pending += len(line)
        return self._append(lines, [])

    def _append(self, lines: list[tuple[Record | Outage, str, bytes]], rest: list[Item]) -> bool:
        """Write ``lines`` with one system call; on failure hold the unwritten ones and ``rest``."""
        if not lines:
            return True
        data = (b"\n" if self._torn else b"") + b"".join(line for _, _, line in lines)
        done = 0
        error: OSError | None = None
        try:
            if self._fd is None:
                raise OSError(0, "the journal is not open")
            while done < len(data):
                done += os.write(self._fd, memoryview(data)[done:])
        except OSError as failure:
            error = failure
        self._size += done
        # Which records made it whole; a part of one left in the file is closed by the next write.
        edge = 1 if self._torn else 0
        if done >= edge:
            self._torn = False
        whole = 0
        for _, _, line in lines:
            if edge + len(line) > done:
                break
            edge += len(line)
            whole += 1
        if done > edge:
            self._torn = True
        if whole:
            last, digest, _ = lines[whole - 1]
            self._last_h = digest
            for item, _, _ in lines[:whole]:
                if self._active_first is None:
                    self._active_first = item.n
                if self._recovering is not None and isinstance(item, Record):
                    self._recovering.late += 1
            with self._lock:
                self._written = max(self._written, last.n)
                if not self.options.fsync:
                    self._durable = self._written
                self._sync_work.notify()
                self._changed.notify_all()
            self._notify()
        if error is None:
            return True
        unwritten: list[Item] = [item for item, _, _ in lines[whole:]]
        if self._recovering is not None:
            self._recovering.failure = reason(error)
            self._recovering.rest = unwritten + rest
        else:
            self._enter_fault(reason(error), unwritten + rest)
        return False

    def _position(self) -> Position:
        """Where the records written next begin (for a checkpoint's replay)."""
        if self._active_first is not None:
            return Position(self._active_first, self._size)
        if self._previous is not None:
            return Position(*self._previous)
        return Position(0, 0)

    def _outage_body(self, outage: Outage) -> bytes:
        late = self._recovering.late if self._recovering is not None else 0
        fields: dict[str, Any] = {
            "since": time_text(outage.since),
            "until": time_text(datetime.now(UTC)),
            "reason": outage.reason,
            "late": late,
        }
        if outage.lost is not None:
            fields["lost_from"], fields["lost_to"] = outage.lost
        with self._lock:
            early, self._early = self._early, []
            self._early_taken += early
        if early:
            fields["acknowledged_early"] = early
        return encode_body("outage", outage.n, fields)

    def _rotate(self) -> None:
        """Close the active segment (fsynced, renamed, read-only) and start a new one."""
        first = self._active_first
        if first is None or self._fd is None or time.monotonic() < self._rotate_again:
            return
        try:
            with self._fd_lock:
                if self.options.fsync:
                    os.fsync(self._fd)
                closed = self.files.close_active(first)
                try:
                    fd = self.files.open_active()
                except OSError:
                    os.rename(closed, self.files.active)  # carry on in the old one
                    raise
                os.close(self._fd)
                self._fd = fd
        except OSError as error:
            self._report_once(f"cannot rotate segment: {reason(error)}")
            self._rotate_again = time.monotonic() + FLAP_WINDOW_S
            return
        self._previous = (first, self._size)
        self._active_first = None
        self._size = 0
        with self._lock:
            self._durable = max(self._durable, self._written)
            self._changed.notify_all()
        self._notify()
        log.info("journal %s: segment closed as %s", self.files.active, closed.name)
        self._expire()

    def _expire(self) -> None:
        """Remove closed segments past the retention time, recording it (``retention`` record)."""
        expired = self.files.expired(self.options.retain_days, keep_from=self._keep_from)
        if not expired:
            return
        try:
            through, through_h = last_chained(expired[-1].path) or (0, GENESIS)
            for segment in expired:
                self.files.remove(segment)
        except OSError as error:
            self._report_once(f"cannot remove expired segments: {reason(error)}")
            return
        names = [s.path.name for s in expired]
        log.info("journal %s: retention removed %s", self.files.active, ", ".join(names))
        self.submit(
            "retention",
            {
                "removed": names,
                "through": through,
                "through_h": through_h,
                "ts": time_text(datetime.now(UTC)),
            },
        )
