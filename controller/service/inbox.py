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
from typing import Final, Literal, NamedTuple, TypeAlias

from pydantic import ValidationError

from config.models import DRIVER_EVENTS
from contract.models import (
    EVENT_ADAPTER,
    INPUT_ADAPTER,
    STATUS_ADAPTER,
    DealerInput,
    DeviceEvent,
    KeyEvent,
    SeatEvent,
    TagEvent,
    describe,
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


class Classified(NamedTuple):
    """A message of this table, ready for the engine, with a log line safe at INFO
    (:attr:`summary`: made only when it is logged, not for every message).

    A named tuple rather than a frozen data class: one is made for every message, and the frozen
    class's constructor cost three times as much."""

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
    """A message of this table the engine must not take, and why (:attr:`reason`: bounded,
    escaped, never the payload's own text).

    ``why`` is the reason, or the payload's validation error, described only when the reason is
    read: the tally reads it once per report and per sample, not for each message of a flood
    (describing the errors cost more than the rest of a reject: 3-20 us of 13-42)."""

    topic: str
    device: str | None
    why: str | ValidationError

    @property
    def reason(self) -> str:
        why = self.why
        return why if isinstance(why, str) else describe(why)


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


#: The contract's validators of the payloads the engine takes (``contract.models._parse``).
_EVENT: Final = EVENT_ADAPTER.validator.validate_json
_INPUT: Final = INPUT_ADAPTER.validator.validate_json
_STATUS: Final = STATUS_ADAPTER.validator.validate_json

#: Topics whose route :class:`Inbox` keeps: a table has a handful of device topics; a flood of
#: topics beyond this bound is routed one message at a time, as before, and never grows memory.
MAX_ROUTES: Final = 256
#: What a topic of this table is: an ``input``; a device's ``event`` or ``status`` (with its
#: device id); ``None``: not ours (another table, a command topic, not a device topic at all).
_Route: TypeAlias = tuple[Literal["input", "event", "status"], str | None] | None


class Inbox:
    """:func:`classify` for one table, with each topic's route (which table, which device, which
    kind) remembered: parsing the topic cost a quarter of classifying a valid event, which the
    service does for every message and the audit's replay for every record."""

    def __init__(self, topics: Topics, kinds: Mapping[str, str] | None = None) -> None:
        self.topics = topics
        self.kinds = kinds
        self._routes: dict[str, _Route] = {}
        self._input = topics.input

    def classify(self, topic: str, payload: bytes, received: datetime) -> Classified | Malformed | None:
        """What the engine should get for a message on ``topic`` (see :func:`classify`)."""
        item = self.engine_input(topic, payload, received)
        if item is None or isinstance(item, Malformed):
            return item
        return Classified(item, None if isinstance(item, InputReceived) else item.device)

    def engine_input(
        self, topic: str, payload: bytes, received: datetime
    ) -> DeviceEventReceived | DeviceStatusReceived | InputReceived | Malformed | None:
        """:meth:`classify` without the :class:`Classified` around what the engine takes: the
        audit's replay, which needs neither its log line nor its device apart, prepares every
        record with it (the named tuple cost some 2 % of the replay)."""
        try:
            route = self._routes[topic]
        except KeyError:
            found = self._route(topic)
            if isinstance(found, Malformed):
                return found
            route = found
            if len(self._routes) < MAX_ROUTES:
                self._routes[topic] = route
        if route is None:
            return None
        if len(payload) > MAX_PAYLOAD_BYTES:
            return Malformed(
                topic, route[1], f"payload of {len(payload)} bytes, over the {MAX_PAYLOAD_BYTES} limit"
            )
        kind, device = route
        # The adapters' validators themselves (what ``contract.models.parse_event`` and the
        # others call), so that a refused payload costs no PayloadError and no text yet: its
        # error is described when a report or a sample reads it (:class:`Malformed`).
        try:
            if device is None:
                return InputReceived(input=_INPUT(payload), received=received)
            if kind == "event":
                event: DeviceEvent = _EVENT(payload)
                if self.kinds is not None:
                    driver = self.kinds.get(device)
                    if driver is not None and event.type not in DRIVER_EVENTS[driver]:
                        why = f"a {driver} device does not send {event.type} events"
                        return Malformed(topic, device, why)
                return DeviceEventReceived(device, event, received)
            return DeviceStatusReceived(device, _STATUS(payload), received)
        except ValidationError as error:
            return Malformed(topic, device, error)

    def _route(self, topic: str) -> _Route | Malformed:
        if topic == self._input:
            return ("input", None)
        parsed = self.topics.parse_device_topic(topic)
        if parsed is None or parsed.kind == "cmd":
            return None
        device = parsed.device
        if len(device) > MAX_DEVICE_ID:
            # (never remembered: the topics of a flood of long ids would fill the routes)
            return Malformed(bounded(topic, 200), None, f"device id longer than {MAX_DEVICE_ID} characters")
        return (parsed.kind, device)


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
    return Inbox(topics, kinds).classify(topic, payload, received)


def _input_summary(item: DealerInput) -> str:
    """The key, action or dealer an input names (for the log: never a card)."""
    if item.type == "key":
        return f" {item.key}"
    if item.type == "action":
        return f" {item.action}"
    if item.type == "dealer":
        return f" {item.dealer}"
    return ""
