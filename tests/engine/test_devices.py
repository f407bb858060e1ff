"""Who may say what, and lost events told (issue 20, points 2 and 7).

A device sends only the events of its kind (declared, or shown by its first event accepted in
its session; ``fault`` from any): anything else is ``bad_payload`` naming the device, never
evidence. With ``declared_only`` an undeclared device is not listened to. Events a status shows
missing at the end of a stream, and dealer inputs missing from their ``seq``, are told as one
alert naming who and which seqs, and the hand's result says it was followed with evidence
missing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta

from contract.models import (
    Alert,
    HandResult,
    KeyEvent,
    KeyInput,
    KeyName,
    ResendCommand,
    SeatEvent,
    Status,
    TagEvent,
)
from engine.api import DeviceEventReceived, DeviceStatusReceived, EngineSettings, InputReceived, Outputs
from engine.state_data import state_from_data, state_to_data
from engine.step import Engine
from testing.script import START, Table, setup_lines
from tests.engine.runner import RECEIVED_AT, settings, to_received
from tests.engine.scenario import registry

SETUP = setup_lines([1, 2, 3, 4], 1, ["A", "B"])
KINDS = {"rfid-1": "rfid", "sensors": "sensors", "shuffler": "shuffler"}


def start(
    lines: list[str], engine_settings: EngineSettings | None = None
) -> tuple[Engine, Table, list[Outputs]]:
    table = Table(registry())
    engine = Engine(engine_settings or settings())
    outputs = [engine.handle(to_received(m)) for m in table.run_all([*SETUP, *lines])]
    return engine, table, outputs


def play(engine: Engine, table: Table, lines: list[str]) -> list[Outputs]:
    return [engine.handle(to_received(m)) for m in table.run_all(lines)]


def alerts(outputs: list[Outputs]) -> list[Alert]:
    return [alert for out in outputs for alert in out.alerts]


def hands(outputs: list[Outputs]) -> list[HandResult]:
    return [hand for out in outputs for hand in out.hands]


def now(table: Table) -> datetime:
    """The time of the table script's latest message."""
    return START + timedelta(milliseconds=50 * table.clock)


def forged_tag(table: Table, device: str, seq: int, zone: str = "seat:2") -> DeviceEventReceived:
    uid = table.registry.uid_of(table.deck, "9c")
    ts = now(table) + timedelta(milliseconds=50)
    tag = TagEvent(seq=seq, ts=ts, antenna=2, zone=zone, uid=uid, present=True, face="down")
    return DeviceEventReceived(device, tag, RECEIVED_AT)


def cards(engine: Engine) -> list[int]:
    return [seat.cards for seat in engine.public_state().seats[:4]]


# ------------------------------------------------------------------ who may say what


def test_a_sensor_boards_tag_is_a_bad_payload_naming_it_and_moves_no_card() -> None:
    engine, table, _ = start(["new_hand", "deal all"])
    assert cards(engine) == [2, 2, 2, 2]
    # The sensor board (its kind shown by its seat, button and blind events) says "tag".
    out = engine.handle(forged_tag(table, "sensors", table.seq["sensors"] + 1))
    assert [(a.code, a.status, a.device) for a in out.alerts] == [("bad_payload", "raised", "sensors")]
    assert "a sensor board does not send (tag)" in out.alerts[0].message
    assert cards(engine) == [2, 2, 2, 2]
    assert engine.public_state().phase == "preflop"
    # It was no event of the board's: its next real one (the same seq) follows without a gap.
    outputs = play(engine, table, ["round", "burn", "flop"])
    assert [a.code for a in alerts(outputs) if a.status == "raised"] == []
    assert all(out.commands == () for out in outputs)
    assert engine.public_state().phase == "flop"


def test_a_reader_says_no_key_and_a_fault_comes_from_any_kind() -> None:
    engine, table, _ = start(["new_hand", "deal 2 3"])
    key = KeyEvent(seq=table.seq["rfid-1"] + 1, ts=now(table), key="misdeal")
    out = engine.handle(DeviceEventReceived("rfid-1", key, RECEIVED_AT))
    assert [(a.code, a.device) for a in out.alerts] == [("bad_payload", "rfid-1")]
    assert engine.public_state().phase == "dealing"  # the forged misdeal key was not taken
    outputs = play(engine, table, ["fault sensors jam", "fault rfid-1 crc_errors"])
    assert [(a.code, a.device) for a in alerts(outputs)] == [
        ("device_fault", "sensors"),
        ("device_fault", "rfid-1"),
    ]


