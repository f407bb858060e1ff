"""``tablectl demo`` end to end: broker, simulators, drivers, engine service and virtual dealer.

Each run is a real process tree (``python -m controller.cli demo``), as a user starts it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from engine.catalogue import CHIP_CODES
from testing.mosquitto import Mosquitto

REPO = Path(__file__).resolve().parents[2]


def _demo(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", "demo", "--no-view", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _summary(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    summary: dict[str, Any] = json.loads(last)
    return summary


@pytest.fixture(scope="module")
def embedded_run() -> subprocess.CompletedProcess[str]:
    """One demo on the embedded broker, with chips, shared by the two tests below: pot limit
    (every chip code can happen there), most hands with a mistake: seed 2 draws 12 mistakes in
    14 hands, 9 of them chip codes (the run had 24 hands before)."""
    return _demo(
        "--hands",
        "14",
        "--seed",
        "2",
        "--speed",
        "0",
        "--mistake-rate",
        "0.9",
        "--json",
        timeout=240,
    )


def test_short_demo_on_the_embedded_broker_detects_every_mistake(
    embedded_run: subprocess.CompletedProcess[str],
) -> None:
    summary = _summary(embedded_run)
    assert summary["hands"] == 14
    assert summary["broker"].startswith("mqtt://127.0.0.1:")
    assert summary["mistakes_injected"] >= 5
    assert summary["precision"] == 1.0
    assert summary["recall"] == 1.0
    assert summary["missed"] == {}
    assert summary["unexpected"] == {}
    assert summary["other_alerts"] == {}
    assert summary["detected"] == summary["injected"]
    latency = summary["latency_ms"]
    assert latency["count"] == sum(summary["detected"].values())
    assert 0 < latency["p50"] <= latency["p99"] <= latency["max"] < 3000
    assert "precision 1.0, recall 1.0" in embedded_run.stdout


def test_short_demo_with_chips_detects_every_chip_mistake(
    embedded_run: subprocess.CompletedProcess[str],
) -> None:
    summary = _summary(embedded_run)
    assert summary["game"].startswith("pot_limit 1/2")
    assert summary["precision"] == 1.0
    assert summary["recall"] == 1.0
    assert summary["detected"] == summary["injected"]
    chip_codes = set(summary["detected"]) & set(CHIP_CODES)
    assert len(chip_codes) >= 6, summary["detected"]


SESSION = (
    "rebuy_during_hand",
    "buy_in_out_of_limits",
    "absence_over_limit",
    "dealer_changed_mid_hand",
    "blinds_out_of_level",
    "hand_after_last",
)


def test_a_tournament_demo_commits_and_detects_every_session_mistake() -> None:
    """Levels by the clock at the demo table (stacks read, the house's maximum rebuy and longest
    absence, a badge reader): every hand one of the session's mistakes, each detected. Seed 4
    draws all six within its first seven hands (it played 16 before)."""
    result = _demo(
        "--hands",
        "8",
        "--seed",
        "4",
        "--speed",
        "0",
        "--tournament",
        "--mistake-rate",
        "1",
        "--mistakes",
        ",".join(SESSION),
        "--json",
        timeout=400,
    )
    summary = _summary(result)
    assert "tournament" in summary["game"]
    assert set(summary["injected"]) == set(SESSION)
    assert summary["detected"] == summary["injected"]
    assert summary["precision"] == 1.0
    assert summary["recall"] == 1.0
    assert summary["missed"] == {}
    assert summary["unexpected"] == {}


def test_demo_without_chips_against_an_external_mosquitto(mosquitto: Mosquitto) -> None:
    """A table without chip reading (the keypad shows the betting), on an external broker, with
    the other profile and fewer seats: one run for what two runs asserted before (the embedded
    broker with chips is the run above)."""
    result = _demo(
        "--hands",
        "8",
        "--seed",
        "5",
        "--speed",
        "0",
        "--mistake-rate",
        "0.6",
        "--profile",
        "tda",
        "--seats",
        "6",
        "--no-chips",
        "--broker",
        mosquitto.url,
        "--json",
    )
    summary = _summary(result)
    assert summary["broker"] == mosquitto.url
    assert summary["profile"] == "tda"
    assert summary["hands"] == 8
    assert summary["game"] == "no chips"
    assert summary["mistakes_injected"] >= 1
    assert summary["precision"] == 1.0
    assert summary["recall"] == 1.0
    assert not set(summary["injected"]) & set(CHIP_CODES)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``tablectl demo ARGS`` in this process (an argument error needs no process of its own):
    its exit status and standard error."""
    try:
        status = main(["demo", "--no-view", *args])
    except SystemExit as exit_:  # argparse's own errors
        status = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    return status, capsys.readouterr().err


def test_bad_arguments_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    status, err = _cli(capsys, "--players", "5-3")
    assert status == 1
    assert err.strip() == "error: --players 5-3: need 2 <= MIN <= MAX <= seats (9)"
    status, err = _cli(capsys, "--mistakes", "premature_flop,no_such_code")
    assert status != 0
    assert "not catalogue codes: no_such_code" in err
    status, err = _cli(capsys, "--tournament", "--no-chips")
    assert status == 1
    assert err.strip() == "error: --tournament needs chips: the blinds of each level are read as chips"
    status, err = _cli(capsys, "--broker", "http://example.org")
    assert status == 1
    assert "expected mqtt://host:port" in err
    # A broker that cannot be reached: the real command, as a user meets it.
    result = _demo("--broker", "mqtt://127.0.0.1:1", "--hands", "1")
    assert result.returncode == 1
    assert result.stderr.startswith("error: broker mqtt://127.0.0.1:1: ")
    assert "Traceback" not in result.stderr
