"""The core under hostile input: forged sequence numbers, many devices, payload text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from contract.models import MAX_STATE_ALERTS, FaultEvent, Status, TagEvent
from engine.api import DeviceEventReceived, DeviceStatusReceived, PayloadRejected
from engine.seqtrack import SEQ_AHEAD, SEQ_RUN
from engine.step import Engine
from testing.script import Table, setup_lines
from tests.engine.runner import settings, to_received
from tests.engine.scenario import registry

T0 = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)


def _engine_after(lines: list[str]) -> tuple[Engine, Table, list[str]]:
    table = Table(registry())
    engine = Engine(settings())
    codes = []
    for message in table.run_all(setup_lines([1, 2, 3, 4], 1, ["A", "B"]) + lines):
        codes += [a.code for a in engine.handle(to_received(message)).alerts]
    return engine, table, codes


def _play(engine: Engine, table: Table, lines: list[str]) -> list[str]:
    codes = []
    for message in table.run_all(lines):
        codes += [f"{a.code} {a.status}" for a in engine.handle(to_received(message)).alerts]
    return codes


def _forged_tag(table: Table, seq: int, zone: str = "seat:2") -> DeviceEventReceived:
    uid = table.registry.uid_of("A", "2c")
    tag = TagEvent(seq=seq, ts=T0, antenna=2, zone=zone, uid=uid, present=True, face="down")
    return DeviceEventReceived("rfid-1", tag, T0)


def test_a_forged_far_seq_does_not_blind_the_reader() -> None:
    engine, table, _ = _engine_after(["deal all", "round"])
    last = table.seq["rfid-1"]
    got = engine.handle(_forged_tag(table, last + 10**12))
    assert [(a.code, a.status) for a in got.alerts] == [("bad_payload", "raised")]
    assert "ignored" in got.alerts[0].message
    assert engine.public_state().seats[1].cards == 2  # the forged third card was not taken
    # the reader's real events go on being taken: a four-card flop is flagged
    assert _play(engine, table, ["burn", "flop", "board"]) == ["board_too_many_cards raised"]


def test_a_forged_first_event_does_not_become_the_readers_baseline() -> None:
    engine = Engine(settings())
    table = Table(registry())
    engine.handle(_forged_tag(table, 10**12, zone="muck"))  # before the real reader spoke
    codes = []
    for message in table.run_all(setup_lines([1, 2, 3, 4], 1, ["A", "B"])):
        codes += [a.code for a in engine.handle(to_received(message)).alerts]
    codes += _play(engine, table, ["deal all", "round", "burn", "flop"])
    assert codes == []  # the reader's seq 1 is its restart: followed from there
    assert engine.public_state().phase == "flop"


def test_a_device_that_really_jumped_is_followed_after_a_run_of_events() -> None:
    engine, table, _ = _engine_after(["deal 2 3"])
    table.seq["rfid-1"] += 10 * SEQ_AHEAD  # the reader lost a great many events
    codes = _play(engine, table, ["dup"] * SEQ_RUN)  # the same tag reported again
    assert codes == ["bad_payload raised", "device_fault raised"]
    assert _play(engine, table, ["deal 4 1 2 3 4 1", "round"]) == []
    assert engine.public_state().phase == "preflop"


def test_repeats_dropped_late_events_fill_their_gap_new_session_restarts() -> None:
    engine, table, _ = _engine_after(["deal 2 3 4 1"])
    # a gap: the event after next arrives first, then the missing one (late, within memory)
    late = table.run("dup")[0]
    ahead = table.run("dup")[0]
    assert [a.code for a in engine.handle(to_received(ahead)).alerts] == ["device_fault"]
    assert engine.handle(to_received(late)).alerts == ()
    assert engine.handle(to_received(ahead)).alerts == ()  # a repeat: nothing
    assert _play(engine, table, ["deal 2 3"]) == []
    assert [s.cards for s in engine.public_state().seats[:4]] == [1, 2, 2, 1]
    # a new status session: the count starts again at 1 (the events lost stay lost: that alert
    # lasts until the hand is over)
    status = Status(state="online", ts=T0, session=2)
    got = engine.handle(DeviceStatusReceived("rfid-1", status, T0))
    assert got.alerts == ()
    assert [a.code for a in engine.public_state().alerts] == ["device_fault"]
    table.seq["rfid-1"] = 0
    assert _play(engine, table, ["deal 4 1"]) == []
    assert [s.cards for s in engine.public_state().seats[:4]] == [2, 2, 2, 2]


def test_a_seq_just_within_the_window_is_a_gap_not_a_forgery() -> None:
    engine, table, _ = _engine_after(["deal 2"])
    last = table.seq["rfid-1"]
    got = engine.handle(_forged_tag(table, last + SEQ_AHEAD, zone="seat:3"))
    assert [a.code for a in got.alerts] == ["device_fault"]


def test_the_state_stays_small_whatever_the_devices_and_topics() -> None:
    engine = Engine(settings())
    for n in range(200):
        engine.handle(DeviceStatusReceived(f"fake-{n}", Status(state="offline", ts=T0, session=1), T0))
        engine.handle(PayloadRejected(f"holdem/t1/dev/x{n}/event", f"x{n}", "e" * 5000, T0, count=10**9))
    state = engine.public_state()
    assert len(state.alerts) == MAX_STATE_ALERTS
    assert state.alerts_omitted == 400 - MAX_STATE_ALERTS
    assert len(state.to_json()) <= 16 * 1024


def test_payload_text_never_reaches_an_alert() -> None:
    engine = Engine(settings())
    text = "FLOOR: seat 4 holds Ah Kh - no misdeal, keep dealing"
    fault = FaultEvent(seq=1, ts=T0, code="FLOOR: keep dealing", text=text)
    got = engine.handle(DeviceEventReceived("shuffler", fault, T0))
    assert "FLOOR" not in got.alerts[0].message
    assert "Ah" not in got.alerts[0].message
    status = Status(state="offline", ts=T0 + timedelta(seconds=1), session=1, detail=text)
    got = engine.handle(DeviceStatusReceived("rfid-1", status, T0))
    assert "FLOOR" not in got.alerts[0].message
    ok = Status(state="offline", ts=T0, session=1, detail="lost")
    got = engine.handle(DeviceStatusReceived("rfid-2", ok, T0))
    assert "(lost)" in got.alerts[0].message
    escaped = engine.handle(PayloadRejected("holdem/t1/input", None, "a\x1b[2Jb" + "x" * 900, T0))
    message = escaped.alerts[0].message
    assert "\x1b" not in message
    assert len(message) < 400
