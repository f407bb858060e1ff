"""Segments: rotation by size (closed ones read-only, named after their first record), reading
across them, retention by age (recorded, never what recovery needs), checkpoints pruned."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from controller.journal import JournalFiles, read_journal
from controller.journal.verify import verify
from tests.journal.support import fill, journal

SEGMENT = 2_000


def test_the_active_segment_rotates_into_read_only_closed_ones(tmp_path: Path) -> None:
    path = tmp_path / "journal-t1.jsonl"
    j = journal(path, segment_bytes=SEGMENT)
    numbers = fill(j, 100)
    j.close()

    segments = JournalFiles(path).segments()
    closed = [s for s in segments if s.closed]
    assert len(closed) >= 3
    assert segments[-1].path == path  # the active one keeps the configured name
    assert closed[0].path.name == "journal-t1.000000000001.jsonl"
    for segment in closed:
        assert segment.path.stat().st_size <= SEGMENT
        assert not segment.path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        # named after its first record
        first = int(segment.path.read_bytes().split(b'"n":', 1)[1].split(b",", 1)[0])
        assert first == segment.first
    contents = read_journal(path)
    assert [r.n for r in contents.records] == numbers  # every record once, in order
    assert contents.scan.chain == []  # the chain runs on across segments
    assert verify(JournalFiles(path)).exit_status == 0


def test_numbering_goes_on_after_reopening_a_rotated_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path, segment_bytes=SEGMENT)
    fill(j, 60)
    j.close()
    again = journal(path, segment_bytes=SEGMENT)
    assert fill(again, 3) == [61, 62, 63]
    again.close()
    assert verify(JournalFiles(path)).exit_status == 0


def _age(path: Path, days: float) -> None:
    old = time.time() - days * 86_400
    os.utime(path, (old, old))


def test_retention_removes_old_closed_segments_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path, segment_bytes=SEGMENT)
    fill(j, 100)
    j.close()
    files = JournalFiles(path)
    closed = [s for s in files.segments() if s.closed]
    for segment in closed[:2]:
        _age(segment.path, 400)

    # Retention runs when the journal opens (and after each rotation).
    again = journal(path, segment_bytes=SEGMENT, retain_days=365)
    again.close()
    remaining = [s.path.name for s in files.segments()]
    assert closed[0].path.name not in remaining
    assert closed[1].path.name not in remaining
    assert closed[2].path.name in remaining
    contents = read_journal(path)
    (record,) = contents.retention
    assert record.removed == (closed[0].path.name, closed[1].path.name)
    assert record.through == closed[2].first - 1  # type: ignore[operator]
    result = verify(files)
    assert result.exit_status == 0, result.lines("j")
    assert any("removed by retention" in note for note in result.notes)


def test_retention_zero_keeps_everything_and_never_what_recovery_needs(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path, segment_bytes=SEGMENT)
    fill(j, 100)
    j.close()
    files = JournalFiles(path)
    closed = [s for s in files.segments() if s.closed]
    for segment in closed:
        _age(segment.path, 400)
    assert files.expired(0, keep_from=None) == []
    # The newest checkpoint's replay starts in the third segment: it and later ones stay.
    keep_from = closed[2].first
    expired = files.expired(365, keep_from=keep_from)
    assert [s.first for s in expired] == [closed[0].first, closed[1].first]


def test_superseded_checkpoints_are_pruned_keeping_the_newest_and_one_per_segment(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path, segment_bytes=SEGMENT)
    fill(j, 100)
    j.close()
    files = JournalFiles(path)
    firsts = [s.first for s in files.segments() if s.first is not None]
    for covers in range(1, 101):
        files.checkpoint_path(covers).write_bytes(b"x")
    files.prune_checkpoints(3)
    kept = sorted(files.checkpoints())
    assert kept[-3:] == [98, 99, 100]
    assert set(firsts) <= set(kept)  # the first checkpoint of every closed segment
    assert len(kept) == len(set(firsts) | {98, 99, 100})
