"""Reading the journal back: every segment in order, or only the tail after a checkpoint.

Reading never stops at a bad line: an unreadable line is reported as ``file:line: why`` and
skipped (the usual one is a torn last line, left by a crash in the middle of a write). While
reading, the hash chain and the record numbers are checked; what does not hold is reported in
:attr:`JournalScan.chain` (``tablectl journal verify`` prints it; start-up logs it).
"""

from __future__ import annotations

import contextlib
import json
import mmap
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_core import SchemaValidator, ValidationError, from_json
from pydantic_core import core_schema as cs

from controller.journal.files import JournalFiles, Segment
from controller.journal.records import (
    GENESIS,
    HASH_OPEN,
    HASH_TAIL,
    CheckpointRecord,
    JournalRecord,
    OutageRecord,
    PublishedRecord,
    ReceivedRecord,
    RejectedRecord,
    RetentionRecord,
    SampleRecord,
    StartRecord,
    TimeRecord,
    chain_hash,
    decode,
    kind_prefix,
    split_line,
)

#: At most this many chain problems are kept (the first ones matter; the count is kept whole).
_KEEP_PROBLEMS = 100
#: Kinds decoded in every pass: outages (what was lost), starts (sessions).
_ALWAYS = (kind_prefix("outage"), kind_prefix("start"))
#: Reading backwards for the last record before a place: this much at a time (lines are short).
_BACK_CHUNK = 1 << 16
_RECEIVED = kind_prefix("received")
#: How a chained line ends, with its newline; the length of its ``,"h":"<hex>"}`` and newline, and
#: where its hex digits are, counted from the end (``split_line`` of the line without the newline).
_CHAINED_END = b'"}\n'
_LINE_TAIL = HASH_TAIL + 1
_DIGEST_FROM, _DIGEST_TO = len(HASH_OPEN) - _LINE_TAIL, -3
#: Where a ``received`` line's kind is, and a chained line's ``,"h":"`` and end, counted from its
#: end (with its newline): the usual line is known by these three slices.
_KIND_AT = slice(0, len(_RECEIVED))
_HASH_OPEN_AT = slice(-_LINE_TAIL, len(HASH_OPEN) - _LINE_TAIL)
_END_AT = slice(-len(_CHAINED_END), None)
#: The usual ``received`` line (a UTF-8 payload) validated in one call straight into the fields a
#: :class:`ReceivedRecord` needs: a third of the time of the generic path (``from_json`` to a dict,
#: then :func:`decode`), the largest part of reading the journal after hashing. A line it does not
#: take (``payload_b64``, a torn or odd line) goes the generic way, which reports it as before.
#: The payload comes as the UTF-8 bytes of its text, what :func:`decode` makes of it.
_RECEIVED_LINE = SchemaValidator(
    cs.typed_dict_schema(
        {
            "n": cs.typed_dict_field(cs.int_schema()),
            "topic": cs.typed_dict_field(cs.str_schema()),
            "payload": cs.typed_dict_field(cs.bytes_schema()),
            "received": cs.typed_dict_field(cs.str_schema()),
        }
    )
)


@dataclass(frozen=True, slots=True)
class Position:
    """A place in the journal: byte ``offset`` of the segment whose first record is ``segment``
    (0: the oldest segment), with the hash of the record before it (the chain's anchor)."""

    segment: int
    offset: int
    previous_h: str = GENESIS
    previous_n: int = 0


@dataclass
class JournalScan:
    """What one pass over the journal found besides its records."""

    #: Unreadable lines, ``file:line: why``.
    problems: list[str] = field(default_factory=list)
    #: Broken hash chain, missing or repeated record numbers, ``file:line: ...`` (first ones).
    chain: list[str] = field(default_factory=list)
    chain_count: int = 0
    #: The active segment does not end with a newline (a torn last write).
    torn_tail: bool = False
    last_session: int = 0
    #: The last record read: its number and hash (where appending continues).
    last_n: int = 0
    last_h: str = GENESIS
    #: Records without a hash (the first journal format).
    unchained: int = 0
    #: Outage records: lost record numbers are declared there.
    outages: list[OutageRecord] = field(default_factory=list)
    #: The first record of the active segment, and the active segment's size in bytes.
    active_first: int | None = None
    active_size: int = 0
    #: The largest record number seen on a torn or bad line (it must not be used again).
    unreadable_n: int = 0
    records: int = 0
    #: The oldest record read, when its hash does not follow from nothing: (n, body, h, where).
    first: tuple[int, bytes, str, str] | None = None

    def chain_problem(self, text: str) -> None:
        self.chain_count += 1
        if len(self.chain) < _KEEP_PROBLEMS:
            self.chain.append(text)


