"""The floor at casino scale under faults, with the real parts: every hand result and alert
change the tables publish is stored exactly once, and the consoles show them.

Three NATS nodes run the rendered configurations; three table PCs run their rendered mosquitto
bridging to every node; ``tablectl floor record`` writes to PostgreSQL (a database of the test's
own, or a private PostgreSQL cluster the test restarts); ``tablectl floor`` consoles serve the
pages. While the tables publish, nodes are killed (``kill -9``) and restarted, the recorder is
killed and restarted, a console is killed, the database restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from contract.models import Alert, HandResult, Status
from testing.postgres import PrivatePostgres
from tests.deploy.support import until
from tests.floor_cluster.support import TABLECTL, TablePc, running_floor, table_pcs

TABLES = ["t1", "t2", "t3"]
URL_RE = re.compile(r"floor console: (http://127\.0\.0\.1:\d+/)")
START = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


def hand(number: int, dealer: str) -> HandResult:
    return HandResult.model_validate(
        {
            "ts": START + timedelta(seconds=number),
            "hand": number,
            "button": 1,
            "seats": [1, 2, 3],
            "result": "uncontested",
            "dealer": dealer,
            "rake": 1,
            "awarded": [{"seat": 2, "amount": 3}],
        }
    )


def change(number: int, status: str) -> Alert:
    return Alert.model_validate(
        {
            "id": f"{number}-1",
            "ts": START + timedelta(seconds=number, milliseconds=500 if status == "resolved" else 0),
            "hand": number,
            "code": "exposed_card",
            "severity": "warning",
            "seat": 3,
            "status": status,
            "message": "A hole card of seat 3 was exposed.",
            "remedy": ["Show it to the table."],
            "rule": "RR",
            "profile": "roberts",
        }
    )


def console_url(log: Path) -> str | None:
    found = URL_RE.search(log.read_text(errors="replace")) if log.exists() else None
    return found.group(1) if found else None


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def stored(url: str) -> tuple[Counter[tuple[str, int]], Counter[tuple[str, str, str]]]:
    with psycopg.connect(url) as db:
        hands = Counter((t, h) for t, h in db.execute("SELECT table_id, hand FROM floor.hand_results"))
        alerts = Counter(
            (t, a, s) for t, a, s in db.execute("SELECT table_id, alert_id, status FROM floor.alert_changes")
        )
    return hands, alerts


def count(url: str) -> int:
    try:
        hands, alerts = stored(url)
    except psycopg.Error:
        return -1
    return sum(hands.values()) + sum(alerts.values())


class Tables:
    """The tables' controllers: each round every table publishes a hand and two alert changes."""

    def __init__(self, pcs: list[TablePc]) -> None:
        self.pcs = pcs
        self.hands: set[tuple[str, int]] = set()
        self.alerts: set[tuple[str, str, str]] = set()

    async def play(
        self, rounds: int, interval: float, events: dict[int, Callable[[], Awaitable[None]]]
    ) -> None:
        clients = [pc.controller() for pc in self.pcs]
        for client in clients:
            await client.__aenter__()
        try:
            for pc, client in zip(self.pcs, clients, strict=True):
                area = f"pit {1 + TABLES.index(pc.table) % 2}"
                online = Status(state="online", ts=START, session=1, area=area)
                topic = f"holdem/{pc.table}/controller/status"
                await client.publish(topic, online.to_json(), qos=1, retain=True)
            for number in range(1, rounds + 1):
                started = time.monotonic()
                if number in events:
                    await events[number]()
                for pc, client in zip(self.pcs, clients, strict=True):
                    base = f"holdem/{pc.table}"
                    for status in ("raised", "resolved"):
                        alert = change(number, status)
                        await client.publish(f"{base}/alerts", alert.to_json(), qos=1)
                        self.alerts.add((pc.table, alert.id, status))
                    result = hand(number, dealer=f"D-{number % 2}")
                    await client.publish(f"{base}/hands", result.to_json(), qos=1)
                    self.hands.add((pc.table, number))
                await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))
        finally:
            for client in clients:
                await client.__aexit__(None, None, None)


async def check_exactly_once(url: str, tables: Tables, within: float) -> None:
    expected = len(tables.hands) + len(tables.alerts)
    with contextlib.suppress(AssertionError):  # what is missing is named below
        await until(lambda: count(url) >= expected, within=within)
    hands, alerts = stored(url)
    assert sorted(tables.hands - set(hands)) == []  # none lost
    assert sorted(tables.alerts - set(alerts)) == []
    assert [key for key, n in hands.items() if n > 1] == []
    assert [key for key, n in alerts.items() if n > 1] == []


def floor_cli(*args: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        [str(TABLECTL), "floor", *args, "--json"], capture_output=True, text=True, timeout=60, check=True
    )
    return [json.loads(line) for line in result.stdout.splitlines()]


def kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(10)


