"""Every MQTT client of the shipped code is built by ``link.client.make_client`` (credentials,
TLS, TCP_NODELAY, timeouts): no other module constructs one."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHIPPED = ("contract", "config", "link", "engine", "controller", "drivers", "simulators", "testing")
CONSTRUCTS = re.compile(r"\b(aiomqtt\.Client|paho\.mqtt\.client\.Client|mqtt\.Client)\s*\(")


def test_only_the_factory_constructs_mqtt_clients() -> None:
    found = []
    for package in SHIPPED:
        for path in sorted((REPO / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if CONSTRUCTS.search(line):
                    found.append(f"{path.relative_to(REPO)}:{number}")
    assert [place.split(":")[0] for place in found] == ["link/client.py"], found
    assert "socket_options=NO_DELAY" in (REPO / "link" / "client.py").read_text(encoding="utf-8")