def _segment_containing(segments: list[Segment], number: int, active_first: int | None) -> int:
    """The index of the segment that holds the record ``number`` (by first record numbers).

    ``active_first`` is the first record of the active segment (None: it is empty).
    """
    index = 0
    for i, segment in enumerate(segments):
        first = segment.first if segment.closed else active_first
        if first is not None and first <= number:
            index = i
    return index


def _declares(data: object, first: int, last: int) -> bool:
    """The record ``data`` is an outage declaring records ``first`` to ``last`` lost."""
    return (
        isinstance(data, dict)
        and data.get("kind") == "outage"
        and data.get("lost_from") == first
        and data.get("lost_to") == last
    )


def _place(name: str, line_number: int, offset: int) -> str:
    """A line of a segment: ``file:line``, or ``file@offset`` after a seek (the line numbers are
    unknown then). Built only where a line is named (a record, a problem): not for every line."""
    return f"{name}:{line_number}" if line_number >= 0 else f"{name}@{offset}"


def _torn_number(line: bytes) -> int:
    """The record number of a torn line, when its beginning survived."""
    start = line.find(b'"n":')
    if start < 0:
        return 0
    digits = bytearray()
    for byte in line[start + 4 :]:
        if 48 <= byte <= 57:
            digits.append(byte)
        else:
            break
    return int(digits) if digits else 0


