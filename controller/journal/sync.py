"""The journal's sync thread: group commit (one fsync for every record written before it) and
checkpoint files (written whole, then their ``checkpoint`` record)."""

from __future__ import annotations

import hashlib
import os
import time

from controller.journal.core import JournalCore
from controller.journal.records import time_text
from controller.journal.state import CHECKPOINT_MAGIC, Job, reason


class SyncThread(JournalCore):
    """The sync thread's loop."""

    def _syncer(self) -> None:
        while True:
            with self._lock:
                self._sync_work.wait_for(
                    lambda: self._stopping
                    or bool(self._jobs)
                    or (
                        self.options.fsync
                        and self._written > self._durable
                        and self._fault_reason is None
                        and self._sync_error is None
                    )
                )
                if self._stopping and not self._jobs:
                    return
                target = self._written if self._fault_reason is None else 0
                # Checkpoints that queued up behind an fsync are superseded by the newest one.
                job = self._jobs[-1] if self._jobs else None
                self._jobs.clear()
                self._busy = job is not None
            if self.options.fsync and target > self._durable:
                self._sync(target)
            if job is not None:
                self._write_checkpoint(job)
                with self._lock:
                    self._busy = False
                    self._changed.notify_all()

    def _sync(self, target: int) -> None:
        if self.options.fsync_delay_s:
            time.sleep(self.options.fsync_delay_s)
        try:
            with self._fd_lock:
                if self._fd is not None:
                    os.fsync(self._fd)
        except OSError as error:
            with self._lock:
                self._sync_error = f"fsync failed: {reason(error)}"
                self._work.notify()
            return
        with self._lock:
            self._durable = max(self._durable, target)
            self._changed.notify_all()
        self._notify()

    def _write_checkpoint(self, job: Job) -> None:
        marker = job.marker
        data = CHECKPOINT_MAGIC + marker.blob
        try:
            path = self.files.write_checkpoint(marker.covers, data, fsync=self.options.fsync)
        except OSError as error:
            self._report_once(f"checkpoint not written: {reason(error)}; restarts replay more")
            return
        self.submit(
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
        self._keep_from = job.position.segment
        self.files.prune_checkpoints(self.options.keep_checkpoints)
