"""``tablectl demo --broker URL`` while that broker is killed and started again, several times.

The demo's observer (controller/demo/monitor.py) must connect and subscribe again after each
crash, as the production clients do: the virtual dealer waits for every step it takes to be
reported on the broker, so an observer that stopped listening would leave most steps unseen
and the demo crawling at one step per timeout. A real process tree: the demo as a user starts
it, a private mosquitto (no persistence: a restarted broker knows no session), killed with
SIGKILL between hands.

The controller is held up (SIGSTOP) across each crash until a while after the broker is back,
as a loaded machine holds it: the drivers reconnect first and go on publishing, and what they
publish before the controller is subscribed again the broker drops, while the statuses it
hands over (retained) name only the events before. The table must still be followed exactly
(engine/sequences.py asks every device to say its status again). Without that, each device's
unannounced loss showed at its next event only, applied after others' later events: false
misdeals, button_misplaced and remedy_not_followed (precision 0.64 with this test's seed, 0.45
with seed 1179 and kills at hands 1 to 5, as once seen at load 10 without any stop).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from testing.mosquitto import Mosquitto

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
KILLS = 5
HANDS = 30
TABLE = "crash"
#: Hands played between two kills (seen on the table's state: play went on after the restart).
HANDS_BETWEEN = 2
#: How long the controller stays stopped after the broker is back (the drivers reconnect
#: within a second, the dealer plays on meanwhile).
HELD_UP_S = 1.5


def controller_of(demo: subprocess.Popen[str]) -> int:
    """The pid of the demo's controller (its engine service child process)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # (gone meanwhile)
        if ppid == demo.pid and b"controller.demo.service_process" in args and b"service" in args:
            return int(entry.name)
    raise AssertionError("the demo's controller process was not found")


class HandWatcher:
    """Follows the table's hand number on ``holdem/{table}/state`` through the broker's crashes
    (paho reconnects by itself; it subscribes again on every connection)."""

    def __init__(self, broker: Mosquitto) -> None:
        self.hand = 0
        self._changed = threading.Condition()
        self._client = paho.Client(CallbackAPIVersion.VERSION2, client_id="crash-watcher")
        self._client.on_connect = self._connected
        self._client.on_message = self._message
        self._client.reconnect_delay_set(1, 1)
        self._client.connect(broker.host, broker.port)
        self._client.loop_start()

    def _connected(self, client: paho.Client, *_: Any) -> None:
        client.subscribe(f"holdem/{TABLE}/state", qos=1)

    def _message(self, _client: paho.Client, _data: Any, message: paho.MQTTMessage) -> None:
        hand = json.loads(message.payload).get("hand", 0)
        with self._changed:
            self.hand = max(self.hand, hand)
            self._changed.notify_all()

    def wait_for_hand(self, hand: int, timeout: float) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: self.hand >= hand, timeout):
                raise AssertionError(f"hand {hand} not reached within {timeout} s (at {self.hand})")

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


def test_the_demo_observer_resubscribes_after_every_broker_crash(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    out, err = (tmp_path / "demo.out").open("w+"), (tmp_path / "demo.err").open("w+")
    watcher = HandWatcher(mosquitto)
    started = time.monotonic()
    demo = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "demo",
            "--no-view",
            "--hands",
            str(HANDS),
            "--seed",
            "7",
            "--speed",
            "0",
            "--mistake-rate",
            "0.3",
            "--table",
            TABLE,
            "--broker",
            mosquitto.url,
            "--json",
        ],
        cwd=REPO,
        stdout=out,
        stderr=err,
        text=True,
    )
    try:
        for kill in range(KILLS):
            # a positive signal before each kill: hands are being played (after the restart)
            watcher.wait_for_hand(HANDS_BETWEEN * (kill + 1), timeout=90)
            controller = controller_of(demo)
            os.kill(controller, signal.SIGSTOP)
            try:
                mosquitto.kill()
                time.sleep(0.3)
                mosquitto.start()
                time.sleep(HELD_UP_S)
            finally:
                os.kill(controller, signal.SIGCONT)
        demo.wait(timeout=300)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        watcher.close()
    seconds = time.monotonic() - started
    out.seek(0)
    err.seek(0)
    stdout, stderr = out.read(), err.read()
    assert demo.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    summary: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    assert summary["hands"] == HANDS
    assert summary["mistakes_injected"] >= 5
    assert summary["precision"] == 1.0, summary
    assert summary["recall"] == 1.0, summary
    # The observer came back after every crash: it said so once per restart.
    assert len(re.findall(r"demo monitor: connected again", stderr)) == KILLS, stderr[-3000:]
    # Steps it could not see: at most those made while it was away (a crash takes well under
    # a second here); before, an observer that never came back missed every step after the
    # first crash.
    never = re.compile(r"(\d+) \w+ steps never reported")
    unseen = sum(int(m.group(1)) for note in summary["notes"] if (m := never.match(note)))
    print(f"{KILLS} broker crashes: {unseen} of {summary['steps']} steps unseen, {seconds:.1f} s")
    assert unseen <= 2 * KILLS, summary["notes"]
