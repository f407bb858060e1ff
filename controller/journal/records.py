"""Journal records: what each kind holds, and how it is written as one hash-chained JSON line.

One JSON object per line, ``kind`` first and ``n`` (the record number) second, ``h`` last::

    {"kind":"received","n":41,"topic":"...","payload":"...","received":"...","h":"<sha256 hex>"}

``n`` numbers every record of the journal from 1, over all its segments, and is never reused.
``h`` is ``sha256(h of the previous record + the line without its h)`` (hex): changing, removing or
inserting a record breaks the chain at that place (``tablectl journal verify``). The first
record's predecessor is :data:`GENESIS`.

Kinds (:data:`KINDS`):

- ``start``: a (re)start of the controller: ``session``, ``ts``, ``table``.
- ``received``: a message of the table's engine topics, its payload exactly as received
  (``payload`` text, or ``payload_b64`` when not UTF-8), ``received`` (the controller's clock).
- ``rejected``: a report of malformed input on one ``topic`` (``device`` or null, ``count`` so far,
  the latest ``error``, ``received``) as the engine was given it: an input like ``received``,
  replayed, the ``cause`` of what it produced (``controller.service.malformed``).
- ``time``: event time ``now`` came with no message (``received``: the controller's clock then),
  as the engine was given it (``engine.api.TimeReached``: what was due by then is done, a lost end
  of a stream told, a seat away too long): an input like ``received``, replayed, the ``cause`` of
  what it produced (``controller.service.table``, docs/service.md "Time on a quiet table").
- ``sample``: a malformed payload kept for the audit (``topic``, its first bytes as ``payload`` or
  ``payload_b64``, its ``size``, ``error``, ``received``); at most a few per report; not replayed.
- ``published``: an output the broker accepted: ``what`` (:data:`PUBLISHED_WHAT`: an ``alert``,
  the ``state``, a device ``command``, or a ``hand`` result), ``cause`` (the
  ``n`` of the received, rejected or time record that produced it, 0 for what a connection
  republishes), ``topic``, ``payload``, ``retain``, ``ts``.
- ``checkpoint``: the engine state after the received record ``covers`` is in ``file`` (its
  ``sha256``); replay resumes at byte ``offset`` of the segment whose first record is
  ``segment``.
- ``outage``: the journal could not be written from ``since`` to ``until`` (``reason``); ``late``
  records were held in memory and written afterwards, records ``lost_from`` to ``lost_to``
  (when present) were lost: the numbers missing after this record. ``acknowledged_early``
  (when present): spans ``[first, last]`` of record numbers whose received messages were
  acknowledged to the broker while the journal held them in memory, before they were durable
  (the broker will not deliver them again: a crash then would have lost them).
- ``retention``: closed segments ``removed`` by the retention setting; ``through`` and
  ``through_h`` are the number and hash of the last record they held (the chain's new anchor).

Lines of the first journal format (no ``n`` on some kinds, no ``h``) are still read.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from json.encoder import encode_basestring as _json_string
from typing import Any, Final, Literal, NamedTuple, TypeAlias, get_args

#: What a ``published`` record may be: the one place for the list (a new published kind is added
#: here, and nowhere else in the journal).
PublishedWhat: TypeAlias = Literal["alert", "state", "command", "hand"]
PUBLISHED_WHAT: Final[tuple[str, ...]] = get_args(PublishedWhat)
#: Every record kind, in one place.
KINDS: Final = (
    "start",
    "received",
    "rejected",
    "time",
    "sample",
    "published",
    "checkpoint",
    "outage",
    "retention",
)
#: The kinds that are inputs of the engine, replayed at recovery (``cause`` of what they produced).
INPUT_KINDS: Final = ("received", "rejected", "time")
#: The predecessor hash of the very first record.
GENESIS: Final = "0" * 64

#: How the hash of a chained line begins.
HASH_OPEN: Final = b',"h":"'
#: ``,"h":"`` + 64 hex digits + ``"}``: the end of every chained line.
HASH_TAIL: Final = len(HASH_OPEN) + 64 + 2
_HASH_DIGITS: Final = len(HASH_OPEN)


def time_text(value: datetime) -> str:
    """``value`` in UTC as ``2026-11-30T01:00:00.000000Z`` (what ``isoformat`` with
    microseconds gives, ``Z`` for ``+00:00``)."""
    if value.tzinfo is not UTC:  # (the controller's clock is UTC already: no copy for each record)
        value = value.astimezone(UTC)
    # Formatted by hand: an aware datetime's ``isoformat`` asks its zone for the offset, which
    # made this twice as slow (2.0-4.4 us against 1.1-2.3), and every record carries a time.
    return "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ" % (  # noqa: UP031 - faster than an f-string here
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
    )


def parse_time(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"time must be a string, got {value!r}")
    try:
        # (Python 3.11 reads the "Z" of UTC itself: no copy of the text for every record read;
        # what it does not read is read as before)
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def payload_fields(payload: bytes) -> dict[str, str]:
    """The payload as text when it is UTF-8 (the normal case), else base64, byte-exact either way."""
    try:
        return {"payload": payload.decode("utf-8")}
    except UnicodeDecodeError:
        return {"payload_b64": base64.b64encode(payload).decode("ascii")}


def _payload_of(data: dict[str, Any]) -> bytes:
    if "payload" in data:
        text = data["payload"]
        if not isinstance(text, str):
            raise ValueError("payload must be a string")
        return text.encode("utf-8")
    if "payload_b64" in data:
        return base64.b64decode(str(data["payload_b64"]), validate=True)
    raise ValueError("no payload")


# ------------------------------------------------------------------------------------------------
# Lines and the hash chain
# ------------------------------------------------------------------------------------------------


def encode_body(kind: str, n: int, fields: dict[str, Any]) -> bytes:
    """The record without its hash: ``{"kind":...,"n":...,<fields>}`` (compact, UTF-8)."""
    record = {"kind": kind, "n": n, **fields}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def received_body(n: int, topic: str, payload: bytes, when: str) -> bytes:
    """``encode_body("received", n, ...)`` of a message received at ``when`` (its
    :func:`time_text`), byte for byte, without building a dict for ``json.dumps``: the one record
    written for every message (a third of the journal's part of a message). The strings are
    escaped by the encoder ``json.dumps`` itself uses."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        fields = {"topic": topic, **payload_fields(payload), "received": when}
        return encode_body("received", n, fields)
    return (
        f'{{"kind":"received","n":{n},"topic":{_json_string(topic)},'
        f'"payload":{_json_string(text)},"received":"{when}"}}'
    ).encode()


#: An empty SHA-256 hasher, only ever copied (:func:`chained_line`).
_SHA256: Final = hashlib.sha256()


def chain_hash(previous: str, body: bytes) -> str:
    """The hash of ``body`` after ``previous`` (the hash chain's one definition)."""
    # A copy of an empty hasher, not ``hashlib.sha256()``: with OpenSSL 3 each new one looks the
    # algorithm up by name (callgrind: 3,600 instructions a record, a copy about a third of it);
    # two updates, not one of a joined copy of the body.
    hasher = _SHA256.copy()
    hasher.update(previous.encode("ascii"))
    hasher.update(body)
    return hasher.hexdigest()


def chained_line(previous: str, body: bytes) -> tuple[str, bytes]:
    """The hash of ``body`` after ``previous``, and the line to write (``h`` last, newline).

    (The line made in one format instead of three concatenations, each a copy: the journal's
    writer thread makes one for every record, holding the interpreter's lock.)
    """
    digest = chain_hash(previous, body)
    return digest, b'%b%b%b"}\n' % (body[:-1], HASH_OPEN, digest.encode("ascii"))


def split_line(line: bytes) -> tuple[bytes, str | None]:
    """A line (without its newline) as the body that was hashed and its ``h`` (None: unchained)."""
    size = len(line)
    if size > HASH_TAIL and line.startswith(HASH_OPEN, size - HASH_TAIL) and line.endswith(b'"}'):
        # (compared in place: no copy of the line's end for every record read)
        digest = line[_HASH_DIGITS - HASH_TAIL : -2]
        return line[:-HASH_TAIL] + b"}", digest.decode("ascii", errors="replace")
    return line, None


def kind_prefix(kind: str) -> bytes:
    """How a line of ``kind`` begins: a pass can skip other kinds without decoding them."""
    return b'{"kind":"' + kind.encode() + b'"'


# ------------------------------------------------------------------------------------------------
# Records as read back
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartRecord:
    """One (re)start of the controller."""

    n: int
    session: int
    ts: datetime
    table: str = ""
    where: str = ""


class ReceivedRecord(NamedTuple):
    """A message as the controller received it.

    A named tuple, not a frozen data class like the other kinds: it is made for every message
    read back, and a frozen data class's constructor (one ``object.__setattr__`` per field) cost
    three times as much, a tenth of the audit's time outside the engine."""

    n: int
    topic: str
    payload: bytes
    received: datetime
    where: str = ""


@dataclass(frozen=True, slots=True)
class RejectedRecord:
    """A report of malformed input on one topic, as the engine was given it (replayed)."""

    n: int
    topic: str
    device: str | None
    count: int
    error: str
    received: datetime
    where: str = ""


@dataclass(frozen=True, slots=True)
class TimeRecord:
    """Event time ``now`` came with no message (the engine was given it; replayed)."""

    n: int
    now: datetime
    received: datetime
    where: str = ""


@dataclass(frozen=True, slots=True)
class SampleRecord:
    """A malformed payload kept for the audit (its first bytes; not replayed)."""

    n: int
    topic: str
    payload: bytes
    size: int
    error: str
    received: datetime
    where: str = ""


@dataclass(frozen=True, slots=True)
class PublishedRecord:
    """A message the broker accepted from the controller."""

    n: int
    what: PublishedWhat
    cause: int
    topic: str
    payload: bytes
    retain: bool
    ts: datetime | None = None
    where: str = ""


@dataclass(frozen=True, slots=True)
class CheckpointRecord:
    """A checkpoint file of the engine state and where the replay after it starts."""

    n: int
    covers: int
    file: str
    sha256: str
    segment: int
    offset: int
    session: int
    ts: datetime
    where: str = ""


@dataclass(frozen=True, slots=True)
class OutageRecord:
    """A time the journal could not be written, and what that cost."""

    n: int
    since: datetime
    until: datetime
    reason: str
    late: int
    lost_from: int | None = None
    lost_to: int | None = None
    where: str = ""
    #: Spans of records whose messages were acknowledged before they were durable.
    acknowledged_early: tuple[tuple[int, int], ...] = ()

    @property
    def lost(self) -> int:
        if self.lost_from is None or self.lost_to is None:
            return 0
        return self.lost_to - self.lost_from + 1


@dataclass(frozen=True, slots=True)
class RetentionRecord:
    """Closed segments removed by the retention setting."""

    n: int
    removed: tuple[str, ...]
    through: int
    through_h: str
    ts: datetime
    where: str = ""


JournalRecord: TypeAlias = (
    StartRecord
    | ReceivedRecord
    | RejectedRecord
    | TimeRecord
    | SampleRecord
    | PublishedRecord
    | CheckpointRecord
    | OutageRecord
    | RetentionRecord
)


def record_time(record: JournalRecord) -> datetime | None:
    """When a record happened (receive time, publish time, ...): what ``export --from`` compares."""
    if isinstance(record, ReceivedRecord | RejectedRecord | TimeRecord | SampleRecord):
        return record.received
    if isinstance(record, OutageRecord):
        return record.since
    return record.ts


def _spans(value: object) -> tuple[tuple[int, int], ...]:
    """``[[first, last], ...]`` of an outage record."""
    if not isinstance(value, list):
        raise ValueError("acknowledged_early must be a list")
    spans: list[tuple[int, int]] = []
    for span in value:
        if not (isinstance(span, list) and len(span) == 2):
            raise ValueError("acknowledged_early holds [first, last] pairs")
        spans.append((int(span[0]), int(span[1])))
    return tuple(spans)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def decode(data: Any, where: str = "") -> JournalRecord:
    """A record from its parsed JSON; ``ValueError``/``KeyError``/``TypeError`` when malformed."""
    if not isinstance(data, dict):
        raise ValueError("a record must be a JSON object")
    kind = data.get("kind")
    n = int(data.get("n", 0))
    if kind == "received":
        return ReceivedRecord(n, str(data["topic"]), _payload_of(data), parse_time(data["received"]), where)
    if kind == "rejected":
        device = data["device"]
        return RejectedRecord(
            n,
            topic=str(data["topic"]),
            device=None if device is None else str(device),
            count=int(data["count"]),
            error=str(data["error"]),
            received=parse_time(data["received"]),
            where=where,
        )
    if kind == "time":
        return TimeRecord(n, parse_time(data["now"]), parse_time(data["received"]), where)
    if kind == "sample":
        return SampleRecord(
            n,
            topic=str(data["topic"]),
            payload=_payload_of(data),
            size=int(data["size"]),
            error=str(data["error"]),
            received=parse_time(data["received"]),
            where=where,
        )
    if kind == "published":
        what = data["what"]
        if what not in PUBLISHED_WHAT:
            raise ValueError(f"unknown published kind {what!r}")
        ts = parse_time(data["ts"]) if "ts" in data else None
        return PublishedRecord(
            n,
            what,
            int(data["cause"]),
            str(data["topic"]),
            _payload_of(data),
            bool(data.get("retain", False)),
            ts,
            where,
        )
    if kind == "start":
        return StartRecord(n, int(data["session"]), parse_time(data["ts"]), str(data.get("table", "")), where)
    if kind == "checkpoint":
        return CheckpointRecord(
            n,
            covers=int(data["covers"]),
            file=str(data["file"]),
            sha256=str(data["sha256"]),
            segment=int(data["segment"]),
            offset=int(data["offset"]),
            session=int(data["session"]),
            ts=parse_time(data["ts"]),
            where=where,
        )
    if kind == "outage":
        return OutageRecord(
            n,
            since=parse_time(data["since"]),
            until=parse_time(data["until"]),
            reason=str(data["reason"]),
            late=int(data["late"]),
            lost_from=_optional_int(data.get("lost_from")),
            lost_to=_optional_int(data.get("lost_to")),
            where=where,
            acknowledged_early=_spans(data.get("acknowledged_early", [])),
        )
    if kind == "retention":
        removed = data["removed"]
        if not isinstance(removed, list):
            raise ValueError("removed must be a list")
        return RetentionRecord(
            n,
            removed=tuple(str(r) for r in removed),
            through=int(data["through"]),
            through_h=str(data["through_h"]),
            ts=parse_time(data["ts"]),
            where=where,
        )
    raise ValueError(f"unknown record kind {kind!r}")
