"""The session number in a file of its own: read back, written whole, errors logged not raised."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from drivers.state_file import load_session, save_session

LOG = logging.getLogger("drivers.testdev")


def test_a_number_written_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "state" / "dev.session"  # its folder is made
    assert load_session(path, LOG, "dev") is None
    save_session(path, 41, LOG, "dev")
    save_session(path, 42, LOG, "dev")
    assert path.read_text() == "42\n"
    assert load_session(path, LOG, "dev") == 42
    assert [p.name for p in path.parent.iterdir()] == ["dev.session"]  # no temporary file left


def test_a_file_that_cannot_be_read_or_written_is_an_error_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    garbled = tmp_path / "garbled.session"
    garbled.write_text("forty-one\n")
    folder = tmp_path / "a-folder.session"
    folder.mkdir()
    blocked = tmp_path / "a-file" / "dev.session"
    (tmp_path / "a-file").write_text("not a folder")
    with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
        assert load_session(garbled, LOG, "dev") is None
        assert load_session(folder, LOG, "dev") is None
        save_session(blocked, 7, LOG, "dev")
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == f"dev: state file {garbled} does not hold a session number"
    assert messages[1].startswith(f"dev: cannot read state file {folder}: ")
    assert messages[2].startswith(f"dev: cannot write state file {blocked}: ")
