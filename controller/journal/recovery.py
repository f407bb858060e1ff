"""Start-up from the journal: the newest usable checkpoint, then the records after it.

The engine core is deterministic: the state after a checkpoint plus the inputs that follow it
(``received`` messages, ``rejected`` reports of malformed input and ``time`` records, the time
that came with no message; ``sample`` records are for the audit only) is the state a full replay
would reach, so start-up reads a bounded tail, however old the table. Alongside the state it
finds what the broker may not have: outputs produced (by the checkpoint's pending list or the
tail) that no ``published`` record shows, and alerts whose replay differs from what was
published (divergences: a changed engine or configuration).

:func:`audit` is the full replay of ``tablectl run --replay-only``: every retained record through
a fresh engine, each checkpoint compared with the replayed state on the way.

Recovery drives the table through a narrow interface, :class:`Replayable`, which the controller
(``controller.service.table``) implements: load a checkpoint's state, replay one journaled input, show the
engine state. It never imports the controller: the controller calls it.

A checkpoint that cannot be used (missing, altered, unreadable, of another version, naming
anything but plain data) is refused with its reason, logged as a warning, and the one before it is
tried; its contents are data, never run (``controller.journal.checkpoint``).
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import Protocol

from controller.journal.checkpoint import CheckpointError, Snapshot, load
from controller.journal.files import JournalFiles
from controller.journal.reader import JournalReader, JournalScan, Position
from controller.journal.records import (
    CheckpointRecord,
    JournalRecord,
    OutageRecord,
    PublishedRecord,
    ReceivedRecord,
    RejectedRecord,
    TimeRecord,
    time_text,
)
from controller.journal.writer import CHECKPOINT_MAGIC, AppendPosition, append_position
from controller.service.outgoing import Outgoing
from engine.api import EngineSettings, PayloadRejected, TimeReached
from engine.state import EngineState, public_of

log = logging.getLogger("controller.journal.recovery")

#: Checkpoints tried, newest first, before replaying from the oldest record.
_TRIES = 5
#: Records are replayed a chunk at a time: first the messages of the chunk are prepared (their
#: payloads parsed) in one tight loop, then the engine is given them in order. Reading, parsing
#: and the engine step taken in turn for every record cost a quarter more CPU time than the same
#: work a chunk at a time (each stage's code and data pushed out of the caches by the others'):
#: measured with benchmarks/replay.py, best at a few dozen records.
_CHUNK = 64
#: Kinds recovery does not decode (audit samples of malformed payloads are not replayed).
_NOT_REPLAYED = ("sample",)
_Key = tuple[str, int, str, bytes]
#: Outputs owed to the broker when the journal shows no ``published`` record of them (a state is
#: superseded by the next one, so it is not owed).
_OWED = ("alert", "command", "hand")
#: Outputs whose replay must equal what was published (else a divergence is reported).
_COMPARED = ("alert", "hand")


class Replayable(Protocol):
    """What recovery needs of the table it rebuilds (``controller.service.table.TableController``)."""

    @property
    def settings(self) -> EngineSettings:
        """The engine's settings (a checkpoint holds none: they come from the configuration)."""
        ...

    @property
    def engine_state(self) -> EngineState:
        """The engine's state now (the audit compares it with checkpoints)."""
        ...

    def restore(self, snapshot: Snapshot) -> None:
        """Take over the state of a checkpoint."""
        ...

    def prepare(self, topic: str, payload: bytes, received: datetime) -> object:
        """What the engine would be given for a journaled message by today's configuration (its
        payload parsed), for :meth:`replay_received`; it changes nothing, so that recovery may
        prepare the messages of a chunk of records before replaying them."""
        ...

    def replay_received(
        self, record: ReceivedRecord, prepared: object, *, remember: bool = True
    ) -> list[Outgoing] | None:
        """The message of ``record`` (``prepared`` by :meth:`prepare`) again, as at the time; what
        it produced, or None when the engine does not take it (malformed by today's
        configuration, a device beyond the table's bound). With ``remember``, it is remembered as
        received either way (a repeat after start-up is recognised); the audit, which nothing
        follows, skips that. (The record itself: the audit reads none of its fields for the
        usual one, which produces nothing.)"""
        ...

    def replay_rejected(self, n: int, rejected: PayloadRejected) -> list[Outgoing]:
        """A report of malformed input (``rejected`` record ``n``) again; what it produced."""
        ...

    def replay_time(self, n: int, time: TimeReached, received: datetime) -> list[Outgoing]:
        """The time of ``time`` record ``n`` again (it came with no message); what it produced."""
        ...


