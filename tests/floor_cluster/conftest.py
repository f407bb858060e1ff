"""Fixtures of the floor cluster tests: a PostgreSQL database of the test's own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testing.postgres import temporary_database


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A database of this test's own on the machine's PostgreSQL (dropped afterwards)."""
    with temporary_database() as url:
        yield url
