"""The floor's picture (pure) and its topics (the history: ``test_store.py``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from contract.models import Alert, PublicState, Status
from contract.topics import floor_filters, parse_floor_topic
from controller.floor.board import FloorBoard
from tests.history.support import showdown_hand, uncontested_hand

T0 = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def alert(
    alert_id: str, severity: str, status: str = "raised", code: str = "exposed_card", ts: datetime = T0
) -> Alert:
    return Alert.model_validate(
        {
            "id": alert_id,
            "ts": ts,
            "hand": 7,
            "code": code,
            "severity": severity,
            "status": status,
            "seat": 3,
            "message": f"{code} {alert_id}",
            "remedy": ["step"],
            "rule": "RR",
            "profile": "tda",
        }
    )


def online(board: FloorBoard, table: str, state: str = "online") -> None:
    board.on_status(table, Status.model_validate({"state": state, "ts": T0, "session": 1}), 0)


def test_floor_topics_are_public_only() -> None:
    filters = floor_filters("casino/holdem")
    assert filters == (
        "casino/holdem/+/controller/status",
        "casino/holdem/+/state",
        "casino/holdem/+/alerts",
        "casino/holdem/+/hands",
    )
    assert not any("dev" in f or "#" in f for f in filters)
    status = parse_floor_topic("casino/holdem", "casino/holdem/t9/controller/status")
    assert status == ("t9", "controller/status")
    assert parse_floor_topic("casino/holdem", "casino/holdem/t9/hands") == ("t9", "hands")
    for other in (
        "casino/holdem/t9/dev/rfid-1/event",
        "casino/holdem/t9/input",
        "holdem/t9/state",
        "casino/holdem/t9/state/x",
        "casino/holdem//state",
    ):
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
        "crit",
        "crit-ack",
        "warn",
        "down",
        "untracked",
        "warn-ack",
        "info",
        "quiet",
    ]
    groups = [
        board.tables[t].to_json()["group"]
        for t in ("crit", "crit-ack", "warn", "down", "untracked", "warn-ack", "info", "quiet")
    ]
    assert groups == [
        "critical",
        "critical",
        "warning",
        "offline",
        "devices",
        "handled",
        "handled",
        "quiet",
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
        "t1",
        PublicState(ts=T0, hand=7, phase="flop", alerts=[alert("7-1", "warning"), alert("7-2", "critical")]),
        0,
    )
    assert [a.id for a in missed] == ["7-2"]
    assert set(board.tables["t1"].alerts) == {"7-1", "7-2"}


def test_a_table_first_heard_of_starts_with_its_recalled_last_hand() -> None:
    board = FloorBoard()
    board.recalled = {"t1": uncontested_hand(8, T0)}
    online(board, "t1")
    assert board.tables["t1"].to_json()["last_hand"]["hand"] == 8
    board.on_hand("t1", showdown_hand(9, T0 + timedelta(seconds=60)), 0)
    assert board.tables["t1"].to_json()["last_hand"]["hand"] == 9


def test_a_change_come_late_by_a_slower_path_leaves_the_newer_on_the_board() -> None:
    # A table's bridge sends alerts and hands by two paths (a fast QoS 0 copy, and its session's
    # QoS 1 copy, seconds later when a node died): an older change may follow a newer one.
    board = FloorBoard()
    online(board, "t1")
    later = T0 + timedelta(seconds=5)
    board.on_alert("t1", alert("a1", "warning", "acknowledged", ts=later), 0)
    board.on_alert("t1", alert("a1", "warning", "raised"), 0)
    assert board.tables["t1"].alerts["a1"].status == "acknowledged"
    board.on_alert("t1", alert("a2", "critical", "raised"), 0)
    board.on_alert("t1", alert("a2", "critical", "resolved", ts=later), 0)
    board.on_alert("t1", alert("a2", "critical", "acknowledged", ts=T0 + timedelta(seconds=1)), 0)
    assert "a2" not in board.tables["t1"].alerts
    assert board.tables["t1"].attention()[1] == "warning acknowledged"

    newer = uncontested_hand(9, T0 + timedelta(minutes=1))
    board.on_hand("t1", newer, 0)
    board.on_hand("t1", uncontested_hand(8, T0), 0)
    assert board.tables["t1"].last_hand == newer
