"""The floor console's alert history and hand results in SQLite (stdlib ``sqlite3``, WAL).

Writes never block the event loop: :meth:`AlertHistory.record` queues a row and a writer thread
commits what is queued in batches (one transaction per batch). Reads run in a worker thread on
their own connection (WAL lets them read while the writer writes). A row is one alert change, or
one hand result (as published, with its hand number, outcome and time beside it); a message
delivered twice (QoS 1) is stored once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeAlias

from pydantic import ValidationError

from contract.models import Alert, HandResult

log = logging.getLogger(__name__)

#: Rows committed in one transaction at most.
BATCH: Final = 1000
#: How often the writer removes what is older than the retention (and once at start).
PRUNE_EVERY_S: Final = 3600.0
PRUNE: Final = (
    "DELETE FROM alert_changes WHERE received_ms < ?",
    "DELETE FROM hand_results WHERE received_ms < ?",
)
SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS alert_changes (
    n INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    alert_id TEXT NOT NULL,
    hand INTEGER NOT NULL,
    code TEXT NOT NULL,
    severity TEXT NOT NULL,
    seat INTEGER,
    status TEXT NOT NULL,
    message TEXT NOT NULL,
    remedy TEXT NOT NULL,
    rule TEXT NOT NULL,
    device TEXT,
    ts TEXT NOT NULL,
    ts_ms INTEGER NOT NULL,
    received_ms INTEGER NOT NULL,
    UNIQUE (table_id, alert_id, status, ts)
);
CREATE INDEX IF NOT EXISTS alert_changes_by_time ON alert_changes (table_id, ts_ms);
CREATE INDEX IF NOT EXISTS alert_changes_by_code ON alert_changes (table_id, code, ts_ms);
CREATE INDEX IF NOT EXISTS alert_changes_by_hand ON alert_changes (table_id, hand);
CREATE TABLE IF NOT EXISTS hand_results (
    n INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    hand INTEGER NOT NULL,
    result TEXT NOT NULL,
    ts TEXT NOT NULL,
    ts_ms INTEGER NOT NULL,
    payload TEXT NOT NULL,
    received_ms INTEGER NOT NULL,
    UNIQUE (table_id, hand, ts)
);
CREATE INDEX IF NOT EXISTS hand_results_by_time ON hand_results (table_id, ts_ms);
"""
INSERT_HAND: Final = """
INSERT OR IGNORE INTO hand_results (table_id, hand, result, ts, ts_ms, payload, received_ms)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""
INSERT: Final = """
INSERT OR IGNORE INTO alert_changes
    (table_id, alert_id, hand, code, severity, seat, status, message, remedy, rule, device, ts,
     ts_ms, received_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
COLUMNS: Final = (
    "table_id", "alert_id", "hand", "code", "severity", "seat", "status", "message", "remedy",
    "rule", "device", "ts", "ts_ms", "received_ms",
)


#: A hand result and its alert changes (as :func:`history_json` gives them).
HandWithAlerts: TypeAlias = tuple[HandResult, list[dict[str, Any]]]


class HistoryError(RuntimeError):
    """The history database cannot be opened."""


@dataclass(frozen=True)
class Filters:
    """What the table page asks for; None: any."""

    code: str | None = None
    severity: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    limit: int = 500


def _row(table_id: str, alert: Alert, received_ms: float) -> tuple[Any, ...]:
    return (
        table_id,
        alert.id,
        alert.hand,
        alert.code,
        alert.severity,
        alert.seat,
        alert.status,
        alert.message,
        json.dumps(alert.remedy),
        alert.rule,
        alert.device,
        alert.ts.isoformat().replace("+00:00", "Z"),
        int(alert.ts.timestamp() * 1000),
        int(received_ms),
    )


class AlertHistory:
    """Alert changes of every table, kept in ``path``; ``retain_days``: rows received longer
    ago are removed (at start, then hourly); 0 keeps everything. The table PC's journal stays
    the record; this is the floor's index of it, and a busy floor's file grows without end."""

    def __init__(self, path: Path, *, retain_days: float = 0, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.retain_days = retain_days
        self._clock = clock
        #: Rows removed by the retention so far.
        self.pruned = 0
        #: (statement, row) to write, a callback once what came before is written, None: stop.
        self._queue: queue.SimpleQueue[tuple[str, tuple[Any, ...]] | Callable[[], None] | None] = (
            queue.SimpleQueue()
        )
        self._writer: threading.Thread | None = None
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        #: Why the last write failed, while writes fail (shown on the console's pages).
        self.error: str | None = None
        self.written = 0

    def open(self) -> None:
        """Create the database (WAL) if needed and start the writer."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(SCHEMA)
            connection.close()
            self._reader = sqlite3.connect(self.path, check_same_thread=False)
        except (OSError, sqlite3.Error) as error:
            raise HistoryError(f"alert history {self.path}: {error}") from None
        self._writer = threading.Thread(target=self._write_loop, name="floor-history", daemon=True)
        self._writer.start()

    def close(self) -> None:
        """Write what is queued, then stop."""
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join(10)
            self._writer = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # ------------------------------------------------------------------ writing

    def record(self, table_id: str, alert: Alert, received_ms: float) -> None:
        """Queue one alert change (returns at once)."""
        self._queue.put((INSERT, _row(table_id, alert, received_ms)))

    def record_hand(self, table_id: str, result: HandResult, received_ms: float) -> None:
        """Queue one hand result (returns at once)."""
        row = (
            table_id,
            result.hand,
            result.result,
            result.ts.isoformat().replace("+00:00", "Z"),
            int(result.ts.timestamp() * 1000),
            result.to_json().decode(),
            int(received_ms),
        )
        self._queue.put((INSERT_HAND, row))

    async def flush(self) -> None:
        """Wait until everything recorded so far is committed (or failed)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def resolve() -> None:
            if not done.done():
                done.set_result(None)

        def finished() -> None:
            loop.call_soon_threadsafe(resolve)

        self._queue.put(finished)
        await done

    def _write_loop(self) -> None:
        connection = sqlite3.connect(self.path)
        connection.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, fast commits
        next_prune = 0.0  # monotonic: at once
        try:
            while True:
                if self.retain_days > 0 and time.monotonic() >= next_prune:
                    self._prune(connection)
                    next_prune = time.monotonic() + PRUNE_EVERY_S
                try:
                    item = self._queue.get(timeout=PRUNE_EVERY_S if self.retain_days > 0 else None)
                except queue.Empty:
                    continue
                rows: list[tuple[str, tuple[Any, ...]]] = []
                callbacks: list[Callable[[], None]] = []
                stop = False
                while True:
                    if item is None:
                        stop = True
                    elif callable(item):
                        callbacks.append(item)
                    else:
                        rows.append(item)
                    if len(rows) >= BATCH:
                        break
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                if rows:
                    self._write(connection, rows)
                for callback in callbacks:
                    callback()
                if stop:
                    return
        finally:
            connection.close()

    def _prune(self, connection: sqlite3.Connection) -> None:
        """Remove the rows received more than ``retain_days`` ago."""
        before_ms = int((self._clock() - self.retain_days * 86400) * 1000)
        try:
            with connection:
                removed = sum(connection.execute(sql, (before_ms,)).rowcount for sql in PRUNE)
        except sqlite3.Error as error:
            log.error("alert history %s: old rows not removed: %s", self.path, error)
            return
        if removed:
            self.pruned += removed
            log.info("alert history %s: %d alert changes and hand results older than %g days removed",
                     self.path, removed, self.retain_days)

    def _write(self, connection: sqlite3.Connection, rows: list[tuple[str, tuple[Any, ...]]]) -> None:
        try:
            with connection:
                for statement in (INSERT, INSERT_HAND):
                    batch = [row for sql, row in rows if sql == statement]
                    if batch:
                        connection.executemany(statement, batch)
        except sqlite3.Error as error:
            why = f"alert history {self.path}: {error}"
            if why != self.error:
                log.error("%s; %d alert changes or hand results not kept", why, len(rows))
            self.error = why
            return
        if self.error is not None:
            log.warning("alert history %s: writable again", self.path)
            self.error = None
        self.written += len(rows)

    # ------------------------------------------------------------------ reading

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._read_lock:
            if self._reader is None:
                raise HistoryError("the alert history is closed")
            return self._reader.execute(sql, args).fetchall()

    async def query(self, table_id: str, filters: Filters) -> list[dict[str, Any]]:
        """The table's alert changes matching ``filters``, newest first."""
        where = ["table_id = ?"]
        args: list[Any] = [table_id]
        if filters.code:
            where.append("code = ?")
            args.append(filters.code)
        if filters.severity:
            where.append("severity = ?")
            args.append(filters.severity)
        if filters.since_ms is not None:
            where.append("ts_ms >= ?")
            args.append(filters.since_ms)
        if filters.until_ms is not None:
            where.append("ts_ms <= ?")
            args.append(filters.until_ms)
        sql = (
            f"SELECT {', '.join(COLUMNS)} FROM alert_changes WHERE {' AND '.join(where)} "  # noqa: S608 - fixed column names, values bound
            "ORDER BY ts_ms DESC, n DESC LIMIT ?"
        )
        args.append(filters.limit)
        rows = await asyncio.to_thread(self._read, sql, tuple(args))
        return [history_json(dict(zip(COLUMNS, row, strict=True))) for row in rows]

    async def codes(self, table_id: str) -> list[str]:
        """The codes in the table's history (for the filter)."""
        rows = await asyncio.to_thread(
            self._read,
            "SELECT DISTINCT code FROM alert_changes WHERE table_id = ? ORDER BY code",
            (table_id,),
        )
        return [str(row[0]) for row in rows]

    def _hands_with_alerts(self, sql: str, args: tuple[Any, ...]) -> list[HandWithAlerts]:
        """Hand results (read by ``sql``) and, for each, its alert changes (oldest first)."""
        out: list[HandWithAlerts] = []
        for table_id, payload in self._read(sql, args):
            result = HandResult.model_validate_json(payload)
            changes = self._read(
                f"SELECT {', '.join(COLUMNS)} FROM alert_changes "  # noqa: S608 - fixed column names
                "WHERE table_id = ? AND hand = ? ORDER BY ts_ms, n",
                (table_id, result.hand),
            )
            out.append((result, [history_json(dict(zip(COLUMNS, c, strict=True))) for c in changes]))
        return out

    async def hands(self, table_id: str, limit: int = 50) -> list[HandWithAlerts]:
        """The table's last ``limit`` hand results, newest first, each with its alert changes."""
        return await asyncio.to_thread(
            self._hands_with_alerts,
            "SELECT table_id, payload FROM hand_results WHERE table_id = ? ORDER BY ts_ms DESC, n DESC "
            "LIMIT ?",
            (table_id, limit),
        )

    def last_hands(self) -> dict[str, HandResult]:
        """The newest hand result of every table in the history (read once at start-up, so that
        a restarted console shows each table's last hand before its next one ends). A row that
        cannot be read is logged, naming the table and the database, and skipped."""
        found: dict[str, HandResult] = {}
        for (table_id,) in self._read("SELECT DISTINCT table_id FROM hand_results", ()):
            for (payload,) in self._read(
                "SELECT payload FROM hand_results WHERE table_id = ? ORDER BY ts_ms DESC, n DESC "
                "LIMIT 1",
                (table_id,),
            ):
                try:
                    found[table_id] = HandResult.model_validate_json(payload)
                except ValidationError as error:
                    log.warning(
                        "floor: %s: last hand of table %s unreadable, skipped: %s",
                        self.path,
                        table_id,
                        error,
                    )
        return found

    async def hand(self, table_id: str, hand: int) -> HandWithAlerts | None:
        """One hand result of the table (the newest with that number) and its alert changes."""
        found = await asyncio.to_thread(
            self._hands_with_alerts,
            "SELECT table_id, payload FROM hand_results WHERE table_id = ? AND hand = ? "
            "ORDER BY ts_ms DESC, n DESC LIMIT 1",
            (table_id, hand),
        )
        return found[0] if found else None


def history_json(row: dict[str, Any]) -> dict[str, Any]:
    """A history row as the pages get it (also the shape of a live change)."""
    return {
        "table": row["table_id"],
        "id": row["alert_id"],
        "hand": row["hand"],
        "code": row["code"],
        "severity": row["severity"],
        "seat": row["seat"],
        "status": row["status"],
        "message": row["message"],
        "remedy": json.loads(row["remedy"]) if isinstance(row["remedy"], str) else row["remedy"],
        "rule": row["rule"],
        "device": row["device"],
        "ts": row["ts"],
    }


def change_json(table_id: str, alert: Alert) -> dict[str, Any]:
    """A live alert change in the history's shape."""
    row = dict(zip(COLUMNS, _row(table_id, alert, 0), strict=True))
    return {"kind": "change", **history_json(row)}
