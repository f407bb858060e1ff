"""A console's first picture of the floor from the store, where nothing is retained (a NATS
cluster's bridges send nothing retained: docs/floor.md, "The console's live view").

A private mosquitto stands for the cluster; the tables publish without the retain flag, as the
rendered bridge to a cluster does. A recording console keeps each table's latest state and status
in PostgreSQL; a console started later shows them before any table publishes again, and a table
taken out of service (its status cleared) is not in it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import aiomqtt

from config.models import MqttSection
from contract.models import parse_state
from controller.floor.console import FloorConsole
from testing.mosquitto import Mosquitto
from testing.tables import FakeTable
from tests.service.support import until


@asynccontextmanager
async def running(console: FloorConsole) -> AsyncIterator[FloorConsole]:
    await console.start("127.0.0.1", 0)
    try:
        yield console
    finally:
        await console.stop()


async def eventually(condition: Callable[[], Awaitable[bool]], what: str, within: float = 10.0) -> None:
    """Poll an asynchronous ``condition`` until it holds; fail after ``within`` s."""
    deadline = asyncio.get_running_loop().time() + within
    while not await condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not within {within} s: {what}")
        await asyncio.sleep(0.05)


async def test_a_console_started_later_shows_every_table_from_the_store_without_retained_messages(
    mosquitto: Mosquitto, postgres_url: str
) -> None:
    mqtt = MqttSection(url=mosquitto.url)
    t1, t2 = FakeTable("t1"), FakeTable("t2")
    async with (
        running(FloorConsole(mqtt, postgres_url)) as recording,
        aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="tables") as tables,
    ):
        assert recording.recording == "session"
        await until(lambda: recording.health.connected, what="the recording console's live view")
        for table in (t1, t2):
            await tables.publish(*table.status(), qos=1)
            await tables.publish(*table.state(), qos=0)
        newest_topic, newest = t1.state()
        await tables.publish(newest_topic, newest, qos=0)

        async def kept() -> set[tuple[str, str]]:
            return {(t, k) for t, k, _, _ in await recording.store.latest()}

        async def all_kept() -> bool:
            rows = await recording.store.latest()
            every = {(t, k) for t, k, _, _ in rows} == {
                (t, k) for t in ("t1", "t2") for k in ("state", "controller/status")
            }
            return every and any(payload == newest.decode() for _, _, payload, _ in rows)

        # Written within LATEST_EVERY_S of the last state, without anyone flushing.
        await eventually(all_kept, "both tables' latest state and status in the store")

        later = FloorConsole(mqtt, postgres_url, record="none")
        async with running(later):
            # Shown at once, from the store: nothing was published since, nothing is retained.
            assert sorted(later.board.tables) == ["t1", "t2"]
            shown = later.board.tables["t1"]
            assert shown.state == parse_state(newest_topic, newest)
            assert shown.controller is not None
            assert shown.controller.state == "online"

        await tables.publish(t2.topics.controller_status, b"", qos=1)  # t2 taken out of service
        await until(lambda: "t2" not in recording.board.tables, what="t2 gone from the recording console")

        async def only_t1() -> bool:
            return {t for t, _ in await kept()} == {"t1"}

        # The recorder's session forgets it (its copy may come a moment after the live view's).
        await eventually(only_t1, "t2 forgotten by the store")
        last = FloorConsole(mqtt, postgres_url, record="none")
        async with running(last):
            assert sorted(last.board.tables) == ["t1"]