@dataclass
class Recovery:
    """What start-up (or the audit) found in the journal."""

    session: int = 1
    #: Received records read after the starting point, and those the engine took.
    received: int = 0
    replayed: int = 0
    #: The checkpoint the state came from (``file (after record n)``), None: a replay from the start.
    checkpoint: str | None = None
    #: Checkpoints that could not be used, and why.
    refused: list[str] = field(default_factory=list)
    #: Unreadable journal lines, ``file:line: why``.
    problems: list[str] = field(default_factory=list)
    #: Breaks of the hash chain or of the numbering in what was read.
    chain: list[str] = field(default_factory=list)
    #: Times the journal could not be written, and what they cost.
    outages: list[str] = field(default_factory=list)
    #: Replayed alerts and hand results that differ from what the journal shows as published.
    divergences: list[str] = field(default_factory=list)
    #: Outputs the replay produced that the journal does not show as published.
    pending: list[Outgoing] = field(default_factory=list)
    #: Where appending continues.
    position: AppendPosition = field(default_factory=AppendPosition)

    def log(self) -> None:
        for problem in self.problems:
            log.warning("journal: %s; skipped", problem)
        for refused in self.refused:
            log.warning("journal: checkpoint %s", refused)
        for broken in self.chain[:10]:
            log.error("journal chain: %s (run tablectl journal verify)", broken)
        for outage in self.outages:
            log.warning("journal: %s", outage)
        for divergence in self.divergences:
            log.warning("journal replay: %s", divergence)


def _key(what: str, cause: int, topic: str, payload: bytes) -> _Key:
    return (what, cause, topic, payload)


def _describe(outage: OutageRecord) -> str:
    lost = f", records {outage.lost_from} to {outage.lost_to} lost" if outage.lost else ""
    return (
        f"outage {time_text(outage.since)} to {time_text(outage.until)} ({outage.reason}): "
        f"{outage.late} records written late{lost} (record {outage.n})"
    )


def read_checkpoint(files: JournalFiles, record: CheckpointRecord, settings: EngineSettings) -> Snapshot:
    """The snapshot of a checkpoint record, its file checked against the record's SHA-256;
    :class:`CheckpointError` (with the file and why) if it cannot be used."""
    path = files.directory / record.file
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CheckpointError(f"{record.file}: {error.strerror or error}") from error
    if hashlib.sha256(data).hexdigest() != record.sha256:
        raise CheckpointError(f"{record.file}: SHA-256 differs from record {record.n} (tampered?)")
    if not data.startswith(CHECKPOINT_MAGIC):
        raise CheckpointError(f"{record.file}: not a checkpoint file")
    try:
        snapshot = load(data[len(CHECKPOINT_MAGIC) :], settings)
    except CheckpointError as error:
        raise CheckpointError(f"{record.file}: {error}") from error
    except Exception as error:
        # The loader refuses what it does not expect; anything else escaping it is a bug in it,
        # and still no reason to use the checkpoint, nor not to start.
        log.exception("journal: checkpoint %s: the loader failed", record.file)
        raise CheckpointError(f"{record.file}: unreadable ({type(error).__name__}: {error})") from error
    if snapshot.covers != record.covers:
        raise CheckpointError(f"{record.file}: holds record {snapshot.covers}, not {record.covers}")
    return snapshot


