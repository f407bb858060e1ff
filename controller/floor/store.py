"""The floor's history: every table's alert changes, hand results and controller statuses.

:class:`FloorStore` is one thing, kept in one place (hence the length of this file): the rows to
write, queued and committed in batches by one writer task (each row's ``done`` callback is told
once its transaction committed, or failed), the schema check at start, the retention, and every
question the floor asks of its history (a table's page, the supervisors' questions across tables,
the report per table, hour and dealer). It runs over one of two databases, a
:class:`~controller.floor.store_sqlite.SqliteDatabase` (one file, the default) or a
:class:`~controller.floor.store_postgres.PostgresDatabase` (a floor at casino scale); they
connect, migrate, write and read, and the SQL here is written once for both: times are integer
milliseconds (``ts_ms``), placeholders ``?``, conflicts ``ON CONFLICT DO NOTHING``.

A message delivered twice (QoS 1, a redelivery after a lost connection or a recorder's restart, or
two recorders writing the same floor) is stored once: alert changes are unique on (table, alert
id, status, ts), hand results on (table, hand, ts), statuses on (table, session, state, ts).
Beside the history, the store keeps the *latest* state and controller status of every table
(``table_latest``, one row per table and kind, the newer one kept): a console's first picture of
the floor, where a single broker's retained messages are not to be had (a NATS cluster, whose
retained messages wait for a JetStream leader, see ``controller.deploy.bridge``). States come many
times a second across a floor; they are kept per table in memory and written every
``LATEST_EVERY_S``, the newest of each. A write of them that fails (the database restarting) is
tried again, backing off to ``LATEST_RETRY_S``, with what was noted meanwhile: the newest of each
table is kept, so a long outage costs no more memory than a short one, and at most
``LATEST_KEPT`` rows wait (those of further tables are dropped, counted in ``latest_dropped``).

See ``docs/floor.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final, Literal, Protocol, TypeAlias

from pydantic import ValidationError

from contract.models import Alert, HandResult, Status
from controller.display.view import alert_json
from link.backoff import Backoff

log = logging.getLogger(__name__)

#: Rows committed in one transaction at most.
BATCH: Final = 1000
#: How often the retention removes what is older than it (and once at start).
PRUNE_EVERY_S: Final = 3600.0
#: How often the latest states and statuses noted are written (the newest of each table).
LATEST_EVERY_S: Final = 0.5
#: After a failed write of them, the next attempt backs off from LATEST_EVERY_S to this.
LATEST_RETRY_S: Final = 5.0
#: Latest rows waiting for the store at most (a state and a status of 5,000 tables); the newest
#: of each table replaces the one waiting, so the bound is only reached by that many tables.
LATEST_KEPT: Final = 10_000
#: The default path of the SQLite history (relative to the working directory).
DEFAULT_SQLITE: Final = "var/floor.sqlite"

#: Told once the row's transaction committed (True) or failed (False).
Done: TypeAlias = Callable[[bool], None]
#: One statement and the rows it is executed with.
Statement: TypeAlias = tuple[str, Sequence[tuple[Any, ...]]]
#: A hand result and its alert changes (as :func:`change_row_json` gives them).
HandWithAlerts: TypeAlias = tuple[HandResult, list[dict[str, Any]]]

INSERT_ALERT: Final = """
INSERT INTO alert_changes
    (table_id, alert_id, hand, code, severity, seat, status, message, remedy, rule, device, ts,
     ts_ms, received_ms, payload)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""
