"""The floor at casino scale under load: N busy tables through a 3-node NATS cluster, a node
killed mid-run; lost and doubled rows in PostgreSQL, the console's lag (states, and beside
them alerts and hand results) before and after the kill, its recovery.

Usage: ``.venv/bin/python benchmarks/floor_cluster.py [--tables 500] [--seconds 60]
[--kill-at 30] [--bridged 3] [--kill n1|sessions|retained|messages] [--state-paths 2|main+1|main]
[--history-paths fast|session] [--publishers N] [--keep DIR]``

The issue's figures, on a quiet machine (nothing else running; each run prints the load)::

    .venv/bin/python benchmarks/floor_cluster.py --tables 500 --seconds 90 --kill-at 45
    .venv/bin/python benchmarks/floor_cluster.py --tables 500 --seconds 90 --kill-at 45 --kill sessions
    .venv/bin/python benchmarks/floor_cluster.py --tables 2000 --seconds 90 --kill-at 45

The tables' publishers run in ``--publishers`` processes (default: one per 500 tables, so 4 at
2,000 tables); the output gives each one's CPU share: one near 100 % of a core fell behind, and
the lag measured is then its own, not the floor's (give more processes, or a bigger machine).
``--state-paths main+1`` runs the direct tables with the state on the session's connection and
one more, as the bridge was rendered before, for a comparison in one build; ``--history-paths
session`` runs them with the alerts and hand results on the session's connection alone (before
the state's paths carried a QoS 0 copy of them too).

What a node's death costs depends on what it led: NATS elects a new leader for each JetStream
group the dead node led only after a random 4-9 s, and until then the MQTT gateway waits for
it (4 s at most each time) — to connect any client (the sessions' stream, ``$MQTT_sess``), to
store a retained message before routing it (``$MQTT_rmsgs``), to take a QoS 1 message
(``$MQTT_msgs``). The run prints what the killed node led; ``--kill sessions|retained|messages``
kills the node leading that stream (default ``n1``, the console's first broker).

``--keep DIR`` runs in DIR and leaves there what tells a run's story afterwards: the nodes' logs
(``logs/``), the console's log, ``publisher-events.jsonl`` (every lost and regained connection of
a direct table: when, to which port, why, how long the connect took) and ``lags.jsonl`` (each
update the page got: when, its lag, its table).

Everything is as deployed (``tablectl deploy --floor``, TLS with a test CA): three ``nats-server``
nodes; ``--bridged`` table PCs whose mosquitto bridges to every node (``tablectl deploy --config``
with the floor's ``[deploy.floor]``); the other tables as direct MQTT clients of the cluster, each
with its own table's user, spread over the nodes, behaving as that bridge does (``BridgeLink``:
a lost connection taken up on the next node after ``restart_timeout``, QoS 0 dropped and QoS 1
kept while down, the newest state and status sent again at every connection, the state on two
connections of its own from the next nodes, not on the session's); one ``tablectl floor``
console recording into a PostgreSQL database of the benchmark's own (the machine's server,
``TABLECTL_TEST_POSTGRES``).

Each table plays at a busy table's pace: a hand a minute (its start spread over the minute), a
state on every change (one every 2 s, at the bridge's QoS, its ``ts`` the time of publishing), two
alert changes a hand (raised 10 s in, resolved 10 s later), the hand result at the end. The
retain flag does not reach the cluster (``bridge_outgoing_retain false`` as rendered): the
console's first picture is the store's.

Measured:
- lost / doubled: every hand result and alert change the publishers had acknowledged, against
  the rows in PostgreSQL once the console's recorder caught up;
- console lag: for every table update the console pushes to its grid page (server-sent events,
  read as a browser would), the time since the state in it was published; overall, in the
  10 s before the kill, and the time after the kill until a whole second's updates are back
  within p50 <= 100 ms and p99 <= 1 s;
- alert and hand lag, beside it: the time from an alert being raised (its ``ts``) to the page's
  first update listing it among the table's alerts, and from a hand result to the first update
  showing it as the table's last hand (the benchmark's states list no alert, so an alert reaches
  the page by its own message alone, and is published half way between two states; one whose
  table's next state reached the console within the same push, 50 ms, is never listed and not
  counted: the output says how many were seen);
- the direct tables whose connection the kill took: when each was back on another node (the
  page shows them as they were until then);
- each process's CPU share over the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt
import psycopg

from contract.models import Alert, HandResult, PublicState, SeatState, Status
from controller.deploy.bridge import (
    BRIDGE_QOS,
    RESTART_BASE_S,
    RESTART_CAP_S,
    STATE_RESTART_S,
    state_restart_s,
)
from link.aiomqtt_adapter import fail_connect_when_closed
from testing.postgres import temporary_database
from tests.floor_cluster.support import running_floor, table_pcs

HAND_S: Final = 60.0
#: How long the publishers may take to close their connections at the end.
CLOSE_S: Final = 90.0
#: Direct tables connecting at once when the run starts.
STARTING: Final = 25
STATE_EVERY_S: Final = 2.0
#: What ``--help`` ends with: how the issue's figures are measured.
QUIET_RUNS: Final = """\
the issue's figures, on a quiet machine (nothing else running; each run prints the load):
  .venv/bin/python benchmarks/floor_cluster.py --tables 500 --seconds 90 --kill-at 45
  .venv/bin/python benchmarks/floor_cluster.py --tables 500 --seconds 90 --kill-at 45 --kill sessions
  .venv/bin/python benchmarks/floor_cluster.py --tables 2000 --seconds 90 --kill-at 45
