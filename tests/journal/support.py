"""Helpers of the journal tests: a journal in a temporary directory, written and read back."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from controller.journal import Journal, JournalFiles, JournalOptions, open_journal

T0 = datetime(2026, 11, 30, 1, 2, 3, 456789, tzinfo=UTC)
TOPIC = "holdem/t1/input"


def journal(path: Path, **options: object) -> Journal:
    """A journal at ``path`` opened after what it holds; fsync off unless asked."""
    settings = {"fsync": False, **options}
    return open_journal(JournalFiles(path), JournalOptions(**settings))  # type: ignore[arg-type]


def fill(journal: Journal, count: int, *, size: int = 40) -> list[int]:
    """``count`` received records of about ``size`` payload bytes; their numbers."""
    return [journal.received(TOPIC, b"x" * size + str(i).encode(), T0) for i in range(count)]


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def rewrite_line(path: Path, index: int, line: bytes | None) -> None:
    """Replace (or, with None, remove) line ``index`` of ``path`` (a closed segment: made writable)."""
    os.chmod(path, 0o640)
    all_lines = path.read_bytes().splitlines(keepends=True)
    if line is None:
        del all_lines[index]
    else:
        all_lines[index] = line + b"\n"
    path.write_bytes(b"".join(all_lines))


def wait_for(condition: Callable[[], bool], what: str, within: float = 10.0) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``within`` seconds."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within} s: {what}")
        time.sleep(0.005)


class Disk:
    """The disk under a journal, made full and freed again with real system calls.

    Full: the active segment is moved aside and a link to a directory takes its place (reopening
    fails), then the journal's open descriptor is pointed at ``/dev/full`` (every write fails
    with ENOSPC). Freed: the segment is renamed back over the link in one step, so a probe never
    finds the place empty (it would create a new segment there, which the rename then replaces).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.aside = path.with_name(path.name + ".aside")
        self.blocker = path.with_name(path.name + ".full")

    def _descriptor(self) -> int:
        target = str(self.path.resolve())
        for name in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/self/fd/{name}") == target:
                    return int(name)
        raise AssertionError(f"{self.path} is not open")

    def fill(self) -> None:
        fd = self._descriptor()
        self.blocker.mkdir(exist_ok=True)
        os.rename(self.path, self.aside)  # (writes meanwhile still go to the segment, aside)
        os.symlink(self.blocker, self.path)
        full = os.open("/dev/full", os.O_WRONLY)
        os.dup2(full, fd)
        os.close(full)

    def free(self) -> None:
        os.rename(self.aside, self.path)