class _Tail:
    """The replay of received records after a starting point, matched with what was published."""

    def __init__(self, table: Replayable, recovery: Recovery, covers: int, *, remember: bool = True) -> None:
        self.table = table
        #: Whether the replayed messages are remembered as recent (start-up); the audit's full
        #: replay ends with nothing after it, and skips the digest of every record (about 4 %).
        self.remember = remember
        self.recovery = recovery
        self.covers = covers
        self.produced: list[Outgoing] = []
        self.replayed_compared: dict[int, Counter[bytes]] = {}
        self.published: Counter[_Key] = Counter()
        self.published_compared: list[PublishedRecord] = []

    def prepare(self, chunk: list[JournalRecord]) -> list[object]:
        """What the table prepares of each received record of ``chunk`` to replay (None for the
        other records and those the starting point covers), in one pass before replaying it."""
        prepare, covers = self.table.prepare, self.covers
        return [
            prepare(r.topic, r.payload, r.received) if type(r) is ReceivedRecord and r.n > covers else None
            for r in chunk
        ]

    def received(self, record: ReceivedRecord, prepared: object) -> None:
        if record.n <= self.covers:
            return
        recovery = self.recovery
        recovery.received += 1
        produced = self.table.replay_received(record, prepared, remember=self.remember)
        if produced is not None:
            if produced:
                self._replayed(produced)
            else:  # (most records produce nothing: no call for them)
                recovery.replayed += 1

    def rejected(self, record: RejectedRecord) -> None:
        """A report of malformed input: the engine took it like a message (``bad_payload``)."""
        if record.n <= self.covers:
            return
        self.recovery.received += 1
        rejected = PayloadRejected(record.topic, record.device, record.error, record.received, record.count)
        self._replayed(self.table.replay_rejected(record.n, rejected))

    def time(self, record: TimeRecord) -> None:
        """Time that came with no message: the engine took it like a message."""
        if record.n <= self.covers:
            return
        self.recovery.received += 1
        self._replayed(self.table.replay_time(record.n, TimeReached(record.now), record.received))

    def _replayed(self, produced: list[Outgoing]) -> None:
        self.recovery.replayed += 1
        for out in produced:
            if out.what in _COMPARED:
                self.replayed_compared.setdefault(out.cause, Counter())[out.payload] += 1
            if out.what in _OWED:
                self.produced.append(out)

    def sent(self, record: PublishedRecord) -> None:
        self.published[_key(record.what, record.cause, record.topic, record.payload)] += 1
        if record.what in _COMPARED and record.cause > self.covers:
            self.published_compared.append(record)

    def finish(self, unpublished: list[Outgoing]) -> None:
        """Pending outputs (produced, not published) and divergences (published, not produced)."""
        remaining = Counter(self.published)
        for out in [*unpublished, *self.produced]:
            key = _key(out.what, out.cause, out.topic, out.payload)
            if remaining[key] > 0:
                remaining[key] -= 1
            else:
                self.recovery.pending.append(out)
        for record in self.published_compared:
            replayed = self.replayed_compared.get(record.cause, Counter())
            if replayed[record.payload] > 0:
                replayed[record.payload] -= 1
            else:
                what = "a hand result" if record.what == "hand" else "an alert"
                self.recovery.divergences.append(
                    f"{record.where}: {what} caused by received record {record.cause} replays "
                    "differently from what was published"
                )


def _chunks(records: Iterator[JournalRecord]) -> Iterator[list[JournalRecord]]:
    """``records`` a :data:`_CHUNK` at a time."""
    while chunk := list(islice(records, _CHUNK)):
        yield chunk


def recover(table: Replayable, files: JournalFiles) -> Recovery:
    """Rebuild ``table`` from the newest usable checkpoint and the records after it."""
    recovery = Recovery()
    reader = JournalReader(files)
    snapshot: Snapshot | None = None
    used: CheckpointRecord | None = None
    tried = 0
    for record in reader.checkpoints():
        if not (files.directory / record.file).exists():
            continue  # superseded and removed: only the newest few are kept
        tried += 1
        if tried > _TRIES:
            break
        try:
            snapshot = read_checkpoint(files, record, table.settings)
        except CheckpointError as error:
            recovery.refused.append(f"refused: {error}")
            continue
        used = record
        break
    start: Position | None = None
    covers = 0
    if snapshot is not None and used is not None:
        table.restore(snapshot)
        covers = used.covers
        start = reader.anchor(Position(used.segment, used.offset))
        recovery.checkpoint = f"{used.file} (after record {used.covers})"
    scan = JournalScan()
    tail = _Tail(table, recovery, covers)
    for chunk in _chunks(reader.scan(scan, start=start, skip=_NOT_REPLAYED)):
        for item, prepared in zip(chunk, tail.prepare(chunk), strict=True):
            if isinstance(item, ReceivedRecord):
                tail.received(item, prepared)
            elif isinstance(item, RejectedRecord):
                tail.rejected(item)
            elif isinstance(item, TimeRecord):
                tail.time(item)
            elif isinstance(item, PublishedRecord):
                tail.sent(item)
            elif isinstance(item, OutageRecord):
                recovery.outages.append(_describe(item))
    tail.finish(snapshot.unpublished if snapshot is not None else [])
    recovery.problems = scan.problems
    recovery.chain = scan.chain
    last_session = max(scan.last_session, snapshot.session if snapshot is not None else 0)
    recovery.session = last_session + 1
    recovery.position = append_position(
        reader, scan, covers=covers, keep_from=used.segment if used is not None else None
    )
    return recovery


