"""The demo table's configuration: one table, three simulated devices, a journal in a temp dir."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Final

import config as config_package
from config.layout import standard_antennas
from config.models import TableConfig
from contract.models import Profile
from simulators.dealer import DeviceIds

#: The deck registry shipped with the example configuration (decks A and B, 104 tags).
EXAMPLE_REGISTRY: Final = Path(config_package.__file__).resolve().parent / "decks.example.csv"
#: The demo table's device ids (the dealer's default ones).
DEVICE_IDS: Final = DeviceIds()


def demo_config(
    *,
    seats: int,
    profile: Profile,
    broker_url: str,
    workdir: Path,
    table_id: str = "demo",
    fast: bool = True,
    display_listen: str | None = None,
) -> TableConfig:
    """The configuration of the demo table.

    ``fast`` (``--speed 0``) shortens the reader's sweep and hold time so that the system keeps up
    with a dealer who never pauses; at a real pace the example table's timings are used.
    ``display_listen`` (``host:port``) serves the dealer's display.
    """
    data = {
        "table": {"id": table_id, "seats": seats, "profile": profile, "name": "tablectl demo"},
        "mqtt": {
            "url": broker_url,
            # A fresh client id per run: no persistent session of an earlier demo is resumed.
            "client_id": f"tablectl-demo-{secrets.token_hex(4)}",
            "keepalive": 30,
        },
        "decks": {"registry": str(EXAMPLE_REGISTRY)},
        "journal": {"path": str(workdir / "journal.jsonl"), "fsync": False},
        "display": {"alert_history": 12, "lamp": True, "buzzer_ms": 300, "listen": display_listen},
        "logging": {"level": "WARNING"},
        "devices": [
            {"id": DEVICE_IDS.shuffler, "driver": "shuffler", "port": str(workdir / "shuffler.pty")},
            {
                "id": DEVICE_IDS.reader,
                "driver": "rfid",
                "port": str(workdir / "rfid.pty"),
                "antennas": standard_antennas(seats),
                "hold_ms": 50 if fast else 1000,
                "dwell_ms": 1 if fast else 20,
            },
            {"id": DEVICE_IDS.sensors, "driver": "sensors", "vendor_id": 0x1209, "product_id": 0x7AB1,
             "poll_ms": 2 if fast else 10},
        ],
    }
    return TableConfig.model_validate(data)