def test_a_declared_kind_holds_from_the_first_event() -> None:
    declared = replace(settings(), device_kinds=KINDS)
    engine, table, _ = start([], declared)
    # A shuffler that never sent anything yet cannot start as a reader.
    out = engine.handle(forged_tag(table, "shuffler", 1))
    assert [(a.code, a.device) for a in out.alerts] == [("bad_payload", "shuffler")]
    assert "a shuffler does not send (tag)" in out.alerts[0].message


def test_refused_events_are_counted_on_one_alert_updated_at_most_once_a_second() -> None:
    engine, table, _ = start(["new_hand"])
    outputs = [engine.handle(forged_tag(table, "sensors", 100 + n)) for n in range(5)]
    assert [(a.code, a.status) for a in alerts(outputs)] == [("bad_payload", "raised")]
    later = forged_tag(table, "sensors", 200)._replace(received=RECEIVED_AT + timedelta(seconds=2))
    out = engine.handle(later)
    assert [(a.code, a.status) for a in out.alerts] == [("bad_payload", "updated")]
    assert "6 were ignored" in out.alerts[0].message


def test_an_undeclared_device_learns_its_kind_again_in_a_new_session() -> None:
    engine, table, _ = start([])
    seat = SeatEvent(seq=1, ts=now(table), seat=9, occupied=False, session=1)
    assert engine.handle(DeviceEventReceived("spare", seat, RECEIVED_AT)).alerts == ()
    assert [a.code for a in engine.handle(forged_tag(table, "spare", 2)).alerts] == ["bad_payload"]
    # A new session (the device restarted, maybe as something else): its first event says.
    tag = forged_tag(table, "spare", 1, zone="muck")
    tag = tag._replace(event=tag.event.model_copy(update={"session": 2}))
    assert [a.code for a in engine.handle(tag).alerts] == []


def test_a_reader_that_shows_another_kind_in_a_new_session_has_its_tags_refused_again() -> None:
    """The dispatcher admits a reader's tag reads at a look once one was admitted in their
    session (engine.devices, ``tag_sessions``): a kind learnt again undoes that at once."""
    engine, table, _ = start([])

    def tag(seq: int, session: int | None) -> DeviceEventReceived:
        read = forged_tag(table, "spare", seq, zone="muck")
        return read._replace(event=read.event.model_copy(update={"session": session}))

    assert engine.handle(tag(1, None)).alerts == ()  # its first event: a reader
    assert engine.handle(tag(2, None)).alerts == ()  # (admitted at a look)
    seat = SeatEvent(seq=1, ts=now(table), seat=9, occupied=False, session=1)
    assert engine.handle(DeviceEventReceived("spare", seat, RECEIVED_AT)).alerts == ()  # a sensor board now
    out = engine.handle(tag(3, None))
    assert [(a.code, a.device) for a in out.alerts] == [("bad_payload", "spare")]
    assert "a sensor board does not send (tag)" in out.alerts[0].message
    assert engine.handle(tag(2, 1)).alerts == ()  # (the same alert, counting: updated once a second)
    assert engine.state.machine.device_state.refused == {"spare#kind": 2}


def test_with_declared_devices_only_an_undeclared_device_is_refused() -> None:
    closed = replace(settings(), device_kinds=KINDS, declared_only=True)
    engine, table, outputs = start(["new_hand", "deal all"], closed)
    assert alerts(outputs) == []  # the declared devices are followed as ever
    out = engine.handle(forged_tag(table, "rfid-9", 1))
    assert [(a.code, a.device) for a in out.alerts] == [("bad_payload", "rfid-9")]
    assert "not declared in the configuration" in out.alerts[0].message
    assert cards(engine) == [2, 2, 2, 2]
    status = Status(state="offline", ts=now(table), session=1)
    out = engine.handle(DeviceStatusReceived("rfid-9", status, RECEIVED_AT + timedelta(seconds=2)))
    assert [(a.code, a.status) for a in out.alerts] == [("bad_payload", "updated")]  # no device_offline
    assert engine.public_state().tracking
    # The same undeclared device without declared_only: taken (engine-only tables as before).
    engine, table, _ = start(["new_hand", "deal all"])
    assert engine.handle(forged_tag(table, "rfid-9", 1, zone="muck")).alerts == ()


# ------------------------------------------------------------------ lost events told


