"""The ``ts`` of every payload: an aware UTC datetime (read by the I/O shell, never the engine)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """Now, as an aware UTC datetime."""
    return datetime.now(UTC)
