"""The open journal: records handed over by the event loop, written by a thread, fsynced by another.

This module is over 450 lines because the writer's fault handling (backlog, outage records, probes)
and its two threads share one piece of state; split, each half would have to expose its locks.

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

import hashlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from controller.journal.files import JournalFiles
from controller.journal.reader import JournalReader, JournalScan, Position, last_chained
from controller.journal.records import (
    GENESIS,
    PublishedWhat,
    chained_line,
    encode_body,
    payload_fields,
    time_text,
)

log = logging.getLogger(__name__)

#: The first bytes of a checkpoint file (then a zlib-compressed pickle, see controller.checkpoint).
CHECKPOINT_MAGIC: Final = b"tablectl-checkpoint-1\n"
#: A fault that comes back this soon after the last one ended doubles the wait before probing.
_FLAP_WINDOW_S: Final = 60.0


@dataclass(frozen=True)
class JournalOptions:
    """How the journal writes (from ``[journal]``)."""

    fsync: bool = True
    segment_bytes: int = 64 << 20
    backlog: int = 100_000
    retain_days: float = 0.0
    keep_checkpoints: int = 3
    probe_first_s: float = 1.0
    probe_max_s: float = 30.0
    #: Testing only: sleep this long before every fsync (a slow disk for benchmarks).
    fsync_delay_s: float = 0.0


@dataclass(frozen=True)
class AppendPosition:
    """Where appending continues, as start-up found the journal."""

    next_n: int = 1
    last_h: str = GENESIS
    #: The active segment ends in a torn line: the next write starts a fresh line.
    torn: bool = False
    active_first: int | None = None
    active_size: int = 0
    #: Where the newest checkpoint's replay starts (segments from there on are kept).
    keep_from: int | None = None
    #: Numbers of records torn by a crash at the end (declared lost by an outage record at open).
    torn_lost: tuple[int, int] | None = None


def append_position(
    reader: JournalReader, scan: JournalScan, *, covers: int = 0, keep_from: int | None = None
) -> AppendPosition:
    """Where appending continues after a ``scan`` that read to the end of the journal.

    Numbers go on after the largest seen, a torn record's included: a number is never used twice.
    """
    active_first = scan.active_first
    if active_first is None and scan.active_size:
        active_first = reader.first_number(reader.files.active)
    last = max(scan.last_n, covers)
    torn_lost = (last + 1, scan.unreadable_n) if scan.torn_tail and scan.unreadable_n > last else None
    return AppendPosition(
        next_n=max(last, scan.unreadable_n) + 1,
        last_h=scan.last_h,
        torn=scan.torn_tail,
        active_first=active_first,
        active_size=scan.active_size,
        keep_from=keep_from,
        torn_lost=torn_lost,
    )


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


@dataclass(frozen=True)
class Progress:
    """How far the journal got (a consistent snapshot)."""

    submitted: int
    written: int
    durable: int
    fault: str | None
    lost: tuple[tuple[int, int], ...]
    held: int

    def is_lost(self, n: int) -> bool:
        return any(a <= n <= b for a, b in self.lost)

    def acknowledgeable(self, n: int) -> bool:
        """The record ``n`` is durable: the message it holds may be acknowledged."""
        return n <= self.durable and not self.is_lost(n)


@dataclass(slots=True)
class _Record:
    n: int
    body: bytes


@dataclass(slots=True)
class _Outage:
    """The ``outage`` record of a fault, filled in when it is written."""

    n: int
    since: datetime
    reason: str
    lost: tuple[int, int] | None


@dataclass(slots=True)
class _Marker:
    """A checkpoint to take once every record submitted before it is written."""

    covers: int
    blob: bytes
    session: int
    ts: datetime


@dataclass(slots=True)
class _Job:
    marker: _Marker
    position: Position


_Item = _Record | _Outage | _Marker


@dataclass
class _Fault:
    reason: str
    since: datetime
    #: What started it (the status shows ``reason``, the latest; the outage record this).
    cause: str = ""
    held: deque[_Record | _Outage] = field(default_factory=deque)
    held_records: int = 0
    late: int = 0
    dropping: list[int] | None = None  # [first, last] lost since the last outage placeholder
    lost: int = 0
    probe_at: float = 0.0
    #: While a probe writes: why its write failed, and what it could not write.
    failure: str | None = None
    rest: list[_Item] = field(default_factory=list)


def _reason(error: OSError) -> str:
    return str(error.strerror or error)


class Journal:
    """The journal of one table, open for appending (see the module docstring)."""

    def __init__(self, files: JournalFiles, options: JournalOptions | None = None) -> None:
        self.files = files
        self.options = options or JournalOptions()
        # One lock; the writer, the sync thread and waiters each have their condition.
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._sync_work = threading.Condition(self._lock)
        self._changed = threading.Condition(self._lock)
        self._queue: deque[_Item] = deque()
        self._jobs: deque[_Job] = deque()
        self._next_n = 1
        self._written = 0
        self._durable = 0
        self._fault_reason: str | None = None
        self._lost: list[tuple[int, int]] = []
        self._held = 0
        self._busy = False  # the sync thread is writing a checkpoint
        self._sync_error: str | None = None
        self._stopping = False
        self._listener: Callable[[], None] | None = None
        self._threads: list[threading.Thread] = []
        # The writer thread's own state.
        self._fd: int | None = None
        self._fd_lock = threading.Lock()
        self._size = 0
        self._active_first: int | None = None
        self._previous: tuple[int, int] | None = None  # (first, size) of the last closed segment
        self._last_h = GENESIS
        self._torn = False
        self._fault: _Fault | None = None
        self._recovering: _Fault | None = None
        self._probe_delay = self.options.probe_first_s
        self._fault_ended = 0.0
        self._rotate_again = 0.0
        self._keep_from: int | None = None
        self._reported: set[str] = set()

    # ---- opening and closing ---------------------------------------------------------------

    def open(self, position: AppendPosition, listener: Callable[[], None] | None = None) -> None:
        """Start the threads appending after ``position``; a file that cannot be opened is a fault."""
        self._next_n = position.next_n
        self._written = self._durable = position.next_n - 1
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
            self._enter_fault(f"cannot open: {_reason(error)}", [])
        self._threads = [
            threading.Thread(target=self._guarded, args=(self._writer,), name="journal-writer", daemon=True),
            threading.Thread(target=self._guarded, args=(self._syncer,), name="journal-sync", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        if position.torn_lost is not None:
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
                    log.error("journal %s: last fsync failed: %s", self.files.active, _reason(error))
                os.close(self._fd)
                self._fd = None
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
        with self._lock:
            n = self._next_n
            self._next_n += 1
            self._queue.append(_Record(n, encode_body(kind, n, fields)))
            self._work.notify()
        return n

    def start(self, session: int, when: datetime, table: str) -> int:
        return self.submit("start", {"session": session, "ts": time_text(when), "table": table})

    def received(self, topic: str, payload: bytes, when: datetime) -> int:
        """Queue a received message; its number is the ``cause`` of what it produces."""
        return self.submit(
            "received", {"topic": topic, **payload_fields(payload), "received": time_text(when)}
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
            self._queue.append(_Marker(covers, blob, session, when))
            self._work.notify()

    def progress(self) -> Progress:
        with self._lock:
            return Progress(
                submitted=self._next_n - 1,
                written=self._written,
                durable=self._durable,
                fault=self._fault_reason,
                lost=tuple(self._lost),
                held=self._held,
            )

    @property
    def fault(self) -> str | None:
        with self._lock:
            return self._fault_reason

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

    def _notify(self) -> None:
        if self._listener is not None:
            self._listener()

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

    def _write(self, items: list[_Item]) -> bool:
        """Append ``items`` in order; on failure enter the fault, holding what is not written."""
        lines: list[tuple[_Record | _Outage, str, bytes]] = []
        pending = 0
        for index, item in enumerate(items):
            if isinstance(item, _Marker):
                if not self._append(lines, items[index:]):
                    return False
                lines, pending = [], 0
                with self._lock:
                    self._jobs.append(_Job(item, self._position()))
                    self._sync_work.notify()
                continue
            if isinstance(item, _Outage):
                # Its counts include the records written late just before it.
                if not self._append(lines, items[index:]):
                    return False
                lines, pending = [], 0
            body = item.body if isinstance(item, _Record) else self._outage_body(item)
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

    def _append(self, lines: list[tuple[_Record | _Outage, str, bytes]], rest: list[_Item]) -> bool:
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
                if self._recovering is not None and isinstance(item, _Record):
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
        unwritten: list[_Item] = [item for item, _, _ in lines[whole:]]
        if self._recovering is not None:
            self._recovering.failure = _reason(error)
            self._recovering.rest = unwritten + rest
        else:
            self._enter_fault(_reason(error), unwritten + rest)
        return False

    def _position(self) -> Position:
        """Where the records written next begin (for a checkpoint's replay)."""
        if self._active_first is not None:
            return Position(self._active_first, self._size)
        if self._previous is not None:
            return Position(*self._previous)
        return Position(0, 0)

    def _outage_body(self, outage: _Outage) -> bytes:
        late = self._recovering.late if self._recovering is not None else 0
        fields: dict[str, Any] = {
            "since": time_text(outage.since),
            "until": time_text(datetime.now(UTC)),
            "reason": outage.reason,
            "late": late,
        }
        if outage.lost is not None:
            fields["lost_from"], fields["lost_to"] = outage.lost
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
            self._report_once(f"cannot rotate segment: {_reason(error)}")
            self._rotate_again = time.monotonic() + _FLAP_WINDOW_S
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
            self._report_once(f"cannot remove expired segments: {_reason(error)}")
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

    def _report_once(self, problem: str) -> None:
        if problem not in self._reported:
            self._reported.add(problem)
            log.error("journal %s: %s", self.files.active, problem)

    # ---- faults ----------------------------------------------------------------------------

    def _enter_fault(self, reason: str, unwritten: list[_Item]) -> None:
        now = time.monotonic()
        if self._fault_ended and now - self._fault_ended < _FLAP_WINDOW_S:
            self._probe_delay = min(self._probe_delay * 2, self.options.probe_max_s)
        else:
            self._probe_delay = self.options.probe_first_s
        self._fault = _Fault(reason, datetime.now(UTC), reason, probe_at=now + self._probe_delay)
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

    def _hold(self, items: list[_Item]) -> None:
        """Keep records in memory while the journal is in a fault; beyond ``backlog``, lose them."""
        fault = self._fault
        assert fault is not None
        lost = False
        for item in items:
            if isinstance(item, _Marker):
                continue  # a checkpoint needs its place in the file: one is taken afterwards
            if isinstance(item, _Outage) or (
                fault.dropping is None and fault.held_records < self.options.backlog
            ):
                fault.held.append(item)
                fault.held_records += isinstance(item, _Record)
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

    def _recover(self) -> None:
        """Try to write what is held, the outage record and an fsync; end the fault if it all works."""
        fault = self._fault
        assert fault is not None
        # Opened afresh: after an I/O error or a remount the old descriptor may never work again.
        try:
            with self._fd_lock:
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None
                self._fd = self.files.open_active()
                self._size = os.fstat(self._fd).st_size
        except OSError as error:
            self._still_failing(fault, f"cannot open: {_reason(error)}")
            return
        # Everything submitted so far is held or lost; the outage record comes right after it, so
        # that the numbers lost are declared by the record that follows them.
        with self._lock:
            pending: list[_Item] = list(self._queue)
            self._queue.clear()
        self._hold(pending)
        if fault.dropping is not None or not any(isinstance(i, _Outage) for i in fault.held):
            with self._lock:
                n = self._next_n
                self._next_n += 1
            lost = (fault.dropping[0], fault.dropping[1]) if fault.dropping is not None else None
            fault.held.append(_Outage(n, fault.since, fault.cause, lost))
            fault.dropping = None
        held: list[_Item] = list(fault.held)
        fault.held.clear()
        fault.held_records = 0
        self._fault, self._recovering = None, fault
        fault.rest = []
        written = self._write(held)
        self._recovering = None
        if not written:
            self._fault = fault
            for item in fault.rest:
                if not isinstance(item, _Marker):
                    fault.held.append(item)
                    fault.held_records += isinstance(item, _Record)
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
            self._still_failing(fault, f"fsync failed: {_reason(error)}")
            return
        self._fault_ended = time.monotonic()
        with self._lock:
            self._fault_reason = None
            self._durable = max(self._durable, self._written)
            self._held = 0
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

    def _still_failing(self, fault: _Fault, reason: str) -> None:
        self._probe_delay = min(self._probe_delay * 2, self.options.probe_max_s)
        fault.probe_at = time.monotonic() + self._probe_delay
        if reason != fault.reason:
            log.error("journal %s: still failing: %s", self.files.active, reason)
            fault.reason = reason
            with self._lock:
                self._fault_reason = reason
                self._changed.notify_all()
            self._notify()

    # ---- the sync thread -------------------------------------------------------------------

    def _syncer(self) -> None:
        while True:
            with self._lock:
                self._sync_work.wait_for(
                    lambda: self._stopping
                    or bool(self._jobs)
                    or (
                        self.options.fsync
                        and self._written > self._durable
                        and self._fault_reason is None
                        and self._sync_error is None
                    )
                )
                if self._stopping and not self._jobs:
                    return
                target = self._written if self._fault_reason is None else 0
                # Checkpoints that queued up behind an fsync are superseded by the newest one.
                job = self._jobs[-1] if self._jobs else None
                self._jobs.clear()
                self._busy = job is not None
            if self.options.fsync and target > self._durable:
                self._sync(target)
            if job is not None:
                self._write_checkpoint(job)
                with self._lock:
                    self._busy = False
                    self._changed.notify_all()

    def _sync(self, target: int) -> None:
        if self.options.fsync_delay_s:
            time.sleep(self.options.fsync_delay_s)
        try:
            with self._fd_lock:
                if self._fd is not None:
                    os.fsync(self._fd)
        except OSError as error:
            with self._lock:
                self._sync_error = f"fsync failed: {_reason(error)}"
                self._work.notify()
            return
        with self._lock:
            self._durable = max(self._durable, target)
            self._changed.notify_all()
        self._notify()

    def _write_checkpoint(self, job: _Job) -> None:
        marker = job.marker
        data = CHECKPOINT_MAGIC + marker.blob
        try:
            path = self.files.write_checkpoint(marker.covers, data, fsync=self.options.fsync)
        except OSError as error:
            self._report_once(f"checkpoint not written: {_reason(error)}; restarts replay more")
            return
        self.submit(
            "checkpoint",
            {
                "covers": marker.covers,
                "file": path.name,
                "sha256": hashlib.sha256(data).hexdigest(),
                "segment": job.position.segment,
                "offset": job.position.offset,
                "session": marker.session,
                "ts": time_text(marker.ts),
            },
        )
        self._keep_from = job.position.segment
        self.files.prune_checkpoints(self.options.keep_checkpoints)
