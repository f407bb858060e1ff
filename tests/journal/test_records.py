"""Records written and read back byte-exact, numbered and hash-chained; torn and bad lines reported."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from controller.journal import (
    JournalFiles,
    JournalReader,
    JournalScan,
    PublishedRecord,
    ReceivedRecord,
    StartRecord,
    TimeRecord,
    read_journal,
)
from controller.journal.records import (
    GENESIS,
    INPUT_KINDS,
    KINDS,
    chain_hash,
    chained_line,
    decode,
    encode_body,
    parse_time,
    payload_fields,
    received_body,
    record_time,
    split_line,
    time_text,
)
from tests.journal.support import T0, TOPIC, journal, lines


def test_records_round_trip_numbered_and_chained(tmp_path: Path) -> None:
    path = tmp_path / "var" / "journal.jsonl"  # the directory is created on open
    j = journal(path)
    assert j.start(1, T0, "t1") == 1
    n2 = j.received("holdem/t1/dev/x/event", b'{"type":"key"}', T0)
    n3 = j.received(TOPIC, b"\xff\xfe not utf-8", T0)
    n4 = j.published("alert", n2, "holdem/t1/alerts", b'{"id":"1-1"}', retain=False, when=T0)
    j.close()
    assert (n2, n3, n4) == (2, 3, 4)

    contents = read_journal(path)
    assert contents.problems == []
    assert contents.scan.chain == []
    start, first, second, alert = contents.records
    assert start == StartRecord(1, 1, T0, "t1", where=f"{path}:1")
    assert first == ReceivedRecord(2, "holdem/t1/dev/x/event", b'{"type":"key"}', T0, f"{path}:2")
    assert isinstance(second, ReceivedRecord)
    assert second.payload == b"\xff\xfe not utf-8"  # kept byte-exact (base64)
    assert alert == PublishedRecord(
        4, "alert", 2, "holdem/t1/alerts", b'{"id":"1-1"}', False, T0, f"{path}:4"
    )
    assert (contents.last_session, contents.last_n, contents.received_count) == (1, 4, 2)

    # Each line: kind first, n second, h last = sha256(previous h + the line without h).
    previous = GENESIS
    for raw in lines(path):
        assert raw.startswith(b'{"kind":"')
        body, digest = split_line(raw)
        assert digest == chain_hash(previous, body)
        assert list(json.loads(raw))[:2] == ["kind", "n"]
        previous = digest


def test_a_time_record_is_an_input_numbered_and_chained_like_a_message(tmp_path: Path) -> None:
    """Event time that came with no message (docs/journal.md, ``time``): read back with both
    clocks, counted among the engine's inputs, and the ``cause`` of what it produced."""
    path = tmp_path / "journal.jsonl"
    j = journal(path)
    j.received(TOPIC, b"1", T0)
    event_time = T0 - timedelta(hours=1, microseconds=7)  # (a device clock an hour behind)
    n = j.time(event_time, T0 + timedelta(seconds=2))
    j.published("alert", n, "holdem/t1/alerts", b'{"id":"1-1"}', retain=False, when=T0)
    j.close()
    contents = read_journal(path)
    assert contents.problems == []
    assert contents.scan.chain == []
    [time] = contents.times
    assert time == TimeRecord(2, event_time, T0 + timedelta(seconds=2), f"{path}:2")
    assert record_time(time) == T0 + timedelta(seconds=2)
    assert contents.last_received == 2
    assert [r.cause for r in contents.published] == [2]
    assert lines(path)[1].startswith(b'{"kind":"time","n":2,"now":"')
    assert "time" in KINDS
    assert "time" in INPUT_KINDS


def test_a_journal_without_time_records_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path)
    j.received(TOPIC, b"1", T0)
    j.rejected(TOPIC, None, 1, "not JSON", T0)
    j.close()
    contents = read_journal(path)
    assert list(contents.times) == []
    assert (contents.last_received, contents.problems) == (2, [])


def test_numbering_and_chain_continue_after_reopen(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path)
    j.received(TOPIC, b"1", T0)
    j.close()
    again = journal(path)
    assert again.received(TOPIC, b"2", T0) == 2
    again.close()
    contents = read_journal(path)
    assert [r.n for r in contents.records] == [1, 2]
    assert contents.scan.chain == []


def test_missing_file_is_an_empty_journal(tmp_path: Path) -> None:
    contents = read_journal(tmp_path / "none.jsonl")
    assert contents.records == []
    assert contents.problems == []
    assert contents.last_session == 0


def test_torn_last_line_is_reported_and_its_number_not_used_again(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path)
    j.start(1, T0, "t1")
    j.received(TOPIC, b"{}", T0)
    j.close()
    with path.open("ab") as file:
        file.write(b'{"kind":"received","n":3,"topic":"holdem/t1/in')  # crash mid-write

    contents = read_journal(path)
    assert contents.torn_tail
    assert len(contents.records) == 2
    assert len(contents.problems) == 1
    assert contents.problems[0].startswith(f"{path}:3: torn record")

    reopened = journal(path)
    # 3 was the torn record's: an outage record (4) declares it lost, the next record is 5.
    assert reopened.received(TOPIC, b"{}", T0) == 5
    reopened.close()
    after = read_journal(path)
    assert not after.torn_tail
    assert [type(r).__name__ for r in after.records] == [
        "StartRecord",
        "ReceivedRecord",
        "OutageRecord",
        "ReceivedRecord",
    ]
    assert [(o.n, o.lost_from, o.lost_to) for o in after.outages] == [(4, 3, 3)]
    assert len(after.problems) == 1
    assert f"{path}:3: bad record" in after.problems[0]
    # The chain goes around the torn line: nothing is missing, nothing broken.
    assert after.scan.chain == []


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
    assert contents.received_count == 1
    assert contents.scan.unchained == 4  # lines without a hash (the first journal format)


