"""The floor's picture (pure), its topics, and the alert history in SQLite."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from contract.models import Alert, PublicState, Status
from contract.topics import floor_filters, parse_floor_topic
from controller.floor.board import FloorBoard
from controller.floor.history import AlertHistory, Filters, HistoryError
from tests.history.support import showdown_hand, uncontested_hand

T0 = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def alert(alert_id: str, severity: str, status: str = "raised", code: str = "exposed_card",
          ts: datetime = T0) -> Alert:
    return Alert.model_validate({
        "id": alert_id, "ts": ts, "hand": 7, "code": code, "severity": severity, "status": status,
        "seat": 3, "message": f"{code} {alert_id}", "remedy": ["step"], "rule": "RR", "profile": "tda",
    })


def online(board: FloorBoard, table: str, state: str = "online") -> None:
    board.on_status(table, Status.model_validate({"state": state, "ts": T0, "session": 1}), 0)


def test_floor_topics_are_public_only() -> None:
    filters = floor_filters("casino/holdem")
    assert filters == (
        "casino/holdem/+/controller/status", "casino/holdem/+/state", "casino/holdem/+/alerts",
        "casino/holdem/+/hands",
    )
    assert not any("dev" in f or "#" in f for f in filters)
    status = parse_floor_topic("casino/holdem", "casino/holdem/t9/controller/status")
    assert status == ("t9", "controller/status")
    assert parse_floor_topic("casino/holdem", "casino/holdem/t9/hands") == ("t9", "hands")
    for other in ("casino/holdem/t9/dev/rfid-1/event", "casino/holdem/t9/input", "holdem/t9/state",
                  "casino/holdem/t9/state/x", "casino/holdem//state"):
        assert parse_floor_topic("casino/holdem", other) is None


def test_the_floor_is_ordered_by_what_needs_attention() -> None:
    board = FloorBoard()
    for table in ("quiet", "crit", "crit-ack", "warn", "warn-ack", "info", "untracked"):
        online(board, table)
    online(board, "down", "offline")
    board.on_alert("crit", alert("1", "critical"), 0)
    board.on_alert("crit-ack", alert("1", "critical", "acknowledged"), 0)
    board.on_alert("warn", alert("1", "warning"), 0)
    board.on_alert("warn-ack", alert("1", "warning", "acknowledged"), 0)
    board.on_alert("info", alert("1", "info"), 0)
    board.on_state("untracked", PublicState(ts=T0, hand=1, phase="preflop", tracking=False), 0)
    assert [t.id for t in board.ordered()] == [
        "crit", "crit-ack", "warn", "down", "untracked", "warn-ack", "info", "quiet",
    ]
    groups = [board.tables[t].to_json()["group"] for t in
              ("crit", "crit-ack", "warn", "down", "untracked", "warn-ack", "info", "quiet")]
    assert groups == [
        "critical", "critical", "warning", "offline", "devices", "handled", "handled", "quiet",
    ]
    worst = board.tables["crit"].to_json()
    assert worst["attention"] == "critical"
    assert worst["worst"]["message"] == "exposed_card 1"
    assert worst["counts"] == {"critical": 1, "warning": 0, "info": 0}
    # A resolved alert leaves; the table goes quiet.
    board.on_alert("crit", alert("1", "critical", "resolved"), 0)
    assert board.tables["crit"].attention()[1] == "ok"


def test_a_state_brings_the_alerts_the_console_missed() -> None:
    board = FloorBoard()
    board.on_alert("t1", alert("7-1", "warning"), 0)
    missed = board.on_state(
        "t1", PublicState(ts=T0, hand=7, phase="flop",
                          alerts=[alert("7-1", "warning"), alert("7-2", "critical")]), 0,
    )
    assert [a.id for a in missed] == ["7-2"]
    assert set(board.tables["t1"].alerts) == {"7-1", "7-2"}


async def test_history_keeps_every_change_once_and_filters(tmp_path: Path) -> None:
    history = AlertHistory(tmp_path / "floor.sqlite")
    history.open()
    try:
        changes = [
            alert("1-1", "warning", ts=T0),
            alert("1-1", "warning", "acknowledged", ts=T0 + timedelta(seconds=5)),
            alert("1-2", "critical", code="misdeal_wrong_first_seat", ts=T0 + timedelta(seconds=9)),
            alert("1-1", "warning", "resolved", ts=T0 + timedelta(seconds=20)),
        ]
        for change in [*changes, changes[0]]:  # a QoS 1 repeat
            history.record("t1", change, 0)
        history.record("t2", changes[2], 0)
        await history.flush()
        rows = await history.query("t1", Filters())
        assert [(r["id"], r["status"]) for r in rows] == [
            ("1-1", "resolved"), ("1-2", "raised"), ("1-1", "acknowledged"), ("1-1", "raised"),
        ]
        assert rows[0]["remedy"] == ["step"]
        critical = await history.query("t1", Filters(severity="critical"))
        assert [r["id"] for r in critical] == ["1-2"]
        code = await history.query("t1", Filters(code="exposed_card"))
        assert len(code) == 3
        window = Filters(since_ms=int((T0 + timedelta(seconds=4)).timestamp() * 1000),
                         until_ms=int((T0 + timedelta(seconds=10)).timestamp() * 1000))
        assert [r["status"] for r in await history.query("t1", window)] == ["raised", "acknowledged"]
        assert await history.codes("t1") == ["exposed_card", "misdeal_wrong_first_seat"]
        assert await history.query("t1", Filters(limit=1)) == rows[:1]
    finally:
        history.close()
    with sqlite3.connect(tmp_path / "floor.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT count(*) FROM alert_changes").fetchone()[0] == 5


async def test_history_that_cannot_be_opened_or_written_says_so(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(HistoryError, match=r"alert history .*file/floor\.sqlite"):
        AlertHistory(tmp_path / "file" / "floor.sqlite").open()
    path = tmp_path / "floor.sqlite"
    history = AlertHistory(path)
    history.open()
    try:
        with sqlite3.connect(path) as db:
            db.execute("DROP TABLE alert_changes")  # as broken as a full disk, for the writer
        history.record("t1", alert("1", "warning"), 0)
        await history.flush()
        assert history.error is not None
        assert "no such table" in history.error
    finally:
        await asyncio.to_thread(history.close)
    assert json.dumps(history.error)


async def test_history_gives_each_table_s_last_hand_and_skips_a_corrupt_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "floor.sqlite"
    history = AlertHistory(path)
    history.open()
    try:
        history.record_hand("t1", showdown_hand(7, T0), 0)
        history.record_hand("t1", uncontested_hand(8, T0 + timedelta(seconds=60)), 0)
        history.record_hand("t2", showdown_hand(3, T0), 0)
        history.record_hand("t3", showdown_hand(5, T0), 0)
        await history.flush()
        with sqlite3.connect(path) as db:
            db.execute("UPDATE hand_results SET payload = '{\"v\": 1' WHERE table_id = 't3'")
        with caplog.at_level(logging.WARNING, logger="controller.floor.history"):
            last = history.last_hands()
    finally:
        history.close()
    assert {table: result.hand for table, result in last.items()} == {"t1": 8, "t2": 3}
    (warning,) = caplog.messages
    assert warning.startswith(f"floor: {path}: last hand of table t3 unreadable, skipped:")


def test_a_table_first_heard_of_starts_with_its_recalled_last_hand() -> None:
    board = FloorBoard()
    board.recalled = {"t1": uncontested_hand(8, T0)}
    online(board, "t1")
    assert board.tables["t1"].to_json()["last_hand"]["hand"] == 8
    board.on_hand("t1", showdown_hand(9, T0 + timedelta(seconds=60)), 0)
    assert board.tables["t1"].to_json()["last_hand"]["hand"] == 9


async def test_history_keeps_what_it_received_in_the_retention_and_removes_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "floor.sqlite"
    now = T0.timestamp() + 100 * 86400
    old_ms, recent_ms = (now - 31 * 86400) * 1000, (now - 29 * 86400) * 1000
    history = AlertHistory(path)  # keeps everything
    history.open()
    try:
        history.record("t1", alert("1-1", "warning"), old_ms)
        history.record("t1", alert("2-1", "warning"), recent_ms)
        history.record_hand("t1", showdown_hand(1, T0), old_ms)
        history.record_hand("t1", showdown_hand(2, T0 + timedelta(seconds=60)), recent_ms)
        await history.flush()
    finally:
        await asyncio.to_thread(history.close)
    assert history.pruned == 0
    kept = AlertHistory(path, retain_days=30, clock=lambda: now)
    with caplog.at_level(logging.INFO, logger="controller.floor.history"):
        kept.open()  # removes at start, before what is queued next
        try:
            await kept.flush()
            rows = await kept.query("t1", Filters())
            last = kept.last_hands()
        finally:
            await asyncio.to_thread(kept.close)
    assert [r["id"] for r in rows] == ["2-1"]
    assert last["t1"].hand == 2
    assert kept.pruned == 2
    assert any("2 alert changes and hand results older than 30 days removed" in m for m in caplog.messages)
