"""An alert reaches the console while its table's session connection is away: the rendered bridge
sends the alerts (and hand results) on the state's own connections too, at QoS 0, and the
session's connection keeps carrying them at QoS 1 for the recorders.

Three nodes as rendered, three table PCs as deployed (each table's session connection starts on
another node), a recording ``tablectl floor`` on PostgreSQL. The node leading the stream of the
MQTT sessions is killed, with one table's session connection on it: that connection is away
until the stream has a new leader and the bridge connected again (4-9 s and more on NATS 2.9).
An alert that table publishes after the kill is on the console while its session connection
has not come back on a node left (``/connz``: no connection of it that has published), and once
it is back, the alert is stored, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from pathlib import Path

import psycopg

from testing.nats import NatsNode
from testing.tables import FakeTable
from tests.deploy.support import until
from tests.floor_cluster.support import CONSOLE, running_floor, table_pcs
from tests.floor_cluster.test_faults import console_url, get
from tests.floor_cluster.test_state_path import mqtt_clients, watching

TABLES = ["t1", "t2", "t3"]


def sessions_leader(nodes: list[NatsNode]) -> str | None:
    """The name of the node leading ``$MQTT_sess`` (from the nodes' ``/jsz``)."""
    for node in nodes:
        if not node.running:
            continue
        url = f"http://127.0.0.1:{node.monitor_port}/jsz?accounts=true&streams=true"
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                info = json.load(answer)
        except (OSError, ValueError):
            continue
        for account in info.get("account_details") or []:
            for stream in account.get("stream_detail") or []:
                leader = (stream.get("cluster") or {}).get("leader")
                if stream["name"] == "$MQTT_sess" and leader:
                    return str(leader)
    return None


def connected_on(nodes: list[NatsNode], client_id: str) -> int | None:
    """The node (index) where ``client_id`` has a connection that has published, if any."""
    for index, node in enumerate(nodes):
        if node.running and client_id in mqtt_clients(node):
            return index
    return None


def stored_changes(url: str, table: str, alert_id: str) -> list[str]:
    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT status FROM floor.alert_changes WHERE table_id = %s AND alert_id = %s", (table, alert_id)
        ).fetchall()
    return [str(status) for (status,) in rows]


def status_stored(url: str, table: str, session: int) -> bool:
    with psycopg.connect(url) as db:
        found = db.execute(
            "SELECT 1 FROM floor.status_changes WHERE table_id = %s AND session = %s", (table, session)
        ).fetchall()
    return bool(found)


async def test_an_alert_reaches_the_console_while_its_session_path_is_away_and_is_stored_once(
    tmp_path: Path, postgres_url: str
) -> None:
    with running_floor(tmp_path, TABLES) as floor:
        nodes = floor.cluster.nodes
        # Every node takes MQTT connections before the bridges start (the MQTT streams are made
        # at the first one): a bridge's first attempt refused would move it on.
        for node in nodes:
            async with watching(
                floor.client(node.mqtt_port, CONSOLE, floor.secret(CONSOLE)), "holdem/none/state"
            ):
                pass
        with table_pcs(floor, tmp_path) as pcs:
            log = tmp_path / "logs" / "console.log"
            floor.floor_process(log, "--store", postgres_url, "--listen", "127.0.0.1:0")
            await until(lambda: console_url(log) is not None, within=30, what="the console's URL")
            url = console_url(log)
            assert url is not None
            # Its recorder's session exists before the kill (one made later never gets what was
            # published before it).
            recording = "floor recorder: tablectl-floor-recorder"
            await until(lambda: recording in log.read_text(), within=60, what="the recorder's session")
            fakes = {pc.table: FakeTable(pc.table) for pc in pcs}
            for pc in pcs:
                async with pc.controller() as controller:
                    await controller.publish(*fakes[pc.table].status(), qos=1, retain=True)
                    await controller.publish(*fakes[pc.table].state(), qos=1, retain=True)

            def ids(table: str) -> list[str]:
                return [
                    f"tablectl-{table}-bridge",
                    f"tablectl-{table}-bridge-state",
                    f"tablectl-{table}-bridge-state-2",
                ]

            def placed() -> bool:
                # Every table's three connections up, each on a node of its own.
                for table in TABLES:
                    found = [connected_on(nodes, c) for c in ids(table)]
                    if None in found or len(set(found)) != 3:
                        return False
                return True

            await until(placed, within=90, what="each table's three connections on three nodes")

            def on_console() -> int:
                return len(get(url + "api/tables").get("tables") or [])

            # The console may have subscribed after the statuses above crossed (nothing is
            # retained on the cluster, and its first picture came from a store still empty):
            # each table publishes its state again until the console shows every table.
            for _ in range(30):
                if on_console() == len(TABLES):
                    break
                for pc in pcs:
                    async with pc.controller() as controller:
                        await controller.publish(*fakes[pc.table].state(), qos=1, retain=True)
                with contextlib.suppress(AssertionError):
                    await until(lambda: on_console() == len(TABLES), within=2, what="every table")
            assert on_console() == len(TABLES)
            leader = await asyncio.to_thread(sessions_leader, nodes)
            assert leader is not None
            victim = next(i for i, node in enumerate(nodes) if node.name == leader)
            # The table whose session's connection is on the sessions' leader.
            table = next(t for t in TABLES if connected_on(nodes, ids(t)[0]) == victim)
            pc = next(p for p in pcs if p.table == table)
            fake = fakes[table]
            nodes[victim].kill()

            async with pc.controller() as controller:
                topic, payload = fake.alert("critical")
                alert_id = json.loads(payload)["id"]
                await controller.publish(topic, payload, qos=1)

                def shown() -> bool:
                    tables = get(url + "api/tables")["tables"]
                    row = next(t for t in tables if t["id"] == table)
                    return any(a["id"] == alert_id for a in row["alerts"])

                await until(shown, within=30, what="the alert on the console")
                # Its session's connection has not come back: the alert came by a state path.
                assert connected_on(nodes, ids(table)[0]) is None

                # Once the session's connection is back, the alert is stored (by the recorder's
                # session, or its witness from a QoS 0 copy), and a status published after it on
                # that connection (alone) too: the alert stays stored once.
                await until(
                    lambda: connected_on(nodes, ids(table)[0]) is not None,
                    within=90,
                    what="the session's connection back",
                )
                await until(
                    lambda: bool(stored_changes(postgres_url, table, alert_id)),
                    within=60,
                    what="the alert stored",
                )
                await controller.publish(*fake.status(session=2), qos=1, retain=True)
            await until(
                lambda: status_stored(postgres_url, table, 2), within=60, what="the status after the alert"
            )
            assert stored_changes(postgres_url, table, alert_id) == ["raised"]
            tables = (await asyncio.to_thread(get, url + "api/tables"))["tables"]
            row = next(t for t in tables if t["id"] == table)
            assert [a["id"] for a in row["alerts"]] == [alert_id]
            assert "Traceback" not in log.read_text()
