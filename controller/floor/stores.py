"""The store a ``--store`` URL names: a :class:`~controller.floor.store.FloorStore` over the
PostgreSQL or the SQLite backend (each imported only when named; they build on ``store``, so
choosing between them is done here, not there)."""

from __future__ import annotations

from pathlib import Path

from controller.floor.store import FloorStore, StoreError


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def store_for(url: str, *, retain_days: float = 0) -> FloorStore:
    """The store a ``--store`` names: ``postgresql://...`` (or ``postgres://``), else a SQLite
    file (a path, or ``sqlite:PATH``)."""
    if is_postgres(url):
        from controller.floor.store_postgres import PostgresDatabase

        return FloorStore(PostgresDatabase(url), retain_days=retain_days)
    from controller.floor.store_sqlite import SqliteDatabase

    path = url.removeprefix("sqlite://") if url.startswith("sqlite://") else url.removeprefix("sqlite:")
    if not path:
        raise StoreError(f"--store {url!r}: no SQLite file named")
    return FloorStore(SqliteDatabase(Path(path)), retain_days=retain_days)
