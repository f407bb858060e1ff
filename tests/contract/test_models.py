"""Contract models: validation, unknown fields, errors that name the place, topics."""

from __future__ import annotations

import json
from datetime import UTC

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contract import models as m
from contract.cards import ALL_CARDS, is_card, seat_zone, zone_seat
from contract.topics import Topics
from tests.contract import samples

TOPIC = "holdem/t1/dev/rfid-1/event"


@pytest.mark.parametrize("event", samples.EVENTS, ids=lambda e: type(e).__name__)
def test_event_round_trips_through_json(event: m.EventBase) -> None:
    assert m.parse_event(TOPIC, event.to_json()) == event


def test_timestamps_are_utc_with_z() -> None:
    payload = json.loads(samples.EVENTS[0].to_json())
    assert payload["ts"] == "2026-11-29T20:15:30.250000Z"
    offset = dict(payload, ts="2026-11-29T21:15:30.25+01:00")
    assert m.parse_event(TOPIC, json.dumps(offset)) == samples.EVENTS[0]


@pytest.mark.parametrize(
    ("ts", "utc"),
    [
        ("2026-11-29T22:15:30.25+02:00", "2026-11-29T20:15:30.250000Z"),
        ("2026-11-29T20:15:30.25-00:00", "2026-11-29T20:15:30.250000Z"),
        ("1970-01-01T00:30:00+01:00", None),  # 1969 in UTC
        ("2199-12-31T23:30:00-01:00", None),  # 2200 in UTC
        ("9999-12-31T23:00:00-05:00", None),  # beyond any datetime in UTC
        ("0001-01-01T00:00:00+01:00", None),
    ],
)
def test_a_time_with_an_offset_is_taken_in_utc_within_the_bounds(ts: str, utc: str | None) -> None:
    payload = f'{{"type": "seat", "seq": 1, "ts": "{ts}", "seat": 1, "occupied": true}}'.encode()
    if utc is None:
        with pytest.raises(m.PayloadError, match="time must be from 1970 to 2199"):
            m.parse_event("t", payload)
        return
    event = m.parse_event("t", payload)
    assert event.ts.tzinfo is UTC
    assert json.loads(event.to_json())["ts"] == utc


def test_unknown_fields_are_ignored() -> None:
    payload = json.loads(samples.EVENTS[0].to_json()) | {"rssi": -40, "future": {"x": 1}}
    assert m.parse_event(TOPIC, json.dumps(payload)) == samples.EVENTS[0]


def test_lower_case_uid_is_normalised() -> None:
    payload = json.loads(samples.EVENTS[0].to_json()) | {"uid": "e0040150654cc41c"}
    assert m.parse_event(TOPIC, json.dumps(payload)).uid == "E0040150654CC41C"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("uid", "detail"),
    [
        # upper-cased before the pattern is checked: the error names the pattern itself
        ("e0040", "tag.uid: String should match pattern '^[0-9A-F]{8,20}$'"),
        ("e00401506g4cc41c", "tag.uid: String should match pattern '^[0-9A-F]{8,20}$'"),
        (12, "tag.uid: Input should be a valid string"),
        (None, "tag.uid: Input should be a valid string"),
    ],
)
def test_a_bad_uid_is_refused_naming_the_field_and_the_pattern(uid: object, detail: str) -> None:
    payload = json.loads(samples.EVENTS[0].to_json()) | {"uid": uid}
    with pytest.raises(m.PayloadError) as error:
        m.parse_event(TOPIC, json.dumps(payload))
    assert error.value.detail == detail


def test_a_uid_is_upper_cased_as_python_does_before_it_is_matched() -> None:
    # (U+FB00, the ligature ff, upper-cases to "FF": accepted before the UID went native, still)
    payload = json.loads(samples.EVENTS[0].to_json()) | {"uid": "e0040150\ufb00cc41c"}
    assert m.parse_event(TOPIC, json.dumps(payload)).uid == "E0040150FFCC41C"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (b"not json", "payload"),
        (b'{"type": "teleport", "seq": 1, "ts": "2026-11-29T20:00:00Z"}', "type"),
        (
            b'{"type": "tag", "seq": 1, "ts": "2026-11-29T20:00:00Z", "antenna": 1, "zone": "table",'
            b' "uid": "E0040150654CC41C", "present": true}',
            "zone",
        ),
        (b'{"type": "key", "seq": 0, "ts": "2026-11-29T20:00:00Z", "key": "ack"}', "seq"),
        (b'{"type": "key", "seq": 1, "ts": "2026-11-29T20:00:00", "key": "ack"}', "ts"),
        (b'{"type": "key", "seq": 1, "ts": "2026-11-29T20:00:00Z", "key": "shuffle"}', "key"),
        (b'{"type": "seat", "seq": 1, "ts": "2026-11-29T20:00:00Z", "seat": 11, "occupied": true}', "seat"),
    ],
)
def test_bad_payload_error_names_topic_and_field(payload: bytes, fragment: str) -> None:
    with pytest.raises(m.PayloadError) as caught:
        m.parse_event(TOPIC, payload)
    assert str(caught.value).startswith(TOPIC + ": ")
    assert fragment in caught.value.detail