def _fingerprint(state: EngineState) -> tuple[bytes, int]:
    """What a checkpoint and a replay must agree on: the public state and the alert counter."""
    machine = state.machine
    return public_of(machine).to_json(), machine.table.book.counter


def audit(table: Replayable, files: JournalFiles) -> Recovery:
    """Replay every retained record through a fresh engine (read only), comparing checkpoints.

    A checkpoint that differs from the replayed state is a divergence, unless records were lost
    before it (an outage): then the replay cannot be exact, and it goes on from the checkpoint.
    """
    recovery = Recovery()
    reader = JournalReader(files)
    checkpoints = {r.covers: r for r in reader.checkpoints() if (files.directory / r.file).exists()}
    segments = files.segments()
    start: Position | None = None
    covers = 0
    oldest = segments[0].first if segments else None
    if oldest is not None and oldest > 1:
        # Older segments were removed: start from a checkpoint inside the oldest one left.
        for record in sorted(checkpoints.values(), key=lambda r: r.covers):
            try:
                table.restore(read_checkpoint(files, record, table.settings))
            except CheckpointError as error:
                recovery.refused.append(f"refused: {error}")
                continue
            start = reader.anchor(Position(record.segment, record.offset))
            covers = record.covers
            recovery.checkpoint = f"{record.file} (after record {record.covers})"
            break
    scan = JournalScan()
    tail = _Tail(table, recovery, covers, remember=False)
    lost_before = False
    for chunk in _chunks(reader.scan(scan, start=start, skip=_NOT_REPLAYED)):
        for item, prepared in zip(chunk, tail.prepare(chunk), strict=True):
            if type(item) is ReceivedRecord:  # (most records: looked at first)
                tail.received(item, prepared)
            elif isinstance(item, RejectedRecord):
                tail.rejected(item)
            elif isinstance(item, TimeRecord):
                tail.time(item)
            else:
                if isinstance(item, PublishedRecord):
                    tail.sent(item)
                elif isinstance(item, OutageRecord):
                    recovery.outages.append(_describe(item))
                    lost_before = lost_before or item.lost > 0
                continue
            if item.n in checkpoints and item.n > covers:
                lost_before = _compare(table, files, checkpoints[item.n], recovery, lost_before)
    tail.finish([])
    recovery.problems = scan.problems
    recovery.chain = scan.chain
    recovery.session = scan.last_session + 1
    return recovery


def _compare(
    table: Replayable,
    files: JournalFiles,
    record: CheckpointRecord,
    recovery: Recovery,
    lost_before: bool,
) -> bool:
    """Compare the replay with a checkpoint; return whether records lost still explain a difference."""
    try:
        snapshot = read_checkpoint(files, record, table.settings)
    except CheckpointError as error:
        recovery.refused.append(f"refused: {error}")
        return lost_before
    if _fingerprint(snapshot.engine) == _fingerprint(table.engine_state):
        return lost_before
    if lost_before:
        recovery.outages.append(
            f"checkpoint {record.file} differs from the replay, as expected after records were "
            "lost: the replay goes on from the checkpoint"
        )
        table.restore(snapshot)
        return False
    recovery.divergences.append(
        f"checkpoint {record.file}: the state after record {record.covers} differs from the replay"
    )
    return lost_before
