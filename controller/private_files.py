"""Files only the service's user may read: the journal holds every tag UID, hence the hole cards.

New files are created 0600 in directories created 0700. An existing file that others may read is
tightened to 0600 (it is the service's own record); an existing directory is never changed (it may
be shared, like /tmp), only reported once when others may enter it.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

FILE_MODE: Final = 0o600
DIRECTORY_MODE: Final = 0o700


def private_directory(path: Path, what: str = "the journal") -> None:
    """Create ``path`` and its missing parents with mode 0700; warn when it exists open to others.

    ``what`` names the private files it holds, for the warning.
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=DIRECTORY_MODE, exist_ok=True)
    if missing:
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning(
            "directory %s is open to other users (mode %04o): keep %s in a directory of its "
            "own with mode 0700",
            path,
            mode,
            what,
        )


def open_private_append(path: Path) -> int:
    """An unbuffered descriptor appending to ``path``, created (or tightened to) mode 0600."""
    private_directory(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
            os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd
