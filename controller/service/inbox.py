"""Turn a received MQTT message into what the engine takes, or say why it cannot.

The service subscribes to ``dev/+/event``, ``dev/+/status`` and ``input`` of its table, but a broker
may deliver other topics (amqtt sends retained messages of other sessions' filters), so the topic of
every message is checked here. A payload that the engine must not take (it does not match the
contract, it is too large, its device id is too long, or a device named in ``[[devices]]`` sends an
event its kind cannot produce) becomes a :class:`Malformed`: never dropped silently, never a crash,
and cheap, so that a flood of them does not delay valid events (``controller.service.malformed`` counts
them and reports each topic at most once a second).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from config.models import DRIVER_EVENTS
from contract.models import (
    DealerInput,
    DeviceEvent,
    KeyEvent,
    PayloadError,
    SeatEvent,
    TagEvent,
    parse_event,
    parse_input,
    parse_status,
)
from contract.text import bounded
from contract.topics import Topics
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    InputReceived,
    Received,
    TimeReached,
)

#: Largest payload parsed (a real event is well under 1 KiB); JSON nesting is limited to 200
#: levels by the parser itself.
MAX_PAYLOAD_BYTES: Final = 16 * 1024
#: Longest device id taken from a topic.
MAX_DEVICE_ID: Final = 64


@dataclass(frozen=True, slots=True)
class Classified:
    """A message of this table, ready for the engine, with a log line safe at INFO
    (:attr:`summary`: made only when it is logged, not for every message)."""

    received: Received
    #: The device of a device event or status (None for an input).
    device: str | None = None
    #: The log line, when the caller has a better one than :attr:`summary` would make.
    note: str | None = None

    @property
    def summary(self) -> str:
        """What the message is, for the log: never a UID or a card."""
        if self.note is not None:
            return self.note
        item = self.received
        if isinstance(item, DeviceEventReceived):
            return f"{item.device}: {_event_summary(item.event)}"
        if isinstance(item, DeviceStatusReceived):
            return f"{item.device}: status {item.status.state} session {item.status.session}"
        if isinstance(item, InputReceived):
            return f"input {item.input.type}" + _input_summary(item.input)
        if isinstance(item, TimeReached):
            return f"time {item.now.isoformat()} (no message brought it)"
        return f"rejected {item.count} on {item.topic}"

    def __str__(self) -> str:
        return self.summary


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message of this table the engine must not take, and why (bounded, escaped, never the
    payload's own text)."""

    topic: str
    device: str | None
    reason: str


def _event_summary(event: DeviceEvent) -> str:
    """Type, zone and seat of an event: never a UID or a card (those are DEBUG only)."""
    if isinstance(event, TagEvent):
        state = "in" if event.present else "out"
        face = f" face {event.face}" if event.face else ""
        return f"tag {state} {event.zone}{face} (antenna {event.antenna}) seq {event.seq}"
    if isinstance(event, KeyEvent):
        seat = f" seat {event.seat}" if event.seat is not None else ""
        return f"key {event.key}{seat} seq {event.seq}"
    if isinstance(event, SeatEvent):
        return f"seat {event.seat} {'occupied' if event.occupied else 'empty'} seq {event.seq}"
    return f"{event.type} seq {event.seq}"


def classify(
    topics: Topics,
    topic: str,
    payload: bytes,
    received: datetime,
    kinds: Mapping[str, str] | None = None,
) -> Classified | Malformed | None:
    """What the engine should get for a message on ``topic``, or None for a topic not ours.

    ``kinds`` (device id -> ``driver``) names the configured devices: their events must be of a
    type their kind produces. Device command topics are ours to publish, not to process.
    """
    device: str | None = None
    if topic != topics.input:
        parsed = topics.parse_device_topic(topic)
        if parsed is None or parsed.kind == "cmd":
            return None
        device = parsed.device
        if len(device) > MAX_DEVICE_ID:
            return Malformed(bounded(topic, 200), None, f"device id longer than {MAX_DEVICE_ID} characters")
    if len(payload) > MAX_PAYLOAD_BYTES:
        return Malformed(
            topic, device, f"payload of {len(payload)} bytes, over the {MAX_PAYLOAD_BYTES} limit"
        )
    try:
        if device is None:
            return Classified(InputReceived(input=parse_input(topic, payload), received=received))
        if topic.endswith("/event"):
            event = parse_event(topic, payload)
            kind = kinds.get(device) if kinds is not None else None
            if kind is not None and event.type not in DRIVER_EVENTS[kind]:
                return Malformed(topic, device, f"a {kind} device does not send {event.type} events")
            return Classified(DeviceEventReceived(device=device, event=event, received=received), device)
        status = parse_status(topic, payload)
        return Classified(DeviceStatusReceived(device=device, status=status, received=received), device)
    except PayloadError as error:
        return Malformed(topic, device, error.detail)


def _input_summary(item: DealerInput) -> str:
    """The key, action or dealer an input names (for the log: never a card)."""
    if item.type == "key":
        return f" {item.key}"
    if item.type == "action":
        return f" {item.action}"
    if item.type == "dealer":
        return f" {item.dealer}"
    return ""