The publishers run in one process per 500 tables unless --publishers says otherwise; the output
gives each one's CPU share: one near 100% of a core fell behind and the lag is then its own."""
#: Where a direct table's state goes (``--state-paths``).
STATE_PATHS: Final = ("2", "main+1", "main")
#: Tables each publisher process drives unless told (``--publishers``).
TABLES_PER_PUBLISHER: Final = 500


def now() -> datetime:
    return datetime.now(UTC)


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(p * len(ordered)) - 1))]


def figures(name: str, samples: list[float]) -> str:
    if not samples:
        return f"{name}: no samples"
    return (
        f"{name}: {len(samples)} updates; p50 {statistics.median(samples) * 1000:.0f} ms, "
        f"p99 {percentile(samples, 0.99) * 1000:.0f} ms, max {max(samples) * 1000:.0f} ms"
    )


# ---------------------------------------------------------------------------------- publishers


class Link:
    """A bridged table's connection to its PC's broker (the PC's mosquitto bridges it): the
    controller publishes at QoS 1, the state and status retained; on a lost connection it tries
    again after 0.5 s."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry
        self.client: aiomqtt.Client | None = None
        self.reconnects = 0

    async def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> None:
        while True:
            try:
                if self.client is None:
                    client = aiomqtt.Client(
                        "127.0.0.1",
                        self.entry["ports"][0],
                        username=self.entry["user"],
                        password=self.entry["password"],
                        identifier=f"bench-{self.entry['table']}",
                        timeout=10,
                    )
                    await client.__aenter__()
                    self.client = client
                await self.client.publish(topic, payload, qos=1, retain=retain)
                return
            except aiomqtt.MqttError:
                if self.client is not None:
                    with contextlib.suppress(Exception):
                        await self.client.__aexit__(None, None, None)
                self.client = None
                self.reconnects += 1
                await asyncio.sleep(0.5)

    async def start(self) -> None:
        """Nothing to keep up: the table PC's broker is local."""

    async def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.__aexit__(None, None, None), 5)


class NodeConnection:
    """One connection of a bridge to the cluster, kept up as mosquitto keeps a bridge's: the
    nodes in turn from ``first``; a lost connection is noticed when the node closes it (not at
    the next publish) and the next node is tried after ``restart_timeout`` as rendered, the
    delay rising by mosquitto's jittered backoff while attempts fail; a connection the node
    closes before CONNACK is a failed attempt at once. ``up(client)`` runs at every connection;
    ``away``: (lost, back) wall-clock times of each lost connection."""

    def __init__(
        self,
        entry: dict[str, Any],
        context: ssl.SSLContext,
        identifier: str,
        up: Callable[[aiomqtt.Client], Awaitable[None]],
        *,
        first: int = 0,
        events: list[dict[str, Any]] | None = None,
        restart: tuple[float, float] = (RESTART_BASE_S, RESTART_CAP_S),
    ) -> None:
        self.entry = entry
        self.context = context
        self.identifier = identifier
        #: ``restart_timeout BASE CAP`` of this connection.
        self.base, self.cap = restart
        self.up = up
        self.ports: list[int] = entry["ports"]
        self.index = first % len(self.ports)
        self.client: aiomqtt.Client | None = None
        self.reconnects = 0
        self.restart = float(self.base)
        self.connected = asyncio.Event()
        self.away: list[list[float]] = []
        self.events = events
        self._keeper: asyncio.Task[None] | None = None
        self._closing = False

    def note(self, what: str, **details: Any) -> None:
        if self.events is not None:
            self.events.append(
                {
                    "t": time.time(),
                    "table": self.entry["table"],
                    "connection": self.identifier,
                    "event": what,
                    "port": self.ports[self.index],
                    **details,
                }
            )

    async def start(self) -> None:
        self._keeper = asyncio.create_task(self._keep())
        await self.connected.wait()

    async def _connect(self) -> aiomqtt.Client:
        entry = self.entry
        client = aiomqtt.Client(
            "127.0.0.1",
            self.ports[self.index],
            username=entry["user"],
            password=entry["password"],
            identifier=self.identifier,
            tls_context=self.context,
            timeout=10,
        )
        fail_connect_when_closed(client)
        began = time.time()
        try:
            await client.__aenter__()
        except aiomqtt.MqttError as error:
            self.note("connect failed", took=round(time.time() - began, 3), error=str(error))
            raise
        if self.reconnects:
            self.note("connected", took=round(time.time() - began, 3))
        return client

    async def _keep(self) -> None:
        while not self._closing:
            try:
                client = await self._connect()
            except aiomqtt.MqttError:
                await self._wait_to_restart()
                continue
            self.client = client
            self.restart = float(self.base)
            if self.away and len(self.away[-1]) == 1:
                self.away[-1].append(time.time())
            self.connected.set()
            await self.up(client)
            with contextlib.suppress(Exception):  # its exception, if any, is why; the moment is what counts
                await asyncio.shield(client._disconnected)  # the node closed the connection
            self.connected.clear()
            self.client = None
            if self._closing:
                return
            self.note("lost")
            self.away.append([time.time()])
            with contextlib.suppress(Exception):
                await client.__aexit__(None, None, None)
            await self._wait_to_restart()

    async def _wait_to_restart(self) -> None:
        self.reconnects += 1
        self.index = (self.index + 1) % len(self.ports)
        # mosquitto: the next attempt once a whole-second clock passes now + restart_timeout,
        # which each attempt first moves to a random value in [base, 3 x itself], capped.
        await asyncio.sleep(self.restart + random.random())
        self.restart = min(float(self.cap), random.uniform(self.base, self.restart * 3))

    async def close(self) -> None:
        self._closing = True
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.__aexit__(None, None, None), 5)
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._keeper


