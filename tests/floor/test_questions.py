"""What a supervisor asks the floor's history, from the console (SQLite, live recording) and the
command line: hands across tables by seat, dealer and code, alert changes, the report per table
and hour, dealer and area, the areas of the live floor."""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiomqtt

from contract.models import Status
from contract.topics import Topics
from controller.floor.console import FloorConsole
from tests.history.support import T0, alert, showdown_hand, uncontested_hand
from tests.service.support import TABLECTL, until


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            body = response.read()
            return response.status, json.loads(body) if response.headers["content-type"].startswith(
                "application/json"
            ) else body.decode()
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def floor(*args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(TABLECTL), "floor", *args], capture_output=True, text=True, timeout=30, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


async def test_the_questions_across_tables_and_the_report(
    console: FloorConsole, publisher: aiomqtt.Client, tmp_path: Path
) -> None:
    await until(lambda: console.health.connected, what="the console subscribed")
    minute = timedelta(minutes=1)
    for table, area in (("t1", "pit 1"), ("t2", "pit 1"), ("t3", "pit 2")):
        online = Status(state="online", ts=T0, session=1, area=area)
        topic = Topics("holdem", table).controller_status
        await publisher.publish(topic, online.to_json(), qos=1, retain=True)
    t1, t2 = Topics("holdem", "t1"), Topics("holdem", "t2")
    await publisher.publish(t1.alerts, alert(7, "exposed_card", T0 + minute, seat=2).to_json(), qos=1)
    for topics, result in (
        (t1, showdown_hand(7, T0 + 2 * minute).model_copy(update={"dealer": "D-7", "rake": 3})),
        (t1, uncontested_hand(8, T0 + 3 * minute).model_copy(update={"dealer": "D-7"})),
        (t2, showdown_hand(4, T0 + 4 * minute).model_copy(update={"dealer": "D-8", "rake": 2})),
    ):
        await publisher.publish(topics.hands, result.to_json(), qos=1)
    await until(lambda: console.store.written >= 7, what="the hands and statuses stored")

    url = console.url
    status, answer = await asyncio.to_thread(get, url + "api/hands?seat=4")
    assert status == 200
    assert [(h["table"], h["hand"]) for h in answer["hands"]] == [("t1", 8)]
    _, answer = await asyncio.to_thread(get, url + "api/hands?code=exposed_card")
    assert [(h["table"], h["hand"], h["dealer"]) for h in answer["hands"]] == [("t1", 7, "D-7")]
    _, answer = await asyncio.to_thread(get, url + "api/hands?dealer=D-8")
    assert [h["table"] for h in answer["hands"]] == ["t2"]
    _, answer = await asyncio.to_thread(get, url + "api/alerts?table=t1")
    changed = [(a["table"], a["code"], a["status"]) for a in answer["alerts"]]
    assert changed == [("t1", "exposed_card", "raised")]
    status, answer = await asyncio.to_thread(get, url + "api/hands?since=yesterday")
    assert status == 400
    assert "since: 'yesterday' is not an ISO 8601 time" in answer["error"]

    window = "since=2026-11-29T00:00:00Z&until=2026-12-01T00:00:00Z"
    _, report = await asyncio.to_thread(get, url + f"api/report?{window}")
    assert report["total"] == {"hands": 3, "alerts": 1, "alerts_per_100_hands": 33.3, "rake": 5}
    dealers = {d["dealer"]: (d["hands"], d["alerts"], d["rake"]) for d in report["dealers"]}
    assert dealers == {"D-7": (2, 1, 3), "D-8": (1, 0, 2)}
    areas = {a["area"]: (a["tables"], a["hands"]) for a in report["areas"]}
    assert areas == {"pit 1": (["t1", "t2"], 3), "pit 2": (["t3"], 0)}
    (t1_row,) = [t for t in report["tables"] if t["table"] == "t1"]
    assert [(h["hour"], h["hands"], h["alerts_per_100_hands"]) for h in t1_row["hours"]] == [
        ("2026-11-30T20:00:00.000Z", 2, 50.0)
    ]
    _, page = await asyncio.to_thread(get, url + f"report?{window}")
    assert "<h2>Per dealer</h2>" in page
    assert "D-7" in page
    _, grouped = await asyncio.to_thread(get, url + "api/areas")
    assert grouped["areas"] == [
        {"area": "pit 1", "tables": ["t1", "t2"]},
        {"area": "pit 2", "tables": ["t3"]},
    ]
    _, tables = await asyncio.to_thread(get, url + "api/tables")
    assert {t["id"]: t["area"] for t in tables["tables"]} == {"t1": "pit 1", "t2": "pit 1", "t3": "pit 2"}

    # The same from the command line, on the console's SQLite file.
    store = str(console.store.database.name)
    lines = await asyncio.to_thread(floor, "hands", "--store", store, "--table", "t1", "--json")
    assert [(line["table"], line["hand"]) for line in lines] == [("t1", 7), ("t1", 8)]
    since = await asyncio.to_thread(
        floor, "hands", "--store", store, "--since", "2026-11-30T20:03:30Z", "--json"
    )
    assert [line["hand"] for line in since] == [4]
    changes = await asyncio.to_thread(floor, "alerts", "--store", store, "--json")
    assert [(c["table"], c["code"]) for c in changes] == [("t1", "exposed_card")]
    command = [
        str(TABLECTL),
        "floor",
        "report",
        "--store",
        store,
        "--since",
        "2026-11-29",
        "--until",
        "2026-12-01",
        "--json",
    ]
    done = await asyncio.to_thread(
        subprocess.run, command, capture_output=True, text=True, timeout=30, check=True
    )
    cli_report = json.loads(done.stdout)
    assert cli_report["total"] == report["total"]


def test_a_store_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    command = [str(TABLECTL), "floor", "hands", "--store", str(tmp_path / "file" / "x.sqlite"), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("error: floor store ")
    assert done.stderr.count("\n") == 1
