"""``tablectl run`` at an engine-only table loads what it needs and nothing of the demo or devices.

The real command runs as a process against a real mosquitto, under ``python -X importtime``,
which lists every module the process imported; the test reads that list once the service is
online (so the modules of serving a connection are in it too) and it stopped.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from testing.mosquitto import Mosquitto
from tests.service.support import TABLECTL, until, write_config

#: Top-level packages an engine-only controller must not load.
NOT_AT_AN_ENGINE_ONLY_TABLE = ("simulators", "testing", "usb", "amqtt", "rich", "serial_asyncio_fast")


def imported(stderr: str) -> set[str]:
    """Module names from ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


async def test_run_with_an_engine_only_config_imports_no_demo_simulator_or_device_code(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = write_config(tmp_path, mosquitto.url)
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-X",
            "importtime",
            str(TABLECTL),
            "run",
            "--config",
            str(config),
            stdout=out,
            stderr=out,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            await until(lambda: "online: subscribed" in log.read_text(), what="the service online")
        finally:
            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), 10) == 0
    modules = imported(log.read_text())
    # (importtime lists what import statements load; the CLI loads controller.service.cli by importlib)
    assert {"controller.service.network", "engine.step", "aiomqtt"} <= modules
    loaded = sorted(m for m in modules if m.split(".")[0] in NOT_AT_AN_ENGINE_ONLY_TABLE)
    assert loaded == []


def test_the_help_of_one_subcommand_imports_only_that_one() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", str(TABLECTL), "run", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    modules = imported(result.stderr)
    assert "controller.service.network" in modules  # what controller.service.cli imports
    assert not {"controller.demo.runner", "simulators.table", "rich", "amqtt"} & modules
