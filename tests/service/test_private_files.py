"""The journal names every tag UID: its files are 0600 in a 0700 directory, whatever the umask."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from contract.models import TagEvent
from controller.journal import AppendPosition, Journal, JournalFiles, JournalOptions
from controller.journal.private_files import open_private_append, private_directory
from testing.mosquitto import Mosquitto
from tests.service.support import probe, running_service, write_config


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """A umask that would leave new files world-readable (022 is the usual one; 0 the worst)."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("loose_umask")
def test_created_private_file_and_directories(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "journal.jsonl"
    fd = open_private_append(path)
    os.close(fd)
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert mode(path.parent.parent) == 0o700


@pytest.mark.usefixtures("loose_umask")
def test_an_existing_open_file_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_text("old\n")
    path.chmod(0o644)
    os.close(open_private_append(path))
    assert mode(path) == 0o600
    assert path.read_text() == "old\n"


@pytest.mark.usefixtures("loose_umask")
def test_every_journal_file_is_private(tmp_path: Path) -> None:
    # A closed segment and a checkpoint, as well as the active segment, in a directory of its own.
    files = JournalFiles(tmp_path / "var" / "journal.jsonl")
    journal = Journal(files, JournalOptions(fsync=False, segment_bytes=200))
    journal.open(AppendPosition())
    for n in range(5):
        journal.received("holdem/t1/input", b'{"n":%d}' % n, datetime(2026, 11, 30, tzinfo=UTC))
    journal.checkpoint(3, b"state", 1, datetime(2026, 11, 30, tzinfo=UTC))
    journal.close()
    closed = [s.path for s in files.segments() if s.closed]
    checkpoints = list(files.checkpoints().values())
    assert closed
    assert checkpoints
    assert mode(files.active) == 0o600
    assert {mode(p) for p in closed + checkpoints} == {0o400}
    assert mode(tmp_path / "var") == 0o700


def test_an_existing_open_directory_is_reported_not_changed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with caplog.at_level(logging.WARNING):
        private_directory(shared)
    assert mode(shared) == 0o755
    assert "open to other users (mode 0755)" in caplog.text
    # Once: the journal opens its file again at every segment and every probe of a fault.
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        os.close(open_private_append(shared / "journal.jsonl"))
    assert mode(shared / "journal.jsonl") == 0o600
    assert "open to other users" not in caplog.text


@pytest.mark.usefixtures("loose_umask")
async def test_the_service_journal_is_private(tmp_path: Path, mosquitto_session: Mosquitto) -> None:
    config = write_config(tmp_path, mosquitto_session.url, table="tpriv")
    # The journal of write_config is journal.jsonl next to the config: put it in a directory of
    # its own, as on the table PC.
    text = config.read_text().replace('path = "journal.jsonl"', 'path = "var/tablectl/journal.jsonl"')
    config.write_text(text)
    async with probe(mosquitto_session.port, "tpriv") as p, running_service(config):
        await p.status("online")
        await p.event(
            "rfid-1", TagEvent, antenna=1, zone="seat:1", uid="E0040150A1B2C3D4", present=True, face=None
        )
        await p.alert("fouled_deck")  # an unknown tag: journaled, and answered

    directory = tmp_path / "var" / "tablectl"
    files = [p for p in directory.rglob("*") if p.is_file()]
    assert files, "the journal wrote nothing"
    assert mode(directory) == 0o700
    assert mode(tmp_path / "var") == 0o700
    assert mode(directory / "journal.jsonl") == 0o600
    # Closed segments and checkpoints are read-only; nothing is open to anyone else.
    assert {f.name: mode(f) in (0o600, 0o400) for f in files} == {f.name: True for f in files}