def test_inputs_commands_status_alert_state_round_trip() -> None:
    for item in samples.INPUTS:
        assert m.parse_input("holdem/t1/input", item.to_json()) == item
    for command in samples.COMMANDS:
        assert m.parse_command("holdem/t1/dev/x/cmd", command.to_json()) == command
    for status in samples.STATUSES:
        assert m.parse_status("holdem/t1/dev/x/status", status.to_json()) == status
    assert m.parse_alert("holdem/t1/alerts", samples.ALERT.to_json()) == samples.ALERT
    assert m.parse_state("holdem/t1/state", samples.STATE.to_json()) == samples.STATE


@pytest.mark.parametrize(
    "payload",
    [
        b'{"type": "key", "ts": "2026-11-29T20:00:00Z", "key": "new_hand", "alert": "3-2"}',
        b'{"type": "key", "ts": "2026-11-29T20:00:00Z", "key": "ack", "alert": ""}',
    ],
)
def test_an_alert_id_goes_only_with_ack_and_is_not_empty(payload: bytes) -> None:
    with pytest.raises(m.PayloadError) as caught:
        m.parse_input("holdem/t1/input", payload)
    assert caught.value.detail.startswith("key.alert") or "alert" in caught.value.detail


def test_the_alert_id_is_on_the_wire_only_when_given() -> None:
    ts = "2026-11-29T20:00:00Z"
    plain = m.KeyInput.model_validate({"ts": ts, "key": "ack"})
    assert "alert" not in json.loads(plain.to_json())
    assert "alert" not in json.loads(m.KeyEvent(seq=1, ts=plain.ts, key="exposed", seat=3).to_json())
    one = m.KeyInput.model_validate({"ts": ts, "key": "ack", "alert": "3-2"})
    assert json.loads(one.to_json())["alert"] == "3-2"
    assert m.parse_input("holdem/t1/input", one.to_json()) == one


def test_resend_names_a_bounded_range_of_one_session() -> None:
    topic = "holdem/t1/dev/rfid-1/cmd"
    ok = b'{"cmd": "resend", "ts": "2026-11-29T20:00:00Z", "session": 3, "from_seq": 5, "to_seq": 9}'
    command = m.parse_command(topic, ok)
    assert isinstance(command, m.ResendCommand)
    assert (command.session, command.from_seq, command.to_seq) == (3, 5, 9)
    backwards = ok.replace(b'"to_seq": 9', b'"to_seq": 4')
    with pytest.raises(m.PayloadError, match="to_seq must not be below from_seq"):
        m.parse_command(topic, backwards)
    too_many = ok.replace(b'"to_seq": 9', b'"to_seq": %d' % (5 + m.MAX_RESEND))
    with pytest.raises(m.PayloadError, match="at most 1024 events"):
        m.parse_command(topic, too_many)


def test_events_carry_their_session_optionally() -> None:
    topic = "holdem/t1/dev/sensors/event"
    plain = m.parse_event(topic, b'{"type": "key", "seq": 1, "ts": "2026-11-29T20:00:00Z", "key": "ack"}')
    assert plain.session is None
    with_session = m.KeyEvent(seq=1, ts=samples.TS, key="ack", session=12)
    assert m.parse_event(topic, with_session.to_json()) == with_session


def test_public_state_has_no_field_for_hole_cards() -> None:
    seat_fields = set(m.SeatState.model_fields)
    assert seat_fields == {"seat", "occupied", "in_hand", "cards"}
    assert m.SeatState.model_fields["cards"].annotation is int


def test_topics() -> None:
    topics = Topics("holdem", "t1")
    assert topics.device_event("rfid-1") == "holdem/t1/dev/rfid-1/event"
    assert topics.device_status("shuffler") == "holdem/t1/dev/shuffler/status"
    assert topics.device_cmd("sensors") == "holdem/t1/dev/sensors/cmd"
    assert topics.alerts == "holdem/t1/alerts"
    assert topics.state == "holdem/t1/state"
    assert topics.controller_status == "holdem/t1/controller/status"
    assert topics.input == "holdem/t1/input"
    assert topics.all_device_events == "holdem/t1/dev/+/event"
    parsed = topics.parse_device_topic("holdem/t1/dev/rfid-1/event")
    assert parsed is not None
    assert (parsed.device, parsed.kind) == ("rfid-1", "event")
    assert topics.parse_device_topic("holdem/t2/dev/rfid-1/event") is None
    assert topics.parse_device_topic("holdem/t1/dev/rfid-1/event/x") is None
    with pytest.raises(ValueError, match="device id"):
        topics.device_event("a/b")
    with pytest.raises(ValueError, match="table id"):
        Topics("holdem", "t+1")


def test_cards_and_zones() -> None:
    assert len(set(ALL_CARDS)) == 52
    assert all(is_card(card) for card in ALL_CARDS)
    assert not is_card("10d")
    assert not is_card("Ax")
    assert zone_seat(seat_zone(7)) == 7
    assert zone_seat("board") is None