INSERT_HAND: Final = """
INSERT INTO hand_results
    (table_id, hand, result, ts, ts_ms, payload, received_ms, dealer, seats, rake)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""
INSERT_STATUS: Final = """
INSERT INTO status_changes (table_id, state, session, detail, area, ts, ts_ms, received_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""
#: The newer of two: a state or status older than the one kept changes nothing.
UPSERT_LATEST: Final = """
INSERT INTO table_latest (table_id, kind, ts_ms, received_ms, payload) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (table_id, kind) DO UPDATE SET
    ts_ms = excluded.ts_ms, received_ms = excluded.received_ms, payload = excluded.payload
WHERE excluded.ts_ms > table_latest.ts_ms
"""
#: A table taken out of service (its retained status cleared): no first picture of it. Only what
#: was received before the clearing goes, so that a forget tried again after a failed write
#: never removes the state of a table back in service meanwhile.
FORGET_LATEST: Final = "DELETE FROM table_latest WHERE table_id = ? AND received_ms <= ?"
#: The kinds ``table_latest`` keeps (topics under the table's base).
LATEST_KINDS: Final = ("controller/status", "state")
PRUNE: Final = (
    "DELETE FROM alert_changes WHERE received_ms < ?",
    "DELETE FROM hand_results WHERE received_ms < ?",
    "DELETE FROM status_changes WHERE received_ms < ?",
)
ALERT_COLUMNS: Final = (
    "table_id",
    "alert_id",
    "hand",
    "code",
    "severity",
    "seat",
    "status",
    "message",
    "remedy",
    "rule",
    "device",
    "ts",
    "payload",
)
_ALERT_SELECT: Final = ", ".join(ALERT_COLUMNS)
HOUR_MS: Final = 3_600_000
#: Recorders of one floor at once, at most (each holds a slot, hence an MQTT session).
SLOTS: Final = 64


class StoreError(RuntimeError):
    """The history cannot be used (cannot be opened, a schema newer than this tablectl...); the
    message names the store."""


class DatabaseUnavailable(Exception):
    """A write or a read failed because the database cannot be reached or refused it."""


@dataclass(frozen=True)
class Migration:
    """One step of a database's schema: applied once, in order, recorded in ``schema_migrations``."""

    version: int
    description: str
    statements: tuple[str, ...]


def check_version(found: int, known: int, where: str) -> None:
    """Refuse a schema newer than this tablectl knows (another, newer floor migrated it)."""
    if found > known:
        raise StoreError(
            f"{where}: schema version {found} is newer than this tablectl knows ({known}): "
            "upgrade tablectl on this machine (the store was migrated by a newer one)"
        )


class Database(Protocol):
    """What the store needs of a database (SQLite or PostgreSQL)."""

    #: The place, for messages (a path, or a URL without its password).
    name: str

    @property
    def kind(self) -> Literal["sqlite", "postgresql"]: ...

    async def open(self) -> None:
        """Connect; create what is missing and apply the migrations not yet applied (StoreError)."""

    async def close(self) -> None: ...

    async def write(self, statements: Sequence[Statement]) -> int:
        """Execute ``statements`` in one transaction; the rows changed (DatabaseUnavailable)."""

    async def read(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows of one query (DatabaseUnavailable)."""

    async def reachable(self) -> bool:
        """Whether it answers now (reconnecting if it must)."""

    async def claim(self, name: str, prefer: int | None = None) -> int:
        """The lowest free slot of ``name`` (``prefer`` first), held by this process until it
        closes the database or dies: recorders number their sessions by it (StoreError when
        none of ``SLOTS`` is free, DatabaseUnavailable)."""

    @property
    def schema_version(self) -> int: ...


# --------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """What a table's page asks of its alert history; None: any."""

    code: str | None = None
    severity: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    limit: int = 500


@dataclass(frozen=True)
class HandQuery:
    """Hands across tables (the supervisors' questions); None: any. ``code``: hands during which
    an alert of that code changed; ``seat``: hands that seat was dealt in."""

    table: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    code: str | None = None
    seat: int | None = None
    dealer: str | None = None
    limit: int = 1000


@dataclass(frozen=True)
class AlertQuery:
    """Alert changes across tables; None: any."""

    table: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    code: str | None = None
    severity: str | None = None
    seat: int | None = None
    status: str | None = None
    limit: int = 10_000


@dataclass
class _Where:
    """A WHERE clause built of fixed column names; values are bound, never formatted in."""

    parts: list[str] = field(default_factory=list)
    args: list[Any] = field(default_factory=list)

    def add(self, sql: str, value: Any) -> None:
        if value is not None:
            self.parts.append(sql)
            self.args.append(value)

    @property
    def sql(self) -> str:
        return f"WHERE {' AND '.join(self.parts)}" if self.parts else ""


def iso_ms(ms: int) -> str:
    """Integer milliseconds since the epoch as RFC 3339 UTC (``2026-11-29T23:59:18.120Z``)."""
    seconds, millis = divmod(int(ms), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _ts(alert_ts: Any) -> tuple[str, int]:
    return alert_ts.isoformat().replace("+00:00", "Z"), int(alert_ts.timestamp() * 1000)


def seats_text(seats: Sequence[int]) -> str:
    """The seats dealt in as ``,1,4,6,`` (``LIKE '%,4,%'`` finds a seat in either database)."""
    return "," + ",".join(str(s) for s in sorted(seats)) + "," if seats else ""


def alert_row(table_id: str, alert: Alert, received_ms: float) -> tuple[Any, ...]:
    ts, ts_ms = _ts(alert.ts)
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
        ts,
        ts_ms,
        int(received_ms),
        alert.to_json().decode(),
    )


def change_row_json(row: Sequence[Any]) -> dict[str, Any]:
    """An alert change as the pages get it (also the shape of a live change); ``row`` in
    ``ALERT_COLUMNS`` order."""
    data = dict(zip(ALERT_COLUMNS, row, strict=True))
    remedy = data["remedy"]
    return {
        "table": data["table_id"],
        "id": data["alert_id"],
        "hand": data["hand"],
        "code": data["code"],
        "severity": data["severity"],
        "seat": data["seat"],
        "status": data["status"],
        "message": data["message"],
        "remedy": json.loads(remedy) if isinstance(remedy, str) else remedy,
        "rule": data["rule"],
        "device": data["device"],
        "ts": data["ts"],
    }


def change_json(table_id: str, alert: Alert) -> dict[str, Any]:
    """A live alert change in the history's shape."""
    return {"kind": "change", "table": table_id, **alert_json(alert)}


def alert_payload_json(row: Sequence[Any]) -> dict[str, Any]:
    """An alert change as published, plus ``table`` (``tablectl floor alerts --json``). A row
    written before the payload was kept (an old SQLite history) is given from its columns."""
    data = dict(zip(ALERT_COLUMNS, row, strict=True))
    payload = data["payload"]
    if payload is not None:
        found: dict[str, Any] = json.loads(payload) if isinstance(payload, str) else dict(payload)
        return {"table": data["table_id"], **found}
    shown = change_row_json(row)
    shown.pop("table")
    return {"table": data["table_id"], "v": 1, **shown}


def _payload(value: Any) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(value) if isinstance(value, str) else dict(value)
    return found


# --------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------

#: Something to write (a statement and its row, and who to tell), a flush marker, or the stop.
_Item: TypeAlias = tuple[str, tuple[Any, ...], Done | None] | asyncio.Future[None] | None


class FloorStore:
    """The floor's history over ``database``; ``retain_days``: rows received longer ago are
    removed (at start, then hourly), 0 keeps everything. The table PCs' journals stay the record;
    this is the floor's index of them, and a busy floor's history grows without end."""

    def __init__(
        self, database: Database, *, retain_days: float = 0, clock: Callable[[], float] = time.time
    ) -> None:
        self.database = database
        self.retain_days = retain_days
        self._clock = clock
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._pruner: asyncio.Task[None] | None = None
        #: Why the last write failed, while writes fail (shown on the console's pages).
        self.error: str | None = None
        #: Rows of the history written (the latest states not counted), and rows removed by the
        #: retention, so far.
        self.written = 0
        self.pruned = 0
        #: Set while writes succeed (cleared by a failed one, set again by the next success).
        self.writable = asyncio.Event()
        #: The latest state and status noted per (table, kind), not yet queued (or to be queued
        #: again after a failed write): their rows, ``received_ms`` fourth.
        self._latest: dict[tuple[str, str], tuple[Any, ...]] = {}
        #: Tables taken out of service whose removal is not yet committed: when the clearing
        #: came (a row received before it is not kept again); ``_forgets_due``: those to queue.
        self._forgets: dict[str, int] = {}
        self._forgets_due: set[str] = set()
        self._latest_at: asyncio.TimerHandle | None = None
        self._latest_backoff = Backoff(LATEST_EVERY_S, LATEST_RETRY_S)
        self._latest_failed = False
        self._closing = False
        #: Latest rows dropped because ``LATEST_KEPT`` were waiting for the store.
        self.latest_dropped = 0

    @property
    def name(self) -> str:
        return self.database.name

    async def open(self) -> None:
        """Connect, check and migrate the schema, remove what is past the retention, then start
        the writer (StoreError when the database cannot be used)."""
        await self.database.open()
        if self.retain_days > 0:
            await self._prune()
        self.writable.set()
        self._writer = asyncio.create_task(self._write_loop(), name="floor-store-writer")
        if self.retain_days > 0:
            self._pruner = asyncio.create_task(self._prune_loop(), name="floor-store-retention")

    async def close(self) -> None:
        """Write what is queued, then stop."""
        self._closing = True
        if self._pruner is not None:
            self._pruner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pruner
            self._pruner = None
        if self._latest_at is not None:
            self._latest_at.cancel()
        self._queue_latest()
        if self._writer is not None:
            self._queue.put_nowait(None)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._writer, 30)
            self._writer = None
        await self.database.close()

    # ------------------------------------------------------------------ writing

    def record(self, table_id: str, alert: Alert, received_ms: float, done: Done | None = None) -> None:
        """Queue one alert change (returns at once; ``done`` is told once it is committed)."""
        self._queue.put_nowait((INSERT_ALERT, alert_row(table_id, alert, received_ms), done))

    def record_hand(
        self, table_id: str, result: HandResult, received_ms: float, done: Done | None = None
    ) -> None:
        """Queue one hand result."""
        ts, ts_ms = _ts(result.ts)
        row = (
            table_id,
            result.hand,
            result.result,
            ts,
            ts_ms,
            result.to_json().decode(),
            int(received_ms),
            result.dealer,
            seats_text(result.seats),
            result.rake,
        )
        self._queue.put_nowait((INSERT_HAND, row, done))

    def record_status(
        self, table_id: str, status: Status, received_ms: float, done: Done | None = None
    ) -> None:
        """Queue one controller status (the table's state, session and area over time)."""
        ts, ts_ms = _ts(status.ts)
        row = (
            table_id,
            status.state,
            status.session,
            status.detail,
            status.area,
            ts,
            ts_ms,
            int(received_ms),
        )
        self._queue.put_nowait((INSERT_STATUS, row, done))

    def note_latest(self, table_id: str, kind: str, ts_ms: int, received_ms: float, payload: bytes) -> None:
        """The table's state or status (``kind``, one of ``LATEST_KINDS``) as published: kept as
        the table's latest if newer than what is kept (written within ``LATEST_EVERY_S``, or
        once the store answers again)."""
        self._keep_latest((table_id, kind, ts_ms, int(received_ms), payload.decode()))
        self._latest_soon()

    def forget_latest(self, table_id: str, received_ms: float | None = None) -> None:
        """The table was taken out of service (its status cleared, received at ``received_ms``,
        default now): its latest state and status are removed."""
        at = int(self._clock() * 1000 if received_ms is None else received_ms)
        for kind in LATEST_KINDS:
            self._latest.pop((table_id, kind), None)
        self._forgets[table_id] = max(at, self._forgets.get(table_id, at))
        self._forgets_due.add(table_id)
        self._latest_soon()

    def _keep_latest(self, row: tuple[Any, ...]) -> None:
        """``row`` to be written, unless what waits for its table is newer, its table was taken
        out of service after it came, or ``LATEST_KEPT`` rows of other tables wait already."""
        table_id, kind, ts_ms, received_ms = row[:4]
        if self._forgets.get(table_id, -1) >= received_ms:
            return
        key = (table_id, kind)
        kept = self._latest.get(key)
        if kept is not None and kept[2] >= ts_ms:
            return
        if kept is None and len(self._latest) >= LATEST_KEPT:
            self.latest_dropped += 1
            if self.latest_dropped == 1:
                log.error(
                    "floor store %s: %d latest states wait for the store; those of further tables "
                    "are dropped (counted)",
                    self.name,
                    LATEST_KEPT,
                )
            return
        self._latest[key] = row

    def _latest_soon(self) -> None:
        """Queue what is noted within ``LATEST_EVERY_S`` (or the retry's delay after a failure)."""
        if self._latest_at is None and not self._closing:
            delay = self._latest_backoff.next() if self._latest_failed else LATEST_EVERY_S
            self._latest_at = asyncio.get_running_loop().call_later(delay, self._queue_latest)

    def _queue_latest(self) -> None:
        self._latest_at = None
        rows, self._latest = self._latest, {}
        forgets, self._forgets_due = self._forgets_due, set()
        for table_id in forgets:
            at = self._forgets[table_id]
            self._queue.put_nowait((FORGET_LATEST, (table_id, at), partial(self._forgotten, table_id, at)))
        for row in rows.values():
            self._queue.put_nowait((UPSERT_LATEST, row, partial(self._latest_written, row)))

    def _latest_written(self, row: tuple[Any, ...], ok: bool) -> None:
        if ok:
            self._latest_ok()
            return
        self._keep_latest(row)  # unless superseded meanwhile
        self._latest_retry()

    def _forgotten(self, table_id: str, at: int, ok: bool) -> None:
        if ok:
            if self._forgets.get(table_id) == at:
                del self._forgets[table_id]
            self._latest_ok()
            return
        self._forgets_due.add(table_id)
        self._latest_retry()

    def _latest_ok(self) -> None:
        if self._latest_failed:
            self._latest_failed = False
            self._latest_backoff.reset()

    def _latest_retry(self) -> None:
        """A write of latest rows failed: they are tried again after the backoff's delay."""
        if not self._latest_failed:
            self._latest_failed = True
            if self._latest_at is not None:  # due sooner than a retry should be
                self._latest_at.cancel()
                self._latest_at = None
        self._latest_soon()

    @property
    def latest_waiting(self) -> int:
        """Latest states and statuses noted and not yet queued (waiting for the store, after a
        failed write)."""
        return len(self._latest) + len(self._forgets_due)

    def after(self, done: Done) -> None:
        """Tell ``done`` once everything queued before is written (or failed): a message that
        holds no row (a rejected payload) is acknowledged in its turn."""
        self._queue.put_nowait(("", (), done))

    async def flush(self) -> None:
        """Wait until everything recorded (and noted) so far is committed (or failed)."""
        if self._writer is None or self._writer.done():
            return
        if self._latest_at is not None:
            self._latest_at.cancel()
        self._queue_latest()
        marker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(marker)
        await marker

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    async def _write_loop(self) -> None:
        while True:
            item = await self._queue.get()
            rows: list[tuple[str, tuple[Any, ...]]] = []
            dones: list[Done] = []
            markers: list[asyncio.Future[None]] = []
            stop = False
            while True:
                if item is None:
                    stop = True
                elif isinstance(item, asyncio.Future):
                    markers.append(item)
                else:
                    sql, row, done = item
                    if sql:
                        rows.append((sql, row))
                    if done is not None:
                        dones.append(done)
                if len(rows) >= BATCH or stop:
                    break
                try:
                    item = self._queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
            ok = await self._write(rows) if rows else True
            for done in dones:
                try:
                    done(ok)
                except Exception:
                    log.exception("floor store: a write's callback failed")
            for marker in markers:
                if not marker.done():
                    marker.set_result(None)
            if stop:
                return

    async def _write(self, rows: list[tuple[str, tuple[Any, ...]]]) -> bool:
        grouped: dict[str, list[tuple[Any, ...]]] = {}
        for sql, row in rows:  # one executemany per statement, in the order they came
            grouped.setdefault(sql, []).append(row)
        statements: list[Statement] = list(grouped.items())
        try:
            await self.database.write(statements)
        except DatabaseUnavailable as error:
            why = f"floor store {self.name}: {error}"
            if why != self.error:
                log.error("%s; %d rows not written", why, len(rows))
            self.error = why
            self.writable.clear()
            return False
        if self.error is not None:
            log.warning("floor store %s: writable again", self.name)
            self.error = None
        self.writable.set()
        self.written += sum(1 for sql, _ in rows if sql not in (UPSERT_LATEST, FORGET_LATEST))
        return True

    async def _prune_loop(self) -> None:
        while True:
            await asyncio.sleep(PRUNE_EVERY_S)
            await self._prune()

    async def _prune(self) -> None:
        """Remove the rows received more than ``retain_days`` ago."""
        before_ms = int((self._clock() - self.retain_days * 86400) * 1000)
        try:
            removed = await self.database.write([(sql, [(before_ms,)]) for sql in PRUNE])
        except DatabaseUnavailable as error:
            log.error("floor store %s: old rows not removed: %s", self.name, error)
            return
        if removed:
            self.pruned += removed
            log.info(
                "floor store %s: %d alert changes, hand results and statuses older than %g days removed",
                self.name,
                removed,
                self.retain_days,
            )

    # ------------------------------------------------------------------ a table's page

    async def _read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return await self.database.read(sql, args)
        except DatabaseUnavailable as error:
            raise StoreError(f"floor store {self.name}: {error}") from None

    async def query(self, table_id: str, filters: Filters) -> list[dict[str, Any]]:
        """The table's alert changes matching ``filters``, newest first."""
        where = _Where()
        where.add("table_id = ?", table_id)
        where.add("code = ?", filters.code)
        where.add("severity = ?", filters.severity)
        where.add("ts_ms >= ?", filters.since_ms)
        where.add("ts_ms <= ?", filters.until_ms)
        rows = await self._read(
            f"SELECT {_ALERT_SELECT} FROM alert_changes {where.sql} "  # noqa: S608 - fixed names, values bound
            "ORDER BY ts_ms DESC, n DESC LIMIT ?",
            [*where.args, filters.limit],
        )
        return [change_row_json(row) for row in rows]

    async def codes(self, table_id: str) -> list[str]:
        """The codes in the table's history (for the filter)."""
        rows = await self._read(
            "SELECT DISTINCT code FROM alert_changes WHERE table_id = ? ORDER BY code", [table_id]
        )
        return [str(row[0]) for row in rows]

    async def _with_alerts(self, rows: list[tuple[Any, ...]]) -> list[HandWithAlerts]:
        """Hand results (rows of table id and payload) and, for each, its alert changes."""
        out: list[HandWithAlerts] = []
        for table_id, payload in rows:
            result = HandResult.model_validate(_payload(payload))
            changes = await self._read(
                f"SELECT {_ALERT_SELECT} FROM alert_changes "  # noqa: S608 - fixed column names
                "WHERE table_id = ? AND hand = ? ORDER BY ts_ms, n",
                [table_id, result.hand],
            )
            out.append((result, [change_row_json(c) for c in changes]))
        return out

    async def hands(self, table_id: str, limit: int = 50) -> list[HandWithAlerts]:
        """The table's last ``limit`` hand results, newest first, each with its alert changes."""
        rows = await self._read(
            "SELECT table_id, payload FROM hand_results WHERE table_id = ? ORDER BY ts_ms DESC, n DESC "
            "LIMIT ?",
            [table_id, limit],
        )
        return await self._with_alerts(rows)

    async def hand(self, table_id: str, hand: int) -> HandWithAlerts | None:
        """One hand result of the table (the newest with that number) and its alert changes."""
        rows = await self._read(
            "SELECT table_id, payload FROM hand_results WHERE table_id = ? AND hand = ? "
            "ORDER BY ts_ms DESC, n DESC LIMIT 1",
            [table_id, hand],
        )
        found = await self._with_alerts(rows)
        return found[0] if found else None

    async def last_hands(self) -> dict[str, HandResult]:
        """The newest hand result of every table (read once at a console's start, so that it
        shows each table's last hand before its next one ends). A row that cannot be read is
        logged, naming the table and the store, and skipped."""
        rows = await self._read(
            "SELECT h.table_id, h.payload FROM hand_results h JOIN "
            "(SELECT table_id, MAX(n) AS n FROM hand_results GROUP BY table_id) newest "
            "ON h.n = newest.n"
        )
        found: dict[str, HandResult] = {}
        for table_id, payload in rows:
            try:
                found[table_id] = HandResult.model_validate(_payload(payload))
            except (ValidationError, ValueError) as error:
                log.warning(
                    "floor: %s: last hand of table %s unreadable, skipped: %s", self.name, table_id, error
                )
        return found

    async def latest(self) -> list[tuple[str, str, str, int]]:
        """Every table's latest state and status kept: (table, kind, payload, received_ms),
        statuses first."""
        rows = await self._read(
            "SELECT table_id, kind, payload, received_ms FROM table_latest ORDER BY kind, table_id"
        )
        return [(str(t), str(k), str(p), int(r)) for t, k, p, r in rows]

    # ------------------------------------------------------------------ across tables

    async def find_hands(self, query: HandQuery) -> list[dict[str, Any]]:
        """Hand results as published, plus ``table``, oldest first."""
        where = _Where()
        where.add("h.table_id = ?", query.table)
        where.add("h.ts_ms >= ?", query.since_ms)
        where.add("h.ts_ms <= ?", query.until_ms)
        where.add("h.dealer = ?", query.dealer)
        where.add("h.seats LIKE ?", None if query.seat is None else f"%,{query.seat},%")
        where.add(
            "EXISTS (SELECT 1 FROM alert_changes a WHERE a.table_id = h.table_id AND a.hand = h.hand "
            "AND a.code = ?)",
            query.code,
        )
        rows = await self._read(
            f"SELECT h.table_id, h.payload FROM hand_results h {where.sql} "  # noqa: S608 - fixed names, values bound
            "ORDER BY h.ts_ms, h.n LIMIT ?",
            [*where.args, query.limit],
        )
        return [{"table": table_id, **_payload(payload)} for table_id, payload in rows]

    async def find_alerts(self, query: AlertQuery) -> list[dict[str, Any]]:
        """Alert changes as published, plus ``table``, oldest first."""
        where = _Where()
        where.add("table_id = ?", query.table)
        where.add("ts_ms >= ?", query.since_ms)
        where.add("ts_ms <= ?", query.until_ms)
        where.add("code = ?", query.code)
        where.add("severity = ?", query.severity)
        where.add("seat = ?", query.seat)
        where.add("status = ?", query.status)
        rows = await self._read(
            f"SELECT {_ALERT_SELECT} FROM alert_changes {where.sql} "  # noqa: S608 - fixed names, values bound
            "ORDER BY ts_ms, n LIMIT ?",
            [*where.args, query.limit],
        )
        return [alert_payload_json(row) for row in rows]

    async def areas(self) -> dict[str, str | None]:
        """Each table's area (pit) as its newest controller status gave it."""
        rows = await self._read(
            "SELECT s.table_id, s.area FROM status_changes s JOIN "
            "(SELECT table_id, MAX(ts_ms) AS ts_ms FROM status_changes GROUP BY table_id) newest "
            "ON s.table_id = newest.table_id AND s.ts_ms = newest.ts_ms ORDER BY s.n"
        )
        return {str(table_id): area for table_id, area in rows}

    async def figures(self, since_ms: int, until_ms: int) -> dict[str, list[tuple[Any, ...]]]:
        """The raw counts behind the report (``controller.floor.report``), hours as ``ts_ms //
        3600000``: hands and rake per table and hour, alerts raised per table and hour, hands and
        rake per dealer, alerts raised during the hands of each dealer."""
        window = [since_ms, until_ms]
        return {
            "hands": await self._read(
                f"SELECT table_id, ts_ms / {HOUR_MS} AS hour, COUNT(*), "  # noqa: S608 - a constant
                "CAST(COALESCE(SUM(rake), 0) AS BIGINT) FROM hand_results "
                "WHERE ts_ms >= ? AND ts_ms < ? GROUP BY table_id, hour ORDER BY table_id, hour",
                window,
            ),
            "alerts": await self._read(
                f"SELECT table_id, ts_ms / {HOUR_MS} AS hour, COUNT(*) FROM alert_changes "  # noqa: S608 - a constant
                "WHERE status = 'raised' AND ts_ms >= ? AND ts_ms < ? "
                "GROUP BY table_id, hour ORDER BY table_id, hour",
                window,
            ),
            "dealers": await self._read(
                "SELECT dealer, COUNT(*), CAST(COALESCE(SUM(rake), 0) AS BIGINT), "
                "COUNT(DISTINCT table_id) FROM hand_results WHERE ts_ms >= ? AND ts_ms < ? "
                "GROUP BY dealer ORDER BY dealer",
                window,
            ),
            "dealer_alerts": await self._read(
                "SELECT h.dealer, COUNT(*) FROM alert_changes a JOIN hand_results h "
                "ON a.table_id = h.table_id AND a.hand = h.hand "
                "WHERE a.status = 'raised' AND h.ts_ms >= ? AND h.ts_ms < ? "
                "GROUP BY h.dealer ORDER BY h.dealer",
                window,
            ),
        }
