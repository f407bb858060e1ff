"""A tiny filesystem for a test to fill: a tmpfs mounted on a directory (test tooling).

Tests run as root, so file permissions do not stop writes: a disk that is really full (ENOSPC)
is what the journal meets on a table PC. :func:`small_disk` mounts a tmpfs of ``size`` bytes and
unmounts it afterwards; where mounting is not permitted it raises :class:`MountRefused`, naming
why, so that the test fails (never skips silently). :func:`fill` writes a file until the disk is
full; removing that file gives the room back.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path


class MountRefused(RuntimeError):
    """The test cannot mount its small filesystem here."""


@contextlib.contextmanager
def small_disk(directory: Path, size: int) -> Iterator[Path]:
    """``directory`` with a tmpfs of ``size`` bytes mounted on it, for the ``with`` block."""
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise MountRefused(
            f"cannot mount a {size}-byte tmpfs on {directory} (this test fills a real "
            f"filesystem and needs root with mount permitted): {done.stderr.strip()}"
        )
    try:
        yield directory
    finally:
        # Lazy: a process that still has a file open there does not keep the mount alive.
        subprocess.run(["umount", "-l", str(directory)], capture_output=True, check=False)


def fill(directory: Path, name: str = "filler") -> Path:
    """Write ``directory/name`` until the filesystem is full; its path (remove it to free)."""
    path = directory / name
    chunk = b"\0" * 4096
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            try:
                os.write(fd, chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    return path
                chunk = chunk[: len(chunk) // 2]
    finally:
        os.close(fd)
