"""The journal's parts one by one, each with real files: the queue, the positions, the active
segment, the appender, the syncer, the early acknowledgements and the fault handling."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.journal import JournalFiles, read_journal, sync
from controller.journal.appender import Appender
from controller.journal.faults import FaultHandling
from controller.journal.held import EarlyAcknowledgements, held_path
from controller.journal.positions import Positions
from controller.journal.reader import Position
from controller.journal.records import encode_body, payload_fields, time_text
from controller.journal.segment import ActiveSegment
from controller.journal.state import (
    CHECKPOINT_MAGIC,
    AppendPosition,
    Item,
    Job,
    JournalOptions,
    Marker,
    Outage,
    Record,
)
from controller.journal.submissions import Submissions
from controller.journal.sync import Syncer
from controller.journal.verify import EXIT_GAPS, EXIT_INTACT, verify
from tests.journal.support import T0, TOPIC, Disk, journal, wait_for


def _fields(n: int) -> dict[str, Any]:
    return {"topic": TOPIC, **payload_fields(f"p{n}".encode()), "received": time_text(T0)}


def _record(n: int) -> Record:
    return Record(n, encode_body("received", n, _fields(n)))


# ---- Submissions ----------------------------------------------------------------------------


def test_the_queue_numbers_records_in_the_order_they_are_queued_from_any_thread() -> None:
    queue = Submissions()
    queue.start_at(7)

    def submit_many() -> None:
        for _ in range(200):
            queue.submit("received", {"topic": TOPIC})

    threads = [threading.Thread(target=submit_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert queue.reserve() == 807  # a number out of the queue (an outage record's)
    assert queue.submitted == 807
    batch = queue.take(None)
    numbers = [item.n for item in batch.items if isinstance(item, Record)]
    assert numbers == list(range(7, 807))
    assert not queue.settled()  # the writer holds the batch
    assert not queue.done()  # not stopping
    assert queue.settled()


def test_the_queue_hands_the_writer_a_sync_error_once_and_wakes_it_at_a_probe_time() -> None:
    queue = Submissions()
    begun = time.monotonic()
    assert queue.take(begun + 0.05).items == []  # nothing: back at the probe time
    assert time.monotonic() - begun >= 0.05
    queue.sync_failed("fsync failed: I/O error")
    assert queue.take(None).sync_error == "fsync failed: I/O error"
    queue.done()
    queue.mark(Marker(1, b"", 1, T0))
    batch = queue.take(None)
    assert batch.sync_error is None
    assert isinstance(batch.items[0], Marker)
    queue.stop()
    assert queue.take(None).stopping
    assert queue.done()  # stopping, nothing left


# ---- Positions ------------------------------------------------------------------------------


def test_positions_say_how_far_the_journal_got_and_tell_the_listener() -> None:
    told: list[int] = []
    positions = Positions()
    positions.start(4, lambda: told.append(1))
    positions.wrote(6, durable=False)
    assert (positions.snapshot(lambda: 9).written, positions.snapshot(lambda: 9).durable) == (6, 4)
    assert positions.to_sync() == 6
    positions.synced(6)
    assert positions.to_sync() == 0
    positions.fault_began("No space left on device")
    positions.holding(2, 8)
    positions.lost((9, 9))
    positions.lost((9, 11))  # the same span grows
    progress = positions.snapshot(lambda: 11)
    assert progress.fault == "No space left on device"
    assert progress.lost == ((9, 11),)
    assert progress.held_in_memory(8)
    assert not progress.held_in_memory(9)
    assert positions.to_sync() == 0  # never during a fault
    positions.probing(True)  # no early acknowledgement while a probe writes the tail
    assert positions.snapshot(lambda: 11).held_through == 0
    positions.probing(False)
    positions.wrote(8, durable=False)
    positions.fault_ended()
    progress = positions.snapshot(lambda: 11)
    assert (progress.fault, progress.held, progress.durable) == (None, 0, 8)
    assert len(told) == 10


def test_a_waiter_on_the_positions_sees_a_change_from_another_thread() -> None:
    positions = Positions()
    positions.start(0, None)
    other = {"done": False}  # a condition on another part's state, told through told()

    def later() -> None:
        time.sleep(0.05)
        other["done"] = True
        positions.told()

    threading.Thread(target=later).start()
    assert positions.wait(lambda: other["done"], 5.0)
    assert not positions.wait(lambda: False, 0.1)


# ---- ActiveSegment --------------------------------------------------------------------------


def test_the_active_segment_appends_fsyncs_and_rotates_into_a_read_only_segment(tmp_path: Path) -> None:
    files = JournalFiles(tmp_path / "j.jsonl")
    segment = ActiveSegment(files)
    segment.start(None, 0)
    assert segment.write(b"x\n")[1] is not None  # not open yet: an error, nothing written
    segment.open()
    assert segment.write(b"line 1\n") == (7, None)
    segment.wrote_record(1)
    segment.fsync()
    assert segment.position() == Position(1, 7)
    closed = segment.rotate(fsync=True)
    assert closed == files.closed_path(1)
    assert closed.read_bytes() == b"line 1\n"
    assert not stat.S_IMODE(closed.stat().st_mode) & 0o222  # read-only
    assert segment.position() == Position(1, 7)  # the next records follow the closed segment
    assert segment.rotate(fsync=True) is None  # nothing in the new one: nothing to close
    assert segment.close(fsync=True) is None
    assert files.active.read_bytes() == b""


# ---- Appender -------------------------------------------------------------------------------


class _Parts:
    """An appender over a real file, with what it hands on collected."""

    def __init__(self, path: Path, **options: Any) -> None:
        self.files = JournalFiles(path)
        self.options = JournalOptions(**{"fsync": False, **options})
        self.positions = Positions()
        self.positions.start(0, None)
        self.queue = Submissions()
        self.segment = ActiveSegment(self.files)
        self.segment.start(None, 0)
        self.segment.open()
        self.jobs: list[Job] = []
        self.appender = Appender(
            self.files,
            self.options,
            self.segment,
            self.positions,
            submit=self.queue.submit,
            checkpoint=self.jobs.append,
        )
        self.appender.start(AppendPosition())

    def syncer(self, on_checkpoint: Callable[[int], None] = lambda segment: None) -> Syncer:
        """A syncer over the same segment, reporting a failed fsync to the queue."""
        return Syncer(
            self.files,
            self.options,
            self.segment,
            self.positions,
            submit=self.queue.submit,
            on_error=self.queue.sync_failed,
            on_checkpoint=on_checkpoint,
        )


def test_the_appender_chains_records_and_hands_a_checkpoint_on_at_its_place(tmp_path: Path) -> None:
    parts = _Parts(tmp_path / "j.jsonl")
    items: list[Item] = [_record(1), _record(2), Marker(2, b"snapshot", 1, T0), _record(3)]
    done = parts.appender.append(items)
    assert (done.records, done.failure, done.unwritten) == (3, None, [])
    (job,) = parts.jobs
    assert job.marker.covers == 2
    assert job.position == Position(1, sum(map(len, parts.files.active.read_bytes().splitlines(True)[:2])))
    assert parts.positions.snapshot(lambda: 3).written == 3
    assert parts.positions.snapshot(lambda: 3).durable == 3  # fsync off: written is durable
    parts.segment.close(fsync=False)
    assert [r.n for r in read_journal(parts.files.active).received] == [1, 2, 3]
    assert verify(parts.files).exit_status == EXIT_INTACT


def test_the_appender_rotates_segments_and_says_what_a_failed_write_left(tmp_path: Path) -> None:
    rotating = _Parts(tmp_path / "small.jsonl", segment_bytes=300)
    done = rotating.appender.append([_record(n) for n in range(1, 6)])
    assert done.failure is None
    assert len(rotating.files.segments()) > 1  # rotated past 300 bytes
    path = tmp_path / "j.jsonl"
    parts = _Parts(path)
    assert parts.appender.append([_record(n) for n in range(1, 6)]).failure is None
    Disk(path).fill()
    done = parts.appender.append([_record(6), Marker(6, b"", 1, T0), _record(7)])
    assert done.failure == "No space left on device"
    assert [getattr(i, "n", None) or getattr(i, "covers", None) for i in done.unwritten] == [6, 6, 7]
    assert parts.positions.snapshot(lambda: 7).written == 5


def test_the_appender_makes_an_outage_record_once_what_precedes_it_is_written(tmp_path: Path) -> None:
    parts = _Parts(tmp_path / "j.jsonl")
    seen: list[tuple[int, int]] = []

    def body(outage: Outage, written: int) -> bytes:
        seen.append((outage.n, written))
        when = time_text(T0)
        fields = {"since": when, "until": when, "reason": "r", "late": written}
        return encode_body("outage", outage.n, fields)

    done = parts.appender.append([_record(1), _record(2), Outage(3, T0, "r", None)], body)
    assert done.records == 2
    assert seen == [(3, 2)]
    parts.segment.close(fsync=False)
    (outage,) = read_journal(parts.files.active).outages
    assert (outage.n, outage.late) == (3, 2)


# ---- Syncer ---------------------------------------------------------------------------------


def test_the_syncer_fsyncs_what_was_written_and_writes_checkpoint_files(tmp_path: Path) -> None:
    parts = _Parts(tmp_path / "j.jsonl", fsync=True)
    kept: list[int] = []
    syncer = parts.syncer(kept.append)
    thread = threading.Thread(target=syncer.run)
    thread.start()
    parts.appender.append([_record(1), _record(2)])
    assert parts.positions.snapshot(lambda: 2).durable == 0  # written, not yet fsynced
    syncer.wake()
    wait_for(lambda: parts.positions.snapshot(lambda: 2).durable == 2, "the fsync")
    parts.queue.start_at(3)
    syncer.checkpoint(Job(Marker(2, b"state", 1, T0), parts.segment.position()))
    wait_for(lambda: syncer.idle and parts.queue.submitted == 3, "the checkpoint")
    assert parts.files.checkpoint_path(2).read_bytes() == CHECKPOINT_MAGIC + b"state"
    assert kept == [1]
    batch = parts.queue.take(None)  # its record, for the writer
    assert b'"kind":"checkpoint"' in batch.items[0].body  # type: ignore[union-attr]
    syncer.stop()
    thread.join(5)
    assert not thread.is_alive()


@contextlib.contextmanager
def _syncing(parts: _Parts) -> Iterator[Syncer]:
    """The parts' syncer running on its thread; stopped (and its thread gone) at the end."""
    syncer = parts.syncer()
    thread = threading.Thread(target=syncer.run)
    thread.start()
    try:
        yield syncer
    finally:
        syncer.stop()
        thread.join(5)
    assert not thread.is_alive()


