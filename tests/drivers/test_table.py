"""SimulatedTable and `tablectl simulate`: the production drivers find every simulated device."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from config.loader import load_config, load_table
from config.models import MqttSection, ShufflerDevice, TableConfig
from contract.cards import ALL_CARDS
from contract.models import KeyEvent, ShuffleCommand, ShuffleCompleteEvent, TagEvent
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import stop_task
from drivers.registry import open_driver, open_drivers
from simulators.table import SimulatedTable
from testing.mosquitto import Mosquitto
from tests.conftest import EXAMPLE_CONFIG, REPO
from tests.drivers.mqtt_helpers import Received, publish, subscribed


def on_broker(config: TableConfig, broker: Mosquitto) -> TableConfig:
    return config.model_copy(update={"mqtt": MqttSection(url=broker.url)})


def all_online(got: Received, topics: Topics, ids: list[str]) -> bool:
    return all(any(s.state == "online" for s in got.statuses(topics.device_status(i))) for i in ids)


async def test_table_drives_every_device_from_the_example_config(mosquitto: Mosquitto) -> None:
    config, registry = load_table(EXAMPLE_CONFIG)
    topics = Topics(config.mqtt.root, config.table.id)
    ids = [d.id for d in config.devices]
    async with (
        SimulatedTable(on_broker(config, mosquitto), shuffle_s=0.2) as table,
        subscribed(mosquitto.port, f"{topics.base}/dev/#") as got,
    ):
        shuffler_config = table.config.device("shuffler")
        assert isinstance(shuffler_config, ShufflerDevice)
        assert shuffler_config.port == table.shuffler.port
        drivers = open_drivers(table.config)
        tasks = [asyncio.create_task(d.run()) for d in drivers]
        try:
            await got.wait_for(lambda: all_online(got, topics, ids), within=10)
            # Cards by zone: a hole card, then the flop and the turn on the board's two antennas.
            table.place(registry.uid_of("A", "As"), "seat:3", face="down")
            for card in ("Kh", "Qd", "Jc", "Ts"):
                table.place(registry.uid_of("A", card), "board", face="up")
            rfid_events = topics.device_event("rfid-1")

            def tags() -> list[TagEvent]:
                return [e for e in got.events(rfid_events) if isinstance(e, TagEvent)]

            await got.wait_for(lambda: len(tags()) == 5, within=5)
            where = {registry.by_uid[e.uid].card: (e.antenna, e.zone) for e in tags()}
            assert where == {
                "As": (3, "seat:3"),
                "Kh": (10, "board"),
                "Qd": (10, "board"),
                "Jc": (10, "board"),
                "Ts": (11, "board"),
            }
            # The shuffler, through a command.
            table.shuffler.load_deck("B", ALL_CARDS)
            await publish(
                mosquitto.port,
                topics.device_cmd("shuffler"),
                ShuffleCommand(ts=utc_now(), deck="B").to_json(),
            )
            shuffler_events = topics.device_event("shuffler")
            await got.wait_for(
                lambda: any(isinstance(e, ShuffleCompleteEvent) for e in got.events(shuffler_events))
            )
            # The sensor board, through its simulated USB backend.
            table.sensors.press("new_hand")
            sensor_events = topics.device_event("sensors")
            await got.wait_for(lambda: any(isinstance(e, KeyEvent) for e in got.events(sensor_events)))
        finally:
            for task in tasks:
                await stop_task(task)


def test_unknown_zone_is_a_clear_error() -> None:
    config = load_config(EXAMPLE_CONFIG)
    table = SimulatedTable(config)
    with pytest.raises(LookupError, match="no antenna covers zone 'seat:9'"):
        table.antenna_for("seat:9")  # not started: no reader yet


async def test_simulate_command_serves_another_process(tmp_path: Path, mosquitto: Mosquitto) -> None:
    written = tmp_path / "simulated.toml"
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
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert process.stdout is not None
    lines: list[str] = []
    try:
        while not lines or not lines[-1].startswith("running"):
            line = await asyncio.wait_for(process.stdout.readline(), 10)
            assert line, f"simulate ended early: {lines}"
            lines.append(line.decode().strip())
        text = "\n".join(lines)
        assert "shuffler (shuffler): port = " in text
        assert "rfid-1 (rfid): port = " in text
        assert "sensors (sensors): backend = sim:" in text
        config = on_broker(load_config(written), mosquitto)
        topics = Topics(config.mqtt.root, config.table.id)
        ids = [d.id for d in config.devices]
        async with subscribed(mosquitto.port, f"{topics.base}/dev/+/status") as got:
            drivers = [open_driver(d, config.mqtt, topics) for d in config.drivers()]
            tasks = [asyncio.create_task(d.run()) for d in drivers]
            try:
                await got.wait_for(lambda: all_online(got, topics, ids), within=10)
            finally:
                for task in tasks:
                    await stop_task(task)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.wait_for(process.communicate(), 10)
    assert process.returncode == 0
    assert rest.decode().strip().endswith("stopped")