async def test_nodes_and_a_recording_console_killed_every_change_stored_once_and_shown(
    tmp_path: Path, postgres_url: str
) -> None:
    """Two consoles, each recording (the default with a PostgreSQL store): a node killed and
    restarted, then another; one console killed and restarted meanwhile."""
    with running_floor(tmp_path, TABLES) as floor, table_pcs(floor, tmp_path) as pcs:
        logs = tmp_path / "logs"
        consoles = [logs / "console-a.log", logs / "console-b.log"]
        processes = [
            floor.floor_process(log, "--store", postgres_url, "--listen", "127.0.0.1:0") for log in consoles
        ]
        await until(lambda: all(console_url(log) for log in consoles), within=30, what="the consoles' URLs")
        recording = "floor recorder: tablectl-floor-recorder"
        await until(
            lambda: all(recording in log.read_text() for log in consoles), within=30, what="the recorders"
        )
        nodes = floor.cluster.nodes

        async def kill_node(index: int) -> None:
            # The node restarted before has caught up (its streams current) before the next death:
            # a consumer of a session gone (the killed console's) may stay "not current" for long.
            await until(
                lambda: all(n.healthy(streams_only=True) for n in nodes if n.running),
                within=30,
                what="the cluster whole again",
            )
            nodes[index].kill()

        async def restart_node(index: int) -> None:
            await asyncio.to_thread(nodes[index].start)

        async def kill_console() -> None:
            kill(processes[0])

        async def restart_console() -> None:
            floor.floor_process(consoles[0], "--store", postgres_url, "--listen", "127.0.0.1:0")

        tables = Tables(pcs)
        await tables.play(
            80,
            0.25,
            {
                12: lambda: kill_node(0),
                22: kill_console,
                32: lambda: restart_node(0),
                42: restart_console,
                55: lambda: kill_node(1),
                70: lambda: restart_node(1),
            },
        )
        await check_exactly_once(postgres_url, tables, within=90)

        # The console never killed shows them (the one killed took nothing with it).
        url = console_url(consoles[1])
        assert url is not None
        floor_view = await asyncio.to_thread(get, url + "api/tables")
        assert sorted(t["id"] for t in floor_view["tables"]) == TABLES
        page = await asyncio.to_thread(get, url + "api/tables/t2/hands?limit=500")
        assert sorted(h["hand"] for h in page["hands"]) == list(range(1, 81))
        one = await asyncio.to_thread(get, url + "api/tables/t3/hands/40")
        assert [c["status"] for c in one["alerts"]] == ["raised", "resolved"]
        # And so does the command line, one JSON object a line.
        lines = await asyncio.to_thread(floor_cli, "hands", "--store", postgres_url)
        assert Counter(line["table"] for line in lines) == dict.fromkeys(TABLES, 80)
        assert {line["dealer"] for line in lines} == {"D-0", "D-1"}
        t2 = await asyncio.to_thread(floor_cli, "alerts", "--store", postgres_url, "--table", "t2")
        assert len(t2) == 160
        assert {line["table"] for line in t2} == {"t2"}
        for log in consoles:
            assert "Traceback" not in log.read_text()


async def test_the_recorder_killed_and_restarted_takes_up_its_session(
    tmp_path: Path, postgres_url: str
) -> None:
    """``tablectl floor record`` alone, killed mid-stream: what was published meanwhile waited in
    its session and is stored once it is back (and what it held unacknowledged, once)."""
    with running_floor(tmp_path, TABLES) as floor, table_pcs(floor, tmp_path) as pcs:
        log = tmp_path / "logs" / "recorder.log"
        recorder = floor.floor_process(log, "record", "--store", postgres_url)
        await until(
            lambda: "floor recorder: tablectl-floor-recorder" in log.read_text(),
            within=30,
            what="the recorder",
        )

        async def kill_recorder() -> None:
            kill(recorder)

        async def restart_recorder() -> None:
            floor.floor_process(log, "record", "--store", postgres_url)

        tables = Tables(pcs)
        await tables.play(40, 0.25, {12: kill_recorder, 28: restart_recorder})
        await check_exactly_once(postgres_url, tables, within=60)
        text = log.read_text()
        assert text.count("tablectl-floor-recorder-holdem-0 on") >= 2  # the same session again
        assert "tablectl-floor-recorder-holdem-1" not in text
        assert "Traceback" not in text


async def test_the_database_restarted_nothing_lost_nothing_doubled(tmp_path: Path) -> None:
    database = PrivatePostgres(tmp_path / "pg")
    database.init()
    database.start()
    try:
        with running_floor(tmp_path / "floor", TABLES) as floor, table_pcs(floor, tmp_path) as pcs:
            log = tmp_path / "console.log"
            # A console that records (the default with a PostgreSQL store).
            floor.floor_process(log, "--store", database.url, "--listen", "127.0.0.1:0")
            await until(lambda: console_url(log) is not None, within=30, what="the console's URL")
            # The recorder's session subscribed (what comes before a session exists is not its).
            await until(
                lambda: "floor recorder: tablectl-floor-recorder" in log.read_text(),
                within=30,
                what="the recorder",
            )

            async def restart() -> None:
                # Immediate: no shutdown checkpoint, recovery from the WAL at start, as after a crash.
                await asyncio.to_thread(database.stop, "immediate")
                await asyncio.sleep(1.0)
                await asyncio.to_thread(database.start)

            async def stop_for_a_while() -> None:
                await asyncio.to_thread(database.stop, "fast")

            async def start_again() -> None:
                await asyncio.to_thread(database.start)

            tables = Tables(pcs)
            await tables.play(60, 0.25, {15: restart, 30: stop_for_a_while, 42: start_again})
            await check_exactly_once(database.url, tables, within=90)
            text = log.read_text()
            assert "waiting for it" in text  # the recorder told why it stopped taking messages
            url = console_url(log)
            assert url is not None
            page = await asyncio.to_thread(get, url + "api/tables/t1/hands?limit=500")
            assert len(page["hands"]) == 60
            assert "Traceback" not in text
    finally:
        database.remove()
