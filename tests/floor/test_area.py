"""A table's ``[table] area`` reaches the floor in its controller's retained status, from the
real ``tablectl run`` through mosquitto (and stays off the wire when not configured)."""

from __future__ import annotations

import json
from pathlib import Path

from testing.mosquitto import Mosquitto
from tests.service.support import probe, running_service, write_config


async def test_the_controller_s_status_names_its_area_when_configured(
    tmp_path: Path, mosquitto_session: Mosquitto
) -> None:
    config = write_config(tmp_path, mosquitto_session.url, table="tarea")
    config.write_text(config.read_text().replace("[table]\n", '[table]\narea = "pit 4"\n', 1))
    async with probe(mosquitto_session.port, "tarea") as p, running_service(config):
        online = await p.status("online")
    assert online.area == "pit 4"
    (tmp_path / "plain").mkdir()
    plain = write_config(tmp_path / "plain", mosquitto_session.url, table="tnoarea")
    async with probe(mosquitto_session.port, "tnoarea") as p, running_service(plain):
        await p.status("online")
        raw = next(m.payload for m in p.messages if m.topic.endswith("/controller/status"))
    assert "area" not in json.loads(raw)
