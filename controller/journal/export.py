"""``tablectl journal export``: the records of a span as JSON lines, exactly as journaled.

``--from`` and ``--to`` (both inclusive, both optional) are record numbers (``12345``) or times
(ISO 8601, ``2026-11-30T01:00:00Z``; without an offset, UTC). A time is compared with the record's
own time: the receive time of a ``received`` record, the publish time of a ``published`` one, the
start of an ``outage``. Lines are copied byte for byte, hashes included, so an export of a whole
segment can be checked against the journal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import BinaryIO, TypeAlias

from controller.journal.files import JournalFiles
from controller.journal.records import parse_time, split_line

Bound: TypeAlias = int | datetime
_TIME_FIELDS = ("received", "ts", "since")


def parse_bound(text: str) -> Bound:
    """A record number or a time; ``ValueError`` naming the text otherwise."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is neither a record number nor an ISO 8601 time") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Span:
    start: Bound | None = None
    end: Bound | None = None

    def number_range(self) -> tuple[int, int | None]:
        low = self.start if isinstance(self.start, int) else 0
        high = self.end if isinstance(self.end, int) else None
        return low, high

    def holds(self, n: int, when: datetime | None) -> bool:
        for bound, is_start in ((self.start, True), (self.end, False)):
            if bound is None:
                continue
            if isinstance(bound, int):
                if (n < bound) if is_start else (n > bound):
                    return False
            elif when is None or ((when < bound) if is_start else (when > bound)):
                return False
        return True


def _lines(files: JournalFiles, span: Span) -> Iterator[bytes]:
    low, high = span.number_range()
    segments = files.segments()
    for index, segment in enumerate(segments):
        following = segments[index + 1].first if index + 1 < len(segments) else None
        if following is not None and following - 1 < low:
            continue  # every record of this segment comes before the span
        if high is not None and segment.first is not None and segment.first > high:
            return
        try:
            file = segment.path.open("rb")
        except FileNotFoundError:
            continue
        with file:
            yield from file


def export(files: JournalFiles, out: BinaryIO, span: Span) -> int:
    """Write the records of ``span`` to ``out``; return how many."""
    count = 0
    _, high = span.number_range()
    for raw in _lines(files, span):
        body, _ = split_line(raw.rstrip(b"\r\n"))
        try:
            data = json.loads(body)
            n = int(data.get("n", 0))
        except (ValueError, TypeError, AttributeError):
            continue  # unreadable lines are for `journal verify` to report
        if high is not None and n > high:
            break
        when = None
        for name in _TIME_FIELDS:
            if name in data:
                try:
                    when = parse_time(data[name])
                except ValueError:
                    when = None
                break
        if span.holds(n, when):
            out.write(raw if raw.endswith(b"\n") else raw + b"\n")
            count += 1
    return count
