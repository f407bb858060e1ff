"""The controller asks a device to send again the events it is missing (the engine's gap fill):
the command goes out on the device's ``cmd`` topic, and what showed the gap waits for them."""

from __future__ import annotations

from pathlib import Path

from contract.models import FaultEvent, KeyEvent, ResendCommand, parse_alert, parse_command
from testing.mosquitto import Mosquitto
from tests.service.support import now, probe, running_service, write_config


async def test_a_gap_is_asked_for_on_the_device_cmd_topic_and_filled(
    tmp_path: Path, mosquitto_session: Mosquitto
) -> None:
    config = write_config(tmp_path, mosquitto_session.url, table="rs1", fsync=False)
    async with probe(mosquitto_session.port, "rs1") as p, running_service(config):
        await p.status("online")
        topic = p.topics.device_event("sensors")
        events = [
            KeyEvent(seq=1, ts=now(), key="ack", session=4),
            KeyEvent(seq=2, ts=now(), key="ack", session=4),
            KeyEvent(seq=3, ts=now(), key="ack", session=4),
            KeyEvent(seq=4, ts=now(), key="ack", session=4),
        ]
        fault = FaultEvent(seq=5, ts=now(), code="jam", text="x", session=4)
        for event in (events[0], events[1], fault):  # 3 and 4 lost on the way
            await p.send(topic, event)
        cmd = p.topics.device_cmd("sensors")
        asked = await p.wait_for(lambda m: m.topic == cmd)
        command = parse_command(cmd, asked.payload)
        assert isinstance(command, ResendCommand)
        assert (command.session, command.from_seq, command.to_seq) == (4, 3, 4)
        # The fault waits for them: the engine produced no alert for it with the command.
        assert p.alerts() == []
        for event in (events[3], events[2]):  # sent again, in any order
            await p.send(topic, event)
        alert = await p.alert("device_fault")
        assert alert.ts == fault.ts
        assert "jam" in alert.message
        lost = [
            m
            for m in p.messages
            if m.topic == p.topics.alerts and "were lost" in parse_alert(m.topic, m.payload).message
        ]
        assert lost == []