def seat_events(table: Table, device: str, seconds: int, every: float = 0.5) -> list[DeviceEventReceived]:
    """Events of another device, as time passes (event time is what the bound is measured on)."""
    out = []
    for n in range(1, int(seconds / every) + 1):
        ts = now(table) + timedelta(seconds=n * every)
        event = SeatEvent(seq=n, ts=ts, seat=9, occupied=n % 2 == 0, session=1)
        out.append(DeviceEventReceived(device, event, RECEIVED_AT))
    return out


def test_the_last_events_of_a_stream_without_sessions_are_asked_for_then_told() -> None:
    """A publisher whose events name no session (no ring buffer either): its status says how
    far its events went; what never comes is told after the bound, naming device and seqs."""
    bound = replace(settings(), gap_wait_s=3.0)
    table = Table(registry())
    engine = Engine(bound)
    lines = [*SETUP, "new_hand", "deal all"]
    messages = table.run_all(lines)
    status = Status(state="online", ts=now(table), session=1)
    engine.handle(DeviceStatusReceived("rfid-1", status, RECEIVED_AT))
    for message in messages:
        engine.handle(to_received(message))
    high = table.seq["rfid-1"]
    told = Status(state="online", ts=now(table) + timedelta(milliseconds=10), session=1, seq=high + 3)
    out = engine.handle(DeviceStatusReceived("rfid-1", told, RECEIVED_AT))
    asked = [(d, c.from_seq, c.to_seq) for d, c in out.commands if isinstance(c, ResendCommand)]
    assert asked == [("rfid-1", high + 1, high + 3)]
    outputs = [engine.handle(item) for item in seat_events(table, "spare", 4)]
    lost = [a for a in alerts(outputs) if a.code == "device_fault"]
    assert [(a.status, a.device) for a in lost] == [("raised", "rfid-1")]
    assert f"did not send events {high + 1} to {high + 3} again" in lost[0].message
    told_at = next(i for i, out in enumerate(outputs) if out.alerts)
    waited = seat_events(table, "spare", 4)[told_at].event.ts - told.ts
    assert timedelta(seconds=3) <= waited < timedelta(seconds=3.5)
    table.clock += 100  # (the script's next messages come after those events)
    assert not engine.public_state().tracking
    # The hand's result says it was followed with evidence missing (no money made up).
    outputs = play(engine, table, ["clear", "new_hand"])
    [result] = hands(outputs)
    assert result.evidence_missing
    assert result.hand == 1
    assert result.seats == [1, 2, 3, 4]
    assert result.model_dump(mode="json")["evidence_missing"] is True
    assert engine.public_state().tracking


def test_a_session_stream_whose_end_is_lost_is_told_once_and_the_result_marked() -> None:
    bound = replace(settings(), gap_wait_s=5.0)
    table = Table(registry())
    engine = Engine(bound)
    for message in table.run_all([*SETUP, "new_hand", "deal all"]):
        received = to_received(message)
        if isinstance(received, DeviceEventReceived):
            received = received._replace(event=received.event.model_copy(update={"session": 1}))
        engine.handle(received)
    high = table.seq["rfid-1"]
    told = Status(state="online", ts=now(table) + timedelta(milliseconds=10), session=1, seq=high + 2)
    engine.handle(DeviceStatusReceived("rfid-1", told, RECEIVED_AT))
    events = seat_events(table, "spare", 8)
    outputs = [engine.handle(item) for item in events]
    lost = [a for a in alerts(outputs) if a.code == "device_fault"]
    assert [(a.status, a.device) for a in lost] == [("raised", "rfid-1")]
    assert f"events {high + 1} to {high + 2}" in lost[0].message
    told_at = next(i for i, out in enumerate(outputs) if out.alerts)
    assert timedelta(seconds=5) <= events[told_at].event.ts - told.ts < timedelta(seconds=5.5)
    table.clock += 200
    # Without a result of its own, the hand is closed at the next new hand: marked.
    [result] = hands(play(engine, table, ["new_hand"]))
    assert result.evidence_missing


def test_a_hand_followed_with_all_its_evidence_says_nothing_new() -> None:
    engine, table, outputs = start(["new_hand", "deal all", "fold 2", "fold 3", "fold 4", "clear"])
    results = hands(outputs + play(engine, table, ["new_hand"]))
    assert results
    assert not any(r.evidence_missing for r in results)
    assert "evidence_missing" not in results[0].model_dump(mode="json")


