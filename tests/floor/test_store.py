"""The floor's history, the same tests in SQLite and in PostgreSQL (a database of the test's own):
every change once, filters, the questions across tables, migrations, retention, failures."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from contract.models import Alert, HandResult, Status
from controller.floor.store import AlertQuery, Filters, FloorStore, HandQuery, StoreError
from controller.floor.store_postgres import MIGRATIONS as PG_MIGRATIONS
from controller.floor.store_sqlite import MIGRATIONS as SQLITE_MIGRATIONS
from controller.floor.stores import store_for
from tests.history.support import showdown_hand, uncontested_hand

T0 = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def alert(
    alert_id: str,
    severity: str,
    status: str = "raised",
    code: str = "exposed_card",
    ts: datetime = T0,
    hand: int = 7,
    seat: int = 3,
) -> Alert:
    return Alert.model_validate(
        {
            "id": alert_id,
            "ts": ts,
            "hand": hand,
            "code": code,
            "severity": severity,
            "status": status,
            "seat": seat,
            "message": f"{code} {alert_id}",
            "remedy": ["step"],
            "rule": "RR",
            "profile": "tda",
        }
    )


def dealt(result: HandResult, dealer: str | None = None, rake: int = 0) -> HandResult:
    return result.model_copy(update={"dealer": dealer, "rake": rake})


def ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "floor.sqlite")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[FloorStore]:
    opened = store_for(store_url)
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


async def test_every_change_is_kept_once_and_filtered(store: FloorStore) -> None:
    changes = [
        alert("1-1", "warning", ts=T0),
        alert("1-1", "warning", "acknowledged", ts=T0 + timedelta(seconds=5)),
        alert("1-2", "critical", code="misdeal_wrong_first_seat", ts=T0 + timedelta(seconds=9)),
        alert("1-1", "warning", "resolved", ts=T0 + timedelta(seconds=20)),
    ]
    committed: list[bool] = []
    for change in [*changes, changes[0]]:  # a QoS 1 repeat
        store.record("t1", change, 0, committed.append)
    store.record("t2", changes[2], 0)
    await store.flush()
    assert committed == [True] * 5
    rows = await store.query("t1", Filters())
    assert [(r["id"], r["status"]) for r in rows] == [
        ("1-1", "resolved"),
        ("1-2", "raised"),
        ("1-1", "acknowledged"),
        ("1-1", "raised"),
    ]
    assert rows[0]["remedy"] == ["step"]
    assert rows[0]["ts"] == "2026-11-30T20:00:20Z"
    critical = await store.query("t1", Filters(severity="critical"))
    assert [r["id"] for r in critical] == ["1-2"]
    assert len(await store.query("t1", Filters(code="exposed_card"))) == 3
    window = Filters(since_ms=ms(T0 + timedelta(seconds=4)), until_ms=ms(T0 + timedelta(seconds=10)))
    assert [r["status"] for r in await store.query("t1", window)] == ["raised", "acknowledged"]
    assert await store.codes("t1") == ["exposed_card", "misdeal_wrong_first_seat"]
    assert await store.query("t1", Filters(limit=1)) == rows[:1]
    # As published, plus the table (tablectl floor alerts --json).
    published = await store.find_alerts(AlertQuery(table="t1"))
    assert [(a["id"], a["status"]) for a in published] == [
        ("1-1", "raised"),
        ("1-1", "acknowledged"),
        ("1-2", "raised"),
        ("1-1", "resolved"),
    ]
    assert published[0] == {"table": "t1", **json.loads(changes[0].to_json())}
    everywhere = await store.find_alerts(AlertQuery(code="misdeal_wrong_first_seat"))
    assert [a["table"] for a in everywhere] == ["t1", "t2"]


async def test_hands_across_tables_by_table_time_code_seat_and_dealer(store: FloorStore) -> None:
    hands = [
        ("t1", dealt(showdown_hand(7, T0), "D-1", rake=3)),
        ("t1", dealt(uncontested_hand(8, T0 + timedelta(minutes=1)), "D-1")),
        ("t2", dealt(showdown_hand(7, T0 + timedelta(minutes=2)), "D-2", rake=4)),
        ("t3", showdown_hand(1, T0 + timedelta(minutes=3))),
    ]
    for table, result in [*hands, hands[0]]:  # a repeat
        store.record_hand(table, result, 0)
    store.record("t1", alert("7-1", "warning", code="exposed_card", hand=7), 0)
    store.record("t2", alert("7-1", "critical", code="misdeal_wrong_first_seat", hand=7), 0)
    await store.flush()

    def shown(found: list[dict[str, object]]) -> list[tuple[object, object]]:
        return [(h["table"], h["hand"]) for h in found]

    everything = await store.find_hands(HandQuery())
    assert shown(everything) == [("t1", 7), ("t1", 8), ("t2", 7), ("t3", 1)]
    assert everything[0] == {"table": "t1", **json.loads(hands[0][1].to_json())}
    assert everything[0]["dealer"] == "D-1"
    assert shown(await store.find_hands(HandQuery(table="t1"))) == [("t1", 7), ("t1", 8)]
    since = HandQuery(since_ms=ms(T0 + timedelta(minutes=1)), until_ms=ms(T0 + timedelta(minutes=2)))
    assert shown(await store.find_hands(since)) == [("t1", 8), ("t2", 7)]
    assert shown(await store.find_hands(HandQuery(code="exposed_card"))) == [("t1", 7)]
    assert shown(await store.find_hands(HandQuery(seat=4))) == [("t1", 8)]
    assert shown(await store.find_hands(HandQuery(seat=1))) == [("t1", 7), ("t2", 7), ("t3", 1)]
    assert shown(await store.find_hands(HandQuery(dealer="D-2"))) == [("t2", 7)]
    assert shown(await store.find_hands(HandQuery(limit=1))) == [("t1", 7)]
    # A table's page: newest first, each hand with its alert changes.
    (newest, older) = await store.hands("t1")
    assert (newest[0].hand, older[0].hand) == (8, 7)
    assert [c["code"] for c in older[1]] == ["exposed_card"]
    found = await store.hand("t2", 7)
    assert found is not None
    assert found[0].dealer == "D-2"
    assert await store.hand("t2", 99) is None


async def test_statuses_give_each_table_s_area_and_the_figures_behind_the_report(store: FloorStore) -> None:
    def status(session: int, at: datetime, area: str | None) -> Status:
        return Status.model_validate({"state": "online", "ts": at, "session": session, "area": area})

    store.record_status("t1", status(1, T0, "pit 1"), 0)
    store.record_status("t1", status(2, T0 + timedelta(hours=1), "pit 2"), 0)  # moved
    store.record_status("t1", status(2, T0 + timedelta(hours=1), "pit 2"), 0)  # retained again
    store.record_status("t2", status(1, T0, "pit 1"), 0)
    store.record_status("t3", status(1, T0, None), 0)
    for minute in range(3):
        store.record_hand("t1", dealt(showdown_hand(minute + 1, T0 + timedelta(minutes=minute)), "D-1", 2), 0)
    store.record_hand("t1", dealt(showdown_hand(9, T0 + timedelta(hours=1)), "D-2", 5), 0)
    store.record("t1", alert("1-1", "warning", hand=1, ts=T0), 0)
    store.record("t1", alert("1-1", "warning", "resolved", hand=1, ts=T0), 0)  # a change, not an alert
    await store.flush()
    assert await store.areas() == {"t1": "pit 2", "t2": "pit 1", "t3": None}
    hour = ms(T0) // 3_600_000
    figures = await store.figures(ms(T0), ms(T0 + timedelta(hours=2)))
    assert [tuple(r) for r in figures["hands"]] == [("t1", hour, 3, 6), ("t1", hour + 1, 1, 5)]
    assert [tuple(r) for r in figures["alerts"]] == [("t1", hour, 1)]
    assert [tuple(r) for r in figures["dealers"]] == [("D-1", 3, 6, 1), ("D-2", 1, 5, 1)]
    assert [tuple(r) for r in figures["dealer_alerts"]] == [("D-1", 1)]


async def test_each_table_s_last_hand_skipping_a_corrupt_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "floor.sqlite"
    store = store_for(str(path))
    await store.open()
    try:
        store.record_hand("t1", showdown_hand(7, T0), 0)
        store.record_hand("t1", uncontested_hand(8, T0 + timedelta(seconds=60)), 0)
        store.record_hand("t2", showdown_hand(3, T0), 0)
        store.record_hand("t3", showdown_hand(5, T0), 0)
        await store.flush()
        with sqlite3.connect(path) as db:
            db.execute("UPDATE hand_results SET payload = '{\"v\": 1' WHERE table_id = 't3'")
        with caplog.at_level(logging.WARNING, logger="controller.floor.store"):
            last = await store.last_hands()
    finally:
        await store.close()
    assert {table: result.hand for table, result in last.items()} == {"t1": 8, "t2": 3}
    (warning,) = caplog.messages
    assert warning.startswith(f"floor: {path}: last hand of table t3 unreadable, skipped:")


async def test_a_history_that_cannot_be_opened_or_written_says_so(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match=r"floor store .*file/floor\.sqlite"):
        await store_for(str(tmp_path / "file" / "floor.sqlite")).open()
    path = tmp_path / "floor.sqlite"
    store = store_for(str(path))
    await store.open()
    try:
        with sqlite3.connect(path) as db:
            db.execute("DROP TABLE alert_changes")  # as broken as a full disk, for the writer
        told: list[bool] = []
        store.record("t1", alert("1", "warning"), 0, told.append)
        await store.flush()
        assert told == [False]
        assert store.error is not None
        assert "no such table" in store.error
        assert not store.writable.is_set()
    finally:
        await store.close()
    assert json.dumps(store.error)


async def test_a_postgresql_store_that_cannot_be_reached_names_it_without_its_password() -> None:
    from testing.mosquitto import free_port

    url = f"postgresql://floor:s3cret@127.0.0.1:{free_port()}/floor"
    shown = r"floor store postgresql://floor:\*\*\*@127\.0\.0\.1:\d+/floor: "
    with pytest.raises(StoreError, match=shown) as caught:
        await store_for(url).open()
    assert "s3cret" not in str(caught.value)


async def test_the_retention_keeps_what_was_received_within_it(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    now = T0.timestamp() + 100 * 86400
    old_ms, recent_ms = (now - 31 * 86400) * 1000, (now - 29 * 86400) * 1000
    store = store_for(store_url)  # keeps everything
    await store.open()
    try:
        store.record("t1", alert("1-1", "warning"), old_ms)
        store.record("t1", alert("2-1", "warning"), recent_ms)
        store.record_hand("t1", showdown_hand(1, T0), old_ms)
        store.record_hand("t1", showdown_hand(2, T0 + timedelta(seconds=60)), recent_ms)
        await store.flush()
    finally:
        await store.close()
    assert store.pruned == 0
    kept = FloorStore(store_for(store_url).database, retain_days=30, clock=lambda: now)
    with caplog.at_level(logging.INFO, logger="controller.floor.store"):
        await kept.open()  # removes at start, before what is queued next
        try:
            rows = await kept.query("t1", Filters())
            last = await kept.last_hands()
        finally:
            await kept.close()
    assert [r["id"] for r in rows] == ["2-1"]
    assert last["t1"].hand == 2
    assert kept.pruned == 2
    assert any("older than 30 days removed" in m for m in caplog.messages)


async def test_the_schema_is_migrated_once_and_a_newer_one_refused(store_url: str) -> None:
    for _ in range(2):  # a second start migrates nothing
        store = store_for(store_url)
        await store.open()
        await store.close()
    known = (SQLITE_MIGRATIONS if store.database.kind == "sqlite" else PG_MIGRATIONS)[-1].version
    assert store.database.schema_version == known
    if store.database.kind == "sqlite":
        with sqlite3.connect(store_url) as db:
            versions = [row[0] for row in db.execute("SELECT version FROM schema_migrations ORDER BY 1")]
            db.execute("INSERT INTO schema_migrations VALUES (?, 'from the future', 0)", (known + 1,))
    else:
        with psycopg.connect(store_url, autocommit=True) as db:
            found = db.execute("SELECT version FROM floor.schema_migrations ORDER BY 1")
            versions = [row[0] for row in found]
            db.execute(
                "INSERT INTO floor.schema_migrations (version, description) VALUES (%s, 'later')",
                (known + 1,),
            )
    assert versions == list(range(1, known + 1))
    with pytest.raises(
        StoreError,
        match=rf"schema version {known + 1} is newer than this tablectl knows "
        rf"\({known}\): upgrade tablectl",
    ):
        await store_for(store_url).open()


async def test_a_sqlite_history_of_before_the_migrations_is_migrated_and_keeps_its_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "floor.sqlite"
    with sqlite3.connect(path) as db:  # the history as the console kept it before
        for statement in SQLITE_MIGRATIONS[0].statements:
            db.execute(statement)
        db.execute(
            "INSERT INTO hand_results (table_id, hand, result, ts, ts_ms, payload, received_ms) "
            "VALUES ('t1', 7, 'showdown', '2026-11-30T20:00:00.000Z', ?, ?, 0)",
            (ms(T0), dealt(showdown_hand(7, T0), "D-9", rake=3).to_json().decode()),
        )
        db.execute(
            "INSERT INTO alert_changes (table_id, alert_id, hand, code, severity, seat, status, message, "
            "remedy, rule, device, ts, ts_ms, received_ms) VALUES ('t1', '7-1', 7, 'exposed_card', "
            "'warning', 3, 'raised', 'shown', '[\"step\"]', 'RR', NULL, '2026-11-30T20:00:00.000Z', ?, 0)",
            (ms(T0),),
        )
    store = store_for(str(path))
    await store.open()
    try:
        seat_2 = await store.find_hands(HandQuery(seat=2))
        assert [(h["table"], h["dealer"]) for h in seat_2] == [("t1", "D-9")]
        assert [h["hand"] for h in await store.find_hands(HandQuery(dealer="D-9"))] == [7]
        (old,) = await store.find_alerts(AlertQuery())
        assert (old["table"], old["id"], old["remedy"]) == ("t1", "7-1", ["step"])
    finally:
        await store.close()


async def test_each_table_s_latest_state_and_status_the_newest_kept_a_cleared_table_forgotten(
    store: FloorStore,
) -> None:
    def noted(table: str, kind: str, at: datetime) -> None:
        store.note_latest(table, kind, ms(at), ms(at) + 5, json.dumps({"at": at.isoformat()}).encode())

    noted("t1", "state", T0 + timedelta(seconds=2))
    noted("t1", "state", T0)  # older than the one noted: changes nothing
    noted("t1", "controller/status", T0)
    noted("t2", "state", T0)
    await store.flush()
    noted("t2", "state", T0 - timedelta(seconds=1))  # older than the one written: changes nothing
    noted("t1", "state", T0 + timedelta(seconds=4))
    store.forget_latest("t3")  # nothing kept: nothing to remove
    await store.flush()
    found = [(t, k, json.loads(p)["at"], r) for t, k, p, r in await store.latest()]
    assert found == [
        ("t1", "controller/status", T0.isoformat(), ms(T0) + 5),
        ("t1", "state", (T0 + timedelta(seconds=4)).isoformat(), ms(T0 + timedelta(seconds=4)) + 5),
        ("t2", "state", T0.isoformat(), ms(T0) + 5),
    ]
    assert store.written == 0  # not history
    noted("t1", "state", T0 + timedelta(seconds=6))
    store.forget_latest("t1")  # taken out of service: what was noted of it goes too
    await store.flush()
    assert [(t, k) for t, k, _, _ in await store.latest()] == [("t2", "state")]


async def test_the_latest_states_noted_while_postgresql_restarts_are_written_once_it_answers(
    tmp_path: Path,
) -> None:
    """The latest state of each table is tried again (backing off) after a failed write, with
    what was noted meanwhile (the newest of each table); a table taken out of service while the
    database was away is removed once it answers, and is not brought back by a retried row."""
    from testing.postgres import private_postgres

    def noted(table: str, kind: str, at: datetime) -> None:
        history.note_latest(table, kind, ms(at), ms(at) + 5, json.dumps({"at": at.isoformat()}).encode())

    with private_postgres(tmp_path / "pg") as database:
        history = store_for(database.url)
        await history.open()
        try:
            noted("t1", "state", T0)
            noted("t2", "state", T0)
            noted("t3", "state", T0)
            await history.flush()
            await asyncio.to_thread(database.stop, "immediate")  # as a crash
            noted("t1", "state", T0 + timedelta(seconds=2))
            noted("t2", "controller/status", T0)
            noted("t3", "state", T0 + timedelta(seconds=2))
            await history.flush()  # fails: the rows wait for the store
            assert history.error is not None
            noted("t1", "state", T0 + timedelta(seconds=4))  # supersedes the one waiting
            history.forget_latest("t3", ms(T0 + timedelta(seconds=3)))  # out of service
            assert history.latest_waiting == 3  # t1's state, t2's status, t3's removal
            await asyncio.to_thread(database.start)
            # Nobody flushes: the store's own retry writes them.
            for _ in range(200):
                if history.latest_waiting == 0 and history.error is None:
                    break
                await asyncio.sleep(0.1)
            found = [(t, k, json.loads(p)["at"]) for t, k, p, _ in await history.latest()]
        finally:
            await history.close()
    assert found == [
        ("t2", "controller/status", T0.isoformat()),
        ("t1", "state", (T0 + timedelta(seconds=4)).isoformat()),
        ("t2", "state", T0.isoformat()),
    ]
    assert history.latest_dropped == 0