def _counting_fsyncs(parts: _Parts, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The syncer's fsyncs, counted (each with the durable position it reports)."""
    done: list[int] = []
    original = parts.positions.synced

    def synced(target: int) -> None:
        done.append(target)
        original(target)

    monkeypatch.setattr(parts.positions, "synced", synced)
    return done


def test_the_syncer_lingers_after_an_fsync_while_few_records_come_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (a long linger: the records written within it share one fsync on a loaded machine too)
    monkeypatch.setattr(sync, "LINGER_S", 0.5)
    parts = _Parts(tmp_path / "j.jsonl", fsync=True)
    fsyncs = _counting_fsyncs(parts, monkeypatch)
    with _syncing(parts) as syncer:
        parts.appender.append([_record(1)])
        started = time.monotonic()
        syncer.wake()
        wait_for(lambda: fsyncs == [1], "the first fsync")
        # Two more right after it: they wait out the linger, and one fsync covers both.
        parts.appender.append([_record(2)])
        syncer.wake()
        parts.appender.append([_record(3)])
        syncer.wake()
        wait_for(lambda: len(fsyncs) == 2, "the fsync after the linger")
        assert fsyncs == [1, 3]
        assert time.monotonic() - started >= 0.5


def test_the_syncer_does_not_linger_on_a_quiet_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sync, "LINGER_S", 30.0)  # (a linger would outlast the test's wait)
    clock = _Clock()
    monkeypatch.setattr(sync, "time", clock)
    parts = _Parts(tmp_path / "j.jsonl", fsync=True)
    with _syncing(parts) as syncer:
        parts.appender.append([_record(1)])
        syncer.wake()
        wait_for(lambda: parts.positions.snapshot(lambda: 1).durable == 1, "the first fsync")
        # Longer than the linger without an fsync: the next record is fsynced at once.
        clock.ahead += 60.0
        parts.appender.append([_record(2)])
        syncer.wake()
        wait_for(lambda: parts.positions.snapshot(lambda: 2).durable == 2, "the next fsync")


