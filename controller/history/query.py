"""The hands of a table as its journal recorded them, and the filters of ``tablectl history``.

Everything comes from ``published`` records (what the table told the world): the hand results
(``what`` ``hand``), the alert changes (each names its ``hand``) and, for placing those alerts
street by street, the first time each hand's public state reached each phase. Nothing is
replayed and no received record is decoded: every other kind is skipped by its line's prefix and
a state is read from the first bytes of its payload, so a long journal costs one pass of reading
lines and decoding the few that are hands and alerts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from contract.models import Alert, HandResult, PayloadError, parse_alert, parse_hand
from controller.journal.files import JournalFiles, Segment
from controller.journal.records import PublishedRecord, decode, kind_prefix, parse_time, split_line

#: The result kinds of a hand that was voided rather than played.
VOIDED = ("misdeal", "fouled")


@dataclass
class HandEntry:
    """One hand: its result (None while the journal holds alerts of it but no result), its
    alert changes in the order published, and when its public state first reached each phase."""

    hand: int
    result: HandResult | None = None
    #: The number of the journal record that published the result (0: none).
    record: int = 0
    alerts: list[Alert] = field(default_factory=list)
    phases: dict[str, datetime] = field(default_factory=dict)

    @property
    def voided(self) -> bool:
        return self.result is not None and self.result.result in VOIDED

    @property
    def ts(self) -> datetime | None:
        """When the hand ended (the result's time), else its first alert's."""
        if self.result is not None:
            return self.result.ts
        return self.alerts[0].ts if self.alerts else None

    def codes(self) -> list[str]:
        """The codes raised in this hand, once each, in the order first raised."""
        seen: dict[str, None] = {}
        for alert in self.alerts:
            seen.setdefault(alert.code, None)
        return list(seen)


@dataclass
class History:
    """Every hand the journal shows, by hand number, and what reading found wrong."""

    hands: dict[int, HandEntry] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def entry(self, hand: int) -> HandEntry:
        found = self.hands.get(hand)
        if found is None:
            found = self.hands[hand] = HandEntry(hand)
        return found

    def played(self) -> list[HandEntry]:
        """The hands with a result, oldest first."""
        return sorted((e for e in self.hands.values() if e.result is not None), key=lambda e: e.hand)


@dataclass(frozen=True)
class Filters:
    """What ``tablectl history`` lists: the last ``last`` hands that match every filter given."""

    last: int | None = 20
    seat: int | None = None
    code: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def admits(self, entry: HandEntry) -> bool:
        result = entry.result
        if result is None:
            return False
        if self.seat is not None and self.seat not in result.seats:
            return False
        if self.code is not None and self.code not in entry.codes():
            return False
        if self.since is not None and result.ts < self.since:
            return False
        return not (self.until is not None and result.ts > self.until)

    def select(self, entries: Iterable[HandEntry]) -> list[HandEntry]:
        chosen = [e for e in entries if self.admits(e)]
        return chosen[-self.last :] if self.last is not None and self.last > 0 else chosen


#: How a ``published`` line begins, up to its ``what`` (records.py writes ``kind``, ``n``, then the
#: fields in this order): other kinds are skipped by this prefix, states without decoding.
_PUBLISHED = kind_prefix("published")
_WHAT = re.compile(rb'^\{"kind":"published","n":\d+,"what":"(\w+)"')
_HAND = re.compile(rb'^\{"kind":"published","n":\d+,"what":"hand"')
#: The head of a published state's payload as it stands in the line (JSON inside a JSON string).
_STATE_IN_LINE = re.compile(
    rb'"payload":"\{\\"v\\":\d+,\\"ts\\":\\"([^\\"]+)\\",\\"hand\\":(\d+),\\"phase\\":\\"(\w+)\\"'
)


def read_history(files: JournalFiles, segments: Sequence[Segment] | None = None) -> History:
    """One pass over the lines of ``segments`` (default: every segment still on disk), oldest first.

    Only ``published`` lines are looked at (the rest is skipped by its first bytes); of those, the
    hand results and alerts are decoded and the states give their hand, phase and time from the
    first bytes of their payload. The hash chain is not checked here: that is ``tablectl journal
    verify``'s job (an unreadable line is reported and skipped).
    """
    history = History()
    for segment in files.segments() if segments is None else segments:
        try:
            file = segment.path.open("rb")
        except FileNotFoundError:
            continue  # removed by retention meanwhile
        with file:
            for number, raw in enumerate(file, start=1):
                if raw.startswith(_PUBLISHED):
                    _line(history, raw, segment.path, number)
    return history


def latest_segments(files: JournalFiles) -> list[Segment]:
    """The newest segments, enough for the last hand and its alerts: from the newest segment that
    holds a hand result to the active one, and the segment before when that one holds only the one
    result (the hand may have begun there; with two, it began after the first).

    Segments are searched newest first by the lines' first bytes, so a start-up reads a segment or
    two, however long the journal. With no hand result anywhere, the newest two (the alerts of a
    result the broker is still owed).
    """
    segments = files.segments()
    for index in range(len(segments) - 1, -1, -1):
        results = _hand_results(segments[index].path)
        if results:
            return segments[index if results > 1 else max(0, index - 1) :]
    return segments[-2:]


def _hand_results(path: Path, enough: int = 2) -> int:
    """How many hand results the segment holds, counted up to ``enough``."""
    count = 0
    try:
        file = path.open("rb")
    except FileNotFoundError:
        return count  # removed by retention meanwhile
    with file:
        for raw in file:
            if raw.startswith(_PUBLISHED) and _HAND.match(raw) is not None:
                count += 1
                if count == enough:
                    break
    return count


def _line(history: History, raw: bytes, path: Path, number: int) -> None:
    """One ``published`` line (``path``:``number``, named only when it cannot be read)."""
    what = _WHAT.match(raw)
    kind = what[1] if what is not None else None
    if kind == b"command":
        return
    if kind == b"state":
        head = _STATE_IN_LINE.search(raw)
        if head is not None:
            try:
                ts = parse_time(head[1].decode())
            except ValueError:
                pass
            else:
                history.entry(int(head[2])).phases.setdefault(head[3].decode(), ts)
                return
    body, _ = split_line(raw.rstrip(b"\r\n"))
    try:
        record = decode(json.loads(body), f"{path}:{number}")
    except (ValueError, KeyError, TypeError) as error:
        torn = "" if raw.endswith(b"\n") else " (torn: a crash or a failed write)"
        history.problems.append(f"{path}:{number}: unreadable record{torn}: {error}")
        return
    if isinstance(record, PublishedRecord):
        _take(history, record)


def _take(history: History, record: PublishedRecord) -> None:
    add(history, record.what, record.topic, record.payload, where=record.where, record=record.n)


def add(history: History, what: str, topic: str, payload: bytes, *, where: str, record: int = 0) -> None:
    """One output of the table into ``history``: published (journal ``record``), or still owed to
    the broker (``record`` 0). A payload that cannot be read is a problem naming ``where``."""
    try:
        if what == "hand":
            result = parse_hand(topic, payload)
            entry = history.entry(result.hand)
            entry.result, entry.record = result, record
        elif what == "alert":
            alert = parse_alert(topic, payload)
            alerts = history.entry(alert.hand).alerts
            # Published twice (a crash between the broker's acknowledgement and the record): once.
            if not any((a.id, a.status, a.ts) == (alert.id, alert.status, alert.ts) for a in alerts):
                alerts.append(alert)
        elif what == "state":
            _phase(history, payload)
    except PayloadError as error:
        history.problems.append(f"{where}: {error}")


def _phase(history: History, payload: bytes) -> None:
    """A state the fast path could not read: decoded, its phase noted like the others."""
    try:
        data = json.loads(payload)
        ts, hand, phase = parse_time(data["ts"]), int(data["hand"]), str(data["phase"])
    except (ValueError, KeyError, TypeError):
        return
    history.entry(hand).phases.setdefault(phase, ts)
