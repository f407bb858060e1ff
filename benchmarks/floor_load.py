"""The floor console under load: 500 busy tables, how far behind its view is, its CPU and RSS.

Usage: ``.venv/bin/python benchmarks/floor_load.py [--tables 500] [--seconds 30]
[--states-per-s 2] [--alert-changes-per-min 6] [--browser]``

A private mosquitto (``set_tcp_nodelay true``); ``tablectl floor`` as a process of its own (port 0,
its URL read from its log, the history in a temp SQLite file); a publisher process that plays the
tables' controllers: every table's retained ``controller/status`` and ``state``, then for
``--seconds`` each table publishes ``--states-per-s`` states (each with the current time as its
``ts``) and ``--alert-changes-per-min`` alert changes (raised, acknowledged, resolved), at a steady
pace. A busy table is taken as 2 states a second (a card dealt, a bet, a fold...) and an alert
change every 10 s, both well above what the demo's virtual dealer produces at a real pace.

Measured:
- lag: for every table update the console pushes to its grid page (server-sent events, read
  here as a browser would), the time since the newest state in it was published;
  with ``--browser`` also in Chromium, when the grid's page has the update;
- the console process's CPU (user + system, share of one core) and RSS (now and peak), from
  /proc, over the loaded period.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt

from testing.mosquitto import Mosquitto, free_port
from testing.tables import FakeTable

URL_RE: Final = re.compile(r"floor console: (http://\S+/)")
TICK_S: Final = 0.1


# ---------------------------------------------------------------------------------- publisher


async def publish_tables(port: int, tables: int, seconds: float, states: float, alerts: float) -> None:
    """The publisher process: the tables' retained picture, then the steady load; prints a JSON
    line with what it published and how far behind its schedule it fell."""
    fakes = [FakeTable(f"t{index:03d}") for index in range(tables)]
    async with aiomqtt.Client("127.0.0.1", port, identifier="floor-load-publisher") as client:
        client.pending_calls_threshold = 100_000

        async def send(batch: list[tuple[str, bytes, bool]]) -> None:
            await asyncio.gather(*(client.publish(t, p, qos=1, retain=r) for t, p, r in batch))

        await send([(*fake.status(), True) for fake in fakes])
        await send([(*fake.state(), True) for fake in fakes])
        print(json.dumps({"ready": True}), flush=True)
        sys.stdin.readline()  # go
        per_tick_states = tables * states * TICK_S
        per_tick_alerts = tables * alerts / 60 * TICK_S
        state_credit = alert_credit = 0.0
        next_state = next_alert = 0
        sent = 0
        worst_behind = 0.0
        started = time.monotonic()
        ticks = int(seconds / TICK_S)
        for tick in range(ticks):
            state_credit += per_tick_states
            alert_credit += per_tick_alerts
            batch: list[tuple[str, bytes, bool]] = []
            while alert_credit >= 1:
                alert_credit -= 1
                fake = fakes[next_alert % tables]
                next_alert += 1
                batch.append((*alert_change(fake), False))
            while state_credit >= 1:
                state_credit -= 1
                fake = fakes[next_state % tables]
                next_state += 1
                batch.append((*fake.state(), True))
            await send(batch)
            sent += len(batch)
            due = started + (tick + 1) * TICK_S
            worst_behind = max(worst_behind, time.monotonic() - due)
            await asyncio.sleep(max(0.0, due - time.monotonic()))
        elapsed = time.monotonic() - started
    print(json.dumps({"sent": sent, "seconds": elapsed, "behind_s": worst_behind}), flush=True)


def alert_change(fake: FakeTable) -> tuple[str, bytes]:
    """The next change of the table's alerts: raise one, acknowledge it, resolve it, in turn."""
    active = list(fake.alerts.values())
    if not active:
        return fake.alert("critical" if fake.counter % 3 == 0 else "warning")
    first = active[0]
    if first.status == "raised":
        return fake.alert(first.severity, "acknowledged", alert_id=first.id)
    return fake.alert(first.severity, "resolved", alert_id=first.id)


# ---------------------------------------------------------------------------------- measuring


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def memory_kib(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = int(value.split()[0])
    return out


def parse_ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


async def read_grid(url: str, lags: list[float], stop: asyncio.Event, since: list[float]) -> None:
    """Read the grid's live stream as a browser would; a lag per table update of a state published
    after ``since[0]`` (the start of the load; the retained picture before it is not lag)."""
    parts = urlsplit(url)
    # The first update holds every table: lines far longer than asyncio's default limit.
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port, limit=2**26)
    request = f"GET /events HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: text/event-stream\r\n\r\n"
    writer.write(request.encode())
    await writer.drain()
    try:
        while not stop.is_set():
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"data: "):
                now = time.time()
                for item in json.loads(line[6:]):
                    if item.get("kind") == "table" and item.get("state_ts"):
                        published = parse_ts(item["state_ts"])
                        if published >= since[0]:
                            lags.append(now - published)
    finally:
        writer.close()


