"""Listeners of the service (the dealer's display) can never stop the table."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from contract.models import FaultEvent, Status
from controller.service.table import Outgoing
from testing.mosquitto import Mosquitto
from tests.service.support import probe, running_service, write_config


class Broken:
    def __init__(self) -> None:
        self.calls = 0

    def received(self, topic: str, payload: bytes) -> None:
        self.calls += 1
        raise RuntimeError("received")

    def produced(self, items: Sequence[Outgoing]) -> None:
        self.calls += 1
        raise RuntimeError("produced")

    def controller(self, status: Status) -> None:
        self.calls += 1
        raise RuntimeError("controller")


async def test_a_failing_listener_is_logged_and_the_table_goes_on(
    mosquitto_session: Mosquitto, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = write_config(tmp_path, mosquitto_session.url, table="listener")
    broken = Broken()
    async with running_service(config) as service, probe(mosquitto_session.port, "listener") as p:
        service.listeners.append(broken)
        await p.status("online")
        await p.event("shoe", FaultEvent, code="jam", text="jam")
        await p.alert("device_fault")
    assert broken.calls >= 2
    assert "Broken failed; the table goes on" in caplog.text
