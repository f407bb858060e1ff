"""``tablectl journal verify``: is the journal whole, unaltered, and what did it lose?

Every segment is read in order and every record's hash is checked against its predecessor's, every
record number against the one before; a checkpoint file still present must match the SHA-256 its
record holds. The first problem is named with its file, line and record number.

Exit status: 0 the chain is intact and nothing was lost; 2 intact, but outage records declare
records lost (the disk could not take them); 1 broken: a record changed, missing or inserted, a
checkpoint file altered.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Final

from controller.journal.files import JournalFiles
from controller.journal.reader import JournalReader, JournalScan
from controller.journal.records import (
    CheckpointRecord,
    OutageRecord,
    RetentionRecord,
    chain_hash,
    record_time,
    time_text,
)

EXIT_INTACT: Final = 0
EXIT_BROKEN: Final = 1
EXIT_GAPS: Final = 2


@dataclass
class Verification:
    """What ``verify`` found."""

    segments: int = 0
    records: int = 0
    first_n: int = 0
    last_n: int = 0
    first_time: str = ""
    last_time: str = ""
    checkpoints_checked: int = 0
    #: Breaks: the first one is the answer to "where was the journal altered".
    broken: list[str] = field(default_factory=list)
    broken_count: int = 0
    outages: list[OutageRecord] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    unchained: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return sum(o.lost for o in self.outages)

    @property
    def exit_status(self) -> int:
        if self.broken_count:
            return EXIT_BROKEN
        return EXIT_GAPS if self.lost else EXIT_INTACT

    def lines(self, name: str) -> list[str]:
        """The report, first line the verdict."""
        if self.broken_count:
            verdict = f"BROKEN at {self.broken[0]}"
        elif self.lost:
            verdict = f"intact, but {self.lost} records were lost while the journal could not be written"
        else:
            verdict = "intact"
        span = (
            f"records {self.first_n} to {self.last_n}, {self.first_time} to {self.last_time}"
            if self.records
            else "no records"
        )
        out = [
            f"journal {name}: {verdict}",
            f"  {self.records} records in {self.segments} segments ({span}); "
            f"{self.checkpoints_checked} checkpoint files checked",
        ]
        out += [f"  broken: {b}" for b in self.broken]
        if self.broken_count > len(self.broken):
            out.append(f"  ... {self.broken_count - len(self.broken)} more breaks")
        for outage in self.outages:
            lost = f", records {outage.lost_from} to {outage.lost_to} LOST" if outage.lost else ""
            out.append(
                f"  outage: {time_text(outage.since)} to {time_text(outage.until)} ({outage.reason}): "
                f"{outage.late} records written late{lost} (record {outage.n}, {outage.where})"
            )
        out += [f"  unreadable: {u}" for u in self.unreadable]
        if self.unchained:
            out.append(f"  {self.unchained} records of the first journal format carry no hash")
        out += [f"  note: {n}" for n in self.notes]
        return out


def verify(files: JournalFiles) -> Verification:
    """Check the whole journal whose active segment is ``files.active``."""
    result = Verification()
    reader = JournalReader(files)
    segments = files.segments()
    result.segments = len(segments)
    scan = JournalScan()
    checkpoints: list[CheckpointRecord] = []
    retention: list[RetentionRecord] = []
    for record in reader.scan(scan):
        if not result.first_n:
            result.first_n = record.n
        when = record_time(record)
        if when is not None:
            result.first_time = result.first_time or time_text(when)
            result.last_time = time_text(when)
        if isinstance(record, CheckpointRecord):
            checkpoints.append(record)
        elif isinstance(record, RetentionRecord):
            retention.append(record)
    result.records = scan.records
    result.last_n = scan.last_n
    result.outages = scan.outages
    result.unreadable = scan.problems
    result.unchained = scan.unchained
    result.broken = list(scan.chain)
    result.broken_count = scan.chain_count
    _check_anchor(scan, retention, result)
    for record in checkpoints:
        path = files.directory / record.file
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue  # superseded and removed: only the newest ones are kept
        result.checkpoints_checked += 1
        if hashlib.sha256(data).hexdigest() != record.sha256:
            result.broken_count += 1
            result.broken.append(
                f"{record.where}: checkpoint file {record.file} does not match the SHA-256 of "
                f"record {record.n} (the file was altered)"
            )
    return result


def _check_anchor(scan: JournalScan, retention: list[RetentionRecord], result: Verification) -> None:
    """The oldest record left after retention must follow the last record removed."""
    if scan.first is None:
        return
    n, body, digest, where = scan.first
    for record in retention:
        if record.through == n - 1 and chain_hash(record.through_h, body) == digest:
            result.notes.append(f"records before {n} were removed by retention ({', '.join(record.removed)})")
            return
    result.broken_count += 1
    result.broken.insert(
        0,
        f"{where}: record {n}: the records before it are missing (no retention record accounts "
        "for them) or it was changed",
    )
