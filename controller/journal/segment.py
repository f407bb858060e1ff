"""The active segment's open file: appended to by the writer thread, fsynced by the syncer.

The descriptor is replaced (a segment closed, the file reopened after a fault) only under this
object's lock, which an fsync takes too: the syncer never fsyncs a descriptor being closed. Writes
come from the writer thread alone, which is also the only one that replaces the descriptor, so
they need no lock.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from controller.journal.files import JournalFiles
from controller.journal.reader import Position


class ActiveSegment:
    """The open active segment of one journal: its descriptor, size and first record."""

    def __init__(self, files: JournalFiles) -> None:
        self.files = files
        self._lock = threading.Lock()
        self._fd: int | None = None
        #: Bytes in the active segment (writer thread).
        self.size = 0
        #: The number of its first record, None while it holds none.
        self.first: int | None = None
        #: (first record, size) of the last closed segment, while the active one holds none.
        self.previous: tuple[int, int] | None = None

    def start(self, first: int | None, size: int) -> None:
        """Where the journal as opened stands (the last closed segment read when needed)."""
        self.first, self.size = first, size
        if first is None:
            closed = [s for s in self.files.segments() if s.closed]
            if closed and closed[-1].first is not None:
                self.previous = (closed[-1].first, closed[-1].path.stat().st_size)

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def open(self) -> None:
        """Open (or reopen: after an I/O error or a remount the old descriptor may never work
        again) the active segment for appending; raises OSError."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._fd = self.files.open_active()
            self.size = os.fstat(self._fd).st_size

    def write(self, data: bytes) -> tuple[int, OSError | None]:
        """Write ``data``; how many bytes went, and the error that stopped the rest (if any)."""
        done = 0
        try:
            if self._fd is None:
                raise OSError(0, "the journal is not open")
            while done < len(data):
                done += os.write(self._fd, memoryview(data)[done:])
        except OSError as error:
            self.size += done
            return done, error
        self.size += done
        return done, None

    def wrote_record(self, n: int) -> None:
        """Record ``n`` was written whole into the segment."""
        if self.first is None:
            self.first = n

    def fsync(self) -> None:
        """Fsync what was written (nothing when the segment is not open); raises OSError."""
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)

    def position(self) -> Position:
        """Where the records written next begin (for a checkpoint's replay)."""
        if self.first is not None:
            return Position(self.first, self.size)
        if self.previous is not None:
            return Position(*self.previous)
        return Position(0, 0)

    def rotate(self, *, fsync: bool) -> Path | None:
        """Close the active segment (fsynced, renamed, read-only) and open a new one; the closed
        segment's path, None when there is nothing to close. Raises OSError (the old one goes on)."""
        first = self.first
        if first is None or self._fd is None:
            return None
        with self._lock:
            if fsync:
                os.fsync(self._fd)
            closed = self.files.close_active(first)
            try:
                fd = self.files.open_active()
            except OSError:
                os.rename(closed, self.files.active)  # carry on in the old one
                raise
            os.close(self._fd)
            self._fd = fd
        self.previous = (first, self.size)
        self.first = None
        self.size = 0
        return closed

    def close(self, *, fsync: bool) -> OSError | None:
        """Fsync (when asked) and close; the fsync's error, if it failed."""
        failed: OSError | None = None
        with self._lock:
            if self._fd is None:
                return None
            try:
                if fsync:
                    os.fsync(self._fd)
            except OSError as error:
                failed = error
            os.close(self._fd)
            self._fd = None
        return failed
