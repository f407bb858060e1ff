"""A new user's first hour with ``tablectl demo``: the real command, as a person starts it.

Ctrl-C at any early moment ends it cleanly; a ``click.py`` in the folder it was started from is
not imported by its children; a child that dies fails the demo; the journal is kept where
``tablectl history`` finds it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.terminal import AS_FROM_A_TERMINAL

TABLECTL = Path(sys.executable).parent / "tablectl"
#: What a clean stop never prints (what a Ctrl-C during start-up printed before).
NOISE = ("Traceback", "Task was destroyed", "Event loop is closed", "Exception ignored")
#: Log lines of the start-up's phases (at INFO): the moments a Ctrl-C is sent right after.
PHASES = (
    "embedded MQTT broker",  # the broker listens; the simulators start
    "drivers: process",  # the drivers' child is spawned
    "driver sensors (sensors) started",  # its drivers connect to the broker
    "engine service: process",  # the engine service's child is spawned
    "dealer display: http",  # the pages are up; the dealer is about to deal
)


def demo(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*AS_FROM_A_TERMINAL, str(TABLECTL), "demo", "--no-view", "--speed", "0", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def interrupted(process: subprocess.Popen[str], seen: str = "") -> tuple[int, str, str]:
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        # Not stopped: it must not play on (its 200 hands) behind the tests that follow.
        process.kill()
        process.communicate()
        raise
    return process.returncode, out, seen + err


@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5, 2.5])
def test_ctrl_c_in_the_first_seconds_prints_no_traceback(tmp_path: Path, delay: float) -> None:
    """(Not before 0.3 s: in the interpreter's own start, before any of tablectl's code runs,
    a Ctrl-C is Python's to report.) More hands than it can play before the Ctrl-C: at speed 0
    three hands were over within 2.5 s once the start got faster, and the demo ended on its own."""
    process = demo("--hands", "200", "--journal", str(tmp_path / "journal"))
    time.sleep(delay)
    status, out, err = interrupted(process)
    assert status == 130, err[-3000:]
    assert not [word for word in NOISE if word in err], err[-3000:]
    if "Summary: " in out:  # the first hand had begun: what was played is summarised
        assert "precision" in out, out
    else:
        assert err.strip().splitlines()[-1] in ("interrupted", "interrupted before the first hand"), err


@pytest.mark.parametrize("phase", PHASES)
def test_ctrl_c_at_each_phase_of_the_start_up_prints_no_traceback(tmp_path: Path, phase: str) -> None:
    process = demo("--hands", "3", "--log-level", "INFO", "--journal", str(tmp_path / "journal"))
    assert process.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        assert line, "".join(seen)
        seen.append(line)
        if phase in line:
            break
    status, _, err = interrupted(process, "".join(seen))
    assert status == 130, err[-3000:]
    assert not [word for word in NOISE if word in err], err[-3000:]


@dataclass(frozen=True)
class FirstRun:
    """A new user's first session, shared by the three tests below: a demo at a multiple of a
    real dealer's pace, started from a folder holding a ``click.py``, keeping its journal."""

    returncode: int
    out: str
    err: str
    seconds: float
    folder: Path  # the journal's folder (--journal)
    marker: Path  # made by the folder's click.py if it were imported


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> FirstRun:
    """``--speed 40``: a real dealer's pauses divided by 40 (a hand takes about a second)."""
    cwd = tmp_path_factory.mktemp("first-run")
    marker = cwd / "imported"
    (cwd / "click.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise ImportError('the click.py of the current folder')\n"
    )
    folder = cwd / "demo-journal"
    started = time.monotonic()
    process = subprocess.Popen(
        [
            *(str(TABLECTL), "demo", "--no-view", "--speed", "40", "--seats", "4", "--hands", "2"),
            *("--seed", "9", "--json", "--journal", str(folder)),
        ],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = process.communicate(timeout=120)
    return FirstRun(process.returncode, out, err, time.monotonic() - started, folder, marker)


def test_a_click_py_in_the_current_folder_is_not_imported_by_the_children(first_run: FirstRun) -> None:
    assert first_run.returncode == 0, first_run.err[-3000:]
    assert not first_run.marker.exists()
    assert json.loads(first_run.out.strip().splitlines()[-1])["hands"] == 2


def test_paced_demo_plays_at_a_multiple_of_a_real_dealers_pace(first_run: FirstRun) -> None:
    assert first_run.returncode == 0, first_run.err[-3000:]
    assert "Traceback" not in first_run.err, first_run.err[-3000:]
    summary = json.loads(first_run.out.strip().splitlines()[-1])
    assert summary["hands"] == 2
    assert summary["precision"] in (1.0, None)
    assert summary["recall"] in (1.0, None)
    assert first_run.seconds > 1.0  # the pauses were taken


def test_the_demo_fails_when_a_child_process_dies(tmp_path: Path) -> None:
    process = demo("--log-level", "INFO", "--journal", str(tmp_path / "journal"))
    assert process.stderr is not None
    pid = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        assert line
        if found := re.search(r"engine service: process (\d+)", line):
            pid = int(found.group(1))
        if pid is not None and "dealer display: http" in line:
            break
    assert pid is not None
    time.sleep(1.0)  # the dealer at work
    os.kill(pid, signal.SIGKILL)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1, err[-3000:]
    assert err.strip().splitlines()[-1] == (
        f"error: the engine service (process {pid}) stopped unexpectedly (killed by SIGKILL); "
        "the demo stopped too (its log is above)"
    )
    assert "Traceback" not in err


def test_the_journal_is_kept_where_tablectl_history_finds_it(first_run: FirstRun) -> None:
    folder = first_run.folder
    assert first_run.returncode == 0, first_run.err[-3000:]
    lines = first_run.out.strip().splitlines()
    summary = json.loads(lines[-1])
    assert summary["journal"] == str(folder)
    config = folder / "table.toml"
    assert f"journal kept in {folder}; its hands: tablectl history --config {config}" in first_run.out
    listed = subprocess.run(
        [str(TABLECTL), "history", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == ["#1", "#2"]
    verified = subprocess.run(
        [str(TABLECTL), "journal", "verify", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr
    assert "intact" in verified.stdout
    # The same folder again: refused (the engine would carry on with that table's journal).
    again = demo("--hands", "1", "--journal", str(folder))
    _, err = again.communicate(timeout=60)
    assert again.returncode == 1
    assert err.strip().startswith(f"error: --journal {folder}: already holds a journal (journal.")
    assert err.strip().endswith("): give a new or empty folder")
