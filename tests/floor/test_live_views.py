"""The console's live view on two nodes, and failing over between a floor's brokers.

Two private mosquittos stand for two nodes of a cluster: a message published to a cluster
reaches the subscribers of every node, so the tests publish each message to both.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import aiomqtt
import pytest

from config.models import MqttSection
from controller.floor.console import FloorConsole
from controller.floor.feed import Brokers, floor_client
from testing.mosquitto import Mosquitto, running_mosquitto
from testing.tables import FakeTable
from tests.service.support import until


async def publish_to(brokers: list[Mosquitto], message: tuple[str, bytes]) -> None:
    for broker in brokers:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier=f"tables-{broker.port}") as client:
            await client.publish(message[0], message[1], qos=1, retain=True)


@pytest.fixture
async def two_nodes(tmp_path: Path) -> AsyncIterator[list[Mosquitto]]:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with running_mosquitto(tmp_path / "a") as a, running_mosquitto(tmp_path / "b") as b:
        yield [a, b]


async def test_the_live_view_takes_each_message_once_from_two_nodes_and_outlives_either(
    two_nodes: list[Mosquitto], tmp_path: Path
) -> None:
    console = FloorConsole([MqttSection(url=node.url) for node in two_nodes], tmp_path / "floor.sqlite")
    handled: Counter[tuple[str, bytes]] = Counter()
    handle = console.feed.handle

    def counting(topic: str, payload: bytes, received_ms: float) -> None:
        handled[(topic, payload)] += 1
        handle(topic, payload, received_ms)

    console.feed.handle = counting
    await console.start("127.0.0.1", 0)
    try:
        views = console.feed.feeds
        assert len(views) == 2
        await until(lambda: all(view.connected for view in views), what="both views connected")
        assert {view.brokers.current.port for view in views} == {node.port for node in two_nodes}
        table = FakeTable("t1")
        first, second = table.state(), table.state()
        assert first != second  # each state carries its own time
        for message in (first, second):
            await publish_to(two_nodes, message)
        # Every copy arrived: each message handled once, its other copy dropped.
        await until(lambda: console.feed.duplicates >= 2, what="both copies of both states")
        assert handled[first] == 1
        assert handled[second] == 1
        assert console.board.tables["t1"].to_json()["state_ts"] is not None

        two_nodes[0].kill()
        third = table.state()
        await publish_to(two_nodes[1:], third)
        await until(lambda: handled[third] == 1, what="a state published after a node's death")
        assert console.health.connected  # the view on the other node never went away
        # With two nodes, the dead one's view has nowhere else to go but the survivor.
        await until(
            lambda: views[0].connected and views[0].brokers.current.port == two_nodes[1].port,
            what="the dead node's view taken up on the other node",
        )

        two_nodes[1].kill()
        await until(lambda: not console.health.connected, what="the console saying it has no broker")
    finally:
        await console.stop()


async def test_a_connection_closed_before_its_connack_fails_at_once() -> None:
    """As a NATS node does while the MQTT sessions' stream has no leader: the attempt fails with
    the closing, not with the client's timeout."""

    async def close_after_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)  # the CONNECT
        writer.close()

    server = await asyncio.start_server(close_after_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        client = floor_client(MqttSection(url=f"mqtt://127.0.0.1:{port}"), "floor-test")
        with pytest.raises(aiomqtt.MqttError, match="closed the connection before its CONNACK"):
            async with client:
                pass
    finally:
        server.close()
        await server.wait_closed()


def test_failing_over_skips_the_node_a_partner_connection_is_on() -> None:
    nodes = [MqttSection(url=f"mqtt://127.0.0.1:{port}") for port in (1001, 1002, 1003)]
    brokers = Brokers(nodes)
    assert brokers.failed(avoid=1) == 0.0
    assert brokers.current.port == 1003
    assert brokers.failed(avoid=2) == 0.0
    assert brokers.current.port == 1001
    pair = Brokers(nodes[:2])
    pair.failed(avoid=1)  # with two nodes there is nowhere else to go
    assert pair.current.port == 1002
