"""The floor's history in PostgreSQL (psycopg 3, async): a floor at casino scale.

Every recorder and every console of the floor shares one database; its tables live in the schema
``floor``. One connection writes (a transaction per batch), one reads; a connection that breaks is
opened again at the next write or read (the database restarting, a failover). The schema is
migrated by versioned steps recorded in ``floor.schema_migrations``, one process at a time (an
advisory lock), and a schema newer than this tablectl knows is refused at start.

A batch the database refuses for its content (a text with a NUL character, which PostgreSQL
cannot store) is written again row by row: the rows it takes are kept, each refused one is logged
at ERROR with its table and why, and the batch counts as written (retrying it could never work).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import zlib
from collections.abc import Sequence
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

from controller.floor.store import (
    SLOTS,
    DatabaseUnavailable,
    Migration,
    Statement,
    StoreError,
    check_version,
)

try:
    import psycopg
except ModuleNotFoundError:  # pragma: no cover - the floor extra is not installed
    psycopg = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

SCHEMA: Final = "floor"
CONNECT_TIMEOUT_S: Final = 5
#: The advisory lock key of migrations (any process of any tablectl migrating this database).
MIGRATION_LOCK: Final = 0x7461626C  # "tabl"

MIGRATIONS: Final = (
    Migration(
        1,
        "alert changes, hand results and controller statuses of every table",
        (
            """CREATE TABLE alert_changes (
                n bigserial PRIMARY KEY,
                table_id text NOT NULL,
                alert_id text NOT NULL,
                hand bigint NOT NULL,
                code text NOT NULL,
                severity text NOT NULL,
                seat smallint,
                status text NOT NULL,
                message text NOT NULL,
                remedy jsonb NOT NULL,
                rule text NOT NULL,
                device text,
                ts text NOT NULL,
                ts_ms bigint NOT NULL,
                received_ms bigint NOT NULL,
                payload jsonb,
                ts_at timestamptz GENERATED ALWAYS AS (to_timestamp(ts_ms / 1000.0)) STORED,
                UNIQUE (table_id, alert_id, status, ts)
            )""",
            "CREATE INDEX alert_changes_by_time ON alert_changes (table_id, ts_ms)",
            "CREATE INDEX alert_changes_by_hand ON alert_changes (table_id, hand)",
            "CREATE INDEX alert_changes_across ON alert_changes (ts_ms)",
            "CREATE INDEX alert_changes_by_code ON alert_changes (code, ts_ms)",
            """CREATE TABLE hand_results (
                n bigserial PRIMARY KEY,
                table_id text NOT NULL,
                hand bigint NOT NULL,
                result text NOT NULL,
                ts text NOT NULL,
                ts_ms bigint NOT NULL,
                payload jsonb NOT NULL,
                received_ms bigint NOT NULL,
                dealer text,
                seats text NOT NULL DEFAULT '',
                rake bigint NOT NULL DEFAULT 0,
                ts_at timestamptz GENERATED ALWAYS AS (to_timestamp(ts_ms / 1000.0)) STORED,
                UNIQUE (table_id, hand, ts)
            )""",
            "CREATE INDEX hand_results_by_time ON hand_results (table_id, ts_ms)",
            "CREATE INDEX hand_results_across ON hand_results (ts_ms)",
            "CREATE INDEX hand_results_by_dealer ON hand_results (dealer, ts_ms)",
            """CREATE TABLE status_changes (
                n bigserial PRIMARY KEY,
                table_id text NOT NULL,
                state text NOT NULL,
                session bigint NOT NULL,
                detail text,
                area text,
                ts text NOT NULL,
                ts_ms bigint NOT NULL,
                received_ms bigint NOT NULL,
                ts_at timestamptz GENERATED ALWAYS AS (to_timestamp(ts_ms / 1000.0)) STORED,
                UNIQUE (table_id, session, state, ts)
            )""",
            "CREATE INDEX status_changes_by_time ON status_changes (table_id, ts_ms)",
        ),
    ),
    Migration(
        2,
        "the latest state and controller status of every table (a console's first picture)",
        (
            """CREATE TABLE table_latest (
                table_id text NOT NULL,
                kind text NOT NULL,
                ts_ms bigint NOT NULL,
                received_ms bigint NOT NULL,
                payload text NOT NULL,
                PRIMARY KEY (table_id, kind)
            )""",
        ),
    ),
)


def redacted(url: str) -> str:
    """The URL without its password (for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _placeholders(sql: str) -> str:
    """The store's ``?`` placeholders as psycopg's ``%s`` (no SQL here holds a ``?`` or ``%``)."""
    return sql.replace("?", "%s")


def _lost(error: Exception) -> bool:
    """Whether ``error`` is about the connection (try again later) rather than the rows."""
    assert psycopg is not None
    return isinstance(error, psycopg.OperationalError | psycopg.InterfaceError)


class PostgresDatabase:
    """One PostgreSQL database reached at ``url``; see the module docstring."""

    kind: Literal["postgresql"] = "postgresql"

    def __init__(self, url: str) -> None:
        if psycopg is None:
            raise StoreError("a postgresql:// store needs psycopg 3: pip install 'tablectl[floor]'")
        self.url = url
        self.name = redacted(url)
        self._writer: psycopg.AsyncConnection[Any] | None = None
        self._reader: psycopg.AsyncConnection[Any] | None = None
        self._write_lock = asyncio.Lock()
        self._read_lock = asyncio.Lock()
        self._version = 0
        #: The connection holding this process's slot (an advisory lock), and its number.
        self._slot: tuple[int, psycopg.AsyncConnection[Any]] | None = None

    @property
    def schema_version(self) -> int:
        return self._version

    async def _connect(self, *, autocommit: bool) -> psycopg.AsyncConnection[Any]:
        assert psycopg is not None
        connection = await psycopg.AsyncConnection.connect(
            self.url,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name="tablectl-floor",
        )
        await connection.execute(f"SET search_path TO {SCHEMA}")
        if not autocommit:
            await connection.commit()
        return connection

    async def open(self) -> None:
        assert psycopg is not None
        try:
            connection = await psycopg.AsyncConnection.connect(
                self.url,
                autocommit=False,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="tablectl-floor",
            )
        except psycopg.Error as error:
            raise StoreError(f"floor store {self.name}: {_first_line(error)}") from None
        try:
            self._version = await self._migrate(connection)
        except psycopg.Error as error:
            await connection.close()
            raise StoreError(f"floor store {self.name}: migrating the schema: {_first_line(error)}") from None
        except BaseException:
            await connection.close()
            raise
        await connection.close()

    async def _migrate(self, connection: psycopg.AsyncConnection[Any]) -> int:
        known = MIGRATIONS[-1].version
        async with connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            await connection.execute(f"SET LOCAL search_path TO {SCHEMA}")
            await connection.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
                "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            cursor = await connection.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
            row = await cursor.fetchone()
            found = int(row[0]) if row is not None else 0
            check_version(found, known, f"floor store {self.name}")
            for migration in MIGRATIONS:
                if migration.version <= found:
                    continue
                for statement in migration.statements:
                    await connection.execute(statement)
                await connection.execute(
                    "INSERT INTO schema_migrations (version, description) VALUES (%s, %s)",
                    (migration.version, migration.description),
                )
                log.info(
                    "floor store %s: schema migrated to version %d (%s)",
                    self.name,
                    migration.version,
                    migration.description,
                )
        return known

    async def close(self) -> None:
        slot = self._slot[1] if self._slot is not None else None
        self._slot = None
        for connection in (self._writer, self._reader, slot):
            if connection is not None:
                try:
                    await connection.close()
                except Exception as error:  # a broken connection: nothing left to close
                    log.debug("floor store %s: closing: %s", self.name, error)
        self._writer = self._reader = None

    async def write(self, statements: Sequence[Statement]) -> int:
        assert psycopg is not None
        async with self._write_lock:
            try:
                if self._writer is None or self._writer.closed:
                    self._writer = await self._connect(autocommit=False)
                return await self._write(self._writer, statements)
            except psycopg.Error as error:
                if _lost(error):
                    await self._drop_writer()
                    raise DatabaseUnavailable(_first_line(error)) from None
                log.warning(
                    "floor store %s: a batch refused (%s): written again row by row",
                    self.name,
                    _first_line(error),
                )
                try:
                    return await self._write_rows(self._writer, statements)
                except psycopg.Error as again:
                    await self._drop_writer()
                    raise DatabaseUnavailable(_first_line(again)) from None

    async def _drop_writer(self) -> None:
        if self._writer is not None:
            try:
                await self._writer.close()
            except Exception as error:
                log.debug("floor store %s: closing: %s", self.name, error)
        self._writer = None

    async def _write(self, connection: psycopg.AsyncConnection[Any], statements: Sequence[Statement]) -> int:
        changed = 0
        async with connection.transaction(), connection.cursor() as cursor:
            for sql, rows in statements:
                await cursor.executemany(_placeholders(sql), rows)
                changed += max(cursor.rowcount, 0)
        return changed

    async def _write_rows(
        self, connection: psycopg.AsyncConnection[Any] | None, statements: Sequence[Statement]
    ) -> int:
        """Each row in a savepoint of its own: the ones the database takes are kept."""
        assert psycopg is not None
        if connection is None:
            raise DatabaseUnavailable("not connected")
        changed = 0
        async with connection.transaction():
            for sql, rows in statements:
                for row in rows:
                    try:
                        async with connection.transaction():
                            cursor = await connection.execute(_placeholders(sql), row)
                            changed += max(cursor.rowcount, 0)
                    except psycopg.Error as error:
                        if _lost(error):
                            raise
                        log.error(
                            "floor store %s: a row of table %s not kept: %s",
                            self.name,
                            row[0] if row else "?",
                            _first_line(error),
                        )
        return changed

    async def read(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        assert psycopg is not None
        async with self._read_lock:
            for attempt in (1, 2):  # a connection broken since the last read: once more, anew
                try:
                    if self._reader is None or self._reader.closed:
                        self._reader = await self._connect(autocommit=True)
                    cursor = await self._reader.execute(_placeholders(sql), tuple(args))
                    return await cursor.fetchall()
                except psycopg.Error as error:
                    if self._reader is not None and _lost(error):
                        try:
                            await self._reader.close()
                        except Exception as closing:
                            log.debug("floor store %s: closing: %s", self.name, closing)
                        self._reader = None
                        if attempt == 1:
                            continue
                    raise DatabaseUnavailable(_first_line(error)) from None
        raise DatabaseUnavailable("unreachable")  # pragma: no cover - the loop returns or raises

    async def reachable(self) -> bool:
        try:
            await self.read("SELECT 1", ())
        except DatabaseUnavailable:
            return False
        return True

    async def claim(self, name: str, prefer: int | None = None) -> int:
        """A slot is a session-level advisory lock (``pg_try_advisory_lock(KEY(name), n)``) on a
        connection of its own: it goes with that connection (this process's death, the
        database's restart), and is claimed again, ``prefer`` first, after an outage."""
        assert psycopg is not None
        if self._slot is not None:
            number, connection = self._slot
            try:
                await connection.execute("SELECT 1")
                return number
            except psycopg.Error:
                self._slot = None
                with contextlib.suppress(Exception):
                    await connection.close()
        key = zlib.crc32(name.encode()) & 0x7FFFFFFF
        order = ([prefer] if prefer is not None else []) + list(range(SLOTS))
        try:
            connection = await self._connect(autocommit=True)
            for number in order:
                cursor = await connection.execute("SELECT pg_try_advisory_lock(%s, %s)", (key, number))
                row = await cursor.fetchone()
                if row is not None and row[0]:
                    self._slot = (number, connection)
                    return number
        except psycopg.Error as error:
            raise DatabaseUnavailable(_first_line(error)) from None
        await connection.close()
        raise StoreError(f"floor store {self.name}: all {SLOTS} {name} slots are taken")


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
