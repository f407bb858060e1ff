"""``tablectl run`` on the rendered configuration and broker, as systemd would start it.

Each driver connects under its own identity (the broker's log names the user), so the ACL
applies to it; the controller reads their statuses and its command reaches the sensor board's
driver. The controller's password comes from the environment, the drivers' from their files:
neither appears in the log, even at DEBUG.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from contract.models import Alert, TagEvent, parse_alert
from tests.conftest import REPO
from tests.deploy.support import DEVICES, TABLE, client, deployment, listening, until
from tests.service.support import ServiceProcess


def wait_for(condition: Callable[[], bool], what: str, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"not within {within} s: {what}"
        time.sleep(0.05)


def test_controller_and_drivers_run_under_their_own_identities(tmp_path: Path) -> None:
    with deployment(tmp_path) as table:
        assert table.broker is not None
        broker = table.broker
        secret = table.secret(f"{TABLE}-controller")
        text = table.config.read_text()
        controller_file = f'password_file = "secrets/{TABLE}-controller"\n'
        assert controller_file in text
        table.config.write_text(text.replace(controller_file, ""))
        env = {**os.environ, "TABLECTL_MQTT__PASSWORD": secret, "PYTHONUNBUFFERED": "1"}
        log_path = tmp_path / "run.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "controller.cli",
                    "run",
                    "--config",
                    str(table.config),
                    "--log-level",
                    "DEBUG",
                ],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:

            def log_text() -> str:
                return log_path.read_text(errors="replace")

            wait_for(lambda: f"u'{TABLE}-controller'" in broker.log, "the controller connected")
            for device in DEVICES:
                wait_for(
                    lambda d=device: f"u'{TABLE}-dev-{d}'" in broker.log,  # type: ignore[misc]
                    f"driver {device} connected as itself",
                )
                # Its status (retained, on its own topic) reached the controller.
                wait_for(
                    lambda d=device: f"{d}: status offline" in log_text(),  # type: ignore[misc]
                    f"the controller read {device}'s status",
                )
            # The controller's lamp command reached the board's driver on its own cmd topic
            # (kept there: no board is plugged in).
            wait_for(
                lambda: "holdem/t1/dev/sensors/cmd: 'lamp' kept until the device is back" in log_text(),
                "the lamp command at the sensor board's driver",
            )
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(15) == 0
        everything = log_text() + broker.log
        for user in (f"{TABLE}-controller", *(f"{TABLE}-dev-{d}" for d in DEVICES)):
            assert table.secret(user) not in everything


async def test_a_tag_from_the_sensor_boards_own_user_is_a_bad_payload(tmp_path: Path) -> None:
    """The issue's row: the board's own broker user (which the ACL lets publish on its own
    topic) says "tag" there; the controller takes no card read from it."""
    with deployment(tmp_path) as table:
        process = ServiceProcess(table.config, tmp_path / "run.log")
        process.start()
        try:
            console = (table.port, f"{TABLE}-console", table.secret(f"{TABLE}-console"))
            board = (table.port, f"{TABLE}-dev-sensors", table.secret(f"{TABLE}-dev-sensors"))
            base = f"holdem/{TABLE}"
            async with listening(*console, f"{base}/alerts", f"{base}/controller/status") as (_, seen):
                await until(
                    lambda: b'"online"' in b"".join(seen.on(f"{base}/controller/status")),
                    what="the controller online",
                    within=20,
                )
                tag = TagEvent(
                    seq=1,
                    ts=datetime.now(UTC),
                    antenna=2,
                    zone="seat:2",
                    uid="E0040150A1B2C3D4",
                    present=True,
                    face="down",
                    session=1,
                )
                async with client(*board) as sensors:
                    await sensors.publish(f"{base}/dev/sensors/event", tag.to_json(), qos=1)

                def refused() -> list[Alert]:
                    alerts = [parse_alert(f"{base}/alerts", p) for p in seen.on(f"{base}/alerts")]
                    return [a for a in alerts if a.code == "bad_payload" and a.device == "sensors"]

                await until(lambda: bool(refused()), what="bad_payload naming the sensor board")
                assert "tag" in refused()[0].message
        finally:
            process.signal(signal.SIGTERM)
            assert process.wait(15) == 0
