"""A configuration written back as TOML runs the same table: ``tablectl simulate --write-config``."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from config.loader import load_config
from config.models import TableConfig
from config.writer import render_toml
from tests.conftest import EXAMPLE_CONFIG, REPO


def _resolved(config: TableConfig) -> dict[str, Any]:
    """The configuration as data, its files' paths resolved (``config/../var`` is ``var``)."""
    data = config.model_dump(mode="json")
    for section in ("decks", "chips"):
        data[section]["registry"] = str(Path(data[section]["registry"]).resolve())
    data["journal"]["path"] = str(Path(data["journal"]["path"]).resolve())
    return data


def _without_ports(config: TableConfig) -> dict[str, Any]:
    """The configuration with where each device is left out (the simulators' ports)."""
    data = _resolved(config)
    for device in data["devices"]:
        for key in ("port", "backend"):
            device.pop(key, None)
    return data


def test_the_example_written_back_reads_as_the_same_configuration(tmp_path: Path) -> None:
    config = load_config(EXAMPLE_CONFIG)
    assert config.chips is not None
    assert config.stakes is not None
    written = tmp_path / "elsewhere" / "table.toml"
    written.parent.mkdir()
    written.write_text(render_toml(config, "a test"), encoding="utf-8")
    again = load_config(written)
    assert _resolved(again) == _resolved(config)
    assert written.read_text().startswith("# a test\n")


def test_a_tournament_and_its_session_rules_are_written_back(tmp_path: Path) -> None:
    """[[stakes.levels]] is an array of tables (the demo's --tournament keeps its table.toml)."""
    config = load_config(EXAMPLE_CONFIG)
    assert config.stakes is not None
    levels = [
        {"small_blind": 1, "big_blind": 2, "ante": 0, "minutes": 0.5},
        {"small_blind": 2, "big_blind": 4, "ante": 1, "minutes": 20},
    ]
    stakes = config.stakes.model_validate({**config.stakes.model_dump(), "levels": levels, "max_rebuy": 100})
    table = config.table.model_copy(update={"max_absence_s": 1.0})
    tournament = config.model_copy(update={"stakes": stakes, "table": table})
    written = tmp_path / "table.toml"
    written.write_text(render_toml(tournament, "a test"), encoding="utf-8")
    assert "[[stakes.levels]]" in written.read_text()
    again = load_config(written)
    assert _resolved(again) == _resolved(tournament)
    assert again.stakes is not None
    assert [lv.big_blind for lv in again.stakes.levels] == [2, 4]


def test_a_written_configuration_holds_no_password(tmp_path: Path) -> None:
    config = load_config(EXAMPLE_CONFIG)
    secret = config.mqtt.model_copy(update={"username": "t1", "password": SecretStr("s3cret-value")})
    text = render_toml(config.model_copy(update={"mqtt": secret}), "a test")
    assert "s3cret-value" not in text
    assert 'username = "t1"' in text


async def test_simulate_write_config_keeps_the_chips_and_the_stakes(tmp_path: Path) -> None:
    written = tmp_path / "sim.toml"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "controller.cli",
        "simulate",
        "--config",
        str(EXAMPLE_CONFIG),
        "--write-config",
        str(written),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    try:
        while True:
            line = (await asyncio.wait_for(process.stdout.readline(), 15)).decode()
            assert line, "tablectl simulate ended before writing the configuration"
            if line.startswith("running"):
                break
        original = load_config(EXAMPLE_CONFIG)
        simulated = load_config(written)
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.communicate(), 15)
    assert simulated.chips == original.chips
    assert simulated.stakes == original.stakes
    assert _without_ports(simulated) == _without_ports(original)
    ports = [d.model_dump().get("port") or d.model_dump().get("backend") for d in simulated.devices]
    assert all(ports)
    assert ports != [d.model_dump().get("port") for d in original.devices]
