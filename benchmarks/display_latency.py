"""Alert latency to the dealer's display: from the engine to the alert visible in the page.

Usage: ``.venv/bin/python benchmarks/display_latency.py [--alerts N] [--broker-nodelay | --broker-default]``

A private mosquitto (``set_tcp_nodelay true``, the production setting), ``tablectl run`` as a
process with ``[display] listen = "127.0.0.1:0"`` (its URL read from its log, as an operator
would), and the dealer's page in headless Chromium (Playwright, Debian's ``/usr/bin/chromium``).
``N`` times a device fault is published under a fresh device id (the engine raises a
``device_fault`` alert), and once the page shows it, the device's ``online`` status resolves it.
The first ``--warmup`` alerts (default 5: the browser compiles the page's code) are not counted.

The page records, with the browser's high-resolution clock (``performance.timeOrigin + now()``,
the same wall clock as Python's ``time.time()`` on this machine, offset measured), when the
alert's element enters the DOM and when the next frame is painted with it. Printed, in ms:

- fault published -> alert painted in the page: everything (broker, controller, engine, display,
  browser); the engine publishes the alert in between, so this bounds "engine -> visible";
- alert received by an MQTT subscriber -> painted in the page: the page usually wins (it is fed
  in the controller's process, the MQTT route has one more broker hop);
- in the DOM -> painted: the browser's frame (at most one frame, ~16.7 ms at 60 Hz).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt
from playwright.async_api import Page

from contract.models import FaultEvent, Status, parse_alert, parse_status
from contract.topics import Topics
from link.client import NO_DELAY
from testing.browser import browser, new_page
from testing.mosquitto import Mosquitto, free_port

REPO: Final = Path(__file__).resolve().parents[1]
TOPICS: Final = Topics("holdem", "bench")
URL_RE: Final = re.compile(r"dealer display: (http://\S+/)")

OBSERVE: Final = """
() => {
  window.benchSeen = {};
  const clock = () => performance.timeOrigin + performance.now();
  new MutationObserver((mutations) => {
    for (const mutation of mutations) {
      for (const node of mutation.addedNodes) {
        const id = node.dataset && node.dataset.alertId;
        if (id && !(id in window.benchSeen)) {
          const entry = { dom: clock(), painted: null };
          window.benchSeen[id] = entry;
          requestAnimationFrame(() => { entry.painted = clock(); });
        }
      }
    }
  }).observe(document.getElementById("alerts"), { childList: true });
}
"""


def config_file(directory: Path, port: int) -> Path:
    registry = REPO / "config" / "decks.example.csv"
    path = directory / "bench.toml"
    path.write_text(
        f'[table]\nid = "bench"\nseats = 9\n\n[mqtt]\nurl = "mqtt://127.0.0.1:{port}"\n\n'
        f'[decks]\nregistry = "{registry}"\n\n[journal]\npath = "journal.jsonl"\n\n'
        '[display]\nlisten = "127.0.0.1:0"\n',
        encoding="utf-8",
    )
    return path


async def clock_offset(page: Page, tries: int = 30) -> tuple[float, float]:
    """The page's clock minus Python's, in ms, from the quickest of ``tries`` round trips."""
    best = (0.0, float("inf"))
    for _ in range(tries):
        before = time.time() * 1000
        page_clock = await page.evaluate("performance.timeOrigin + performance.now()")
        after = time.time() * 1000
        if (after - before) / 2 < best[1]:
            best = (page_clock - (before + after) / 2, (after - before) / 2)
    return best


def figures(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p * len(ordered)) - 1))]

    return (
        f"{name}: p50 {statistics.median(ordered):6.1f}  p95 {pct(0.95):6.1f}  "
        f"p99 {pct(0.99):6.1f}  max {ordered[-1]:6.1f} ms"
    )


def read_log(log: Path) -> str:
    return log.read_text(errors="replace") if log.exists() else ""


async def wait_url(log: Path, within: float = 20.0) -> str:
    """The display's URL, from the line ``tablectl run`` logs once it listens."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = URL_RE.search(await asyncio.to_thread(read_log, log))
        if found:
            return found.group(1)
        await asyncio.sleep(0.05)
    raise RuntimeError(f"no display URL in the log:\n{read_log(log)}")