class BridgeLink:
    """A direct table: a client of the cluster that behaves as the rendered bridge does, as
    mosquitto runs it (``controller.deploy.bridge``):

    - its connection (persistent session) kept up as a bridge's (:class:`NodeConnection`), and
      the state's connections of their own (no session) from the next nodes, as ``paths`` says
      (``STATE_PATHS``; as rendered: two, and the state not on the session's connection);
    - each topic at the bridge's QoS, nothing with the retain flag;
    - while a connection is down, a QoS 0 state is dropped on it (mosquitto queues no QoS 0
      message for a bridge) and a QoS 1 message waits in the table PC's broker: the controller
      is never held up;
    - at every connection it sends the table's newest state and status (mosquitto sends a bridge
      the retained messages of its ``out`` topics), then what waited, in order."""

    def __init__(
        self,
        entry: dict[str, Any],
        context: ssl.SSLContext,
        events: list[dict[str, Any]] | None = None,
        *,
        paths: str = "2",
        state_restart: tuple[float, float] | None = None,
        fast_copies: bool = True,
    ) -> None:
        table = entry["table"]
        if state_restart is None:  # as rendered: the table's own constant delay
            state_restart = (state_restart_s(table), state_restart_s(table))
        #: Whether the state's connections carry a QoS 0 copy of the alerts and hands (as rendered).
        self.fast_copies = fast_copies
        #: The newest retained message of each topic, as the table PC's broker holds it.
        self.retained: dict[str, bytes] = {}
        #: QoS 1 messages not yet acknowledged by the cluster, in order.
        self.waiting: deque[tuple[str, bytes]] = deque()
        self.sending = asyncio.Lock()
        self._sends: set[asyncio.Task[None]] = set()
        #: (wall-clock time, seconds) from each state handed to the bridge to its being written by
        #: a connection: the publisher process's own delay, which the console's lag includes.
        self.send_delays: list[tuple[float, float]] = []
        self.main = NodeConnection(entry, context, f"bench-{table}", self._main_up, events=events)
        #: Whether the session's connection carries the state too (not as rendered now).
        self.main_state = paths != "2"
        own = {"main": 0, "main+1": 1, "2": 2}[paths]
        self.states = [
            NodeConnection(
                entry,
                context,
                f"bench-{table}-state" + (f"-{k + 1}" if k else ""),
                self._state_up,
                first=k + 1,
                events=events,
                restart=state_restart,
            )
            for k in range(own)
        ]

    @property
    def reconnects(self) -> int:
        return self.main.reconnects + sum(c.reconnects for c in self.states)

    @property
    def away(self) -> list[list[float]]:
        return self.main.away

    async def start(self) -> None:
        await self.main.start()
        for connection in self.states:
            await connection.start()

    async def _main_up(self, client: aiomqtt.Client) -> None:
        with contextlib.suppress(aiomqtt.MqttError):
            for topic, payload in list(self.retained.items()):
                if self.main_state or not topic.endswith("/state"):
                    await client.publish(topic, payload, qos=BRIDGE_QOS[topic.split("/", 2)[2]])
        await self._send_waiting()

    async def _state_up(self, client: aiomqtt.Client) -> None:
        with contextlib.suppress(aiomqtt.MqttError):
            for topic, payload in list(self.retained.items()):
                if topic.endswith("/state"):
                    await client.publish(topic, payload, qos=0)

    async def _send_waiting(self) -> None:
        async with self.sending:
            while self.waiting and self.main.client is not None:
                topic, payload = self.waiting[0]
                try:
                    await self.main.client.publish(topic, payload, qos=1)
                except aiomqtt.MqttError:
                    return  # the connection is taken up again; it waits till then
                self.waiting.popleft()

    async def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> None:
        """Hand the message to the bridge and return at once: its connections send it on their
        own (one held up, e.g. writing into a dead node's socket, holds up neither the
        controller nor the other connection)."""
        if retain:
            self.retained[topic] = payload
        kind = topic.split("/", 2)[2]
        if BRIDGE_QOS[kind] == 1:
            self.waiting.append((topic, payload))
            self._in_background(self._send_waiting())
            if self.fast_copies and kind in ("alerts", "hands"):
                for connection in self.states:
                    if connection.client is not None:
                        self._in_background(self._send_copy(connection.client, topic, payload))
            return
        handed = time.monotonic()
        for connection in [self.main] * self.main_state + self.states:
            if connection.client is not None:
                self._in_background(self._send_now(connection.client, topic, payload, handed))

    async def _send_now(self, client: aiomqtt.Client, topic: str, payload: bytes, handed: float) -> None:
        with contextlib.suppress(aiomqtt.MqttError):
            await client.publish(topic, payload, qos=0)
            self.send_delays.append((time.time(), time.monotonic() - handed))

    async def _send_copy(self, client: aiomqtt.Client, topic: str, payload: bytes) -> None:
        with contextlib.suppress(aiomqtt.MqttError):
            await client.publish(topic, payload, qos=0)

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._sends.add(task)  # held until done (the loop keeps only weak references)
        task.add_done_callback(self._sends.discard)

    async def close(self) -> None:
        """Once what waits is sent (60 s at most), disconnect."""
        deadline = time.monotonic() + 60
        while self.waiting and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            await self._send_waiting()
        for task in list(self._sends):
            task.cancel()
        for connection in (self.main, *self.states):
            await connection.close()