def figures(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    if not ordered:
        return f"{name}: no samples"

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p * len(ordered)) - 1))]

    return (
        f"{name}: {len(ordered)} updates; p50 {statistics.median(ordered) * 1000:.0f} ms, "
        f"p99 {pct(0.99) * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
    )


async def browser_lags(url: str, lags: list[float], ready: asyncio.Event, stop: asyncio.Event) -> None:
    from testing.browser import browser, new_page

    async with browser(1280, 800) as context:
        page = await new_page(context)
        await page.goto(url)
        await page.wait_for_function("window.floorConsole && window.floorConsole.updates > 0")
        await page.evaluate(
            "(since) => { window.benchLags = []; window.floorConsole.onTable = (item) => {"
            " const published = Date.parse(item.state_ts); if (published >= since)"
            " window.benchLags.push(performance.timeOrigin + performance.now() - published); }; }",
            time.time() * 1000,
        )
        ready.set()
        await stop.wait()
        lags.extend(value / 1000 for value in await page.evaluate("window.benchLags"))


async def wait_url(log: Path, within: float = 20.0) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        text = await asyncio.to_thread(log.read_text, errors="replace")
        found = URL_RE.search(text)
        if found:
            return found.group(1)
        await asyncio.sleep(0.05)
    raise RuntimeError(f"no console URL in its log within {within:g} s")


async def bench(directory: Path, port: int, args: argparse.Namespace) -> None:
    log = directory / "floor.log"
    console = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "tablectl"),
        "floor",
        "--broker",
        f"mqtt://127.0.0.1:{port}",
        "--listen",
        "127.0.0.1:0",
        "--db",
        str(directory / "floor.sqlite"),
        stderr=log.open("wb"),
        stdout=asyncio.subprocess.DEVNULL,
    )
    await asyncio.sleep(0)
    publisher = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--role",
        "publisher",
        "--port",
        str(port),
        "--tables",
        str(args.tables),
        "--seconds",
        str(args.seconds),
        "--states-per-s",
        str(args.states_per_s),
        "--alert-changes-per-min",
        str(args.alert_changes_per_min),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert publisher.stdin is not None
    assert publisher.stdout is not None
    try:
        url = await wait_url(log)
        ready = json.loads(await publisher.stdout.readline())
        assert ready["ready"]
        stop = asyncio.Event()
        lags: list[float] = []
        page_lags: list[float] = []
        await asyncio.sleep(2.0)  # the retained picture of every table reaches the console
        since = [float("inf")]
        readers = [asyncio.create_task(read_grid(url, lags, stop, since))]
        if args.browser:
            page_ready = asyncio.Event()
            readers.append(asyncio.create_task(browser_lags(url, page_lags, page_ready, stop)))
            await asyncio.wait_for(page_ready.wait(), 60)
        cpu_before, wall_before = cpu_ticks(console.pid), time.monotonic()
        since[0] = time.time()
        publisher.stdin.write(b"go\n")
        await publisher.stdin.drain()
        done = json.loads(await publisher.stdout.readline())
        cpu_after, wall_after = cpu_ticks(console.pid), time.monotonic()
        await asyncio.sleep(1.0)  # what is still on its way
        memory = memory_kib(console.pid)
        stop.set()
        await asyncio.gather(*readers, return_exceptions=True)
    finally:
        if publisher.returncode is None:
            publisher.kill()
        await publisher.wait()
        console.terminate()
        await asyncio.wait_for(console.wait(), 10)
    hz = os.sysconf("SC_CLK_TCK")
    cpu = (cpu_after - cpu_before) / hz / (wall_after - wall_before)
    rate = done["sent"] / done["seconds"]
    print(
        f"{args.tables} tables, {args.states_per_s:g} states/s and {args.alert_changes_per_min:g} alert "
        f"changes/min each: {done['sent']} messages in {done['seconds']:.1f} s = {rate:,.0f} msg/s "
        f"(publisher at most {done['behind_s'] * 1000:.0f} ms behind its schedule)"
    )
    print(figures("console view lag (grid stream)", lags))
    if args.browser:
        print(figures("console view lag (grid page in Chromium)", page_lags))
    print(
        f"console process: CPU {cpu * 100:.0f}% of one core; RSS {memory['VmRSS'] / 1024:.0f} MiB "
        f"(peak {memory['VmHWM'] / 1024:.0f} MiB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--states-per-s", type=float, default=2.0, help="per table (default 2)")
    parser.add_argument("--alert-changes-per-min", type=float, default=6.0, help="per table (default 6)")
    parser.add_argument("--browser", action="store_true", help="also measure in the grid page in Chromium")
    parser.add_argument("--role", choices=("bench", "publisher"), default="bench", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "publisher":
        asyncio.run(
            publish_tables(
                args.port, args.tables, args.seconds, args.states_per_s, args.alert_changes_per_min
            )
        )
        return
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        broker = Mosquitto(port=free_port(), workdir=directory, extra_conf="set_tcp_nodelay true\n")
        broker.start()
        try:
            asyncio.run(bench(directory, broker.port, args))
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