async def bench(directory: Path, port: int, count: int, warmup: int) -> None:
    log = directory / "service.log"
    service = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "tablectl"),
        "run",
        "--config",
        str(config_file(directory, port)),
        stderr=log.open("wb"),
        stdout=asyncio.subprocess.DEVNULL,
    )
    published: dict[str, float] = {}
    on_mqtt: dict[str, float] = {}
    ids: dict[str, str] = {}
    try:
        url = await wait_url(log)
        async with aiomqtt.Client(
            "127.0.0.1", port, identifier="bench-display", socket_options=NO_DELAY
        ) as client:
            await client.subscribe([(TOPICS.controller_status, 1), (TOPICS.alerts, 1)])
            online = asyncio.Event()
            raised: dict[str, asyncio.Event] = {}

            async def listen() -> None:
                async for message in client.messages:
                    arrived = time.time() * 1000
                    assert isinstance(message.payload, bytes)
                    topic = str(message.topic)
                    if topic == TOPICS.controller_status:
                        if parse_status(topic, message.payload).state == "online":
                            online.set()
                    elif topic == TOPICS.alerts:
                        alert = parse_alert(topic, message.payload)
                        if alert.status == "raised" and alert.device in raised:
                            on_mqtt[alert.device] = arrived
                            ids[alert.device] = alert.id
                            raised[alert.device].set()

            listener = asyncio.create_task(listen())
            await asyncio.wait_for(online.wait(), 20)
            async with browser(1024, 600) as context:
                page = await new_page(context)
                await page.goto(url)
                await page.wait_for_function("window.dealerDisplay && window.dealerDisplay.views > 0")
                await page.evaluate(OBSERVE)
                offset, error = await clock_offset(page)
                for index in range(warmup + count):
                    device = f"bench-{index}"
                    raised[device] = asyncio.Event()
                    event = FaultEvent(seq=1, ts=datetime.now(UTC), code="jam", text="bench")
                    published[device] = time.time() * 1000
                    await client.publish(TOPICS.device_event(device), event.to_json(), qos=1)
                    await asyncio.wait_for(raised[device].wait(), 10)
                    alert_id = ids[device]
                    await page.wait_for_function(
                        f"window.benchSeen['{alert_id}'] && window.benchSeen['{alert_id}'].painted"
                    )
                    status = Status(state="online", ts=datetime.now(UTC), session=1)
                    await client.publish(TOPICS.device_status(device), status.to_json(), qos=1)
                    await page.wait_for_selector(f'[data-alert-id="{alert_id}"]', state="detached")
                seen = await page.evaluate("window.benchSeen")
            listener.cancel()
    finally:
        service.terminate()
        await asyncio.wait_for(service.wait(), 10)
    total, versus_mqtt, frame = [], [], []
    for device, alert_id in ids.items():
        if int(device.rsplit("-", 1)[1]) < warmup:
            continue
        painted = seen[alert_id]["painted"] - offset
        total.append(painted - published[device])
        versus_mqtt.append(painted - on_mqtt[device])
        frame.append(seen[alert_id]["painted"] - seen[alert_id]["dom"])
    print(f"{len(total)} alerts timed; clock offset page - python {offset:+.2f} ms (+-{error:.2f})")
    print(figures("fault published -> alert painted in the page ", total))
    print(figures("alert on MQTT      -> alert painted in the page ", versus_mqtt))
    print(figures("alert in the DOM   -> painted (next frame)      ", frame))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alerts", type=int, default=300, help="alerts to time (default 300)")
    parser.add_argument("--warmup", type=int, default=5, help="alerts first, not counted (default 5)")
    parser.add_argument(
        "--broker-default",
        action="store_true",
        help="mosquitto without set_tcp_nodelay (the device event then waits for Nagle)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        extra = "" if args.broker_default else "set_tcp_nodelay true\n"
        broker = Mosquitto(port=free_port(), workdir=directory, extra_conf=extra)
        broker.start()
        try:
            print(f"mosquitto {'default' if args.broker_default else 'set_tcp_nodelay true'}")
            asyncio.run(bench(directory, broker.port, args.alerts, args.warmup))
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