class TablePlayer:
    """One table's controller: states, alert changes and hand results at a busy table's pace."""

    def __init__(self, table: str, offset: float) -> None:
        self.table = table
        self.offset = offset
        self.hand = 0
        self.published: list[tuple[str, Any]] = []

    def state(self, phase: str) -> bytes:
        return PublicState(
            ts=now(),
            hand=self.hand,
            phase=phase,
            button=1,
            seats=[SeatState(seat=s, occupied=True, in_hand=True, cards=2) for s in range(1, 7)],
            profile="roberts",
        ).to_json()

    def alert(self, status: str) -> Alert:
        return Alert.model_validate(
            {
                "id": f"{self.hand}-1",
                "ts": now(),
                "hand": self.hand,
                "code": "exposed_card",
                "severity": "warning",
                "seat": 3,
                "status": status,
                "message": "A hole card was exposed.",
                "remedy": ["Show it to the table."],
                "rule": "RR",
                "profile": "roberts",
            }
        )

    async def play(self, link: Link | BridgeLink, until: float) -> None:
        base = f"holdem/{self.table}"
        await asyncio.sleep(self.offset)
        while time.monotonic() < until:
            self.hand += 1
            started = time.monotonic()
            step = 0
            changes = iter(("raised", "resolved"))
            due = 10.0
            while time.monotonic() - started < HAND_S and time.monotonic() < until:
                step += 1
                phase = "preflop" if step % 2 else "flop"
                await link.publish(f"{base}/state", self.state(phase), retain=True)
                status = next(changes, None) if time.monotonic() - started >= due else None
                if status is None:
                    await asyncio.sleep(STATE_EVERY_S)
                    continue
                # Half way between two states: the states list no alert, and one following the
                # alert within the console's push would take it off the page before it is seen.
                await asyncio.sleep(STATE_EVERY_S / 2)
                alert = self.alert(status)
                await link.publish(f"{base}/alerts", alert.to_json())
                self.published.append(("alert", (self.table, alert.id, status)))
                due += 10.0
                await asyncio.sleep(STATE_EVERY_S / 2)
            if time.monotonic() - started >= HAND_S:
                result = HandResult(ts=now(), hand=self.hand, seats=[1, 2, 3], result="uncontested")
                await link.publish(f"{base}/hands", result.to_json())
                self.published.append(("hand", (self.table, self.hand)))


async def publishers(spec: dict[str, Any]) -> None:
    """The publisher process: every table's player; prints what was published as JSON."""
    loop = asyncio.get_running_loop()

    def quiet(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        # paho asks the loop to watch a socket that a node's death closed meanwhile: nothing to do.
        if isinstance(context.get("exception"), OSError) and "add_writer" in repr(context.get("handle")):
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(quiet)
    context = ssl.create_default_context(cafile=spec["ca"])
    rng = random.Random(spec.get("seed", 7))
    events: list[dict[str, Any]] | None = [] if spec.get("events") else None
    links: list[Link | BridgeLink] = [
        BridgeLink(
            entry,
            context,
            events,
            paths=spec["state_paths"],
            state_restart=tuple(spec["state_restart"]) if spec["state_restart"] else None,
            fast_copies=spec.get("history_paths", "fast") == "fast",
        )
        if entry["tls"]
        else Link(entry)
        for entry in spec["tables"]
    ]
    for group in range(0, len(links), STARTING):  # the tables come up a few dozen at a time
        await asyncio.gather(*(link.start() for link in links[group : group + STARTING]))
    players = [TablePlayer(entry["table"], rng.uniform(0, HAND_S)) for entry in spec["tables"]]
    for link, player in zip(links, players, strict=True):
        status = Status(state="online", ts=now(), session=1).to_json()
        await link.publish(f"holdem/{player.table}/controller/status", status, retain=True)
    print(json.dumps({"ready": len(links)}), flush=True)
    sys.stdin.readline()  # go
    cpu_at_go, went = time.process_time(), time.monotonic()
    until = time.monotonic() + spec["seconds"]
    playing = (player.play(link, until) for player, link in zip(players, links, strict=True))
    results = await asyncio.gather(*playing, return_exceptions=True)
    # Its CPU share while the tables played (closing the connections afterwards is idle time).
    cpu_share = (time.process_time() - cpu_at_go) / (time.monotonic() - went)
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    closing = asyncio.gather(*(link.close() for link in links))
    try:
        # 60 s for what waits to be sent, then the disconnections: a close that hangs (seen
        # once at 2,000 tables) must not keep the figures from being printed.
        await asyncio.wait_for(closing, CLOSE_S)
    except TimeoutError:
        errors.append(f"closing the tables' connections took more than {CLOSE_S:g} s")
    away = [span for link in links if isinstance(link, BridgeLink) for span in link.away]
    hands = [key for p in players for kind, key in p.published if kind == "hand"]
    alerts = [key for p in players for kind, key in p.published if kind == "alert"]
    if events is not None:
        lines = "".join(json.dumps(e) + "\n" for e in events)
        await asyncio.to_thread(Path(spec["events"]).write_text, lines)
    print(
        json.dumps(
            {
                "hands": hands,
                "alerts": alerts,
                "errors": errors[:5],
                "failed": len(errors),
                "reconnects": sum(link.reconnects for link in links),
                "away": away,
                "send_delays": [
                    (round(at, 3), round(delay, 4))
                    for link in links
                    if isinstance(link, BridgeLink)
                    for at, delay in link.send_delays
                ],
                # Its own: it may have exited before the bench reads /proc.
                "cpu_share": cpu_share,
            }
        ),
        flush=True,
    )


# ---------------------------------------------------------------------------------- measuring


def parse_ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


async def read_grid(
    url: str,
    lags: list[tuple[float, float]],
    stop: asyncio.Event,
    since: list[float],
    tables: list[str] | None = None,
    history: dict[str, list[tuple[float, float]]] | None = None,
) -> None:
    """Read the grid's stream as a browser would: a lag for each state when it first reaches the
    page (a retained state sent again after a reconnection is not news); in ``history``, a lag
    for each alert raised (``alert``) and hand result (``hand``) when first on the page."""
    parts = urlsplit(url)
    shown: dict[str, float] = {}
    seen: set[tuple[str, str, str]] = set()
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port, limit=2**26)
        except OSError:
            await asyncio.sleep(0.2)
            continue
        request = f"GET /events HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: text/event-stream\r\n\r\n"
        writer.write(request.encode())
        await writer.drain()
        try:
            while not stop.is_set():
                line = await asyncio.wait_for(reader.readline(), 1.0) if not stop.is_set() else b""
                if not line:
                    break
                if line.startswith(b"data: "):
                    received = time.time()
                    for item in json.loads(line[6:]):
                        if history is not None and item.get("kind") == "table":
                            note_history(item, received, since[0], seen, history)
                        if item.get("kind") == "table" and item.get("state_ts"):
                            published = parse_ts(item["state_ts"])
                            if published >= since[0] and published > shown.get(item["id"], 0.0):
                                shown[item["id"]] = published
                                lags.append((received, received - published))
                                if tables is not None:
                                    tables.append(item["id"])
        except TimeoutError:
            continue
        finally:
            writer.close()