def test_a_pass_decodes_only_the_kinds_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path)
    j.start(2, T0, "t1")
    j.received(TOPIC, b"{}", T0)
    j.published("state", 2, "holdem/t1/state", b"{}", retain=True, when=T0)
    j.close()

    reader = JournalReader(JournalFiles(path))
    scan = JournalScan()
    kinds = [type(r).__name__ for r in reader.scan(scan, only=("published",))]
    assert kinds == ["PublishedRecord"]
    assert (scan.last_session, scan.last_n, scan.records) == (2, 3, 3)  # starts are always counted
    scan = JournalScan()
    assert [type(r).__name__ for r in reader.scan(scan, skip=("published",))] == [
        "StartRecord",
        "ReceivedRecord",
    ]


@pytest.mark.parametrize(
    "payload",
    [
        b'{"v":1,"seq":3,"type":"tag","uid":"E004015012345678"}',
        b'quotes " and \\ backslashes, tabs\t, newlines\n, control \x01\x1f, DEL \x7f',
        "non-ASCII: \u00e9\u00e8 \u2660\u2665 \U0001f0a1 \u2028\u2029".encode(),
        b"",
        b"\xff\xfe not UTF-8",
    ],
)
def test_a_received_record_is_the_generic_encoding_byte_for_byte(payload: bytes) -> None:
    """The received record's own encoder (the one record of every message) writes exactly what
    the generic one would: readers, the hash chain and ``journal verify`` see one format."""
    topic = "holdem/t1/dev/rfid-\u00e9/event"
    generic = encode_body(
        "received", 41, {"topic": topic, **payload_fields(payload), "received": time_text(T0)}
    )
    assert received_body(41, topic, payload, time_text(T0)) == generic
    assert json.loads(generic)["n"] == 41


@pytest.mark.parametrize(
    "fields",
    [
        {"topic": TOPIC, "payload": '{"type":"key"}', "received": time_text(T0)},
        {"topic": TOPIC, "payload": "", "received": "2026-11-30T01:02:03+01:00"},
        {"topic": TOPIC, "payload": "x", "received": "2026-11-30T01:02:03"},  # no zone: UTC
        {"topic": TOPIC, "payload": "x", "received": "yesterday"},  # bad time
        {"topic": TOPIC, "payload": 7, "received": time_text(T0)},  # not a string
        {"topic": 7, "payload": "x", "received": time_text(T0)},  # str() of it, as ever
        {"topic": TOPIC, "payload_b64": "/w==", "received": time_text(T0)},
        {"topic": TOPIC, "received": time_text(T0)},  # no payload
        {"payload": "x", "received": time_text(T0)},  # no topic
    ],
)
def test_the_quick_path_of_received_lines_reads_what_the_generic_one_does(
    tmp_path: Path, fields: dict[str, object]
) -> None:
    """The reader's one-call path for ``received`` lines (controller.journal.reader) gives the
    record, or the problem, that the generic decoding gives: whatever a line holds, either it
    takes it exactly or it leaves it to the generic path."""
    path = tmp_path / "journal.jsonl"
    body = encode_body("received", 1, fields)
    _, line = chained_line(GENESIS, body)
    path.write_bytes(line)
    contents = read_journal(path)
    try:
        expected = [decode(json.loads(body), f"{path}:1")]
        problems: list[str] = []
    except (ValueError, KeyError, TypeError) as error:
        expected, problems = [], [f"{path}:1: bad record: {error}"]
    assert contents.records == expected
    assert contents.problems == problems
    assert contents.scan.chain == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T01:02:03.456789Z", datetime(2026, 11, 30, 1, 2, 3, 456789, tzinfo=UTC)),
        ("2026-11-30T01:02:03Z", datetime(2026, 11, 30, 1, 2, 3, tzinfo=UTC)),
        ("2026-11-30T02:02:03+01:00", datetime(2026, 11, 30, 1, 2, 3, tzinfo=UTC)),
        ("2026-11-30T01:02:03", datetime(2026, 11, 30, 1, 2, 3, tzinfo=UTC)),  # naive: UTC
    ],
)
def test_a_journal_time_reads_as_before(text: str, expected: datetime) -> None:
    """``parse_time`` lets ``datetime.fromisoformat`` read the ``Z`` itself now: the same time
    and offset as when the ``Z`` was replaced by ``+00:00`` first; a bad text is still refused."""
    before = datetime.fromisoformat(text.replace("Z", "+00:00"))
    before = before if before.tzinfo is not None else before.replace(tzinfo=UTC)
    parsed = parse_time(text)
    assert parsed == expected == before
    assert parsed.utcoffset() == before.utcoffset()
    bad = text + "!"
    with pytest.raises(ValueError, match="Invalid isoformat string") as refused:
        parse_time(bad)
    with pytest.raises(ValueError, match="Invalid isoformat string") as refused_before:
        datetime.fromisoformat(bad.replace("Z", "+00:00"))
    assert str(refused.value) == str(refused_before.value)
