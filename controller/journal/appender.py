"""The writer thread's part: records appended to the active segment, hash-chained, with one
``write`` per batch; segments rotated past ``segment_mb``; expired segments removed.

It owns the chain (the last hash, a torn last line) and retention. A failed write is not handled
here: :meth:`Appender.append` says what failed and which items were not written, and the caller
(the journal in normal operation, the fault handling during a probe) decides.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from controller.journal.files import JournalFiles
from controller.journal.positions import Positions
from controller.journal.reader import last_chained
from controller.journal.records import GENESIS, chained_line, time_text
from controller.journal.segment import ActiveSegment
from controller.journal.state import (
    FLAP_WINDOW_S,
    AppendPosition,
    Item,
    Job,
    JournalOptions,
    Marker,
    Outage,
    Record,
    reason,
)

log = logging.getLogger("controller.journal.writer")

#: The line of an ``outage`` record, made when it is written: (the outage, records of this
#: append written before it) -> its body.
OutageBody = Callable[[Outage, int], bytes]


@dataclass(slots=True)
class Appended:
    """What :meth:`Appender.append` did: how many records it wrote, and why it stopped."""

    records: int = 0
    failure: str | None = None
    #: The items not written, in order (after a failure).
    unwritten: list[Item] = field(default_factory=list)


def _no_outage(outage: Outage, written: int) -> bytes:
    raise AssertionError(f"an outage record ({outage.n}) outside a fault")


class Appender:
    """Appends records (writer thread only; see the module docstring)."""

    def __init__(
        self,
        files: JournalFiles,
        options: JournalOptions,
        segment: ActiveSegment,
        positions: Positions,
        *,
        submit: Callable[[str, dict[str, Any]], int],
        checkpoint: Callable[[Job], None],
    ) -> None:
        self.files = files
        self.options = options
        self.segment = segment
        self.positions = positions
        self._submit = submit
        self._checkpoint = checkpoint
        self._last_h = GENESIS
        self._torn = False
        #: Where the newest checkpoint's replay starts: segments from there on are never removed.
        self.keep_from: int | None = None
        self._rotate_again = 0.0
        self._reported: set[str] = set()

    def start(self, position: AppendPosition) -> None:
        self._last_h = position.last_h
        self._torn = position.torn
        self.keep_from = position.keep_from

    def append(self, items: list[Item], outage_body: OutageBody = _no_outage) -> Appended:
        """Append ``items`` in order: records chained, a checkpoint handed to the syncer at its
        place (``checkpoint``), an outage record made by ``outage_body`` once what precedes it
        is written; stop at the first failure."""
        done = Appended()
        lines: list[tuple[Record | Outage, str, bytes]] = []
        pending = 0
        for index, item in enumerate(items):
            if isinstance(item, Marker):
                if not self._write(lines, items[index:], done):
                    return done
                lines, pending = [], 0
                self._checkpoint(Job(item, self.segment.position()))
                continue
            if isinstance(item, Outage):
                # Its counts include the records written late just before it.
                if not self._write(lines, items[index:], done):
                    return done
                lines, pending = [], 0
            body = item.body if isinstance(item, Record) else outage_body(item, done.records)
            previous = lines[-1][1] if lines else self._last_h
            digest, line = chained_line(previous, body)
            size = self.segment.size + pending
            if size + len(line) > self.options.segment_bytes and size:
                if not self._write(lines, items[index:], done):
                    return done
                lines, pending = [], 0
                self._rotate()
                digest, line = chained_line(self._last_h, body)
            lines.append((item, digest, line))
            pending += len(line)
        self._write(lines, [], done)
        return done

    def _write(
        self, lines: list[tuple[Record | Outage, str, bytes]], rest: list[Item], done: Appended
    ) -> bool:
        """Write ``lines`` with one system call; on failure note the unwritten ones and ``rest``."""
        if not lines:
            return True
        data = (b"\n" if self._torn else b"") + b"".join(line for _, _, line in lines)
        written, error = self.segment.write(data)
        # Which records made it whole; a part of one left in the file is closed by the next write.
        edge = 1 if self._torn else 0
        if written >= edge:
            self._torn = False
        whole = 0
        for _, _, line in lines:
            if edge + len(line) > written:
                break
            edge += len(line)
            whole += 1
        if written > edge:
            self._torn = True
        if whole:
            last, digest, _ = lines[whole - 1]
            self._last_h = digest
            for item, _, _ in lines[:whole]:
                self.segment.wrote_record(item.n)
                if isinstance(item, Record):
                    done.records += 1
            self.positions.wrote(last.n, durable=not self.options.fsync)
        if error is None:
            return True
        done.failure = reason(error)
        unwritten: list[Item] = [item for item, _, _ in lines[whole:]]
        done.unwritten = unwritten + rest
        return False

    def _rotate(self) -> None:
        """Close the active segment (fsynced, renamed, read-only) and start a new one."""
        if time.monotonic() < self._rotate_again:
            return
        try:
            closed = self.segment.rotate(fsync=self.options.fsync)
        except OSError as error:
            self._report_once(f"cannot rotate segment: {reason(error)}")
            self._rotate_again = time.monotonic() + FLAP_WINDOW_S
            return
        if closed is None:
            return
        self.positions.all_durable()
        log.info("journal %s: segment closed as %s", self.files.active, closed.name)
        self.expire()

    def expire(self) -> None:
        """Remove closed segments past the retention time, recording it (``retention`` record)."""
        expired = self.files.expired(self.options.retain_days, keep_from=self.keep_from)
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
        self._submit(
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
