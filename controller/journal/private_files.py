"""Files only the service's user may read: the journal holds every tag UID, hence the hole cards.

New files are created 0600 in directories created 0700. An existing file that others may read is
tightened to 0600 (it is the service's own record); an existing directory is never changed (it may
be shared, like /tmp), only reported once when others may enter it.

Every file of the journal (segments, checkpoints) is created here, and so are the rendered
secrets of ``tablectl deploy``: one place decides the modes.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

FILE_MODE: Final = 0o600
#: A file closed for good (a closed journal segment, a checkpoint): read-only, still private.
READ_ONLY_MODE: Final = 0o400
DIRECTORY_MODE: Final = 0o700

#: Directories already reported as open to others (the journal reopens its file at every segment
#: and every probe of a fault: one warning is enough).
_reported: set[Path] = set()


def private_directory(path: Path, what: str = "the journal") -> None:
    """Create ``path`` and its missing parents with mode 0700; warn when it exists open to others.

    ``what`` names the private files it holds, for the warning. ``NotADirectoryError`` when
    ``path`` is a file.
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=DIRECTORY_MODE, exist_ok=True)
    if missing:
        return
    status = path.stat()
    if not stat.S_ISDIR(status.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    mode = stat.S_IMODE(status.st_mode)
    if mode & 0o077 and path not in _reported:
        _reported.add(path)
        log.warning(
            "directory %s is open to other users (mode %04o): keep %s in a directory of its "
            "own with mode 0700",
            path,
            mode,
            what,
        )


def open_private_append(path: Path) -> int:
    """An unbuffered descriptor appending to ``path``, created (or tightened to) mode 0600."""
    return _open_private(path, os.O_APPEND)


def open_private_write(path: Path) -> int:
    """An unbuffered descriptor writing ``path`` from its start (emptied, or created 0600)."""
    return _open_private(path, os.O_TRUNC)


def _open_private(path: Path, flags: int) -> int:
    private_directory(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | flags, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
            os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd
