"""The floor's history in one SQLite file (stdlib ``sqlite3``, WAL): the embedded default.

Writes run on one connection in a thread of their own, reads on another (WAL lets them read while
the writer writes), so neither blocks the event loop. The schema is migrated by versioned steps
recorded in ``schema_migrations``; version 1 is the history as the console kept it before
versions were recorded (a file of that time is taken as version 1 and migrated on).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

from controller.floor.store import (
    SLOTS,
    DatabaseUnavailable,
    Migration,
    Statement,
    StoreError,
    check_version,
)

_T = TypeVar("_T")

MIGRATIONS: Final = (
    Migration(
        1,
        "alert changes and hand results of every table",
        (
            """CREATE TABLE IF NOT EXISTS alert_changes (
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
            )""",
            "CREATE INDEX IF NOT EXISTS alert_changes_by_time ON alert_changes (table_id, ts_ms)",
            "CREATE INDEX IF NOT EXISTS alert_changes_by_code ON alert_changes (table_id, code, ts_ms)",
            "CREATE INDEX IF NOT EXISTS alert_changes_by_hand ON alert_changes (table_id, hand)",
            """CREATE TABLE IF NOT EXISTS hand_results (
                n INTEGER PRIMARY KEY,
                table_id TEXT NOT NULL,
                hand INTEGER NOT NULL,
                result TEXT NOT NULL,
                ts TEXT NOT NULL,
                ts_ms INTEGER NOT NULL,
                payload TEXT NOT NULL,
                received_ms INTEGER NOT NULL,
                UNIQUE (table_id, hand, ts)
            )""",
            "CREATE INDEX IF NOT EXISTS hand_results_by_time ON hand_results (table_id, ts_ms)",
        ),
    ),
    Migration(
        2,
        "alert payloads; hands' dealer, seats and rake; controller statuses (areas)",
        (
            "ALTER TABLE alert_changes ADD COLUMN payload TEXT",
            "ALTER TABLE hand_results ADD COLUMN dealer TEXT",
            "ALTER TABLE hand_results ADD COLUMN seats TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE hand_results ADD COLUMN rake INTEGER NOT NULL DEFAULT 0",
            # What the hands kept before already say (their payload), for the new questions.
            """UPDATE hand_results SET
                dealer = json_extract(payload, '$.dealer'),
                rake = COALESCE(json_extract(payload, '$.rake'), 0),
                seats = COALESCE(
                    (SELECT ',' || group_concat(value, ',') || ',' FROM json_each(payload, '$.seats')),
                    '')
            WHERE json_valid(payload)""",
            "CREATE INDEX hand_results_across ON hand_results (ts_ms)",
            "CREATE INDEX hand_results_by_dealer ON hand_results (dealer, ts_ms)",
            "CREATE INDEX alert_changes_across ON alert_changes (ts_ms)",
            "CREATE INDEX alert_changes_by_code_across ON alert_changes (code, ts_ms)",
            """CREATE TABLE status_changes (
                n INTEGER PRIMARY KEY,
                table_id TEXT NOT NULL,
                state TEXT NOT NULL,
                session INTEGER NOT NULL,
                detail TEXT,
                area TEXT,
                ts TEXT NOT NULL,
                ts_ms INTEGER NOT NULL,
                received_ms INTEGER NOT NULL,
                UNIQUE (table_id, session, state, ts)
            )""",
            "CREATE INDEX status_changes_by_time ON status_changes (table_id, ts_ms)",
        ),
    ),
    Migration(
        3,
        "the latest state and controller status of every table (a console's first picture)",
        (
            """CREATE TABLE table_latest (
                table_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                ts_ms INTEGER NOT NULL,
                received_ms INTEGER NOT NULL,
                payload TEXT NOT NULL,
                PRIMARY KEY (table_id, kind)
            )""",
        ),
    ),
)
SCHEMA_MIGRATIONS: Final = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_ms INTEGER NOT NULL
)"""