def note_history(
    item: dict[str, Any],
    received: float,
    since: float,
    seen: set[tuple[str, str, str]],
    history: dict[str, list[tuple[float, float]]],
) -> None:
    """A grid update's alerts raised and last hand, each counted when first seen."""
    shown = [("alert", a["id"], a["ts"]) for a in item.get("alerts") or () if a.get("status") == "raised"]
    last = item.get("last_hand")
    if last:
        shown.append(("hand", str(last["hand"]), last["ts"]))
    for kind, key, ts in shown:
        published = parse_ts(ts)
        if published >= since and (item["id"], kind, key) not in seen:
            seen.add((item["id"], kind, key))
            history[kind].append((received, received - published))


STREAMS: Final = {"sessions": "$MQTT_sess", "retained": "$MQTT_rmsgs", "messages": "$MQTT_msgs"}


def led_by(monitor_ports: dict[str, int]) -> dict[str, str]:
    """Which node leads the metadata group and each MQTT stream (from the nodes' ``/jsz``)."""
    import urllib.request

    leaders: dict[str, str] = {}
    for port in monitor_ports.values():
        url = f"http://127.0.0.1:{port}/jsz?accounts=true&streams=true"
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                info = json.load(answer)
        except (OSError, ValueError):
            continue
        if (info.get("meta_cluster") or {}).get("leader"):
            leaders["metadata"] = info["meta_cluster"]["leader"]
        for account in info.get("account_details") or []:
            for stream in account.get("stream_detail") or []:
                leader = (stream.get("cluster") or {}).get("leader")
                if leader:
                    leaders[stream["name"]] = leader
    return leaders


def cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def after_kill(lags: list[tuple[float, float]], killed_at: float, seconds: float) -> str:
    """The lags after the kill per 5 s: how many, p50, p99."""
    windows = []
    for start in range(0, int(seconds), 5):
        window = [lag for received, lag in lags if start <= received - killed_at < start + 5]
        if window:
            p50, p99 = statistics.median(window) * 1000, percentile(window, 0.99) * 1000
            windows.append(f"{start}-{start + 5} s: {len(window)}, {p50:.0f}, {p99:.0f} ms")
    return "; ".join(windows) or "none"


def recovery(lags: list[tuple[float, float]], killed_at: float, played: float) -> float | None:
    """Seconds after the kill until a whole second's updates meet p50 <= 100 ms, p99 <= 1 s (and
    every later second while the tables play does too: ``played`` s after the kill they stop,
    and the updates of their closing are not the floor's recovery)."""
    buckets: dict[int, list[float]] = {}
    for received, lag in lags:
        if killed_at <= received < killed_at + played:
            buckets.setdefault(int(received - killed_at), []).append(lag)
    good_from = None
    for second in sorted(buckets):
        samples = buckets[second]
        fine = statistics.median(samples) <= 0.1 and percentile(samples, 0.99) <= 1.0
        if fine and good_from is None:
            good_from = second
        elif not fine:
            good_from = None
    return None if good_from is None else float(good_from)


def page_gaps(shown: list[tuple[float, str]], killed_at: float, within: float = 20.0) -> list[float]:
    """For each table the page showed before the kill, the longest time it went without a new
    state across the ``within`` s after it (a table publishes one every ``STATE_EVERY_S``)."""
    times: dict[str, list[float]] = {}
    for received, table in shown:
        times.setdefault(table, []).append(received)
    gaps = []
    for seen in times.values():
        seen.sort()
        if seen[0] >= killed_at:
            continue
        spans = [b - a for a, b in itertools.pairwise(seen) if b > killed_at and a < killed_at + within]
        gaps.append(max(spans, default=0.0))
    return sorted(gaps)


