"""Received messages to engine input: topics checked, any device id accepted, bad payloads named."""

from __future__ import annotations

from datetime import UTC, datetime

from contract.models import KeyInput, Status, TagEvent
from contract.topics import Topics
from controller.inbox import classify
from engine.api import DeviceEventReceived, DeviceStatusReceived, InputReceived, PayloadRejected

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
TOPICS = Topics("holdem", "t1")
UID = "E0040150654CC41C"


def test_events_from_any_device_id() -> None:
    event = TagEvent(seq=1, ts=T0, antenna=3, zone="seat:3", uid=UID, present=True, face="down")
    classified = classify(TOPICS, "holdem/t1/dev/whatever-42/event", event.to_json(), T0)
    assert classified is not None
    assert classified.received == DeviceEventReceived("whatever-42", event, T0)
    # The INFO summary names the zone, never the UID.
    assert "seat:3" in classified.summary
    assert UID not in classified.summary


def test_status_and_input() -> None:
    status = Status(state="offline", ts=T0, session=2)
    got = classify(TOPICS, "holdem/t1/dev/rfid-9/status", status.to_json(), T0)
    assert got is not None
    assert got.received == DeviceStatusReceived("rfid-9", status, T0)
    key = KeyInput(ts=T0, key="ack", seat=4)
    got = classify(TOPICS, "holdem/t1/input", key.to_json(), T0)
    assert got is not None
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
        assert got is not None
        assert isinstance(got.received, PayloadRejected), topic
        assert got.received.topic == topic
        assert got.received.error
        assert got.received.device == (None if topic.endswith("input") else "rfid-1")
        assert topic in got.summary
