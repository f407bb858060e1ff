"""Received messages to engine input: topics checked, any device id accepted, bad payloads named."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from contract.models import KeyInput, PayloadError, Status, TagEvent, parse_event, parse_input, parse_status
from contract.topics import Topics
from controller.service.inbox import MAX_PAYLOAD_BYTES, Classified, Inbox, Malformed, classify
from engine.api import DeviceEventReceived, DeviceStatusReceived, InputReceived

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
TOPICS = Topics("holdem", "t1")
UID = "E0040150654CC41C"


def test_events_from_any_device_id() -> None:
    event = TagEvent(seq=1, ts=T0, antenna=3, zone="seat:3", uid=UID, present=True, face="down")
    classified = classify(TOPICS, "holdem/t1/dev/whatever-42/event", event.to_json(), T0)
    assert isinstance(classified, Classified)
    assert classified.received == DeviceEventReceived("whatever-42", event, T0)
    # The INFO summary names the zone, never the UID.
    assert "seat:3" in classified.summary
    assert UID not in classified.summary


def test_status_and_input() -> None:
    status = Status(state="offline", ts=T0, session=2)
    got = classify(TOPICS, "holdem/t1/dev/rfid-9/status", status.to_json(), T0)
    assert isinstance(got, Classified)
    assert got.received == DeviceStatusReceived("rfid-9", status, T0)
    key = KeyInput(ts=T0, key="ack", seat=4)
    got = classify(TOPICS, "holdem/t1/input", key.to_json(), T0)
    assert isinstance(got, Classified)
    assert got.received == InputReceived(key, T0)


def test_other_topics_are_not_for_the_engine() -> None:
    payload = b'{"state":"online"}'
    for topic in (
        "holdem/t2/dev/x/event",  # another table
        "holdem/t1/dev/x/cmd",  # our own commands
        "holdem/t1/state",
        "holdem/t1/alerts",
        "holdem/t1/controller/status",
        "holdem/t1/dev/x/event/more",
        "other/t1/input",
    ):
        assert classify(TOPICS, topic, payload, T0) is None, topic


def test_malformed_payloads_are_rejected_with_the_topic() -> None:
    cases = {
        "holdem/t1/dev/rfid-1/event": b'{"type":"tag","seq":1}',
        "holdem/t1/dev/rfid-1/status": b"not json at all",
        "holdem/t1/input": b"\xff\xfe",
    }
    for topic, payload in cases.items():
        got = classify(TOPICS, topic, payload, T0)
        assert isinstance(got, Malformed), topic
        assert got.topic == topic
        assert got.reason
        assert got.device == (None if topic.endswith("input") else "rfid-1")


def test_payload_text_never_reaches_the_reason() -> None:
    """An unknown type's text is not quoted back (it would reach the dealer's screen)."""
    text = "FLOOR: seat 4 holds Ah Kh - no misdeal, keep dealing"
    payload = json.dumps({"v": 1, "seq": 1, "ts": "2026-11-30T01:00:00Z", "type": text})
    got = classify(TOPICS, "holdem/t1/dev/rfid-1/event", payload.encode(), T0)
    assert isinstance(got, Malformed)
    assert "FLOOR" not in got.reason
    assert "Ah" not in got.reason
    assert "type" in got.reason


def test_bounds_oversized_payloads_long_device_ids_and_nesting() -> None:
    big = b'{"v":1,"pad":"' + b"x" * MAX_PAYLOAD_BYTES + b'"}'
    got = classify(TOPICS, "holdem/t1/dev/rfid-1/event", big, T0)
    assert isinstance(got, Malformed)
    assert "limit" in got.reason
    got = classify(TOPICS, f"holdem/t1/dev/{'d' * 65}/event", b"{}", T0)
    assert isinstance(got, Malformed)
    assert got.device is None
    assert "device id" in got.reason
    deep = b'{"v":1,"x":' + b"[" * 5000 + b"]" * 5000 + b"}"
    got = classify(TOPICS, "holdem/t1/dev/rfid-1/event", deep, T0)
    assert isinstance(got, Malformed)
    assert "recursion" in got.reason
    huge_seq = b'{"v":1,"seq":1' + b"0" * 400 + b',"ts":"2026-11-30T01:00:00Z","type":"key","key":"ack"}'
    got = classify(TOPICS, "holdem/t1/dev/pad/event", huge_seq, T0)
    assert isinstance(got, Malformed)
    assert "seq" in got.reason


def test_a_configured_device_sends_only_the_events_of_its_kind() -> None:
    kinds = {"sensors": "sensors", "rfid-1": "rfid"}
    tag = TagEvent(seq=1, ts=T0, antenna=3, zone="seat:5", uid=UID, present=True, face="down")
    got = classify(TOPICS, "holdem/t1/dev/sensors/event", tag.to_json(), T0, kinds)
    assert isinstance(got, Malformed)
    assert got.reason == "a sensors device does not send tag events"
    got = classify(TOPICS, "holdem/t1/dev/rfid-1/event", tag.to_json(), T0, kinds)
    assert isinstance(got, Classified)
    # a device the configuration does not name is taken as before
    got = classify(TOPICS, "holdem/t1/dev/elsewhere/event", tag.to_json(), T0, kinds)
    assert isinstance(got, Classified)


def test_a_refused_payload_is_described_as_the_contract_describes_it() -> None:
    """The intake validates without the contract's PayloadError (a flood's rejects stay cheap)
    and describes the error only when it is read: the same text, naming the same fields."""
    now = "2026-11-30T01:00:00Z"
    event, status, dealer = "holdem/t1/dev/rfid-1/event", "holdem/t1/dev/rfid-1/status", "holdem/t1/input"
    unknown_type = {"v": 1, "seq": 1, "ts": now, "type": "x" * 300}
    bad_seq = {"v": 1, "seq": -5, "ts": now, "type": "key", "key": "?"}
    cases: list[tuple[str, bytes, Callable[[str, bytes], object]]] = [
        (event, b'{"type":"tag","seq":', parse_event),
        (event, json.dumps(unknown_type).encode(), parse_event),
        (event, json.dumps(bad_seq).encode(), parse_event),
        (status, b"offline!", parse_status),
        (status, json.dumps({"state": "gone", "ts": now}).encode(), parse_status),
        (dealer, json.dumps({"type": "key", "key": "FLOOR " * 40}).encode(), parse_input),
        (dealer, b"\xff\xfe", parse_input),
    ]
    for topic, data, parse in cases:
        got = classify(TOPICS, topic, data, T0)
        assert isinstance(got, Malformed), topic
        with pytest.raises(PayloadError) as refused:
            parse(topic, data)
        assert got.reason == refused.value.detail
        assert got.reason  # names the place: a field, or the payload as a whole


def test_engine_input_is_what_classify_wraps() -> None:
    """The replay prepares records with ``engine_input``: the same engine input as the live
    path's ``classify``, the same refusals, for every kind of message."""
    inbox = Inbox(TOPICS, {"shoe-1": "shuffler"})
    tag = TagEvent(seq=1, ts=T0, antenna=3, zone="seat:3", uid=UID, present=True)
    messages = [
        ("holdem/t1/dev/rfid-1/event", tag.to_json()),
        ("holdem/t1/dev/rfid-1/status", Status(state="online", ts=T0, session=1).to_json()),
        ("holdem/t1/input", KeyInput(ts=T0, key="ack", seat=4).to_json()),
        ("holdem/t1/dev/shoe-1/event", tag.to_json()),  # not the shuffler's kind of event
        ("holdem/t1/dev/rfid-1/event", b"not json"),
        ("holdem/t1/dev/rfid-1/cmd", b"{}"),  # not an engine topic
    ]
    for topic, payload in messages:
        classified = inbox.classify(topic, payload, T0)
        item = inbox.engine_input(topic, payload, T0)
        if isinstance(classified, Classified):
            assert item == classified.received
            assert classified.device == getattr(item, "device", None)
        elif isinstance(classified, Malformed):
            assert isinstance(item, Malformed)
            assert (item.topic, item.device, item.reason) == (
                classified.topic,
                classified.device,
                classified.reason,
            )
        else:
            assert item is None