class SqliteDatabase:
    """One SQLite file; see the module docstring."""

    kind: Literal["sqlite"] = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = str(path)
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        # One thread each: a connection is used by the thread that runs its work, in order.
        self._writing = ThreadPoolExecutor(1, thread_name_prefix="floor-sqlite-write")
        self._reading = ThreadPoolExecutor(1, thread_name_prefix="floor-sqlite-read")
        self._version = 0
        #: The slot this process holds: its number and its lock file (open, locked).
        self._slot: tuple[int, int] | None = None

    @property
    def schema_version(self) -> int:
        return self._version

    async def _run(self, pool: ThreadPoolExecutor, work: Callable[[], _T]) -> _T:
        return await asyncio.get_running_loop().run_in_executor(pool, work)

    async def open(self) -> None:
        try:
            await self._run(self._writing, self._open)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"floor store {self.path}: {error}") from None

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        writer = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            writer.execute("PRAGMA journal_mode=WAL")
            writer.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, fast commits
            writer.execute("PRAGMA busy_timeout=10000")  # another process migrating the same file
            self._version = self._migrate(writer)
            self._reader = sqlite3.connect(self.path, check_same_thread=False)
        except BaseException:
            writer.close()
            raise
        self._writer = writer

    def _migrate(self, connection: sqlite3.Connection) -> int:
        known = MIGRATIONS[-1].version
        connection.execute("BEGIN IMMEDIATE")  # one migrating process at a time
        try:
            connection.execute(SCHEMA_MIGRATIONS)
            (found,) = connection.execute(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations"
            ).fetchone()
            check_version(int(found), known, f"floor store {self.path}")
            for migration in MIGRATIONS:
                if migration.version <= found:
                    continue
                for statement in migration.statements:
                    connection.execute(statement)
                connection.execute(
                    "INSERT INTO schema_migrations (version, description, applied_ms) VALUES (?, ?, ?)",
                    (migration.version, migration.description, int(time.time() * 1000)),
                )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return known

    async def close(self) -> None:
        def close_writer() -> None:
            if self._writer is not None:
                self._writer.close()
                self._writer = None

        def close_reader() -> None:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

        if self._slot is not None:
            os.close(self._slot[1])  # the lock goes with the descriptor
            self._slot = None
        await self._run(self._writing, close_writer)
        await self._run(self._reading, close_reader)
        self._writing.shutdown(wait=False)
        self._reading.shutdown(wait=False)

    async def write(self, statements: Sequence[Statement]) -> int:
        def work() -> int:
            connection = self._writer
            if connection is None:
                raise DatabaseUnavailable("closed")
            changed = 0
            try:
                connection.execute("BEGIN")
                for sql, rows in statements:
                    changed += connection.executemany(sql, rows).rowcount
                connection.execute("COMMIT")
            except sqlite3.Error as error:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise DatabaseUnavailable(str(error)) from None
            return changed

        return await self._run(self._writing, work)

    async def read(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        def work() -> list[tuple[Any, ...]]:
            if self._reader is None:
                raise DatabaseUnavailable("closed")
            try:
                return self._reader.execute(sql, tuple(args)).fetchall()
            except sqlite3.Error as error:
                raise DatabaseUnavailable(str(error)) from None

        return await self._run(self._reading, work)

    async def reachable(self) -> bool:
        return self._writer is not None

    async def claim(self, name: str, prefer: int | None = None) -> int:
        """A slot is a lock file beside the database (``floor.sqlite.NAME-3.lock``), locked with
        ``flock`` while this process holds it."""
        if self._slot is not None:
            return self._slot[0]
        order = ([prefer] if prefer is not None else []) + list(range(SLOTS))
        for number in order:
            path = self.path.with_name(f"{self.path.name}.{name}-{number}.lock")
            try:
                descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as error:
                raise DatabaseUnavailable(f"{path}: {error.strerror or error}") from None
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(descriptor)
                continue
            self._slot = (number, descriptor)
            return number
        raise StoreError(f"floor store {self.path}: all {SLOTS} {name} slots are taken")
