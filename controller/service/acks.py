"""The service's side of the journal: what waits for a record to be written, or durable.

- What a message caused is published once the message's record is **written** (in the operating
  system: a crash of the process loses none of it), :meth:`Acknowledgements.written`.
- The message is acknowledged to the broker (PUBACK) once its record is **durable** (fsynced, or
  written when ``fsync = false``), in the order the messages arrived; until then the broker keeps
  it and delivers it again after a crash.
- While the journal cannot be written (disk full, read-only) it holds the records in a bounded
  tail in memory (``[journal] backlog``) and writes them once the disk has room: a message whose
  record is held is acknowledged at once (a broker that allows 20 unacknowledged messages, as a
  stock mosquitto does, would otherwise stop delivering, and the dealer would get no alert), and
  the journal is told, so that its ``outage`` record names exactly the records acknowledged before
  they were durable. What a message caused is published at once, from memory. A message whose
  record is lost (the tail is full) is never acknowledged: the broker keeps it.

The journal's threads call the listener; the work is done on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from typing import Final

import aiomqtt

from controller.journal.writer import Journal, Progress
from link.aiomqtt_adapter import Received, acknowledge_all

log = logging.getLogger(__name__)

#: The longest what a message caused waits for its record to be written.
STALL_S: Final = 0.5
#: How long the event loop's thread itself waits, blocked, for an output's record to be written
#: (:meth:`Acknowledgements.written`) before it waits as a coroutine, ...
HANDOFF_S: Final = 0.001
#: ... and only when the writer has at most this many records to write before it is done.
HANDOFF_RECORDS: Final = 16


class Acknowledgements:
    """Messages waiting for their record to be durable, and waiters for records to be written."""

    def __init__(self, journal: Journal | None) -> None:
        self.journal = journal
        #: The client and connection number acknowledgements go to (set by the service).
        self.client: aiomqtt.Client | None = None
        self.connection = 0
        #: Set when the journal's fault state changed (the service publishes status and alert).
        self.health_changed = asyncio.Event()
        self._pending: deque[tuple[int, Received]] = deque()
        self._progress = asyncio.Event()
        self._fault: str | None = None
        self._scheduled = False
        #: The last acknowledgement was an early one (the next early one extends its span).
        self._early_span = False
        #: The record a blocked wait last gave up on: none again until the writer got there.
        self._stalled = 0
        #: Coroutines waiting in :meth:`written`: while there are any, every record written
        #: updates the loop; otherwise only a change of :func:`_what_counts` does.
        self._awaiting_written = 0
        #: What the last update saw of the progress (:func:`_what_counts`).
        self._seen: tuple[object, ...] = ()

    def listener(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        """What the journal's threads call on progress: one update on ``loop`` at a time, and
        none for records written while nothing on the loop waits for that (below)."""

        def notify() -> None:
            if self._scheduled:
                return
            # Most changes are records written (several a message: received, published): what
            # the loop acts on is their durability, a fault, records held or lost. An update
            # for each cost the loop a wake-up through its self-pipe, and the writer a write to
            # it, both handing the GIL over in the middle of whatever the loop was doing (an
            # alert on its way). Compared with what the last update saw (a stale view only
            # costs an update more).
            if not self._awaiting_written and self._nothing_new():
                return
            self._scheduled = True
            with contextlib.suppress(RuntimeError):  # the loop is closed: shutting down
                loop.call_soon_threadsafe(self._update)

        return notify

    def _nothing_new(self) -> bool:
        """The progress differs from what the last update saw in records written at most."""
        journal = self.journal
        return journal is not None and _what_counts(journal.progress()) == self._seen

    def _update(self) -> None:
        # Cleared before reading the progress: a change after this read schedules another update.
        self._scheduled = False
        if self.journal is None:
            return
        progress = self.journal.progress()
        self._seen = _what_counts(progress)
        self._release(progress)
        self._progress.set()
        if progress.fault != self._fault:
            self._fault = progress.fault
            self.health_changed.set()

    def add(self, record: int, message: Received) -> None:
        """Acknowledge ``message`` once the record ``record`` is durable (0: nothing to wait for),
        on the connection it arrived on (not at all once that one is lost)."""
        behind = bool(self._pending)
        self._pending.append((record, message))
        if behind and self.journal is not None:
            # The messages before it wait for the journal, and it waits for them: every change of
            # the journal's progress releases what it can (``_update``), nothing to look at now.
            return
        self._release(self.journal.progress() if self.journal is not None else None)

    def _release(self, progress: Progress | None) -> None:
        released: list[Received] = []
        try:
            self._release_into(released, progress)
        finally:
            if released and self.client is not None:
                acknowledge_all(self.client, released)

    def _release_into(self, released: list[Received], progress: Progress | None) -> None:
        """Take the messages that may be acknowledged now off the queue, in order."""
        pending = self._pending
        connection = self.connection
        acknowledging = self.client is not None
        # (most of the time nothing is lost: no look at the lost spans for each message)
        lost = progress is not None and bool(progress.lost)
        durable = progress.durable if progress is not None else 0
        while pending:
            record, message = pending[0]
            early = False
            if record and progress is not None:
                if lost and progress.is_lost(record):
                    pending.popleft()  # never acknowledged: the broker keeps it
                    self._early_span = False
                    continue
                if record > durable:
                    if not progress.held_in_memory(record):
                        break
                    early = True
            pending.popleft()
            current = message.connection == connection
            if current and acknowledging:
                released.append(message)
                if early and self.journal is not None:
                    self.journal.acknowledged_early(record, extends=self._early_span)
            if record:
                self._early_span = early and current

    async def written(self, record: int) -> None:
        """Return once ``record`` is written, at once while the journal is in a fault, and after
        :data:`STALL_S` at the latest: a write that hangs must not hold the alerts back."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STALL_S
        # (counted before the progress is first read: a record written after that read
        # updates the loop)
        self._awaiting_written += 1
        try:
            await self._written(record, deadline)
        finally:
            self._awaiting_written -= 1

    async def _written(self, record: int, deadline: float) -> None:
        handed_off = False
        while self.journal is not None and record:
            progress = self.journal.progress()
            if progress.written >= record or progress.fault is not None:
                return
            if not handed_off:
                handed_off = True
                if self._hand_off(progress, record):
                    return
            self._progress.clear()
            try:
                # (``asyncio.timeout``, not ``wait_for``: no task of its own, so no turn of the
                # loop more between the record written and the alert published)
                async with asyncio.timeout_at(deadline):
                    await self._progress.wait()
            except TimeoutError:
                log.warning(
                    "journal: record %d not written after %.1f s (a slow or hung disk); "
                    "publishing what it caused from memory",
                    record,
                    STALL_S,
                )
                return

    def publishable(self, waited: int) -> int | None:
        """The newest record whose outputs may leave now, once :meth:`written` returned for
        ``waited``: that one (written, or given up on) or the last written if later; None: any
        (no journal, or one in a fault: what a message caused goes out from memory)."""
        if self.journal is None:
            return None
        progress = self.journal.progress()
        if progress.fault is not None:
            return None
        return max(waited, progress.written)

    def written_at_once(self, record: int) -> bool:
        """Whether ``record`` is written now, or within the hand-off (:meth:`_hand_off`), or the
        journal is in a fault (what it caused may go out from memory)."""
        if self.journal is None or not record:
            return True
        progress = self.journal.progress()
        if progress.written >= record or progress.fault is not None:
            return True
        return self._hand_off(progress, record)

    def _hand_off(self, progress: Progress, record: int) -> bool:
        """Wait for ``record`` on this thread, blocked, at most :data:`HANDOFF_S`; True once
        it is written (or the journal is in a fault).

        The writer thread needs the GIL to write the record. Waiting as a coroutine, the loop
        kept it until its next ``select`` (building the state, running other tasks), and its
        report came back through the loop's self-pipe, a callback and a task's wake-up: some
        0.5 ms of an alert's latency, where the write itself takes tens of microseconds. Blocked
        here, the loop leaves the GIL to the writer at once and is woken directly. A disk that
        stalls (writeback throttling, an SD card) costs the loop this wait once: until the
        writer got as far as the record it gave up on, and while the writer has more than
        :data:`HANDOFF_RECORDS` to write (a backlog), the loop does not block at all.
        """
        if self.journal is None or progress.written < self._stalled:
            return False
        if progress.submitted - progress.written > HANDOFF_RECORDS:
            return False
        if self.journal.wait_written(record, HANDOFF_S):
            return True
        self._stalled = record
        return False

    def settled(self) -> bool:
        """Every record submitted so far is written (or the journal is in a fault)."""
        if self.journal is None:
            return True
        progress = self.journal.progress()
        return progress.fault is not None or progress.written >= progress.submitted


def _what_counts(progress: Progress) -> tuple[object, ...]:
    """What of the journal's progress the loop acts on without waiting for it: durability
    (acknowledgements), a fault, records held (early acknowledgements) or lost."""
    return (progress.durable, progress.fault, progress.held, progress.held_through, progress.lost)
