"""The plain data the journal's parts pass each other: options, where appending continues, the
progress snapshot, queued items, the fault's state (owned by the fault handling)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from controller.journal.reader import JournalReader, JournalScan, Position
from controller.journal.records import GENESIS

#: The first bytes of a checkpoint file (then zlib-compressed JSON, see controller.journal.checkpoint).
CHECKPOINT_MAGIC: Final = b"tablectl-checkpoint-1\n"
#: A fault that comes back this soon after the last one ended doubles the wait before probing.
FLAP_WINDOW_S: Final = 60.0


@dataclass(frozen=True)
class JournalOptions:
    """How the journal writes (from ``[journal]``)."""

    fsync: bool = True
    segment_bytes: int = 64 << 20
    backlog: int = 100_000
    retain_days: float = 0.0
    keep_checkpoints: int = 3
    probe_first_s: float = 1.0
    probe_max_s: float = 30.0
    #: Testing only: sleep this long before every fsync (a slow disk for benchmarks).
    fsync_delay_s: float = 0.0


@dataclass(frozen=True)
class AppendPosition:
    """Where appending continues, as start-up found the journal."""

    next_n: int = 1
    last_h: str = GENESIS
    #: The active segment ends in a torn line: the next write starts a fresh line.
    torn: bool = False
    active_first: int | None = None
    active_size: int = 0
    #: Where the newest checkpoint's replay starts (segments from there on are kept).
    keep_from: int | None = None
    #: Numbers of records torn by a crash at the end (declared lost by an outage record at open).
    torn_lost: tuple[int, int] | None = None


def append_position(
    reader: JournalReader, scan: JournalScan, *, covers: int = 0, keep_from: int | None = None
) -> AppendPosition:
    """Where appending continues after a ``scan`` that read to the end of the journal.

    Numbers go on after the largest seen, a torn record's included: a number is never used twice.
    """
    active_first = scan.active_first
    if active_first is None and scan.active_size:
        active_first = reader.first_number(reader.files.active)
    last = max(scan.last_n, covers)
    torn_lost = (last + 1, scan.unreadable_n) if scan.torn_tail and scan.unreadable_n > last else None
    return AppendPosition(
        next_n=max(last, scan.unreadable_n) + 1,
        last_h=scan.last_h,
        torn=scan.torn_tail,
        active_first=active_first,
        active_size=scan.active_size,
        keep_from=keep_from,
        torn_lost=torn_lost,
    )


@dataclass(frozen=True)
class Progress:
    """How far the journal got (a consistent snapshot)."""

    submitted: int
    written: int
    durable: int
    fault: str | None
    lost: tuple[tuple[int, int], ...]
    held: int
    #: While in a fault: the newest record held in memory (its message may be acknowledged:
    #: the journal writes it once the disk has room), 0 when none is.
    held_through: int = 0

    def is_lost(self, n: int) -> bool:
        return any(a <= n <= b for a, b in self.lost)

    def acknowledgeable(self, n: int) -> bool:
        """The record ``n`` is durable: the message it holds may be acknowledged."""
        return n <= self.durable and not self.is_lost(n)

    def held_in_memory(self, n: int) -> bool:
        """The journal is in a fault and holds record ``n`` in its bounded tail, to write it
        once the disk has room (its message may be acknowledged early)."""
        return self.fault is not None and n <= self.held_through and not self.is_lost(n)


@dataclass(slots=True)
class Record:
    n: int
    body: bytes


@dataclass(slots=True)
class Outage:
    """The ``outage`` record of a fault, filled in when it is written."""

    n: int
    since: datetime
    reason: str
    lost: tuple[int, int] | None


@dataclass(slots=True)
class Marker:
    """A checkpoint to take once every record submitted before it is written."""

    covers: int
    blob: bytes
    session: int
    ts: datetime


@dataclass(slots=True)
class Job:
    marker: Marker
    position: Position


Item = Record | Outage | Marker


@dataclass
class Fault:
    reason: str
    since: datetime
    #: What started it (the status shows ``reason``, the latest; the outage record this).
    cause: str = ""
    held: deque[Record | Outage] = field(default_factory=deque)
    held_records: int = 0
    #: The newest record held (its message and every one before may be acknowledged).
    held_through: int = 0
    late: int = 0
    dropping: list[int] | None = None  # [first, last] lost since the last outage placeholder
    lost: int = 0
    probe_at: float = 0.0


def reason(error: OSError) -> str:
    return str(error.strerror or error)
