"""The web stack is loaded only where a page is configured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.mosquitto import Mosquitto
from tests.conftest import REPO
from tests.service.support import write_config

PROBE = """
import asyncio, sys
from config.loader import load_table
from controller.cli import build_parser
from controller.service.network import Service

build_parser()  # every subcommand's module, as `tablectl run` imports them
config, registry = load_table(sys.argv[1])

async def main() -> None:
    service = Service(config, registry)
    task = asyncio.create_task(service.run())
    await asyncio.wait_for(service.ready.wait(), 10)
    service.stop.set()
    assert await task == 0

asyncio.run(main())
web = ("starlette", "uvicorn", "controller.web", "controller.display")
print(sorted(name for name in sys.modules if name.startswith(web)))
"""


def test_an_engine_only_service_does_not_import_the_web_stack(
    mosquitto_session: Mosquitto, tmp_path: Path
) -> None:
    config = write_config(tmp_path, mosquitto_session.url, table="imports")
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
