"""Who may say what, and lost events told, through the real ``tablectl run`` and a private
mosquitto (issue 20, points 2 and 7): each test is a row of the issue's table that failed.

- a sensor board's ``tag`` on its own topic was taken as a card read (seat 2 went from 2 cards
  to 3, a misdeal was raised): now ``bad_payload`` naming the board, no card moved;
- with ``declared_devices_only`` a device the configuration does not declare is refused;
- a stream whose last events are lost (its status names a seq beyond them, nothing fills it;
  also as it happened: a stock broker dropping the end of the controller's queue, 500 of
  1,500) went by with no alert: now one alert names the device and the seqs after
  ``gap_wait_s``, and the hand's result says it was followed with evidence missing;
- a dealer input lost on the way was never seen: with ``seq`` it is told, and the result marked.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from contract.models import (
    HandResult,
    KeyInput,
    PublicState,
    SeatEvent,
    Status,
    TagEvent,
    parse_hand,
    parse_state,
)
from testing.mosquitto import Mosquitto
from testing.script import START, Table
from tests.service.conftest import StartService
from tests.service.support import Probe, new_table, now, probe, script, write_config

SETUP = ("sit 1 2 3 4", "shuffle A", "shuffle B", "button 1", "blinds")
DECLARED = (
    '\n[[devices]]\nid = "rfid-1"\ndriver = "rfid"\nenabled = false\n'
    '\n[[devices]]\nid = "sensors"\ndriver = "sensors"\nenabled = false\n'
    '\n[[devices]]\nid = "shuffler"\ndriver = "shuffler"\nenabled = false\n'
)


def configure(tmp_path: Path, mosquitto: Mosquitto, table_keys: str = "", devices: str = "") -> Path:
    config = write_config(tmp_path, mosquitto.url)
    text = config.read_text(encoding="utf-8").replace(
        "action_feed = false\n", f"action_feed = false\n{table_keys}"
    )
    config.write_text(text + devices, encoding="utf-8")
    return config


def script_now(table: Table) -> datetime:
    """The time of the table script's latest message (its clock, not this machine's)."""
    return START + timedelta(milliseconds=50 * table.clock)


async def state_where(p: Probe, test: object, *, after: int = 0) -> PublicState:
    topic = p.topics.state
    message = await p.wait_for(
        lambda m: m.topic == topic and test(parse_state(topic, m.payload)),  # type: ignore[operator]
        after=after,
    )
    return parse_state(topic, message.payload)


async def hand_result(p: Probe, *, after: int = 0) -> HandResult:
    topic = p.topics.hands
    message = await p.wait_for(lambda m: m.topic == topic, after=after)
    return parse_hand(topic, message.payload)


def cards(state: PublicState) -> list[int]:
    return [seat.cards for seat in state.seats[:4]]


async def test_a_sensor_boards_tag_is_a_bad_payload_and_moves_no_card(
    tmp_path: Path, mosquitto: Mosquitto, start_service: StartService
) -> None:
    start_service(configure(tmp_path, mosquitto))  # engine only: no [[devices]]
    table = new_table()
    async with probe(mosquitto.port, "t1") as p:
        await p.status("online")
        await p.play(script(table, *SETUP, "new_hand", "deal all"))
        await state_where(p, lambda s: cards(s) == [2, 2, 2, 2])
        # The sensor board (a board by its first events: seats, button, blinds) says "tag".
        uid = table.registry.uid_of(table.deck, "9c")
        seq = table.seq["sensors"] = table.seq["sensors"] + 1
        ts = script_now(table) + timedelta(milliseconds=10)
        forged = TagEvent(seq=seq, ts=ts, antenna=2, zone="seat:2", uid=uid, present=True, face="down")
        mark = len(p.messages)
        await p.send(p.topics.device_event("sensors"), forged)
        alert = await p.alert("bad_payload", after=mark)
        assert alert.device == "sensors"
        assert "a sensor board does not send (tag)" in alert.message
        # What comes next from the reader is followed on the cards as they were: seat 2 has 2.
        await p.play(script(table, "round", "burn"))
        state = await state_where(p, lambda s: s.burns == 1, after=mark)
        assert cards(state) == [2, 2, 2, 2]
        assert not [a for a in p.alerts() if a.code.startswith("misdeal")]


async def test_with_declared_devices_only_an_undeclared_device_is_refused(
    tmp_path: Path, mosquitto: Mosquitto, start_service: StartService
) -> None:
    config = configure(tmp_path, mosquitto, "declared_devices_only = true\n", DECLARED)
    start_service(config)
    table = new_table()
    async with probe(mosquitto.port, "t1") as p:
        await p.status("online")
        await p.play(script(table, *SETUP, "new_hand", "deal all"))  # the declared devices
        await state_where(p, lambda s: cards(s) == [2, 2, 2, 2])
        mark = len(p.messages)
        # Another reader id, unknown to the configuration, reads a card onto seat 3.
        reader_seq = table.seq["rfid-1"]
        await p.play(script(table, "deal 3"), rename={"rfid-1": "rfid-9"})
        alert = await p.alert("bad_payload", after=mark)
        assert alert.device == "rfid-9"
        assert "not declared in the configuration" in alert.message
        # The declared reader's next event is taken (no gap: rfid-9's was never one of its).
        table.seq["rfid-1"] = reader_seq  # (the script numbered rfid-9's event as the reader's)
        await p.play(script(table, "burn"))
        state = await state_where(p, lambda s: s.burns == 1, after=mark)
        assert cards(state) == [2, 2, 2, 2]


def seat_events(table: Table, seconds: float, every: float = 0.5) -> list[SeatEvent]:
    """The sensor board's events while time passes (the engine measures on event time)."""
    events = []
    for n in range(1, int(seconds / every) + 1):
        table.seq["sensors"] += 1
        ts = script_now(table) + timedelta(seconds=n * every)
        events.append(SeatEvent(seq=table.seq["sensors"], ts=ts, seat=9, occupied=n % 2 == 0))
    table.clock += int(seconds * 20) + 1  # (the script goes on after them)
    return events