class JournalReader:
    """Reads the records of one journal (all its segments)."""

    def __init__(self, files: JournalFiles) -> None:
        self.files = files

    def scan(
        self,
        scan: JournalScan,
        *,
        start: Position | None = None,
        skip: tuple[str, ...] = (),
        only: tuple[str, ...] = (),
    ) -> Iterator[JournalRecord]:
        """The records from ``start`` (default: the oldest segment's beginning) to the end.

        Lines of the kinds in ``skip``, or of other kinds than ``only`` when given, are checked for
        the chain but not decoded. A missing journal is an empty one.
        """
        skipped = tuple(kind_prefix(k) for k in skip)
        wanted = tuple(kind_prefix(k) for k in only)
        # Received records are wanted (not skipped, or among those asked for): their lines may take
        # the short path, which yields every record it reads.
        usual = not (skipped and _RECEIVED.startswith(skipped)) and not (
            wanted and not _RECEIVED.startswith(wanted)
        )
        segments = self.files.segments()
        first_index = 0 if start is None else self._containing(segments, start.segment)
        previous_h = GENESIS if start is None else start.previous_h
        previous_n = 0 if start is None else start.previous_n
        anchored = start is not None
        scan.last_h = previous_h
        scan.last_n = max(scan.last_n, previous_n)
        for index in range(first_index, len(segments)):
            segment = segments[index]
            offset = start.offset if start is not None and index == first_index else 0
            try:
                file = segment.path.open("rb")
            except FileNotFoundError:
                continue
            except OSError as error:
                scan.problems.append(f"{segment.path}: cannot be read: {error.strerror or error}")
                continue
            name = segment.path.name
            # Records and unreadable lines are named with the directory, chain problems without.
            base = f"{self.files.directory / name}"
            numbered_from = f"{base}:"  # (how each record of it is named, but its line number)
            with file:
                if offset:
                    file.seek(offset)
                if not segment.closed:
                    scan.active_size = file.seek(0, 2)
                    file.seek(offset)
                line_number = 0 if not offset else -1  # unknown after a seek: reported as offsets
                position = offset
                closed = segment.closed
                for raw in file:
                    line_start = position
                    position += len(raw)
                    if line_number >= 0:
                        line_number += 1
                    # The usual line (a chained ``received`` record, newline-ended) split and
                    # parsed with as few steps as can be: the generic steps below (strip, split,
                    # test its kind again) cost as much as parsing it. Anything else, or a line
                    # the validator does not take, goes the generic way.
                    fast: dict[str, Any] | None = None
                    taken = False
                    # (slices compared, not startswith and endswith: their arguments parsed cost
                    # more than the comparison, 1,100 instructions a line for the three)
                    if (
                        usual
                        and raw[_KIND_AT] == _RECEIVED
                        and raw[_END_AT] == _CHAINED_END
                        and raw[_HASH_OPEN_AT] == HASH_OPEN
                    ):
                        body = raw[:-_LINE_TAIL] + b"}"
                        try:
                            fast = _RECEIVED_LINE.validate_json(body)
                        except ValidationError:
                            fast = None
                    if fast is not None:
                        taken = True
                        if not closed:
                            scan.torn_tail = False
                        # (as split_line: the hex digits, a changed byte kept visible as such)
                        digest: str | None = raw[_DIGEST_FROM:_DIGEST_TO].decode("ascii", "replace")
                        data: Any = fast
                        n = fast["n"]
                    else:
                        torn = not raw.endswith(b"\n")
                        if not closed:
                            scan.torn_tail = torn
                        text = raw.rstrip(b"\r\n")
                        if not text or text.isspace():
                            continue
                        body, digest = split_line(text)
                        if text.startswith(_RECEIVED):
                            # (not contextlib.suppress: a tenth of the call's time, every line)
                            try:
                                fast = _RECEIVED_LINE.validate_json(body)
                            except ValidationError:
                                fast = None
                        try:
                            if fast is not None:
                                data = fast
                                n = fast["n"]
                            else:
                                # pydantic's JSON parser (jiter): a record line in about a quarter
                                # of json.loads' time
                                data = from_json(body)
                                n = int(data.get("n", 0)) if isinstance(data, dict) else 0
                        except (ValueError, TypeError) as error:
                            why = "torn record (crash or failed write)" if torn else "bad record"
                            where = _place(base, line_number, line_start)
                            scan.problems.append(f"{where}: {why}: {error}")
                            scan.unreadable_n = max(scan.unreadable_n, _torn_number(text))
                            continue
                    scan.records += 1
                    if not closed and not offset and scan.active_first is None:
                        scan.active_first = n
                    # The chain: each record's number follows the last one's (except right after
                    # an outage record's declared loss) and its hash covers the last one's hash.
                    if digest is None:
                        scan.unchained += 1
                    else:
                        numbered = True
                        if previous_n and n != previous_n + 1:
                            if n <= previous_n:
                                numbered = False
                                where = _place(name, line_number, line_start)
                                scan.chain_problem(f"{where}: record {n} after record {previous_n}")
                            elif not _declares(data, previous_n + 1, n - 1):
                                numbered = False
                                where = _place(name, line_number, line_start)
                                scan.chain_problem(
                                    f"{where}: records {previous_n + 1} to {n - 1} are missing "
                                    f"(record {n} follows record {previous_n})"
                                )
                        if chain_hash(previous_h, body) != digest:
                            if not anchored and n > 1:
                                # The oldest record left after retention: its predecessor is named
                                # by a retention record (``journal verify`` checks that).
                                where = _place(name, line_number, line_start)
                                scan.first = (n, body, digest, where)
                            elif numbered:
                                where = _place(name, line_number, line_start)
                                scan.chain_problem(
                                    f"{where}: record {n}: hash does not match (this record or the "
                                    "one before it was changed)"
                                )
                        previous_h = digest
                        anchored = True
                        previous_n = n
                    if n > scan.last_n:  # noqa: PLR1730 - max() cost 1,300 instructions a record
                        scan.last_n = n
                    scan.last_h = previous_h
                    if taken:
                        filtered = False  # (a kind wanted: see ``usual``)
                    else:
                        filtered = bool(
                            (skipped and text.startswith(skipped)) or (wanted and not text.startswith(wanted))
                        )
                        # Outages declare lost numbers, starts count sessions: always decoded.
                        if filtered and not text.startswith(_ALWAYS):
                            continue
                    # (_place, inline: for every record)
                    full = numbered_from + str(line_number) if line_number >= 0 else f"{base}@{line_start}"
                    if fast is not None:
                        try:
                            # (``fromisoformat`` itself, as parse_time reads the journal's times,
                            # without its call and tests: half its cost)
                            when = datetime.fromisoformat(fast["received"])
                            received = ReceivedRecord(
                                n,
                                fast["topic"],
                                fast["payload"],
                                when if when.tzinfo is not None else when.replace(tzinfo=UTC),
                                full,
                            )
                        except ValueError:
                            received = None  # (the generic path below says why)
                        if received is not None:
                            if not filtered:
                                yield received
                            continue
                    try:
                        record = decode(from_json(body) if fast is not None else data, full)
                    except (ValueError, KeyError, TypeError) as error:
                        scan.problems.append(f"{full}: bad record: {error}")
                        continue
                    if isinstance(record, StartRecord):
                        scan.last_session = max(scan.last_session, record.session)
                    elif isinstance(record, OutageRecord):
                        scan.outages.append(record)
                    if not filtered:
                        yield record

    def checkpoints(self) -> Iterator[CheckpointRecord]:
        """The checkpoint records, newest first (found from the end, without reading it all)."""
        for segment in reversed(self.files.segments()):
            try:
                file = segment.path.open("rb")
            except OSError:
                continue  # reported by the scan
            with file:
                if file.seek(0, 2) == 0:
                    continue
                with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
                    for start in _line_starts_of(view, kind_prefix("checkpoint")):
                        line_end = view.find(b"\n", start)
                        line = view[start : line_end if line_end >= 0 else len(view)]
                        body, _ = split_line(line.rstrip(b"\r"))
                        with contextlib.suppress(ValueError, KeyError, TypeError):
                            record = decode(json.loads(body), f"{segment.path}@{start}")
                            if isinstance(record, CheckpointRecord):
                                yield record

    def anchor(self, position: Position) -> Position:
        """``position`` with the number and hash of the record just before it (the chain anchor)."""
        segments = self.files.segments()
        index = self._containing(segments, position.segment)
        # The record before the position: in the same segment before the offset, else at the end
        # of an earlier segment.
        for i in range(index, -1, -1):
            path = segments[i].path
            try:
                found = last_chained(path, position.offset if i == index else None)
            except OSError:
                continue
            if found is not None:
                return Position(position.segment, position.offset, found[1], found[0])
        return position

    def _containing(self, segments: list[Segment], number: int) -> int:
        active = segments[-1] if segments and not segments[-1].closed else None
        active_first = self.first_number(active.path) if active is not None else None
        return _segment_containing(segments, number, active_first)

    def first_number(self, path: Path) -> int | None:
        """The number of the first record of a segment (None: empty or unreadable)."""
        try:
            with path.open("rb") as file:
                for raw in file:
                    body, _ = split_line(raw.rstrip(b"\r\n"))
                    with contextlib.suppress(ValueError, TypeError, AttributeError):
                        return int(json.loads(body).get("n", 0))
        except OSError:
            return None
        return None


