"""The journal file: records written and read back byte-exact, torn and bad lines reported."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from controller.journal import (
    Journal,
    JournalScan,
    PublishedRecord,
    ReceivedRecord,
    StartRecord,
    read_journal,
    scan_journal,
)

T0 = datetime(2026, 11, 30, 1, 2, 3, 456789, tzinfo=UTC)


def _journal(path: Path) -> Journal:
    journal = Journal(path, fsync=True)
    journal.open()
    return journal


def test_records_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "var" / "journal.jsonl"  # the directory is created on open
    journal = _journal(path)
    journal.start(1, T0, "t1")
    n1 = journal.received("holdem/t1/dev/x/event", b'{"type":"key"}', T0)
    n2 = journal.received("holdem/t1/input", b"\xff\xfe not utf-8", T0)
    journal.published("alert", n1, "holdem/t1/alerts", b'{"id":"1-1"}', retain=False, when=T0)
    journal.close()

    contents = read_journal(path)
    assert (n1, n2) == (1, 2)
    assert contents.problems == []
    assert not contents.torn_tail
    start, first, second, alert = contents.records
    assert start == StartRecord(session=1, ts=T0, line=1)
    assert first == ReceivedRecord(1, "holdem/t1/dev/x/event", b'{"type":"key"}', T0, line=2)
    assert isinstance(second, ReceivedRecord)
    assert second.payload == b"\xff\xfe not utf-8"  # kept byte-exact (base64)
    assert alert == PublishedRecord("alert", 1, "holdem/t1/alerts", b'{"id":"1-1"}', False, 4)
    assert contents.last_session == 1
    assert contents.last_received == 2


def test_numbering_continues_after_reopen(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _journal(path)
    journal.received("a", b"1", T0)
    journal.close()
    contents = read_journal(path)
    again = Journal(path, fsync=False)
    again.open(next_received=contents.last_received + 1)
    assert again.received("a", b"2", T0) == 2
    again.close()


def test_missing_file_is_an_empty_journal(tmp_path: Path) -> None:
    contents = read_journal(tmp_path / "none.jsonl")
    assert contents.records == []
    assert contents.problems == []
    assert contents.last_session == 0


def test_torn_last_line_is_reported_with_file_and_line_and_closed_on_reopen(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _journal(path)
    journal.start(1, T0, "t1")
    journal.received("holdem/t1/input", b"{}", T0)
    journal.close()
    with path.open("ab") as file:
        file.write(b'{"kind":"received","n":2,"topic":"holdem/t1/in')  # crash mid-write

    contents = read_journal(path)
    assert contents.torn_tail
    assert len(contents.records) == 2
    assert len(contents.problems) == 1
    assert contents.problems[0].startswith(f"{path}:3: torn record")

    reopened = Journal(path, fsync=True)
    reopened.open(torn_tail=True, next_received=contents.last_received + 1)
    reopened.received("holdem/t1/input", b"{}", T0)
    reopened.close()
    after = read_journal(path)
    assert not after.torn_tail
    assert [type(r).__name__ for r in after.records] == [
        "StartRecord",
        "ReceivedRecord",
        "ReceivedRecord",
    ]
    assert after.last_received == 2
    assert len(after.problems) == 1
    assert f"{path}:3: bad record" in after.problems[0]


def test_bad_line_in_the_middle_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text(
        '{"kind":"start","session":4,"ts":"2026-11-30T01:02:03Z","table":"t1"}\n'
        '{"kind":"mystery"}\n'
        "[1, 2]\n"
        '{"kind":"received","n":1,"topic":"x","payload":"{}","received":"2026-11-30T01:02:03Z"}\n',
        encoding="utf-8",
    )
    contents = read_journal(path)
    assert [p.split(": ")[0] for p in contents.problems] == [f"{path}:2", f"{path}:3"]
    assert "unknown record kind 'mystery'" in contents.problems[0]
    assert contents.last_session == 4
    assert contents.last_received == 1


def test_scan_streams_the_kinds_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _journal(path)
    journal.start(2, T0, "t1")
    journal.received("holdem/t1/input", b"{}", T0)
    journal.published("state", 1, "holdem/t1/state", b"{}", retain=True, when=T0)
    journal.close()
    with path.open("ab") as file:
        file.write(b"garbage\n")

    scan = JournalScan()
    assert [type(r).__name__ for r in scan_journal(path, scan, only=("published",))] == [
        "PublishedRecord"
    ]
    assert scan.problems == []  # the garbage line is not one this pass reads
    scan = JournalScan()
    kinds = [type(r).__name__ for r in scan_journal(path, scan, skip=("published",))]
    assert kinds == ["StartRecord", "ReceivedRecord"]
    assert (scan.last_session, scan.last_received) == (2, 1)
    assert scan.problems == [f"{path}:4: bad record: Expecting value: line 1 column 1 (char 0)"]
