"""Who may say what on the floor's cluster, with the rendered node configurations.

A table's bridge user may publish only its own table's public topics and read nothing (so never
``dev/#``); a console's user may read the public topics of every table and publish nothing. A
forbidden publish is shown not to arrive by a sentinel sent after it on the same connection:
once the sentinel is in, the forbidden message would have been before it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiomqtt
import pytest

from testing.tables import FakeTable
from tests.deploy.support import until
from tests.floor_cluster.support import CONSOLE, Floor, running_floor


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Floor]:
    with running_floor(tmp_path_factory.mktemp("floor-acl"), ["t1", "t2"]) as running:
        yield running


@contextlib.asynccontextmanager
async def collecting(client: aiomqtt.Client, *filters: str) -> AsyncIterator[list[tuple[str, bytes]]]:
    seen: list[tuple[str, bytes]] = []
    async with client:
        for topic in filters:
            await client.subscribe(topic, qos=1)

        async def collect() -> None:
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                seen.append((str(message.topic), message.payload))

        task = asyncio.create_task(collect())
        try:
            yield seen
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await task


async def test_a_table_publishes_only_its_own_public_topics_and_reads_nothing(floor: Floor) -> None:
    port = floor.cluster.nodes[0].mqtt_port
    console = floor.client(floor.cluster.nodes[1].mqtt_port, CONSOLE, floor.secret(CONSOLE))
    async with collecting(console, "holdem/+/alerts", "holdem/+/state") as seen:
        t1, t2 = FakeTable("t1"), FakeTable("t2")
        async with floor.client(port, "t1-bridge", floor.secret("t1-bridge")) as bridge:
            # It may read nothing: not dev/#, not even the public topics.
            for topic in ("holdem/t1/dev/#", "holdem/#", "#", "holdem/t1/alerts"):
                granted = await bridge.subscribe(topic, qos=1)
                codes = [int(code.value if hasattr(code, "value") else code) for code in granted]
                assert codes == [128], topic
            forbidden = [
                t2.alert("critical"),  # another table's topic
                ("holdem/t1/input", b'{"v":1,"ts":"2026-11-30T20:00:00Z","type":"key","key":"ack"}'),
                ("holdem/t1/dev/rfid-1/event", b'{"v":1,"seq":1,"ts":"2026-11-30T20:00:00Z"}'),
            ]
            for topic, payload in forbidden:
                with contextlib.suppress(aiomqtt.MqttError):
                    await bridge.publish(topic, payload, qos=1)
        # A connection refused a publish may be closed by the node: the sentinel on a new one.
        async with floor.client(port, "t1-bridge", floor.secret("t1-bridge")) as bridge:
            sentinel = t1.alert("warning")
            await bridge.publish(*sentinel, qos=1)
            await bridge.publish(*t1.state(), qos=1, retain=True)
            await until(lambda: "holdem/t1/state" in [t for t, _ in seen], within=20, what="t1's state")
    topics = [topic for topic, _ in seen]
    assert "holdem/t1/alerts" in topics
    assert "holdem/t2/alerts" not in topics
    assert all("/dev/" not in t and not t.endswith("/input") for t in topics)


async def test_a_console_reads_every_table_but_publishes_nothing(floor: Floor) -> None:
    nodes = floor.cluster.nodes
    watcher = floor.client(nodes[2].mqtt_port, CONSOLE, floor.secret(CONSOLE))
    async with collecting(watcher, "holdem/+/alerts", "holdem/+/dev/#") as seen:
        async with floor.client(nodes[0].mqtt_port, CONSOLE, floor.secret(CONSOLE)) as console:
            with contextlib.suppress(aiomqtt.MqttError):
                await console.publish(*FakeTable("t2").alert("critical"), qos=1)
        async with floor.client(nodes[0].mqtt_port, "t2-bridge", floor.secret("t2-bridge")) as bridge:
            sentinel = FakeTable("t2").alert("info", alert_id="sentinel")
            await bridge.publish(*sentinel, qos=1)
        await until(lambda: any(b'"sentinel"' in p for _, p in seen), within=20, what="the sentinel")
    severities = [payload for topic, payload in seen if topic == "holdem/t2/alerts"]
    assert len(severities) == 1
    assert b'"critical"' not in severities[0]


async def test_wrong_and_missing_credentials_are_refused(floor: Floor) -> None:
    port = floor.cluster.nodes[0].mqtt_port
    for user, password in (("t1-bridge", "wrong"), (CONSOLE, floor.secret("t1-bridge")), ("nobody", "x")):
        with pytest.raises(aiomqtt.MqttError):
            async with floor.client(port, user, password):
                pass
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client("127.0.0.1", port, tls_context=floor.tls(), timeout=10):
            pass


async def test_a_recorder_refused_its_subscriptions_says_so_instead_of_sitting_there(
    floor: Floor, tmp_path: Path
) -> None:
    """With a table's credentials (which may read nothing) the recorder's SUBSCRIBE is refused:
    it counts as a failed connection, said in its health, and the next node is tried."""
    from config.models import MqttSection
    from controller.floor.recorder import Recorder
    from controller.floor.stores import store_for

    brokers = [
        MqttSection.model_validate(
            {
                "url": f"mqtts://127.0.0.1:{node.mqtt_port}",
                "username": "t1-bridge",
                "password": floor.secret("t1-bridge"),
                "tls": {"ca_file": str(floor.ca.cert)},
            }
        )
        for node in floor.cluster.nodes
    ]
    store = store_for(str(tmp_path / "floor.sqlite"))
    await store.open()
    recorder = Recorder(brokers, store, client_id="acl-test-recorder", witness=False)
    stop = asyncio.Event()
    task = asyncio.create_task(recorder.run(stop))
    try:
        await until(
            lambda: "subscription refused" in (recorder.health.detail or ""),
            within=30,
            what="the refusal in the recorder's health",
        )
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
        await store.close()
    assert not recorder.health.connected