def key_input(table: Table, key: KeyName, seq: int | None, source: str | None = None) -> InputReceived:
    item = KeyInput(ts=now(table), key=key, seq=seq, source=source)
    return InputReceived(item, RECEIVED_AT)


def test_a_lost_dealer_input_is_told_and_the_result_marked() -> None:
    engine, table, _ = start(["new_hand", "deal all"])
    assert engine.handle(key_input(table, "ack", 1, "console")).alerts == ()
    assert engine.handle(key_input(table, "ack", 2, "console")).alerts == ()
    assert engine.handle(key_input(table, "ack", 2, "console")).alerts == ()  # a repeat
    assert engine.handle(key_input(table, "ack", 1, "tablet")).alerts == ()  # its own count
    out = engine.handle(key_input(table, "round_complete", 5, "console"))
    assert [(a.code, a.status) for a in out.alerts] == [("device_fault", "raised")]
    assert out.alerts[0].message.startswith("Dealer inputs 3 to 4 from console were lost on the way")
    assert engine.public_state().phase == "preflop"  # the input itself is taken
    assert engine.handle(key_input(table, "declare_board", 1, "console")).alerts == ()  # restarted
    results = hands(play(engine, table, ["fold 2", "fold 3", "fold 4", "clear", "new_hand"]))
    assert [r.hand for r in results] == [1]
    assert results[0].evidence_missing


def test_inputs_without_seq_are_taken_as_before() -> None:
    engine, table, _ = start(["new_hand", "deal all"])
    for _ in range(3):
        assert engine.handle(key_input(table, "ack", None)).alerts == ()
    out = engine.handle(key_input(table, "ack", 7))
    assert out.alerts == ()  # the first one seen sets the count
    out = engine.handle(key_input(table, "ack", 9))
    assert out.alerts[0].message.startswith("Dealer input 8 was lost on the way")
    assert out.alerts[0].device is None


def test_messages_are_untouched_by_who_may_say_what_for_an_ordinary_table() -> None:
    """The kinds learnt from a whole table's play refuse nothing of it."""
    engine, _table, outputs = start(["new_hand", "deal all", "round", "burn", "flop", "round"])
    assert [a.code for a in alerts(outputs)] == []
    learnt = engine.state.machine.device_state.kinds
    assert {device: kind for device, (_, kind) in learnt.items()} == KINDS


def test_events_without_sessions_on_their_way_after_the_status_fill_its_gap() -> None:
    """The status goes out before the events that waited (a reconnection): they fill the gap
    it showed, and nothing is lost."""
    table = Table(registry())
    engine = Engine(settings())
    online = Status(state="online", ts=now(table), session=1)
    engine.handle(DeviceStatusReceived("rfid-1", online, RECEIVED_AT))
    for message in table.run_all([*SETUP, "new_hand", "deal 2 3"]):
        engine.handle(to_received(message))
    high = table.seq["rfid-1"]
    waited = table.run_all(["deal 4 1"])  # made before the status that names them
    told = Status(state="online", ts=now(table) + timedelta(milliseconds=10), session=1, seq=high + 2)
    out = engine.handle(DeviceStatusReceived("rfid-1", told, RECEIVED_AT))
    assert [(c.from_seq, c.to_seq) for _, c in out.commands if isinstance(c, ResendCommand)] == [
        (high + 1, high + 2)
    ]
    outputs = [engine.handle(to_received(message)) for message in waited]
    assert alerts(outputs) == []
    assert engine.state.machine.device_seqs.held == ()
    assert cards(engine) == [1, 1, 1, 1]
    assert engine.public_state().tracking


def test_what_who_may_say_what_learnt_survives_a_checkpoint() -> None:
    engine, table, _ = start(["new_hand", "deal all"])
    engine.handle(key_input(table, "declare_board", 3, "console"))
    data = json.loads(json.dumps(state_to_data(engine.state)))  # as a checkpoint holds it
    restored = Engine(settings())
    restored.restore(state_from_data(data, settings()))
    assert restored.state.machine.device_state.kinds == engine.state.machine.device_state.kinds
    assert restored.state.machine.device_state.input_seqs == {"console": 3}
    # The restored engine still refuses the board's tag, and still sees the console's gap.
    out = restored.handle(forged_tag(table, "sensors", 99))
    assert [(a.code, a.device) for a in out.alerts] == [("bad_payload", "sensors")]
    out = restored.handle(key_input(table, "declare_board", 5, "console"))
    assert [a.code for a in out.alerts] == ["device_fault"]