def stored(url: str) -> tuple[Counter[tuple[Any, ...]], Counter[tuple[Any, ...]]]:
    with psycopg.connect(url) as db:
        hands = Counter(tuple(r) for r in db.execute("SELECT table_id, hand FROM floor.hand_results"))
        alerts = Counter(
            tuple(r) for r in db.execute("SELECT table_id, alert_id, status FROM floor.alert_changes")
        )
    return hands, alerts


class PublisherProcesses:
    """The publisher processes, each driving its share of the tables (one Python process could
    not keep 2,000 tables' 4,000 TLS connections at pace: the figure measured was its own)."""

    def __init__(self, processes: list[asyncio.subprocess.Process]) -> None:
        self.processes = processes

    async def each_line(self) -> list[dict[str, Any]]:
        """The next JSON line of every process (they answer in any order)."""

        async def line(process: asyncio.subprocess.Process) -> dict[str, Any]:
            assert process.stdout is not None
            text = await process.stdout.readline()
            if not text:
                raise RuntimeError(f"publisher process {process.pid} ended (exit {await process.wait()})")
            found: dict[str, Any] = json.loads(text)
            return found

        return list(await asyncio.gather(*(line(p) for p in self.processes)))

    async def go(self) -> None:
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.write(b"go\n")
        await asyncio.gather(*(p.stdin.drain() for p in self.processes if p.stdin is not None))

    async def wait(self) -> None:
        await asyncio.gather(*(p.wait() for p in self.processes))


def restart_timeout(text: str) -> tuple[float, float]:
    """``--state-restart BASE,CAP`` (seconds, 1 <= BASE <= CAP)."""
    try:
        base, cap = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give BASE,CAP in seconds") from None
    if not 1 <= base <= cap:
        raise argparse.ArgumentTypeError(f"{text!r}: 1 <= BASE <= CAP")
    return base, cap


def publisher_count(args: argparse.Namespace) -> int:
    """``--publishers``, or one process per 500 tables."""
    wanted = args.publishers if args.publishers else -(-args.tables // TABLES_PER_PUBLISHER)
    return max(1, min(wanted, args.tables))


async def start_publishers(
    args: argparse.Namespace, directory: Path, ca: Path, entries: list[dict[str, Any]]
) -> PublisherProcesses:
    """One process per share of the tables (table k to process k mod N), each with its spec."""
    count = publisher_count(args)
    processes = []
    for k in range(count):
        spec: dict[str, Any] = {
            "ca": str(ca),
            "seconds": args.seconds,
            "tables": entries[k::count],
            "state_paths": args.state_paths,
            "state_restart": args.state_restart,
            "history_paths": args.history_paths,
            "seed": 7 + k,
        }
        if args.keep:
            spec["events"] = str(directory / f"publisher-events-{k + 1}.jsonl")
        spec_file = directory / f"spec-{k + 1}.json"
        spec_file.write_text(json.dumps(spec))
        processes.append(
            await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                "--role",
                "publisher",
                "--spec",
                str(spec_file),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                limit=2**28,
            )
        )
    return PublisherProcesses(processes)


