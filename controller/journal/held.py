"""What the journal acknowledged early, kept where a full disk still takes it: ``{path}.held``.

While the journal cannot be written, the service acknowledges the messages whose records the
journal holds in memory (see ``controller.service.acks``). If the controller then dies too, those records
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
import threading
from pathlib import Path
from typing import Final

from controller.journal.private_files import open_private_write

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


class EarlyAcknowledgements:
    """The spans of records whose messages were acknowledged while the journal held them.

    Noted by the service (:meth:`note`, the event loop), taken by the fault handling for the
    ``outage`` record it writes (:meth:`take`, the writer thread) and given back if that write
    fails (:meth:`give_back`); kept in the ``.held`` file meanwhile (:class:`HeldMarker`).
    """

    def __init__(self, journal: Path) -> None:
        self._lock = threading.Lock()
        self._marker = HeldMarker(journal)
        #: Spans not yet in an outage record.
        self._spans: list[list[int]] = []
        #: Spans an outage record being written names (given back if it fails).
        self._taken: list[list[int]] = []

    def left_by_previous_run(self) -> list[tuple[int, int]]:
        """The spans a previous run left in the file (it died during a fault)."""
        return self._marker.read()

    def open(self) -> None:
        self._marker.open()

    def note(self, n: int, *, extends: bool) -> None:
        """The message of record ``n`` was acknowledged early (``extends``: so was every record
        since the last one noted)."""
        with self._lock:
            if extends and self._spans:
                self._spans[-1][1] = n
            else:
                self._spans.append([n, n])
            self._marker.write(self._taken + self._spans)

    def take(self) -> list[list[int]]:
        """The spans for the outage record being written (kept in the file until it is)."""
        with self._lock:
            spans, self._spans = self._spans, []
            self._taken += spans
        return spans

    def give_back(self) -> None:
        """The outage record was not written: its spans go to the next one."""
        with self._lock:
            self._spans[:0] = self._taken
            self._taken = []

    def written(self) -> None:
        """The outage record naming the spans taken is durable: the file is blanked."""
        with self._lock:
            self._taken = []
            self._marker.clear()

    def close(self, *, clean: bool) -> None:
        """Close the file; ``clean``: nothing is held, it is blanked first."""
        with self._lock:
            if clean:
                self._marker.clear()
            self._marker.close()