@given(
    seq=st.integers(min_value=1, max_value=2**31),
    antenna=st.integers(min_value=1, max_value=64),
    seat=st.integers(min_value=1, max_value=10),
    uid=st.text(alphabet="0123456789ABCDEF", min_size=8, max_size=20),
    present=st.booleans(),
    face=st.sampled_from(["up", "down", None]),
)
def test_tag_event_round_trip_property(
    seq: int, antenna: int, seat: int, uid: str, present: bool, face: str | None
) -> None:
    event = m.TagEvent.model_validate(
        {
            "seq": seq,
            "ts": samples.TS,
            "antenna": antenna,
            "zone": seat_zone(seat),
            "uid": uid,
            "present": present,
            "face": face,
        }
    )
    assert m.parse_event(TOPIC, event.to_json()) == event


def test_chip_zones_and_hand_results_follow_the_contract() -> None:
    """Chips extension: betting areas, stacks, pot and rake are zones; a hand result parses."""
    from contract.cards import is_chip_zone, is_zone, zone_bet_seat, zone_stack_seat
    from contract.models import parse_hand

    for zone in ("bet:1", "bet:10", "stack:4", "pot", "rake"):
        assert is_zone(zone)
        assert is_chip_zone(zone)
    for zone in ("bet:0", "bet:11", "stack:", "pots", "seat:3"):
        assert not is_chip_zone(zone)
    assert not is_zone("bet:0")
    assert zone_bet_seat("bet:7") == 7
    assert zone_stack_seat("stack:2") == 2
    assert zone_bet_seat("seat:7") is None
    payload = (
        '{"v":1,"ts":"2026-11-30T12:00:00Z","hand":7,"button":3,"seats":[1,3,5],'
        '"board":["As","Kd","7c","2h","2s"],"result":"showdown",'
        '"actions":[{"street":"preflop","seat":5,"action":"raise","amount":6}],'
        '"pots":[{"amount":18,"eligible":[1,5],"winners":[5],"shares":[{"seat":5,"amount":18}]}],'
        '"rake":0,"awarded":[{"seat":5,"amount":18}],'
        '"showdown":[{"seat":5,"cards":["Ah","Ac"],"rank":"full_house"}],"future":1}'
    )
    result = parse_hand("holdem/t1/hands", payload)
    assert result.pots[0].shares[0].amount == 18
    assert result.showdown[0].cards == ["Ah", "Ac"]


def test_the_dealer_and_the_area_are_on_the_wire_only_when_known() -> None:
    ts = "2026-11-29T23:59:18.120Z"
    result = m.parse_hand("holdem/t1/hands", f'{{"ts": "{ts}", "hand": 3, "result": "uncontested"}}')
    assert result.dealer is None
    assert b"dealer" not in result.to_json()
    badged = result.model_copy(update={"dealer": "D-1042"})
    assert m.parse_hand("holdem/t1/hands", badged.to_json()).dealer == "D-1042"
    online = f'{{"state": "online", "ts": "{ts}", "session": 2}}'
    status = m.parse_status("holdem/t1/controller/status", online)
    assert status.area is None
    assert b"area" not in status.to_json()
    pit = m.parse_status(
        "holdem/t1/controller/status",
        f'{{"state": "online", "ts": "{ts}", "session": 2, "area": "pit 3"}}',
    )
    assert pit.area == "pit 3"
    assert b'"area":"pit 3"' in pit.to_json()
    for bad in ('"dealer": ""', f'"dealer": "{"x" * 65}"'):
        with pytest.raises(m.PayloadError, match="dealer"):
            m.parse_hand("holdem/t1/hands", f'{{"ts": "{ts}", "hand": 3, "result": "uncontested", {bad}}}')


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (b'{"v":1,"ts":"2026-01-01T00:00:00Z","type":"dealer","dealer":""}', "dealer"),
        (b'{"v":1,"ts":"2026-01-01T00:00:00Z","type":"dealer","dealer":"B 1\\n"}', "dealer"),
        (b'{"v":1,"ts":"2026-01-01T00:00:00Z","type":"dealer","dealer":"' + b"B" * 65 + b'"}', "dealer"),
        (b'{"v":1,"ts":"2026-01-01T00:00:00Z","type":"dealer"}', "dealer"),
        (b'{"v":1,"ts":"2026-01-01T00:00:00Z","type":"key","key":"last_hand"}', "key"),
    ],
)
def test_a_bad_session_input_is_refused_naming_the_field(payload: bytes, fragment: str) -> None:
    with pytest.raises(m.PayloadError) as caught:
        m.parse_input("holdem/t1/input", payload)
    assert fragment in caught.value.detail


def test_the_session_fields_are_off_the_wire_until_known() -> None:
    plain = samples.STATE.to_json()
    for field in (b'"dealer"', b'"hands_left"', b'"level"', b'"away"'):
        assert field not in plain
    hand = m.HandResult(ts=samples.TS, hand=1, result="uncontested")
    assert b'"dealer"' not in hand.to_json()
