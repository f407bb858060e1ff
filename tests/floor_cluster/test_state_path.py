"""A table's state on the cluster as the rendered bridge sends it: nothing retained, by two
connections of its own on two nodes (not by the session's connection, which carries the
history), one of which outlives the death of the other's node.

A table PC deployed with the floor's ``[deploy.floor]`` (its mosquitto bridging as rendered), the
three nodes as rendered; a console user's client on the third node watches. That nothing is
retained is shown by a sentinel: a new subscription gets the retained messages before anything
published after it.

A subscription's SUBACK comes from its own node; the other nodes learn of it over their routes a
moment later, and a message entering one of them before that reaches nobody there (NATS routes a
plain message only where the interest is known). Each message watched for is published once,
so the test waits until the node it enters by knows of the subscription (``/routez``) before
publishing it: without that, a loaded machine lost the sentinel once in a few dozen runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import aiomqtt

from testing.nats import NatsNode
from testing.tables import FakeTable
from tests.deploy.support import until
from tests.floor_cluster.support import CONSOLE, Floor, TablePc, running_floor, table_pcs


@contextlib.asynccontextmanager
async def watching(client: aiomqtt.Client, *filters: str) -> AsyncIterator[list[aiomqtt.Message]]:
    seen: list[aiomqtt.Message] = []
    for attempt in range(6):  # a loaded machine may time a CONNECT out
        try:
            await client.__aenter__()
            break
        except aiomqtt.MqttError:
            if attempt == 5:
                raise
    try:
        for topic in filters:
            await client.subscribe(topic, qos=0)

        async def collect() -> None:
            async for message in client.messages:
                seen.append(message)

        task = asyncio.create_task(collect())
        try:
            yield seen
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await task
    finally:
        with contextlib.suppress(aiomqtt.MqttError):
            await client.__aexit__(None, None, None)


def mqtt_clients(node: NatsNode) -> dict[str, int]:
    """The MQTT client ids on ``node`` whose connection has published (so it was accepted: a
    CONNECT still waiting for the sessions' stream is listed too), and each one's id (/connz)."""
    url = f"http://127.0.0.1:{node.monitor_port}/connz?limit=1000"
    with urllib.request.urlopen(url, timeout=5) as answer:
        found = json.load(answer)
    return {
        c["mqtt_client"]: c["cid"]
        for c in found.get("connections") or []
        if c.get("mqtt_client") and c.get("in_msgs", 0) > 0
    }


def routes_interested(node: NatsNode, subject: str) -> int:
    """How many of ``node``'s routes have told it of a subscription to ``subject`` (a NATS
    subject: the MQTT topic with dots)."""
    url = f"http://127.0.0.1:{node.monitor_port}/routez?subs=1"
    with urllib.request.urlopen(url, timeout=5) as answer:
        found = json.load(answer)
    return sum(1 for route in found.get("routes") or [] if subject in (route.get("subscriptions_list") or []))


async def interest_known(node: NatsNode, subject: str, routes: int, what: str) -> None:
    """Until ``routes`` of ``node``'s routes carry interest in ``subject``."""
    await until(lambda: routes_interested(node, subject) >= routes, within=30, what=what)


def is_sentinel(message: aiomqtt.Message) -> bool:
    return isinstance(message.payload, bytes) and b'"sentinel"' in message.payload


def copies(seen: list[aiomqtt.Message], payload: bytes) -> int:
    return sum(1 for message in seen if message.payload == payload)


async def test_the_state_crosses_unretained_on_two_paths_of_its_own_and_outlives_a_node_s_death(
    tmp_path: Path,
) -> None:
    with running_floor(tmp_path, ["t1"]) as floor:
        # Every node takes MQTT connections before the table's bridge starts (the MQTT streams
        # are made at the first one): a bridge's first attempt refused would move it on, maybe
        # onto the node of its other connection.
        for node in floor.cluster.nodes:
            async with watching(
                floor.client(node.mqtt_port, CONSOLE, floor.secret(CONSOLE)), "holdem/none/state"
            ):
                pass
        with table_pcs(floor, tmp_path) as pcs:
            await check_state_paths(floor, pcs)


async def check_state_paths(floor: Floor, pcs: list[TablePc]) -> None:
    nodes = floor.cluster.nodes
    table = FakeTable("t1")
    main, path_1, path_2 = "tablectl-t1-bridge", "tablectl-t1-bridge-state", "tablectl-t1-bridge-state-2"

    def node_of(client_id: str) -> int | None:
        return next((i for i, node in enumerate(nodes) if client_id in mqtt_clients(node)), None)

    def placed() -> bool:
        found = [node_of(c) for c in (main, path_1, path_2)]
        return None not in found and found[1] != found[2]

    # Each connection publishes as it connects (mosquitto sends a bridge the retained messages
    # of its topics): the state's two paths the state, the session's the status. The paths
    # are rendered to start on the second and the third node (a connection that failed its
    # first attempt moves on: what matters is two nodes).
    async with pcs[0].controller() as pc:
        await pc.publish(*table.state(), qos=1, retain=True)
        await pc.publish(*table.status(), qos=1, retain=True)
    await until(placed, within=60, what="the bridge's three connections, the state's on two nodes")
    main_node, node_1, node_2 = node_of(main), node_of(path_1), node_of(path_2)
    assert main_node is not None
    assert node_1 is not None
    assert node_2 is not None
    third = 3 - node_1 - node_2
    path_2_connection = mqtt_clients(nodes[node_2])[path_2]
    watcher = floor.client(nodes[third].mqtt_port, CONSOLE, floor.secret(CONSOLE))
    async with (
        watching(watcher, "holdem/t1/state", "holdem/t1/alerts") as seen,
        pcs[0].controller() as pc,
    ):
        # The state enters by the paths' two nodes; the watcher is on the third.
        for node in (node_1, node_2):
            await interest_known(nodes[node], "holdem.t1.state", 1, f"the watcher's interest on n{node + 1}")
        _, first = table.state()
        await pc.publish("holdem/t1/state", first, qos=1, retain=True)
        # A copy from each of the state's two paths (more if one connected again).
        await until(lambda: copies(seen, first) >= 2, within=30, what="the state by both paths")
        assert not any(message.retain for message in seen)

        # Nothing retained on the cluster: a new subscriber gets nothing flagged retained (a
        # retained message would come at once, before the sentinel published after).
        late = floor.client(nodes[node_2].mqtt_port, CONSOLE, floor.secret(CONSOLE))
        async with watching(late, "holdem/t1/state", "holdem/t1/alerts") as fresh:
            # The sentinel (an alert) enters by the session's node: every other node with a
            # subscriber to it tells it so over its route.
            others = len({third, node_2} - {main_node})
            await interest_known(
                nodes[main_node], "holdem.t1.alerts", others, "the late subscriber's interest"
            )
            sentinel = table.alert("info", alert_id="sentinel")
            await pc.publish(*sentinel, qos=1)
            await until(lambda: any(is_sentinel(m) for m in fresh), within=30, what="the sentinel")
        # (a state may come live meanwhile: a bridge sends the newest at every connection)
        assert [str(m.topic) for m in fresh if m.retain] == []

        nodes[node_1].kill()
        _, second = table.state()
        await pc.publish("holdem/t1/state", second, qos=1, retain=True)
        await until(lambda: copies(seen, second) >= 1, within=30, what="a state after the node's death")
        # The other path was not touched by the death of the first one's node.
        assert mqtt_clients(nodes[node_2]).get(path_2) == path_2_connection