class _Clock:
    """``time`` for the syncer, its monotonic clock moved ahead at will."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.ahead

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def test_the_syncer_does_not_linger_over_a_backlog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync, "LINGER_S", 30.0)  # (a linger would outlast the test's wait)
    parts = _Parts(tmp_path / "j.jsonl", fsync=True)
    fsyncs = _counting_fsyncs(parts, monkeypatch)
    with _syncing(parts) as syncer:
        parts.appender.append([_record(1)])
        syncer.wake()
        wait_for(lambda: fsyncs == [1], "the first fsync")
        # Records come one by one: the syncer lingers, until enough of them wait.
        parts.appender.append([_record(2)])
        syncer.wake()
        wait_for(lambda: syncer._lingering, "the linger")
        for n in range(3, 2 + sync.LINGER_RECORDS):
            parts.appender.append([_record(n)])
            syncer.wake()
        last = 1 + sync.LINGER_RECORDS
        wait_for(lambda: parts.positions.snapshot(lambda: last).durable == last, "the backlog's fsync")
        assert len(fsyncs) == 2


def test_a_failed_fsync_is_reported_and_no_more_are_tried_until_resumed(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    parts = _Parts(path, fsync=True)
    syncer = parts.syncer()
    parts.appender.append([_record(1)])
    # A descriptor fsync refuses (a pipe): every fsync fails with EINVAL.
    read_end, write_end = os.pipe()
    os.dup2(write_end, Disk(path)._descriptor())
    thread = threading.Thread(target=syncer.run)
    thread.start()
    batch = parts.queue.take(time.monotonic() + 5)
    assert batch.sync_error is not None
    assert batch.sync_error.startswith("fsync failed")
    parts.queue.done()
    parts.positions.wrote(1, durable=False)  # wakes nobody: the syncer waits to be resumed
    syncer.wake()
    assert parts.queue.take(time.monotonic() + 0.2).sync_error is None
    syncer.stop()
    thread.join(5)
    os.close(read_end)
    os.close(write_end)


# ---- EarlyAcknowledgements ------------------------------------------------------------------


def test_early_acknowledgements_are_kept_in_the_held_file_until_their_outage_is_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.jsonl"
    early = EarlyAcknowledgements(path)
    early.open()
    early.note(5, extends=False)
    early.note(6, extends=True)
    early.note(9, extends=False)
    assert EarlyAcknowledgements(path).left_by_previous_run() == [(5, 6), (9, 9)]
    assert early.take() == [[5, 6], [9, 9]]
    early.note(10, extends=False)
    # Taken for an outage record not yet written: still in the file.
    assert EarlyAcknowledgements(path).left_by_previous_run() == [(5, 6), (9, 9), (10, 10)]
    early.give_back()  # that write failed
    assert early.take() == [[5, 6], [9, 9], [10, 10]]
    early.written()
    assert EarlyAcknowledgements(path).left_by_previous_run() == []
    early.note(11, extends=False)
    early.close(clean=False)  # stopped in a fault: the file keeps what it names
    assert EarlyAcknowledgements(path).left_by_previous_run() == [(11, 11)]
    assert held_path(path).stat().st_size == 4096


# ---- FaultHandling --------------------------------------------------------------------------


def test_the_fault_handling_holds_loses_beyond_the_backlog_and_writes_the_outage(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    parts = _Parts(path, backlog=3, probe_first_s=0.0)
    syncer = parts.syncer()
    early = EarlyAcknowledgements(path)
    early.open()
    faults = FaultHandling(
        parts.files,
        parts.options,
        positions=parts.positions,
        queue=parts.queue,
        segment=parts.segment,
        appender=parts.appender,
        syncer=syncer,
        early=early,
    )
    parts.queue.start_at(1)
    for n in (1, 2):
        parts.queue.submit("received", _fields(n))
    assert parts.appender.append(parts.queue.take(None).items).failure is None
    parts.queue.done()
    disk = Disk(path)
    disk.fill()
    numbers = [parts.queue.submit("received", _fields(n)) for n in range(3, 8)]
    assert numbers == [3, 4, 5, 6, 7]
    done = parts.appender.append(parts.queue.take(None).items)
    parts.queue.done()
    assert done.failure is not None
    faults.enter(done.failure, done.unwritten)  # none written: 3..5 held, 6 and 7 lost
    progress = parts.positions.snapshot(lambda: parts.queue.submitted)
    assert progress.fault == "No space left on device"
    assert (progress.held, progress.held_through, progress.lost) == (3, 5, ((6, 7),))
    early.note(3, extends=False)
    early.note(5, extends=True)
    faults.probe()  # the disk is still full: the fault holds
    assert faults.active
    disk.free()
    faults.probe()
    assert not faults.active
    assert parts.positions.snapshot(lambda: parts.queue.submitted).fault is None
    parts.segment.close(fsync=False)
    early.close(clean=True)
    contents = read_journal(path)
    assert [r.n for r in contents.received] == [1, 2, 3, 4, 5]
    (outage,) = contents.outages
    assert (outage.n, outage.late, outage.lost_from, outage.lost_to) == (8, 3, 6, 7)
    assert outage.acknowledged_early == ((3, 5),)
    assert verify(parts.files).exit_status == EXIT_GAPS


# ---- The parts together ---------------------------------------------------------------------


def test_records_from_several_threads_through_a_fault_are_all_written_in_number_order(
    tmp_path: Path,
) -> None:
    """Submitters on three threads, checkpoints among them, a disk that fills and frees: every
    number is written once, in order, the chain intact, one outage record for the fault."""
    path = tmp_path / "journal.jsonl"
    j = journal(path, fsync=True, probe_first_s=0.02)
    disk = Disk(path)
    numbers: list[int] = []
    lock = threading.Lock()
    half = threading.Barrier(4)

    def submit() -> None:
        for i in range(400):
            n = j.received(TOPIC, f"{threading.get_ident()}-{i}".encode(), T0)
            with lock:
                numbers.append(n)
            if i % 100 == 50:
                j.checkpoint(n, b"state", 1, T0)
            if i == 200:
                half.wait()  # the disk fills while they go on

    threads = [threading.Thread(target=submit) for _ in range(3)]
    for thread in threads:
        thread.start()
    half.wait()
    disk.fill()
    wait_for(lambda: j.fault is not None, "the fault")
    disk.free()
    for thread in threads:
        thread.join()
    wait_for(lambda: j.fault is None, "the journal writable again")
    assert j.flush()
    j.close()
    contents = read_journal(path)
    assert [r.n for r in contents.received] == sorted(numbers)
    assert len(numbers) == 1200
    assert len(contents.outages) == 1
    assert verify(JournalFiles(path)).exit_status == EXIT_INTACT
