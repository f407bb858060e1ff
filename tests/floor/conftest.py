"""Fixtures of the floor console tests: the console in this process, a publisher of tables, a
PostgreSQL database of the test's own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiomqtt
import pytest

from config.models import MqttSection
from controller.floor.console import FloorConsole
from testing.mosquitto import Mosquitto
from testing.postgres import temporary_database


@pytest.fixture
async def console(mosquitto: Mosquitto, tmp_path: Path) -> AsyncIterator[FloorConsole]:
    """A floor console on a free port, reading the test's broker."""
    floor = FloorConsole(MqttSection(url=mosquitto.url), tmp_path / "floor.sqlite")
    await floor.start("127.0.0.1", 0)
    try:
        yield floor
    finally:
        await floor.stop()


@pytest.fixture
async def publisher(mosquitto: Mosquitto) -> AsyncIterator[aiomqtt.Client]:
    """A client that publishes what the tables' controllers would."""
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="floor-test-tables") as client:
        yield client


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A database of this test's own on the machine's PostgreSQL (dropped afterwards)."""
    with temporary_database() as url:
        yield url
