"""The demo table's configuration: one table, three simulated devices, a journal in a temp dir."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Final

import config as config_package
from config.models import RfidReaderDevice, TableConfig
from contract.models import Profile

#: The deck registry shipped with the example configuration (decks A and B, 104 tags).
EXAMPLE_REGISTRY: Final = Path(config_package.__file__).resolve().parent / "decks.example.csv"
SHUFFLER_ID: Final = "shuffler"
READER_ID: Final = "rfid-1"
BOARD_ID: Final = "sensors"


def antenna_map(seats: int) -> dict[int, str]:
    """Antennas 1..seats under the seats, then flop, turn/river, burn, muck and aside."""
    antennas = {seat: f"seat:{seat}" for seat in range(1, seats + 1)}
    zones = ("board", "board", "burn", "muck", "aside")
    for offset, zone in enumerate(zones, start=seats + 1):
        antennas[offset] = zone
    return antennas


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
            {"id": SHUFFLER_ID, "driver": "shuffler", "port": str(workdir / "shuffler.pty")},
            {
                "id": READER_ID,
                "driver": "rfid",
                "port": str(workdir / "rfid.pty"),
                "antennas": antenna_map(seats),
                "hold_ms": 50 if fast else 1000,
                "dwell_ms": 1 if fast else 20,
            },
            {"id": BOARD_ID, "driver": "sensors", "vendor_id": 0x1209, "product_id": 0x7AB1,
             "poll_ms": 2 if fast else 10},
        ],
    }
    return TableConfig.model_validate(data)


def reader_device(config: TableConfig) -> RfidReaderDevice:
    device = config.device(READER_ID)
    assert isinstance(device, RfidReaderDevice)
    return device
