"""The journal: an append-only JSON-lines record of everything the controller received and sent.

It serves two readers. The regulator's audit reads it as a plain record of the table: every
message received (topic, payload exactly as received, receive time) and every alert, state and
command published. The controller reads it at start-up to recover: the engine core is
deterministic, so replaying the received records rebuilds the hand state and alert ids a crash
interrupted.

One JSON object per line, ``kind`` says which:

- ``start``: ``{"kind": "start", "session": n, "ts": ..., "table": ...}`` at every (re)start.
- ``received``: ``{"kind": "received", "n": n, "topic": ..., "payload": "..." | "payload_b64":
  "...", "received": ...}``; ``n`` numbers received records from 1 over the whole journal.
- ``published``: ``{"kind": "published", "what": "alert" | "state" | "command", "cause": n,
  "topic": ..., "payload": "...", "retain": bool, "ts": ...}``; ``cause`` is the ``n`` of the
  received record whose processing produced it (0: produced at start-up).
- ``rejected``: ``{"kind": "rejected", "n": n, "topic": ..., "device": ... | null, "count": c,
  "error": "...", "received": ...}``: the report of a topic's malformed input (``count`` so far,
  the latest reason) the engine was given; numbered with the received records, replayed.
- ``sample``: ``{"kind": "sample", "topic": ..., "payload": "..." | "payload_b64": "...",
  "size": bytes, "error": "...", "received": ...}``: a malformed payload kept for the audit (at
  most a few per report, the first 512 bytes); not replayed.

A received record is written before the message is processed (and fsynced, with ``fsync = true``,
before anything it caused is published), a published record after the broker accepted the
message: a crash loses neither an input nor the knowledge of which outputs reached the broker.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeAlias

from controller.private_files import open_private_append

log = logging.getLogger(__name__)

PublishedWhat: TypeAlias = Literal["alert", "state", "command"]


def _time(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _parse_time(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"time must be a string, got {value!r}")
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass(frozen=True, slots=True)
class ReceivedRecord:
    """A message as the controller received it."""

    n: int
    topic: str
    payload: bytes
    received: datetime
    line: int


@dataclass(frozen=True, slots=True)
class PublishedRecord:
    """A message the broker accepted from the controller."""

    what: PublishedWhat
    cause: int
    topic: str
    payload: bytes
    retain: bool
    line: int


@dataclass(frozen=True, slots=True)
class RejectedRecord:
    """A report of malformed input on one topic, as the engine was given it."""

    n: int
    topic: str
    device: str | None
    count: int
    error: str
    received: datetime
    line: int


@dataclass(frozen=True, slots=True)
class SampleRecord:
    """A malformed payload kept for the audit (the first bytes of it)."""

    topic: str
    payload: bytes
    line: int


@dataclass(frozen=True, slots=True)
class StartRecord:
    """One (re)start of the controller."""

    session: int
    ts: datetime
    line: int


JournalRecord: TypeAlias = (
    ReceivedRecord | PublishedRecord | StartRecord | RejectedRecord | SampleRecord
)


@dataclass
class JournalContents:
    """What a journal file holds, with the problems found while reading it."""

    records: list[JournalRecord] = field(default_factory=list)
    #: One line per unreadable record, ``file:line: why``.
    problems: list[str] = field(default_factory=list)
    #: The file does not end with a newline (a torn last write): the next append must start one.
    torn_tail: bool = False

    @property
    def received(self) -> Iterator[ReceivedRecord]:
        return (r for r in self.records if isinstance(r, ReceivedRecord))

    @property
    def published(self) -> Iterator[PublishedRecord]:
        return (r for r in self.records if isinstance(r, PublishedRecord))

    @property
    def last_session(self) -> int:
        return max((r.session for r in self.records if isinstance(r, StartRecord)), default=0)

    @property
    def last_received(self) -> int:
        numbered = (r.n for r in self.records if isinstance(r, ReceivedRecord | RejectedRecord))
        return max(numbered, default=0)


def _payload_fields(payload: bytes) -> dict[str, str]:
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


def _decode(data: Any, line: int) -> JournalRecord:
    if not isinstance(data, dict):
        raise ValueError("a record must be a JSON object")
    kind = data.get("kind")
    if kind == "received":
        return ReceivedRecord(
            n=int(data["n"]),
            topic=str(data["topic"]),
            payload=_payload_of(data),
            received=_parse_time(data["received"]),
            line=line,
        )
    if kind == "published":
        what = data["what"]
        if what not in ("alert", "state", "command"):
            raise ValueError(f"unknown published kind {what!r}")
        return PublishedRecord(
            what=what,
            cause=int(data["cause"]),
            topic=str(data["topic"]),
            payload=_payload_of(data),
            retain=bool(data.get("retain", False)),
            line=line,
        )
    if kind == "start":
        return StartRecord(session=int(data["session"]), ts=_parse_time(data["ts"]), line=line)
    if kind == "rejected":
        device = data.get("device")
        return RejectedRecord(
            n=int(data["n"]),
            topic=str(data["topic"]),
            device=None if device is None else str(device),
            count=int(data["count"]),
            error=str(data["error"]),
            received=_parse_time(data["received"]),
            line=line,
        )
    if kind == "sample":
        return SampleRecord(topic=str(data["topic"]), payload=_payload_of(data), line=line)
    raise ValueError(f"unknown record kind {kind!r}")


@dataclass
class JournalScan:
    """What one pass over a journal found besides its records."""

    #: One line per unreadable record, ``file:line: why``.
    problems: list[str] = field(default_factory=list)
    #: The file does not end with a newline (a torn last write): the next append must start one.
    torn_tail: bool = False
    last_session: int = 0
    last_received: int = 0


def _prefix(kind: str) -> bytes:
    # Records are written with ``kind`` first: a pass can skip other kinds without decoding them.
    return b'{"kind":"' + kind.encode() + b'"'


def scan_journal(
    path: Path, scan: JournalScan, *, skip: tuple[str, ...] = (), only: tuple[str, ...] = ()
) -> Iterator[JournalRecord]:
    """The records of ``path`` one by one, without holding the file in memory.

    Lines of the kinds in ``skip``, or of kinds other than ``only`` when given, are passed over
    undecoded (their problems go unreported in this pass). An unreadable line is reported in
    ``scan.problems`` as ``file:line: why`` and skipped; reading goes on. The usual case is a
    torn last line, left by a crash in the middle of a write. A missing file is an empty journal.
    """
    skipped = tuple(_prefix(kind) for kind in skip)
    wanted = tuple(_prefix(kind) for kind in only)
    try:
        file = path.open("rb")
    except FileNotFoundError:
        return
    with file:
        for number, line in enumerate(file, start=1):
            torn = not line.endswith(b"\n")  # only the last line can lack its newline
            scan.torn_tail = torn
            text = line.strip()
            if not text or (skipped and text.startswith(skipped)):
                continue
            if wanted and not text.startswith(wanted):
                continue
            try:
                record = _decode(json.loads(text), number)
            except (ValueError, KeyError, TypeError, UnicodeDecodeError) as error:
                why = "torn record (crash during a write?)" if torn else "bad record"
                scan.problems.append(f"{path}:{number}: {why}: {error}")
                continue
            if isinstance(record, StartRecord):
                scan.last_session = max(scan.last_session, record.session)
            elif isinstance(record, ReceivedRecord | RejectedRecord):
                scan.last_received = max(scan.last_received, record.n)
            yield record


def read_journal(path: Path) -> JournalContents:
    """Every record of ``path`` in memory (for tools and tests; start-up streams instead)."""
    scan = JournalScan()
    records = list(scan_journal(path, scan))
    return JournalContents(records=records, problems=scan.problems, torn_tail=scan.torn_tail)


class Journal:
    """The open journal, appending one record per call, fsynced when configured."""

    def __init__(self, path: Path, *, fsync: bool) -> None:
        self.path = path
        self.fsync = fsync
        self._next_received = 1
        self._fd: int | None = None
        self._unsynced = False
        # A write failed part-way (disk full): the next record starts on a fresh line.
        self._broken = False

    def open(self, *, torn_tail: bool = False, next_received: int = 1) -> None:
        """Open for appending after the records read so far (``next_received``: the next ``n``).

        A torn last line is closed with a newline first, so that the next record starts clean.
        """
        self._next_received = next_received
        # Unbuffered: a failed write leaves nothing behind in a buffer to be written twice.
        # Mode 0600 in a 0700 directory: the journal names every tag UID.
        self._fd = open_private_append(self.path)
        self._broken = torn_tail

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self.sync()
            os.close(self._fd)
            self._fd = None

    def sync(self) -> None:
        """Make every record written so far durable (fsync, when configured).

        Records reach the operating system at once (a killed process loses none); ``sync`` is
        for power cuts. The service calls it before it publishes what the records caused, once
        per batch of messages rather than once per record.
        """
        if self._fd is not None and self._unsynced:
            if self.fsync:
                os.fsync(self._fd)
            self._unsynced = False

    def _append(self, record: dict[str, Any], *, durable: bool = True) -> None:
        """Write one record; raise ``OSError`` when the file cannot take it (nothing is retried).

        A record that is not ``durable`` (a sample) asks for no fsync of its own: the next
        durable record's takes it along.
        """
        if self._fd is None:
            raise RuntimeError(f"journal {self.path} is not open")
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        data = (b"\n" if self._broken else b"") + line + b"\n"
        try:
            # One record per line: a crash tears at most the last one.
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError:
            self._broken = True
            raise
        self._broken = False
        self._unsynced = self._unsynced or durable

    def start(self, session: int, when: datetime, table: str) -> None:
        self._append({"kind": "start", "session": session, "ts": _time(when), "table": table})
        self.sync()

    def received(self, topic: str, payload: bytes, when: datetime) -> int:
        """Record a received message; return its number (the ``cause`` of what it produces)."""
        n = self._next_received
        self._append(
            {
                "kind": "received",
                "n": n,
                "topic": topic,
                **_payload_fields(payload),
                "received": _time(when),
            }
        )
        self._next_received += 1
        return n

    def rejected(
        self, topic: str, device: str | None, count: int, error: str, when: datetime
    ) -> int:
        """Record a report of malformed input; return its number (numbered with ``received``)."""
        n = self._next_received
        self._append(
            {
                "kind": "rejected",
                "n": n,
                "topic": topic,
                "device": device,
                "count": count,
                "error": error,
                "received": _time(when),
            }
        )
        self._next_received += 1
        return n

    def sample(self, topic: str, payload: bytes, error: str, when: datetime, *, keep: int) -> None:
        """Keep the first ``keep`` bytes of a malformed payload for the audit."""
        self._append(
            {
                "kind": "sample",
                "topic": topic,
                **_payload_fields(payload[:keep]),
                "size": len(payload),
                "error": error,
                "received": _time(when),
            },
            durable=False,  # an audit sample: a flood of them must not cost an fsync each
        )

    def published(
        self,
        what: PublishedWhat,
        cause: int,
        topic: str,
        payload: bytes,
        *,
        retain: bool,
        when: datetime,
    ) -> None:
        self._append(
            {
                "kind": "published",
                "what": what,
                "cause": cause,
                "topic": topic,
                **_payload_fields(payload),
                "retain": retain,
                "ts": _time(when),
            }
        )