async def test_the_lost_end_of_a_stream_is_told_with_its_seqs_and_the_result_marked(
    tmp_path: Path, mosquitto: Mosquitto, start_service: StartService
) -> None:
    """A reader that keeps no events to send again, and names no session in its events: its
    last events are lost; its status says how far they went."""
    start_service(configure(tmp_path, mosquitto, "gap_wait_s = 2.0\n"))
    table = new_table()
    async with probe(mosquitto.port, "t1") as p:
        await p.status("online")
        online = Status(state="online", ts=START, session=1)
        await p.publish(p.topics.device_status("rfid-1"), online.to_json(), retain=True)
        await p.play(script(table, *SETUP, "new_hand", "deal all"))
        await state_where(p, lambda s: cards(s) == [2, 2, 2, 2])
        high = table.seq["rfid-1"]
        told = Status(
            state="online", ts=script_now(table) + timedelta(milliseconds=10), session=1, seq=high + 3
        )
        mark = len(p.messages)
        await p.publish(p.topics.device_status("rfid-1"), told.to_json(), retain=True)
        for event in seat_events(table, 4):
            await p.send(p.topics.device_event("sensors"), event)
        alert = await p.alert("device_fault", after=mark)
        assert alert.device == "rfid-1"
        assert f"events {high + 1} to {high + 3}" in alert.message
        assert timedelta(seconds=2) <= alert.ts - told.ts < timedelta(seconds=3)
        assert [a.code for a in p.alerts() if a.status == "raised"].count("device_fault") == 1
        state = await state_where(p, lambda s: not s.tracking, after=mark)
        assert state.hand == 1
        await p.play(script(table, "clear", "new_hand"))
        result = await hand_result(p, after=mark)
        assert result.hand == 1
        assert result.evidence_missing


async def test_a_lost_dealer_input_is_told_and_the_result_marked(
    tmp_path: Path, mosquitto: Mosquitto, start_service: StartService
) -> None:
    start_service(configure(tmp_path, mosquitto))
    table = new_table()
    async with probe(mosquitto.port, "t1") as p:
        await p.status("online")
        await p.play(script(table, *SETUP, "new_hand", "deal all"))
        await state_where(p, lambda s: cards(s) == [2, 2, 2, 2])
        mark = len(p.messages)
        for seq in (1, 2, 5):  # the console's inputs 3 and 4 never reached the broker
            item = KeyInput(ts=script_now(table), key="declare_board", seat=1, seq=seq, source="console")
            await p.send(p.topics.input, item)
        alert = await p.alert("device_fault", after=mark)
        assert alert.message.startswith("Dealer inputs 3 to 4 from console were lost on the way")
        await p.play(script(table, "fold 2", "fold 3", "fold 4", "clear"))
        result = await hand_result(p, after=mark)
        assert result.hand == 1
        assert result.evidence_missing


async def test_a_stock_broker_dropping_the_end_of_a_queue_is_told_when_the_status_says_how_far(
    tmp_path: Path, mosquitto: Mosquitto, start_service: StartService
) -> None:
    """The issue's row as it happened: the controller away, a stock broker keeps 1,000 events
    for it and drops the rest; the publisher (no ring buffer, events without a session) then
    says in its status how far its events went. Its last events never come: told, with seqs."""
    broker = mosquitto
    broker.extra_conf = "max_queued_messages 1000\n"  # mosquitto's stock limit (the last wins)
    broker.restart(down_s=0.1)
    config = configure(tmp_path, broker, "gap_wait_s = 2.0\n")
    service = start_service(config)
    async with probe(broker.port, "t1") as p:
        await p.status("online")
        t0 = now()
        await p.send(p.topics.device_status("sensors"), Status(state="online", ts=t0, session=1))
        for seq in (1, 2, 3):
            event = SeatEvent(seq=seq, ts=t0, seat=9, occupied=seq % 2 == 0)
            await p.send(p.topics.device_event("sensors"), event)
        await state_where(p, lambda s: s.seats[8].occupied is False)
        service.stop()  # a restart, an upgrade: the broker queues for the controller
        for seq in range(4, 1501):
            event = SeatEvent(seq=seq, ts=now(), seat=9, occupied=seq % 2 == 0)
            await p.send(p.topics.device_event("sensors"), event)
        told = Status(state="online", ts=now(), session=1, seq=1500)
        await p.publish(p.topics.device_status("sensors"), told.to_json(), retain=True)
        mark = len(p.messages)
        start_service(config)
        await p.status("online", after=mark)
        for n in range(1, 9):  # the table goes on: another device's events bring the time
            event = SeatEvent(seq=n, ts=told.ts + timedelta(seconds=n / 2), seat=8, occupied=n % 2 == 0)
            await p.send(p.topics.device_event("spare"), event)
        alert = await p.alert("device_fault", after=mark, within=20)
        assert alert.device == "sensors"
        # The broker kept the first 1,000 or so (its count includes messages in flight).
        lost = re.search(r"did not send events (\d+) to 1500 again", alert.message)
        assert lost is not None, alert.message
        assert 995 <= int(lost.group(1)) <= 1010
        assert timedelta(seconds=2) <= alert.ts - told.ts < timedelta(seconds=3)
