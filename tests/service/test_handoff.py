"""The journal's hand-off (``Acknowledgements.written_at_once``): the event loop's thread waits,
blocked, at most ``HANDOFF_S`` for an output's record; a disk that stalls costs it that wait
once, not at every alert, until the writer got past the record it gave up on."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from controller.journal import JournalFiles, JournalOptions, open_journal
from controller.journal.reader import JournalReader, JournalScan
from controller.journal.segment import ActiveSegment
from controller.journal.writer import Journal, append_position
from controller.service import acks
from controller.service.acks import Acknowledgements
from tests.service.support import threadsafe_calls


def test_written_at_once_on_a_working_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(acks, "HANDOFF_S", 5.0)  # a loaded machine may take its time
    journal = open_journal(JournalFiles(tmp_path / "journal.jsonl"), JournalOptions(fsync=False))
    try:
        waits = Acknowledgements(journal)
        for i in range(20):
            record = journal.submit("time", {"now": f"n{i}", "received": f"r{i}"})
            assert waits.written_at_once(record)
            assert journal.progress().written >= record
    finally:
        journal.close()


def test_a_stalled_disk_costs_one_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(acks, "HANDOFF_S", 0.3)
    stalled = threading.Event()
    stalled.set()
    original = ActiveSegment.write

    def write(segment: ActiveSegment, data: bytes) -> tuple[int, OSError | None]:
        while stalled.is_set():  # a write the page cache holds back (writeback throttling)
            time.sleep(0.01)
        return original(segment, data)

    monkeypatch.setattr(ActiveSegment, "write", write)
    journal = open_journal(JournalFiles(tmp_path / "journal.jsonl"), JournalOptions(fsync=False))
    try:
        waits = Acknowledgements(journal)
        first = journal.submit("time", {"now": "a", "received": "a"})
        started = time.monotonic()
        assert not waits.written_at_once(first)
        assert time.monotonic() - started >= 0.3
        # The writer is still stuck on the first record: the next alerts do not wait at all.
        for name in "bcd":
            record = journal.submit("time", {"now": name, "received": name})
            started = time.monotonic()
            assert not waits.written_at_once(record)
            assert time.monotonic() - started < 0.15
        stalled.clear()
        assert journal.flush(10)
        assert waits.written_at_once(record)
        # Caught up: the next one is waited for again.
        stalled.set()
        late = journal.submit("time", {"now": "e", "received": "e"})
        started = time.monotonic()
        assert not waits.written_at_once(late)
        assert time.monotonic() - started >= 0.3
        stalled.clear()
    finally:
        journal.close()


def test_records_written_update_the_loop_only_while_awaited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal's threads wake the event loop (through its self-pipe) for a record written
    only while something on the loop waits for that (``Acknowledgements.written``), besides
    every change of what the loop acts on (durability: none here, the fsyncs are held)."""
    monkeypatch.setattr(acks, "HANDOFF_S", 0.0)  # the wait below is the loop's, not the hand-off's
    monkeypatch.setattr(acks, "STALL_S", 60.0)  # a missed update would hang it, not time out

    stalled = threading.Event()
    original_write = ActiveSegment.write

    def write(segment: ActiveSegment, data: bytes) -> tuple[int, OSError | None]:
        while stalled.is_set():
            time.sleep(0.001)
        return original_write(segment, data)

    monkeypatch.setattr(ActiveSegment, "write", write)
    # No fsync ends while the test runs: durability does not move (its updates would wake the
    # loop, and end the wait below, whatever records written do).
    syncing = threading.Event()
    original_fsync = ActiveSegment.fsync

    def fsync(segment: ActiveSegment) -> None:
        syncing.wait()
        original_fsync(segment)

    monkeypatch.setattr(ActiveSegment, "fsync", fsync)

    async def run() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        files = JournalFiles(tmp_path / "journal.jsonl")
        reader = JournalReader(files)
        journal = Journal(files, JournalOptions(fsync=True))
        waits = Acknowledgements(journal)
        with threadsafe_calls(loop) as wakes:
            journal.open(append_position(reader, JournalScan()), waits.listener(loop))
            try:
                for i in range(20):
                    record = journal.submit("time", {"now": f"n{i}", "received": f"r{i}"})
                    assert journal.wait_written(record, 10)
                    await asyncio.sleep(0)  # an update scheduled runs now
                unawaited = wakes.count
                # A record written while the loop waits for it: the write held back until it waits.
                stalled.set()
                record = journal.submit("time", {"now": "awaited", "received": "awaited"})
                waiting = asyncio.create_task(waits.written(record))
                await asyncio.sleep(0)  # (its first step: it waits for an update)
                assert not waiting.done()
                stalled.clear()
                async with asyncio.timeout(10):
                    await waiting
                return unawaited, wakes.count - unawaited
            finally:
                stalled.clear()
                syncing.set()
                journal.close()

    unawaited, awaited = asyncio.run(run())
    assert unawaited <= 2  # the first record's (nothing seen yet) and the start's
    assert awaited >= 1
