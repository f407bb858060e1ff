"""``journal verify`` names the first broken or missing record, a tampered checkpoint, what was lost;
``journal export`` writes the records of a span, by number or by time."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from controller.journal import JournalFiles, read_journal
from controller.journal.export import Span, export, parse_bound
from controller.journal.records import chained_line, encode_body
from controller.journal.verify import EXIT_BROKEN, EXIT_GAPS, EXIT_INTACT, verify
from tests.conftest import EXAMPLE_REGISTRY
from tests.journal.support import T0, TOPIC, fill, journal, lines, rewrite_line

TABLECTL = Path(sys.executable).parent / "tablectl"


def _journal(tmp_path: Path, count: int = 30) -> Path:
    path = tmp_path / "journal.jsonl"
    j = journal(path)
    fill(j, count)
    j.close()
    return path


def test_an_intact_journal(tmp_path: Path) -> None:
    result = verify(JournalFiles(_journal(tmp_path)))
    assert result.exit_status == EXIT_INTACT
    assert (result.records, result.first_n, result.last_n) == (30, 1, 30)
    assert result.lines("j")[0] == "journal j: intact"


def test_a_changed_record_is_named(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    line = lines(path)[11]  # record 12
    rewrite_line(path, 11, line.replace(b"xxxx", b"xxxy", 1))
    result = verify(JournalFiles(path))
    assert result.exit_status == EXIT_BROKEN
    assert result.broken[0].startswith("journal.jsonl:12: record 12: hash does not match")
    assert result.broken_count == 1  # the records after it still chain to it


def test_a_changed_record_with_its_hash_recomputed_breaks_the_next(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    all_lines = lines(path)
    data = json.loads(all_lines[11])
    data["payload"] = "forged"
    previous = json.loads(all_lines[10])["h"]
    del data["h"]
    body = encode_body(data.pop("kind"), data.pop("n"), data)
    digest = hashlib.sha256(previous.encode() + body).hexdigest()
    rewrite_line(path, 11, body[:-1] + b',"h":"' + digest.encode() + b'"}')
    result = verify(JournalFiles(path))
    assert result.exit_status == EXIT_BROKEN
    assert result.broken[0].startswith("journal.jsonl:13: record 13: hash does not match")


def test_a_missing_record_is_named(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    rewrite_line(path, 19, None)  # record 20
    result = verify(JournalFiles(path))
    assert result.exit_status == EXIT_BROKEN
    assert "records 20 to 20 are missing (record 21 follows record 19)" in result.broken[0]


def test_records_removed_from_the_start_are_named(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    for _ in range(3):
        rewrite_line(path, 0, None)
    result = verify(JournalFiles(path))
    assert result.exit_status == EXIT_BROKEN
    assert "record 4: the records before it are missing" in result.broken[0]


def test_a_tampered_checkpoint_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path)
    fill(j, 5)
    j.checkpoint(5, b"state", 1, T0)
    fill(j, 5)
    j.close()
    files = JournalFiles(path)
    (checkpoint,) = read_journal(path).checkpoints
    assert verify(files).exit_status == EXIT_INTACT
    assert verify(files).checkpoints_checked == 1
    checkpoint_file = files.directory / checkpoint.file
    checkpoint_file.chmod(0o640)
    checkpoint_file.write_bytes(checkpoint_file.read_bytes() + b"!")
    result = verify(files)
    assert result.exit_status == EXIT_BROKEN
    assert f"checkpoint file {checkpoint.file} does not match the SHA-256 of record" in result.broken[0]


def test_declared_losses_are_reported_apart_from_breaks(tmp_path: Path) -> None:
    path = _journal(tmp_path, 3)
    with path.open("ab") as file:
        # What the writer leaves after a fault: records 4 to 6 lost, declared by outage record 7.
        previous = json.loads(lines(path)[-1])["h"]
        body = encode_body(
            "outage",
            7,
            {
                "since": "2026-11-30T01:00:00Z",
                "until": "2026-11-30T01:05:00Z",
                "reason": "No space left on device",
                "late": 2,
                "lost_from": 4,
                "lost_to": 6,
            },
        )
        file.write(chained_line(previous, body)[1])
    result = verify(JournalFiles(path))
    assert result.exit_status == EXIT_GAPS
    assert result.lost == 3
    report = "\n".join(result.lines("j"))
    assert "3 records were lost" in report
    assert "records 4 to 6 LOST" in report


def _numbers(data: bytes) -> list[int]:
    return [json.loads(line)["n"] for line in data.splitlines()]


def test_export_by_record_number_and_by_time(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path, segment_bytes=1_500)
    for i in range(40):
        j.received(TOPIC, b"{}", T0 + timedelta(seconds=i))
    j.close()
    files = JournalFiles(path)
    assert len(files.segments()) > 2

    out = io.BytesIO()
    assert export(files, out, Span(parse_bound("10"), parse_bound("14"))) == 5
    assert _numbers(out.getvalue()) == [10, 11, 12, 13, 14]
    # verbatim: the lines as journaled, hashes included
    assert set(out.getvalue().splitlines()) <= set(read_journal_lines(files))

    out = io.BytesIO()
    since = (T0 + timedelta(seconds=30)).isoformat()
    export(files, out, Span(parse_bound(since), None))
    assert _numbers(out.getvalue()) == list(range(31, 41))

    with pytest.raises(ValueError, match="neither a record number nor an ISO 8601 time"):
        parse_bound("yesterday")


def read_journal_lines(files: JournalFiles) -> list[bytes]:
    return [line for s in files.segments() for line in s.path.read_bytes().splitlines()]


def test_the_command_line(tmp_path: Path) -> None:
    path = _journal(tmp_path)
    config = tmp_path / "t1.toml"
    config.write_text(
        f'[table]\nid = "t1"\nseats = 9\n\n[decks]\nregistry = "{EXAMPLE_REGISTRY}"\n\n'
        '[journal]\npath = "journal.jsonl"\n',
        encoding="utf-8",
    )
    ok = subprocess.run(
        [str(TABLECTL), "journal", "verify", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(f"journal {path}: intact")
    exported = subprocess.run(
        [str(TABLECTL), "journal", "export", "--config", str(config), "--from", "3", "--to", "4"],
        capture_output=True,
        check=False,
    )
    assert exported.returncode == 0
    assert _numbers(exported.stdout) == [3, 4]
    rewrite_line(path, 2, None)
    broken = subprocess.run(
        [str(TABLECTL), "journal", "verify", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert broken.returncode == 1
    assert "BROKEN at journal.jsonl:3: records 3 to 3 are missing" in broken.stdout
