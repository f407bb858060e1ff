"""Card secrecy over a 30-hand demo with chips: public topics and INFO logs never name a hidden hole card.

``tablectl demo --hands 30 --speed 0`` runs against a private mosquitto; a subscriber of this
test reads everything (device topics included, to know where every card is) and checks, in the
broker's order, every message of the public topics (alerts, state, hands, controller status:
exactly what the bridge carries to the floor) against the cards hidden at that moment. The
demo's INFO log is checked the same way, each line placed on the timeline by its time stamp
(half a second late, so that the event a line reports is surely known before it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import time
from datetime import datetime
from pathlib import Path

import aiomqtt
import pytest

from config.registry import load_registry
from testing.mosquitto import Mosquitto
from tests.conftest import EXAMPLE_REGISTRY, REPO
from tests.support.secrecy import Audit

HANDS = 30
#: A seed whose 30 hands (at the mistake rate below) expose cards in every way the dealer can:
#: the audit then judges cards made public by mistakes, and hidden again after the reshuffle.
SEED = 47
EXPOSURES = ("exposed_card", "misdeal_exposed_early", "misdeal_exposed_multiple", "burn_face_up")
TABLE = "secrecy"
PUBLIC = ("alerts", "state", "hands", "controller/status")
#: A log line is checked against the cards hidden this long after it was written.
LOG_LAG_S = 0.5


#: ``2026-11-30 18:50:21,490 INFO controller.service.table: alert 1-2 raised CODE seat 6 (...): TEXT``
ALERT_LINE = re.compile(r"^alert \S+ \S+ .*?\): (?P<text>.*)$")


def _message(line: str) -> str:
    """What a log line says (without its time stamp); an alert line's alert text alone, to be
    judged like that alert on the broker (from when it was first published)."""
    said = line.split(": ", 1)[1] if ": " in line else line
    alert = ALERT_LINE.match(said)
    return alert.group("text") if alert else said


def _content_time(topic: str, payload: bytes, received_at: float) -> float:
    """The ``ts`` a message carries (as a POSIX time), else when it was received."""
    match = TS.search(payload)
    if match is None:
        return received_at
    return datetime.fromisoformat(match.group(1).decode().replace("Z", "+00:00")).timestamp()


#: The top-level ``ts`` of a contract payload (the first ``"ts"`` key of the JSON object).
TS = re.compile(rb'"ts":\s*"([^"]+)"')


def _log_time(line: str) -> float | None:
    try:
        return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
    except ValueError:
        return None


# 30 hands with chips flat out take about 40 s on the 2-core machine, more when it is shared: the
# run gets more than the suite's 300 s per test.
@pytest.mark.timeout(600)
async def test_no_hidden_hole_card_or_uid_in_public_topics_or_info_logs(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    base = f"holdem/{TABLE}"
    received: list[tuple[float, str, bytes]] = []
    log_path = tmp_path / "demo.log"
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="secrecy-audit") as client:
        await client.subscribe(f"{base}/#", qos=1)

        async def collect() -> None:
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                received.append((time.time(), str(message.topic), message.payload))

        reader = asyncio.create_task(collect())
        with log_path.open("wb") as log:
            demo = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "controller.cli",
                "demo",
                "--no-view",
                "--hands",
                str(HANDS),
                "--seed",
                str(SEED),
                "--speed",
                "0",
                "--mistake-rate",
                "0.6",
                "--table",
                TABLE,
                "--broker",
                mosquitto.url,
                "--log-level",
                "INFO",
                "--json",
                cwd=REPO,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
            )
            stdout, _ = await asyncio.wait_for(demo.communicate(), 560)
        assert demo.returncode == 0, log_path.read_text()[-3000:]
        # The controller's retained `offline` is its last word: everything before it has arrived.
        deadline = time.monotonic() + 10
        while not any(t == f"{base}/controller/status" and b'"offline"' in p for _, t, p in received):
            assert time.monotonic() < deadline, "the controller's offline never arrived"
            await asyncio.sleep(0.05)
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    assert f'"hands":{HANDS}'.encode() in stdout
    summary = json.loads(stdout.decode().strip().splitlines()[-1])
    assert set(EXPOSURES) <= set(summary["injected"]), summary["injected"]

    # Each message is placed at the moment its content refers to: a device event at its
    # observation (``ts``), a state, alert or hand result at the ``ts`` of the event that caused
    # it. The broker's delivery order is not that order: a shuffler's ``shuffle_complete`` may
    # reach a subscriber before a state the controller computed just before it (still listing the
    # board of the hand that deck had dealt), which would look like a board card named after its
    # deck was reshuffled. At equal times, device events come first (a cause before its effect).
    timeline: list[tuple[float, int, str, str, bytes]] = [
        (
            _content_time(topic, payload, at),
            index if "/dev/" in topic else len(received) + index,
            "mqtt",
            topic,
            payload,
        )
        for index, (at, topic, payload) in enumerate(received)
    ]
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    info = [line for line in lines if " INFO " in line]
    for index, line in enumerate(info):
        at = _log_time(line)
        assert at is not None, f"a log line without a time stamp: {line}"
        timeline.append((at + LOG_LAG_S, len(received) + index, "log", "INFO log", line.encode()))
    timeline.sort()

    audit = Audit(load_registry(EXAMPLE_REGISTRY))
    public_topics = {f"{base}/{t}" for t in PUBLIC}
    for _, _, kind, topic, payload in timeline:
        if kind == "log":
            audit.public_text(topic, _message(payload.decode()))
        elif topic.startswith(f"{base}/dev/") and topic.endswith("/event"):
            audit.device_event(topic, payload)
        elif topic in public_topics:
            audit.public_message(topic, payload)
    assert audit.problems == [], "\n".join(audit.problems)
    # The audit did look: many hole cards were hidden, many card codes named and judged.
    assert audit.hole_cards > 5 * HANDS
    assert audit.named_cards > 5 * HANDS
    assert len(info) > 5 * HANDS
