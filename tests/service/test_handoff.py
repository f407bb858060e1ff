"""The journal's hand-off (``Acknowledgements.written_at_once``): the event loop's thread waits,
blocked, at most ``HANDOFF_S`` for an output's record; a disk that stalls costs it that wait
once, not at every alert, until the writer got past the record it gave up on."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from controller.journal import JournalFiles, JournalOptions, open_journal
from controller.journal.segment import ActiveSegment
from controller.service import acks
from controller.service.acks import Acknowledgements


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
