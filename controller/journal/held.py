"""What the journal acknowledged early, kept where a full disk still takes it: ``{path}.held``.

While the journal cannot be written, the service acknowledges the messages whose records the
journal holds in memory (see ``controller.acks``). If the controller then dies too, those records
are gone from the broker and from the disk; the next start must say which. So a small file is
made, at full size, when the journal opens (while the disk has room): during a fault the spans of
record numbers acknowledged early are rewritten **in place** into it (no new block is needed, so
a full disk takes it; a read-only one does not, and then this is skipped with a warning), and it
is blanked when the fault ends. A start that finds spans in it declares them lost in an
``outage`` record (``controller.journal.writer``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Final

from controller.private_files import open_private_write

log = logging.getLogger(__name__)

#: The file's size: room for a few hundred spans; more are folded into one.
SIZE: Final = 4096
_BLANK: Final = b" " * SIZE


def held_path(journal: Path) -> Path:
    return journal.with_name(journal.name + ".held")


class HeldMarker:
    """The file of one journal: :meth:`read` at open, :meth:`write` spans, :meth:`clear`."""

    def __init__(self, journal: Path) -> None:
        self.path = held_path(journal)
        self._fd: int | None = None

    def read(self) -> list[tuple[int, int]]:
        """The spans a previous run left (it died during a fault); [] when none."""
        try:
            text = self.path.read_bytes().strip()
        except FileNotFoundError:
            return []
        except OSError as error:
            log.warning("journal %s: %s", self.path, error.strerror or error)
            return []
        if not text:
            return []
        try:
            spans = json.loads(text)
            return [(int(first), int(last)) for first, last in spans]
        except (ValueError, TypeError) as error:
            log.warning("journal %s: unreadable (%s): ignored", self.path, error)
            return []

    def open(self) -> None:
        """Make the file at full size, blank (the previous run's spans must be read first)."""
        try:
            fd = open_private_write(self.path)
            os.write(fd, _BLANK)
            os.fsync(fd)
        except OSError as error:
            log.warning(
                "journal %s: not made (%s): a crash during a disk fault will not name what it lost",
                self.path,
                error.strerror or error,
            )
            return
        self._fd = fd

    def write(self, spans: list[list[int]]) -> None:
        """Rewrite the spans in place (no fsync: a process crash keeps what the kernel has)."""
        if self._fd is None:
            return
        data = json.dumps(spans, separators=(",", ":")).encode()
        if len(data) > SIZE:
            data = json.dumps([[spans[0][0], spans[-1][1]]]).encode()
        try:
            os.pwrite(self._fd, data.ljust(SIZE), 0)
        except OSError as error:
            log.warning("journal %s: not written: %s", self.path, error.strerror or error)

    def clear(self) -> None:
        self.write([])

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
