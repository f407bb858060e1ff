"""One journal, one writer: the exclusive lock ``tablectl run`` holds on its journal.

A second ``tablectl run`` on the same journal would append to the same hash chain and break it
for ever. The service therefore holds an exclusive ``flock`` on ``{journal}.lock`` (beside the
active segment) while it runs, with its pid written in the file for the message a second one
prints. The kernel releases the lock when the process dies, however it dies: a lock left by a
dead process is simply taken over (the file stays; only the lock counts). The readers
(``tablectl history``, ``journal verify``, ``journal export``, ``run --replay-only``) never take
it: they read while the service runs.

The lock file also keeps the journal's **instance id** (random, made at the first run, kept
with the journal): the controller names it in its retained status, so that a second controller
of the same table on the same broker (another journal) sees that the ``online`` there is not
its own and refuses to start.

A directory where the lock file cannot even be created (a read-only or full disk) is not a
reason to stop the table (the journal goes into its fault and says so): the service then runs
without the lock, with a warning.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import secrets
from pathlib import Path

from controller.journal.private_files import private_directory

log = logging.getLogger(__name__)


class JournalLocked(RuntimeError):
    """Another process holds the journal's lock."""


def lock_path(journal: Path) -> Path:
    """The lock file of the journal whose active segment is ``journal``."""
    return journal.with_name(journal.name + ".lock")


class JournalLock:
    """The exclusive lock on one journal, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        self.path = lock_path(journal)
        #: The journal's instance id (None: no lock file could be made).
        self.instance: str | None = None
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock; raise :class:`JournalLocked` (one line naming the journal and the
        holder's pid) when another process holds it."""
        try:
            private_directory(self.path.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as error:
            log.warning(
                "journal %s: no lock file (%s): running without the one-writer lock",
                self.journal,
                error.strerror or error,
            )
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder, _ = _read(fd)
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise JournalLocked(
                    f"journal {self.journal} is in use by another tablectl run "
                    f"(pid {holder or 'unknown'}, lock {self.path}): one journal, one writer"
                ) from None
            raise
        self._fd = fd
        _, instance = _read(fd)
        self.instance = instance or secrets.token_hex(8)
        # The pid is for the message a second process prints; a full disk may refuse it (the
        # instance id then lives in this process only).
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n{self.instance}\n".encode(), 0)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the flock (the pid in it means nothing then)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


def _read(fd: int) -> tuple[str, str]:
    """(pid of the last holder, instance id) written in the lock file ('' when unreadable)."""
    try:
        lines = os.pread(fd, 128, 0).decode("ascii", "replace").splitlines()
    except OSError:
        return "", ""
    pid = lines[0].strip() if lines else ""
    instance = lines[1].strip() if len(lines) > 1 else ""
    valid = len(instance) == 16 and all(c in "0123456789abcdef" for c in instance)
    return (pid if pid.isdigit() else ""), (instance if valid else "")
