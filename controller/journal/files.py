"""Where the journal's files are, and the one place that creates, closes and removes them.

``[journal] path`` names the **active segment** (``var/journal-t1.jsonl``): records are appended
there. When it grows past ``segment_mb`` it is closed: renamed after the number of its first record
(``var/journal-t1.000000000001.jsonl``) and made read-only; a new active segment starts. Checkpoint
files sit beside them (``var/journal-t1.000000012345.ckpt``: the engine state after record 12345).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

# The record holds tag UIDs (hole cards): every file 0600 (closed ones 0400) in a 0700 directory,
# created through the one helper that decides those modes.
from controller.journal.private_files import READ_ONLY_MODE, open_private_append, open_private_write

_DIGITS: Final = 12
CHECKPOINT_SUFFIX: Final = ".ckpt"


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment file; ``first`` is the number of its first record (None: the active one)."""

    path: Path
    first: int | None

    @property
    def closed(self) -> bool:
        return self.first is not None


class JournalFiles:
    """The file names of one journal (active segment, closed segments, checkpoints)."""

    def __init__(self, active: Path) -> None:
        self.active = active
        self.directory = active.parent
        self.stem = active.stem if active.suffix else active.name
        self.suffix = active.suffix
        self._closed = re.compile(rf"^{re.escape(self.stem)}\.(\d{{{_DIGITS}}}){re.escape(self.suffix)}$")
        self._checkpoint = re.compile(
            rf"^{re.escape(self.stem)}\.(\d{{{_DIGITS}}}){re.escape(CHECKPOINT_SUFFIX)}$"
        )

    # ---- names ----------------------------------------------------------------------------

    def closed_path(self, first: int) -> Path:
        return self.directory / f"{self.stem}.{first:0{_DIGITS}d}{self.suffix}"

    def checkpoint_path(self, covers: int) -> Path:
        return self.directory / f"{self.stem}.{covers:0{_DIGITS}d}{CHECKPOINT_SUFFIX}"

    def _names(self) -> list[str]:
        try:
            return os.listdir(self.directory)
        except OSError:
            return []  # no directory (yet), or not one: no segments (opening reports why)

    def segments(self) -> list[Segment]:
        """Closed segments oldest first, then the active one if it exists."""
        closed = []
        for name in self._names():
            match = self._closed.match(name)
            if match:
                closed.append(Segment(self.directory / name, int(match.group(1))))
        closed.sort(key=lambda s: s.first or 0)
        if self.active.exists():
            closed.append(Segment(self.active, None))
        return closed

    def checkpoints(self) -> dict[int, Path]:
        """Checkpoint files by the record they cover."""
        found = {}
        for name in self._names():
            match = self._checkpoint.match(name)
            if match:
                found[int(match.group(1))] = self.directory / name
        return found

    # ---- creating, closing, removing --------------------------------------------------------

    def open_active(self) -> int:
        """The active segment opened for appending (created 0600 if missing), unbuffered."""
        # Unbuffered: a failed write leaves nothing behind in a buffer to be written twice.
        return open_private_append(self.active)

    def close_active(self, first: int) -> Path:
        """Rename the active segment after its first record and make it read-only."""
        closed = self.closed_path(first)
        os.rename(self.active, closed)
        with contextlib.suppress(OSError):
            os.chmod(closed, READ_ONLY_MODE)
        self.sync_directory()
        return closed

    def write_checkpoint(self, covers: int, data: bytes, *, fsync: bool) -> Path:
        """Write a checkpoint file whole or not at all (temporary file, fsync, rename)."""
        path = self.checkpoint_path(covers)
        temporary = path.with_name(path.name + ".tmp")
        fd = open_private_write(temporary)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, path)
        with contextlib.suppress(OSError):
            os.chmod(path, READ_ONLY_MODE)
        if fsync:
            self.sync_directory()
        return path

    def prune_checkpoints(self, keep: int) -> None:
        """Remove superseded checkpoints (and leftovers of interrupted writes).

        Kept: the ``keep`` newest (start-up tries them newest first), and the first one of every
        segment (an audit after retention replays from the oldest segment left).
        """
        found = sorted(self.checkpoints())
        firsts = [s.first for s in self.segments() if s.first is not None]
        kept = set(found[-keep:]) if keep else set()
        for first in firsts:
            later = [c for c in found if c >= first]
            if later:
                kept.add(later[0])
        for covers in found:
            if covers not in kept:
                with contextlib.suppress(OSError):
                    self.checkpoint_path(covers).unlink()
        for name in self._names():
            if name.startswith(f"{self.stem}.") and name.endswith(CHECKPOINT_SUFFIX + ".tmp"):
                with contextlib.suppress(OSError):
                    (self.directory / name).unlink()

    def expired(self, retain_days: float, *, keep_from: int | None) -> list[Segment]:
        """Closed segments older than ``retain_days`` (by the time they were closed).

        Never one that holds records from ``keep_from`` on (what recovery still needs), never the
        newest closed one, never any when ``retain_days`` is 0 (keep forever).
        """
        if retain_days <= 0:
            return []
        closed = [s for s in self.segments() if s.closed]
        limit = time.time() - retain_days * 86_400
        out = []
        for segment, following in itertools.pairwise(closed):
            if keep_from is not None and following.first is not None and following.first > keep_from:
                break
            try:
                if segment.path.stat().st_mtime < limit:
                    out.append(segment)
            except FileNotFoundError:
                continue
        return out

    def remove(self, segment: Segment) -> None:
        segment.path.unlink()
        self.sync_directory()

    def sync_directory(self) -> None:
        """Make renames and new files in the journal's directory durable."""
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