def merged(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """The processes' reports as one (what was published, errors, reconnections, outages)."""
    return {
        "hands": [h for a in answers for h in a["hands"]],
        "alerts": [x for a in answers for x in a["alerts"]],
        "errors": [e for a in answers for e in a["errors"]][:5],
        "failed": sum(a["failed"] for a in answers),
        "reconnects": sum(a["reconnects"] for a in answers),
        "away": [span for a in answers for span in a["away"]],
        "cpu_shares": [a["cpu_share"] for a in answers],
        "send_delays": [d for a in answers for d in a["send_delays"]],
    }


def merge_events(directory: Path, count: int) -> None:
    """The processes' ``publisher-events-K.jsonl`` as one ``publisher-events.jsonl``, by time."""
    events = []
    for k in range(count):
        part = directory / f"publisher-events-{k + 1}.jsonl"
        if part.exists():
            events += [json.loads(line) for line in part.read_text().splitlines() if line]
            part.unlink()
    events.sort(key=lambda e: e["t"])
    (directory / "publisher-events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


async def bench(args: argparse.Namespace, directory: Path, database: str) -> None:
    tables = [f"t{i:04d}" for i in range(args.tables)]
    with (
        running_floor(directory, tables) as floor,
        table_pcs(floor, directory, tables[: args.bridged]) as pcs,
    ):
        log = directory / "console.log"
        console = floor.floor_process(log, "--store", database, "--listen", "127.0.0.1:0")
        url = await wait_for(lambda: console_url(log), 60, "the console's URL")
        await wait_for(
            lambda: "floor recorder: tablectl-floor-recorder" in log.read_text() or None,
            60,
            "the console's recorder",
        )
        entries: list[dict[str, Any]] = []
        bridged = {pc.table: pc for pc in pcs}
        nodes = floor.cluster.nodes
        for index, table in enumerate(tables):
            if table in bridged:
                pc = bridged[table]
                entries.append(
                    {
                        "table": table,
                        "ports": [pc.port],
                        "tls": False,
                        "user": f"{table}-controller",
                        "password": pc.deployment.secret(f"{table}-controller"),
                    }
                )
            else:
                ports = [nodes[(index + k) % 3].mqtt_port for k in range(3)]  # spread over the nodes
                entries.append(
                    {
                        "table": table,
                        "ports": ports,
                        "tls": True,
                        "user": f"{table}-bridge",
                        "password": floor.secret(f"{table}-bridge"),
                    }
                )
        publishers = await start_publishers(args, directory, floor.ca.cert, entries)
        ready = sum(r["ready"] for r in await publishers.each_line())
        print(
            f"{ready} tables connected ({args.bridged} through bridging mosquittos) by "
            f"{len(publishers.processes)} publisher processes",
            flush=True,
        )
        stop = asyncio.Event()
        lags: list[tuple[float, float]] = []
        since = [time.time()]
        lag_tables: list[str] = []
        history: dict[str, list[tuple[float, float]]] = {"alert": [], "hand": []}
        reader = asyncio.create_task(read_grid(url, lags, stop, since, lag_tables, history))
        pids = {
            "console": console.pid,
            **{n.name: n.process.pid for n in nodes if n.process is not None},
        }
        before = {name: cpu_ticks(pid) for name, pid in pids.items()}
        loads = [os.getloadavg()[0]]
        started = time.monotonic()
        await publishers.go()
        await asyncio.sleep(args.kill_at)
        leaders = await asyncio.to_thread(led_by, {n.name: n.monitor_port for n in nodes})
        victim = nodes[0]  # the console's first broker: its live view and its recorder fail over
        if args.kill == "plain":  # the node leading the least, never the sessions' stream
            led_count = Counter(leaders.values())
            victim = min(
                (n for n in nodes if n.name != leaders.get(STREAMS["sessions"])),
                key=lambda n: led_count[n.name],
            )
        elif args.kill != "n1":
            victim = next(n for n in nodes if n.name == leaders.get(STREAMS[args.kill], "n1"))
        led = [what for what, node in sorted(leaders.items()) if node == victim.name]
        killed_at = time.time()
        loads.append(os.getloadavg()[0])
        victim.kill()
        (directory / "killed").write_text(f"{killed_at}\n")
        print(
            f"killed {victim.name} (kill -9) at {args.kill_at:g} s; it led: " + (", ".join(led) or "nothing"),
            flush=True,
        )
        done = merged(await publishers.each_line())
        elapsed = time.monotonic() - started
        loads.append(os.getloadavg()[0])
        after = {name: cpu_ticks(pid) for name, pid in pids.items()}
        await asyncio.sleep(2.0)
        stop.set()
        await reader
        if args.keep:
            with (directory / "lags.jsonl").open("w") as out:
                for (received, lag), table in zip(lags, lag_tables, strict=True):
                    out.write(json.dumps({"t": received, "lag": round(lag, 4), "table": table}) + "\n")
        expected_hands = {tuple(h) for h in done["hands"]}
        expected_alerts = {tuple(a) for a in done["alerts"]}
        expected = len(expected_hands) + len(expected_alerts)
        deadline = time.monotonic() + 120
        while True:
            hands, alerts = await asyncio.to_thread(stored, database)
            if len(set(hands) & expected_hands) + len(set(alerts) & expected_alerts) >= expected:
                break
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
        caught_up = time.monotonic() - started - elapsed
        await publishers.wait()
        if args.keep:
            merge_events(directory, len(publishers.processes))
        warnings = [line for line in log.read_text(errors="replace").splitlines() if " WARNING " in line]
    lost = len(expected_hands - set(hands)) + len(expected_alerts - set(alerts))
    doubled = sum(n - 1 for n in hands.values() if n > 1) + sum(n - 1 for n in alerts.values() if n > 1)
    messages = args.tables * (args.seconds / STATE_EVERY_S) + expected
    print(
        f"{args.tables} tables for {args.seconds:g} s ({elapsed:.0f} s with the closing): "
        f"~{messages / args.seconds:,.0f} msg/s; "
        f"{len(expected_hands)} hand results and {len(expected_alerts)} alert changes published "
        f"({done['reconnects']} reconnections of direct tables; {done['failed']} publishers failed"
        f"{': ' + '; '.join(done['errors']) if done['errors'] else ''})"
    )
    print(f"store: {lost} lost, {doubled} doubled (recorder caught up {caught_up:.1f} s after the end)")
    print(figures("console lag (grid stream), whole run", [lag for _, lag in lags]))
    before_kill = [lag for received, lag in lags if killed_at - 10 <= received < killed_at]
    print(figures("console lag, 10 s before the kill", before_kill))
    print(
        "after the kill, per 5 s (updates, p50, p99): " + after_kill(lags, killed_at, elapsed - args.kill_at)
    )
    raised = sum(1 for _, _, status in expected_alerts if status == "raised")
    for kind, name, published in (
        ("alert", "alert lag (raised -> listed on the grid page)", raised),
        ("hand", "hand lag (result -> the grid's last hand)", len(expected_hands)),
    ):
        samples = history[kind]
        late = [lag for received, lag in samples if received >= killed_at and lag > 1.0]
        print(
            f"{figures(name + ', whole run', [lag for _, lag in samples])} "
            f"({len(samples)} seen of {published} published)"
        )
        print(
            figures(
                f"{kind} lag, 10 s before the kill",
                [lag for r, lag in samples if killed_at - 10 <= r < killed_at],
            )
        )
        print(
            f"{kind} lag after the kill, per 5 s (seen, p50, p99): "
            + after_kill(samples, killed_at, elapsed - args.kill_at)
            + f"; over 1 s after the kill: {len(late)}"
            + (f", the longest {max(late):.1f} s" if late else "")
        )
    spans = [
        (lost, back) for lost, *rest in done["away"] for back in (rest or [None]) if lost >= killed_at - 1
    ]
    returned = sorted(back - killed_at for _, back in spans if back is not None)
    if spans:
        print(
            f"direct tables whose connection the kill took: {len(spans)}; back on another node "
            + (
                f"p50 {statistics.median(returned):.1f} s, max {max(returned):.1f} s after the kill"
                if returned
                else "none"
            )
            + (f" ({len(spans) - len(returned)} never back)" if len(returned) < len(spans) else "")
        )
    gaps = page_gaps(
        [(received, table) for (received, _), table in zip(lags, lag_tables, strict=True)], killed_at
    )
    if gaps:
        print(
            f"longest time without a new state on the page, per table across the kill: p50 "
            f"{statistics.median(gaps):.1f} s, p99 {percentile(gaps, 0.99):.1f} s, max {gaps[-1]:.1f} s; "
            f"{sum(gap > 5 for gap in gaps)} of {len(gaps)} tables over 5 s"
        )
    delays = done["send_delays"]
    own = []
    for start in range(0, int(elapsed - args.kill_at), 5):
        window = [d for at, d in delays if start <= at - killed_at < start + 5]
        if window:
            p50, p99 = statistics.median(window) * 1000, percentile(window, 0.99) * 1000
            own.append(f"{start}-{start + 5} s: {p50:.0f}, {p99:.0f} ms")
    print(
        "publishers' own delay (a state handed to the bridge → written by a connection; part of "
        "the lag): "
        + figures("whole run", [d for _, d in delays]).replace(" updates", " states")
        + "; after the kill, per 5 s (p50, p99): "
        + "; ".join(own)
    )
    back = recovery(lags, killed_at, args.seconds - args.kill_at)
    print(
        "back within p50 <= 100 ms and p99 <= 1 s: "
        + ("never in the run" if back is None else f"{back:.0f} s after the kill")
    )
    hz = os.sysconf("SC_CLK_TCK")

    def share(name: str) -> str:
        if not after[name]:
            return f"{name} killed"
        return f"{name} {(after[name] - before[name]) / hz / elapsed * 100:.0f}%"

    shares = ", ".join(share(name) for name in pids)
    own = [share * 100 for share in done["cpu_shares"]]
    shares += f", publishers while playing {sum(own):.0f}% ({', '.join(f'{x:.0f}%' for x in own)})"
    print(f"CPU (share of one core, the nodes' and the console's over the run and its closing): {shares}")
    print(
        "machine load average (1 min; 2 cores) at the start, the kill, the end: "
        + ", ".join(f"{load:.1f}" for load in loads)
    )
    print(f"console log: {len(warnings)} warnings" + "".join(f"\n  {w[:200]}" for w in warnings[:8]))


def console_url(log: Path) -> str | None:
    import re

    text = log.read_text(errors="replace") if log.exists() else ""
    found = re.search(r"floor console: (http://\S+/)", text)
    return found.group(1) if found else None


async def wait_for(probe: Any, within: float, what: str) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        await asyncio.sleep(0.1)
    raise RuntimeError(f"no {what} within {within:g} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=textwrap.fill(" ".join((__doc__ or "").split("\n\n")[0].split()), 78),
        epilog=QUIET_RUNS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tables", type=int, default=500, help="busy tables (default 500)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long they play (default 60)")
    parser.add_argument("--kill-at", type=float, default=30.0, help="seconds into the run (default 30)")
    parser.add_argument("--bridged", type=int, default=3, help="tables through a bridging mosquitto (3)")
    parser.add_argument(
        "--publishers",
        type=int,
        default=0,
        metavar="N",
        help=f"publisher processes, each driving a share of the tables (default: one per "
        f"{TABLES_PER_PUBLISHER} tables); see its CPU share in the output: near 100%% means it fell "
        "behind and the figure is its own",
    )
    parser.add_argument(
        "--state-paths",
        choices=STATE_PATHS,
        default="2",
        help="the direct tables' state: on two connections of its own, not on the session's "
        "(2, as rendered); on the session's and one of its own (main+1, as rendered before); on "
        "the session's alone (main)",
    )
    parser.add_argument(
        "--history-paths",
        choices=("fast", "session"),
        default="fast",
        help="the direct tables' alerts and hand results: on the session's connection (QoS 1, "
        "for the recorder) and a QoS 0 copy on the state's connections (fast, as rendered), or on "
        "the session's alone (session, as rendered before; the bridged tables run as rendered)",
    )
    parser.add_argument(
        "--state-restart",
        type=restart_timeout,
        default=None,
        metavar="BASE,CAP",
        help=f"the direct tables' state paths reconnect as with mosquitto's restart_timeout BASE "
        f"CAP (default: as rendered, each table its own constant delay of {STATE_RESTART_S[0]}-"
        f"{STATE_RESTART_S[1]} s; {RESTART_BASE_S},{RESTART_CAP_S} as rendered before, like the "
        "session's connection)",
    )
    parser.add_argument(
        "--kill",
        choices=("n1", "plain", *STREAMS),
        default="n1",
        help="the node to kill: n1, the leader of that MQTT stream, or plain: the node leading "
        "the least and not the sessions' stream (the run prints what the killed node led: what it "
        "stalls depends on it)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="run in DIR and leave there the nodes' and the console's logs, publisher-events.jsonl "
        "(each direct table's lost and regained connections) and lags.jsonl (each update's lag)",
    )
    parser.add_argument("--role", choices=("bench", "publisher"), default="bench", help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "publisher":
        asyncio.run(publishers(json.loads(Path(args.spec).read_text())))
        return
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with contextlib.ExitStack() as stack:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=False)
            directory = args.keep.resolve()
        else:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="floor-cluster-")))
        database = stack.enter_context(temporary_database())
        asyncio.run(bench(args, directory, database))


if __name__ == "__main__":
    main()
