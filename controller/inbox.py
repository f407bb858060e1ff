"""Turn a received MQTT message into what the engine takes, or say why it cannot.

The service subscribes to ``dev/+/event``, ``dev/+/status`` and ``input`` of its table, but a broker
may deliver other topics (amqtt sends retained messages of other sessions' filters), so the topic of
every message is checked here. A payload that does not match the contract becomes a
``PayloadRejected`` for the engine: it is never dropped silently and never crashes the service.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from contract.models import (
    DeviceEvent,
    KeyEvent,
    PayloadError,
    SeatEvent,
    TagEvent,
    parse_event,
    parse_input,
    parse_status,
)
from contract.topics import Topics
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    InputReceived,
    PayloadRejected,
    Received,
)


@dataclass(frozen=True, slots=True)
class Classified:
    """A message of this table, ready for the engine, with a log line safe at INFO."""

    received: Received
    summary: str


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


def classify(topics: Topics, topic: str, payload: bytes, received: datetime) -> Classified | None:
    """What the engine should get for a message on ``topic``, or None for a topic not ours.

    Device command topics are ours to publish, not to process: they are not for the engine either.
    """
    device: str | None = None
    try:
        if topic == topics.input:
            dealer_input = parse_input(topic, payload)
            return Classified(
                InputReceived(input=dealer_input, received=received),
                f"input {dealer_input.type} "
                + (dealer_input.key if dealer_input.type == "key" else dealer_input.action),
            )
        parsed = topics.parse_device_topic(topic)
        if parsed is None or parsed.kind == "cmd":
            return None
        device = parsed.device
        if parsed.kind == "event":
            event = parse_event(topic, payload)
            return Classified(
                DeviceEventReceived(device=device, event=event, received=received),
                f"{device}: {_event_summary(event)}",
            )
        status = parse_status(topic, payload)
        return Classified(
            DeviceStatusReceived(device=device, status=status, received=received),
            f"{device}: status {status.state} session {status.session}",
        )
    except PayloadError as error:
        return Classified(
            PayloadRejected(topic=topic, device=device, error=error.detail, received=received),
            f"rejected payload on {topic}: {error.detail}",
        )
