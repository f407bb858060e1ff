"""A journal that cannot be written: records held in memory and written late, or lost and declared
lost, never acknowledged meanwhile; the fault holds until the disk is back, without flapping."""

from __future__ import annotations

import time
from pathlib import Path

from controller.journal import Journal, JournalFiles, read_journal
from controller.journal.verify import EXIT_GAPS, EXIT_INTACT, verify
from tests.journal.support import Disk, fill, journal, wait_for


def test_records_are_held_while_the_disk_is_full_and_written_late_with_an_outage_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path, fsync=True, probe_first_s=0.05)
    disk = Disk(path)
    fill(j, 3)
    assert j.flush()
    disk.fill()
    held = fill(j, 4)
    wait_for(lambda: j.progress().fault is not None, "the fault")
    assert j.fault == "No space left on device"
    # Nothing written or durable beyond record 3 while full: nothing may be acknowledged.
    wait_for(lambda: j.progress().held == 4, "the records held")
    progress = j.progress()
    assert (progress.written, progress.durable) == (3, 3)
    assert not any(progress.acknowledgeable(n) for n in held)
    more = fill(j, 2)  # still held, and the fault holds (the probes fail)
    wait_for(lambda: j.progress().held == 6, "more records held")
    assert j.fault is not None

    disk.free()
    wait_for(lambda: j.fault is None, "the journal writable again")
    progress = j.progress()
    assert all(progress.acknowledgeable(n) for n in held + more)
    j.close()
    contents = read_journal(path)
    assert [r.n for r in contents.received] == list(range(1, 10))
    (outage,) = contents.outages
    assert outage.n == 10  # right after what it held
    assert (outage.late, outage.lost) == (6, 0)
    assert outage.reason == "No space left on device"  # what started it
    assert verify(JournalFiles(path)).exit_status == EXIT_INTACT


def test_beyond_the_backlog_records_are_lost_and_declared_lost(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path, backlog=3, probe_first_s=0.05)
    disk = Disk(path)
    fill(j, 2)
    assert j.flush()
    disk.fill()
    numbers = fill(j, 7)  # 3..9: 3 held, 6 lost
    wait_for(lambda: j.progress().lost == ((6, 9),), "the lost records")
    disk.free()
    wait_for(lambda: j.fault is None, "the journal writable again")
    after = fill(j, 1)
    assert j.flush()
    progress = j.progress()
    assert [n for n in numbers if progress.acknowledgeable(n)] == [3, 4, 5]
    assert progress.acknowledgeable(after[0])
    j.close()

    contents = read_journal(path)
    assert [r.n for r in contents.received] == [1, 2, 3, 4, 5, after[0]]
    (outage,) = contents.outages
    assert (outage.n, outage.lost_from, outage.lost_to, outage.late) == (10, 6, 9, 3)
    result = verify(JournalFiles(path))
    assert result.exit_status == EXIT_GAPS
    assert result.lost == 4


def test_a_journal_that_cannot_be_opened_starts_in_a_fault_and_recovers(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.mkdir()  # where the journal should be
    j = journal(path, probe_first_s=0.05)
    assert j.fault is not None
    assert "cannot open" in j.fault
    fill(j, 2)
    wait_for(lambda: j.progress().held == 2, "records held")
    path.rmdir()
    wait_for(lambda: j.fault is None, "the journal opened")
    j.close()
    contents = read_journal(path)
    assert contents.received_count == 2
    assert len(contents.outages) == 1


def _outage_length(j: Journal, disk: Disk) -> float:
    disk.fill()
    fill(j, 1)
    wait_for(lambda: j.fault is not None, "the fault")
    began = time.monotonic()
    disk.free()
    wait_for(lambda: j.fault is None, "the journal writable again")
    return time.monotonic() - began


def test_a_fault_coming_back_soon_waits_longer_before_the_next_probe(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = journal(path, probe_first_s=0.2)
    disk = Disk(path)
    fill(j, 1)
    assert j.flush()
    _outage_length(j, disk)
    second = _outage_length(j, disk)
    third = _outage_length(j, disk)
    j.close()
    # The disk is back at once each time: only the probe delay keeps the fault. A fault within
    # a minute of the last doubles it (0.2 s, 0.4 s, 0.8 s): a disk at its limit cannot make the
    # status flap. (Lower bounds: a slow machine only makes them longer.)
    assert second >= 0.35
    assert third >= 0.75
