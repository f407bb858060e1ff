"""The journal's shared core: its state, locks and the notifications its threads give.

The writer thread (:mod:`~controller.journal.writer`), the fault handling
(:mod:`~controller.journal.faults`) and the sync thread (:mod:`~controller.journal.sync`) are
parts of one :class:`~controller.journal.writer.Journal` that share this state under one lock.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from controller.journal.files import JournalFiles
from controller.journal.held import HeldMarker
from controller.journal.records import GENESIS
from controller.journal.state import Fault, Item, Job, JournalOptions, Progress

log = logging.getLogger("controller.journal.writer")


class JournalCore:
    """State shared by the journal's threads (see :class:`~controller.journal.writer.Journal`)."""

    def __init__(self, files: JournalFiles, options: JournalOptions | None = None) -> None:
        self.files = files
        self.options = options or JournalOptions()
        # One lock; the writer, the sync thread and waiters each have their condition.
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._sync_work = threading.Condition(self._lock)
        self._changed = threading.Condition(self._lock)
        self._queue: deque[Item] = deque()
        self._jobs: deque[Job] = deque()
        self._next_n = 1
        self._written = 0
        self._durable = 0
        self._fault_reason: str | None = None
        self._lost: list[tuple[int, int]] = []
        self._held = 0
        self._held_through = 0
        #: Spans of records acknowledged before they were durable, for the next outage record.
        self._early: list[list[int]] = []
        #: While a probe writes the held records: no more early acknowledgements (the outage
        #: record it writes names them exactly); the spans it took, given back if it fails.
        self._probing = False
        self._early_taken: list[list[int]] = []
        #: The spans acknowledged early and not yet written, kept where a full disk takes them.
        self._held_marker = HeldMarker(files.active)
        self._busy = False  # the sync thread is writing a checkpoint
        self._sync_error: str | None = None
        self._stopping = False
        self._listener: Callable[[], None] | None = None
        self._threads: list[threading.Thread] = []
        # The writer thread's own state.
        self._fd: int | None = None
        self._fd_lock = threading.Lock()
        self._size = 0
        self._active_first: int | None = None
        self._previous: tuple[int, int] | None = None  # (first, size) of the last closed segment
        self._last_h = GENESIS
        self._torn = False
        self._fault: Fault | None = None
        self._recovering: Fault | None = None
        self._probe_delay = self.options.probe_first_s
        self._fault_ended = 0.0
        self._rotate_again = 0.0
        self._keep_from: int | None = None
        self._reported: set[str] = set()

    def progress(self) -> Progress:
        with self._lock:
            return Progress(
                submitted=self._next_n - 1,
                written=self._written,
                durable=self._durable,
                fault=self._fault_reason,
                lost=tuple(self._lost),
                held=self._held,
                held_through=(
                    self._held_through if self._fault_reason is not None and not self._probing else 0
                ),
            )

    def acknowledged_early(self, n: int, *, extends: bool) -> None:
        """The message of record ``n`` was acknowledged while the record was held in memory
        (``extends``: so was every received record since the last one noted). The next
        ``outage`` record lists these spans."""
        with self._lock:
            if extends and self._early:
                self._early[-1][1] = n
            else:
                self._early.append([n, n])
            self._held_marker.write(self._early_taken + self._early)

    @property
    def fault(self) -> str | None:
        with self._lock:
            return self._fault_reason

    def _notify(self) -> None:
        if self._listener is not None:
            self._listener()

    def _report_once(self, problem: str) -> None:
        if problem not in self._reported:
            self._reported.add(problem)
            log.error("journal %s: %s", self.files.active, problem)

    if TYPE_CHECKING:
        # Defined by the parts (writer, faults, sync); declared here for the others to call.
        def submit(self, kind: str, fields: dict[str, Any]) -> int: ...
        def _write(self, items: list[Item]) -> bool: ...
        def _enter_fault(self, reason: str, unwritten: list[Item]) -> None: ...
        def _hold(self, items: list[Item]) -> None: ...
        def _recover(self) -> None: ...
