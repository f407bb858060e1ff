"""Times the floor's questions take (``--since``, ``--until``, the pages' ``since``/``until``)."""

from __future__ import annotations

from datetime import UTC, datetime


def time_ms(option: str, text: str | None) -> int | None:
    """An ISO 8601 time (UTC when it names no offset) as milliseconds; ValueError naming it."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{option}: {text!r} is not an ISO 8601 time (2026-11-30T20:00:00Z)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)
