"""``tablectl floor`` as a process: its address in the log, its options checked, a clean stop."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import urllib.request
from pathlib import Path

import aiomqtt

from testing.mosquitto import Mosquitto
from testing.tables import FakeTable
from tests.service.support import TABLECTL, until

URL_RE = re.compile(r"floor console: (http://127\.0\.0\.1:\d+/)")


def floor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TABLECTL), "floor", *args], capture_output=True, text=True, timeout=30, check=False
    )


def test_bad_options_are_one_line_each(tmp_path: Path) -> None:
    for args, expected in (
        (["--broker", "http://x"], "--broker/--root: Value error, url 'http://x': scheme must be"),
        (
            ["--broker", "mqtt://127.0.0.1:1883", "--listen", "nowhere"],
            "--listen 'nowhere': expected host:port",
        ),
        (["--broker", "mqtt://127.0.0.1:1883", "--root", "a/#"], "--broker/--root: Value error, topic root"),
    ):
        result = floor(*args, "--db", str(tmp_path / "floor.sqlite"))
        assert result.returncode == 1, result
        assert result.stderr.strip().count("\n") == 0, result.stderr
        assert expected in result.stderr, result.stderr


async def test_the_console_process_serves_the_tables_and_stops_on_sigterm(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    log = tmp_path / "floor.log"
    process = subprocess.Popen(  # noqa: ASYNC220 - started once, waited for in a thread
        [
            str(TABLECTL),
            "floor",
            "--broker",
            mosquitto.url,
            "--listen",
            "127.0.0.1:0",
            "--db",
            str(tmp_path / "floor.sqlite"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    try:
        await until(lambda: URL_RE.search(log.read_text()) is not None, what="the console's URL")
        found = URL_RE.search(log.read_text())
        assert found is not None
        url = found.group(1)
        table = FakeTable("t9")
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.publish(*table.status(), qos=1, retain=True)
            await client.publish(*table.alert("critical"), qos=1)
            await client.publish(*table.state(), qos=1, retain=True)

        def tables() -> dict[str, list[dict[str, object]]]:
            with urllib.request.urlopen(url + "api/tables", timeout=5) as response:
                answer: dict[str, list[dict[str, object]]] = json.load(response)
                return answer

        for _ in range(100):
            answer = await asyncio.to_thread(tables)
            if answer["tables"] and answer["tables"][0]["attention"] == "critical":
                break
            await asyncio.sleep(0.05)
        assert [t["id"] for t in answer["tables"]] == ["t9"]
        assert answer["tables"][0]["attention"] == "critical"
        process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(process.wait, 10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    assert "floor console: stopped" in text
    assert "Traceback" not in text
    assert (tmp_path / "floor.sqlite").exists()


def test_the_retention_must_be_days_zero_or_more(tmp_path: Path) -> None:
    for days in ("-1", "soon", "nan"):
        result = floor(
            "--broker", "mqtt://127.0.0.1:1883", "--retain-days", days, "--db", str(tmp_path / "floor.sqlite")
        )
        assert result.returncode != 0, result
        assert "--retain-days" in result.stderr, result.stderr
        assert days in result.stderr, result.stderr
