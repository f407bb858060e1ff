"""A hand through ``tablectl run`` and mosquitto, devices under ids of the test's own choosing."""

from __future__ import annotations

import re
from pathlib import Path

from contract.models import parse_state
from testing.mosquitto import Mosquitto
from tests.engine.scenario import registry
from tests.service.conftest import StartService
from tests.service.support import new_table, probe, script, write_config

#: The script's devices, renamed: the service accepts events from any device id of its table.
DEVICES = {"rfid-1": "reader-under-felt-7", "shuffler": "shoe.B", "sensors": "panel_3"}
HAND = (
    "sit 1 2 3 4",
    "shuffle A",
    "shuffle B",
    "button 1",
    "blinds",
    "new_hand",
    "deal 2 3:up 4 1 2 3 4 1",  # seat 3's first card is dealt face up
    "ack",
    "deal 3",  # the remedy: seat 3 gets the top card ...
    "move seat:3#0 burn",  # ... and the exposed card becomes the burn
    "fault shuffler jam card jam",
    "round",
    "flop",
    "round",
    "burn",
    "turn",
)


async def test_hand_round_trip_with_arbitrary_device_ids(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url, table="rt-1")
    table = new_table()
    async with probe(mosquitto.port, "rt-1") as p:
        service = start_service(config)
        await p.status("online")
        await p.play(script(table, *HAND), rename=DEVICES)
        fault = await p.alert("device_fault")
        await p.alert("exposed_card", status="resolved")
        final = await p.wait_for(
            lambda m: m.topic == p.topics.state and parse_state(m.topic, m.payload).phase == "turn"
        )

    judged = [(a.code, a.seat, a.severity, a.status) for a in p.alerts()]
    assert judged == [
        ("exposed_card", 3, "warning", "raised"),
        ("exposed_card", 3, "warning", "acknowledged"),
        ("exposed_card", 3, "warning", "resolved"),
        ("device_fault", None, "warning", "raised"),
    ]
    assert fault.device == "shoe.B"
    assert len({a.id for a in p.alerts()}) == 2
    state = parse_state(final.topic, final.payload)
    assert (state.hand, state.button, len(state.board), state.burns) == (1, 1, 4, 2)
    assert [s.cards for s in state.seats[:4]] == [2, 2, 2, 2]

    # Card secrecy: the hole cards still face down never appear in an alert or the state; no
    # tag UID appears in them or in the INFO log.
    hole_cards = {registry().by_uid[uid].card for uids in table.seats.values() for uid in uids}
    assert len(hole_cards) == 8
    outputs = [m for m in p.messages if m.topic in (p.topics.alerts, p.topics.state)]
    for message in outputs:
        text = message.payload.decode()
        for card in hole_cards:
            assert not re.search(rf"\b{card}\b", text), f"{card} named in {message.topic}: {text}"
    all_uids = set(registry().by_uid)
    for text in [m.payload.decode() for m in outputs] + [service.log]:
        assert not all_uids.intersection(re.findall(r"\b[0-9A-F]{16}\b", text))

    # A late subscriber gets the retained state.
    async with probe(mosquitto.port, "rt-1") as late:
        retained = await late.wait_for(lambda m: m.topic == late.topics.state)
        assert retained.retain
        assert parse_state(retained.topic, retained.payload) == state
