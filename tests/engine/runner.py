"""Run table script messages through the pure core (shared by the engine tests)."""

from __future__ import annotations

from datetime import UTC, datetime

from contract.models import Alert, PayloadError, Profile, parse_event
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    EngineSettings,
    InputReceived,
    PayloadRejected,
    Received,
)
from engine.step import Engine
from testing.script import Message
from tests.engine.scenario import registry

RECEIVED_AT = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)


def to_received(message: Message) -> Received:
    """A script message as the service would hand it to the core."""
    payload = message.payload
    if message.kind == "raw":
        assert isinstance(payload, str)
        device = message.device or "unknown"
        topic = f"holdem/t1/dev/{device}/event"
        try:
            event = parse_event(topic, payload)
        except PayloadError as error:
            return PayloadRejected(topic=topic, device=device, error=str(error), received=RECEIVED_AT)
        return DeviceEventReceived(device=device, event=event, received=RECEIVED_AT)
    if message.kind == "status":
        return DeviceStatusReceived(device=message.device or "", status=payload, received=RECEIVED_AT)  # type: ignore[arg-type]
    if message.kind == "input":
        return InputReceived(input=payload, received=RECEIVED_AT)  # type: ignore[arg-type]
    return DeviceEventReceived(device=message.device or "", event=payload, received=RECEIVED_AT)  # type: ignore[arg-type]


def settings(profile: Profile = "roberts", seats: int = 9, action_feed: bool = False) -> EngineSettings:
    return EngineSettings(seats=seats, profile=profile, registry=registry(), action_feed=action_feed)


def run(
    messages: list[Message], profile: Profile = "roberts", seats: int = 9, action_feed: bool = False
) -> tuple[Engine, list[Alert]]:
    """Feed every message; return the engine and every alert change, in order."""
    engine = Engine(settings(profile, seats, action_feed))
    alerts: list[Alert] = []
    for message in messages:
        alerts += engine.handle(to_received(message)).alerts
    return engine, alerts