def _line_starts_of(view: mmap.mmap, prefix: bytes) -> Iterator[int]:
    """Offsets of the lines of ``view`` that begin with ``prefix``, last first."""
    end = len(view)
    while end > 0:
        found = view.rfind(b"\n" + prefix, 0, end)
        if found < 0:
            if view[: len(prefix)] == prefix:
                yield 0
            return
        yield found + 1
        end = found


def last_chained(path: Path, end: int | None = None) -> tuple[int, str] | None:
    """The number and hash of the last chained record of ``path`` before byte ``end``.

    Read backwards a chunk at a time: the cost does not grow with the segment.
    """
    with path.open("rb") as file:
        stop = file.seek(0, 2) if end is None else end
        chunk = _BACK_CHUNK
        while True:
            begin = max(0, stop - chunk)
            file.seek(begin)
            data = file.read(stop - begin)
            lines = data.split(b"\n")
            if begin > 0:
                lines = lines[1:]  # the first one may have started before the chunk
            for line in reversed(lines):
                body, digest = split_line(line.rstrip(b"\r"))
                if digest is None:
                    continue
                with contextlib.suppress(ValueError, TypeError, AttributeError):
                    return int(json.loads(body).get("n", 0)), digest
            if begin == 0:
                return None
            chunk *= 4


@dataclass
class JournalContents:
    """Every record of a journal in memory, with what reading found (for tools and tests)."""

    records: list[JournalRecord] = field(default_factory=list)
    scan: JournalScan = field(default_factory=JournalScan)

    @property
    def problems(self) -> list[str]:
        return self.scan.problems

    @property
    def torn_tail(self) -> bool:
        return self.scan.torn_tail

    @property
    def received(self) -> Iterator[ReceivedRecord]:
        return (r for r in self.records if isinstance(r, ReceivedRecord))

    @property
    def rejected(self) -> Iterator[RejectedRecord]:
        return (r for r in self.records if isinstance(r, RejectedRecord))

    @property
    def times(self) -> Iterator[TimeRecord]:
        return (r for r in self.records if isinstance(r, TimeRecord))

    @property
    def samples(self) -> Iterator[SampleRecord]:
        return (r for r in self.records if isinstance(r, SampleRecord))

    @property
    def published(self) -> Iterator[PublishedRecord]:
        return (r for r in self.records if isinstance(r, PublishedRecord))

    @property
    def checkpoints(self) -> Iterator[CheckpointRecord]:
        return (r for r in self.records if isinstance(r, CheckpointRecord))

    @property
    def outages(self) -> list[OutageRecord]:
        return self.scan.outages

    @property
    def retention(self) -> Iterator[RetentionRecord]:
        return (r for r in self.records if isinstance(r, RetentionRecord))

    @property
    def last_session(self) -> int:
        return self.scan.last_session

    @property
    def received_count(self) -> int:
        return sum(1 for _ in self.received)

    @property
    def last_n(self) -> int:
        return self.scan.last_n

    @property
    def last_received(self) -> int:
        """The number of the last input of the engine (a received, rejected or time record)."""
        inputs = (r.n for r in self.records if isinstance(r, ReceivedRecord | RejectedRecord | TimeRecord))
        return max(inputs, default=0)


def read_journal(path: Path) -> JournalContents:
    """Every record of the journal whose active segment is ``path`` (all segments), in memory."""
    contents = JournalContents()
    contents.records = list(JournalReader(JournalFiles(path)).scan(contents.scan))
    return contents
