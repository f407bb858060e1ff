"""The journal's syncer: its own thread, group commit and checkpoint files.

- **Group commit**: one fsync covers every record written before it, however many; the syncer
  fsyncs whenever records were written since the last one (never during a fault), and reports
  the new durable position (:class:`~controller.journal.positions.Positions`). While few records
  come, fast, it lingers: an fsync follows the previous one by at least ``LINGER_S``
  (:meth:`Syncer._linger`).
- **Checkpoints**: the writer hands it a job (the snapshot and where the records after it begin)
  once every record before the checkpoint is written; it writes the file whole (temporary file,
  fsync, rename), then submits the ``checkpoint`` record. Jobs that queued up behind an fsync are
  superseded by the newest.
- A failed fsync is reported to the writer thread (``on_error``), which enters a fault; the
  syncer fsyncs nothing more until the fault handling :meth:`Syncer.resume`\\ s it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from controller.journal.files import JournalFiles
from controller.journal.positions import Positions
from controller.journal.records import time_text
from controller.journal.segment import ActiveSegment
from controller.journal.state import CHECKPOINT_MAGIC, Job, JournalOptions, reason

log = logging.getLogger("controller.journal.writer")

#: The group commit's linger (see :meth:`Syncer._linger`): an fsync follows the previous one by
#: at least this long (seconds) while fewer than ``LINGER_RECORDS`` records wait for it.
LINGER_S = 0.005
LINGER_RECORDS = 16


class Syncer:
    """Fsyncs and checkpoint files (see the module docstring)."""

    def __init__(
        self,
        files: JournalFiles,
        options: JournalOptions,
        segment: ActiveSegment,
        positions: Positions,
        *,
        submit: Callable[[str, dict[str, Any]], int],
        on_error: Callable[[str], None],
        on_checkpoint: Callable[[int], None],
    ) -> None:
        self.files = files
        self.options = options
        self.segment = segment
        self.positions = positions
        self._submit = submit
        self._on_error = on_error
        #: Told the segment a checkpoint's replay starts in (older ones may be removed).
        self._on_checkpoint = on_checkpoint
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._jobs: deque[Job] = deque()
        self._busy = False  # writing a checkpoint
        self._failed = False  # an fsync failed; nothing more until resumed
        self._stopping = False
        self._reported: set[str] = set()
        #: Waiting for more records before an fsync (:meth:`_linger`): writes do not wake it.
        self._lingering = False
        #: When the last fsync ended (``time.monotonic``).
        self._synced_at = 0.0

    # ---- other threads --------------------------------------------------------------------

    def checkpoint(self, job: Job) -> None:
        """Write this checkpoint (the writer thread: every record before it is written)."""
        with self._lock:
            self._jobs.append(job)
            self._work.notify()

    def wake(self) -> None:
        """Records were written: fsync them (after the linger, if one is under way)."""
        with self._lock:
            if not self._lingering or self.positions.unsynced() >= LINGER_RECORDS:
                self._work.notify()

    def resume(self) -> None:
        """The journal is writable again after a fault: fsync again."""
        with self._lock:
            self._failed = False
            self._work.notify()

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._work.notify()

    @property
    def idle(self) -> bool:
        """No checkpoint waits or is being written."""
        with self._lock:
            return not self._jobs and not self._busy

    # ---- its thread -----------------------------------------------------------------------

    def _target(self) -> int:
        if not self.options.fsync or self._failed:
            return 0
        return self.positions.to_sync()

    def run(self) -> None:
        while True:
            with self._lock:
                self._work.wait_for(lambda: self._stopping or bool(self._jobs) or self._target() > 0)
                if self._stopping and not self._jobs:
                    return
                linger = self._linger()
                if linger > 0:
                    self._lingering = True
                    self._work.wait_for(
                        lambda: (
                            self._stopping or bool(self._jobs) or self.positions.unsynced() >= LINGER_RECORDS
                        ),
                        linger,
                    )
                    self._lingering = False
                target = self._target()
                # Checkpoints that queued up behind an fsync are superseded by the newest one.
                job = self._jobs[-1] if self._jobs else None
                self._jobs.clear()
                self._busy = job is not None
            if target:
                self._sync(target)
            if job is not None:
                self._write_checkpoint(job)
                with self._lock:
                    self._busy = False
                self.positions.told()

    def _linger(self) -> float:
        """How long to wait for more records before the next fsync: while few are written
        since the last one, until ``LINGER_S`` after it (0: fsync now).

        One fsync per message of a table that is quiet enough for an fsync to end before the
        next message arrives costs nothing; messages coming faster than that (a dealer at
        speed, alerts in a row) met the end of the previous fsync, whose report takes the GIL
        from the event loop in the middle of the next message: an alert's latency. A
        backlog (many records written) is fsynced at once."""
        if self._jobs or self._stopping:
            return 0.0
        since = time.monotonic() - self._synced_at
        if since >= LINGER_S or self.positions.unsynced() >= LINGER_RECORDS:
            return 0.0
        return LINGER_S - since

    def _sync(self, target: int) -> None:
        if self.options.fsync_delay_s:
            time.sleep(self.options.fsync_delay_s)
        try:
            self.segment.fsync()
        except OSError as error:
            with self._lock:
                self._failed = True
            self._on_error(f"fsync failed: {reason(error)}")
            return
        self._synced_at = time.monotonic()
        self.positions.synced(target)

    def _write_checkpoint(self, job: Job) -> None:
        marker = job.marker
        data = CHECKPOINT_MAGIC + marker.blob
        try:
            path = self.files.write_checkpoint(marker.covers, data, fsync=self.options.fsync)
        except OSError as error:
            self._report_once(f"checkpoint not written: {reason(error)}; restarts replay more")
            return
        self._submit(
            "checkpoint",
            {
                "covers": marker.covers,
                "file": path.name,
                "sha256": hashlib.sha256(data).hexdigest(),
                "segment": job.position.segment,
                "offset": job.position.offset,
                "session": marker.session,
                "ts": time_text(marker.ts),
            },
        )
        self._on_checkpoint(job.position.segment)
        self.files.prune_checkpoints(self.options.keep_checkpoints)

    def _report_once(self, problem: str) -> None:
        if problem not in self._reported:
            self._reported.add(problem)
            log.error("journal %s: %s", self.files.active, problem)
