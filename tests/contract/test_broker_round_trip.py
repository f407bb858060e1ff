"""Every contract payload goes through a real mosquitto and comes back equal through the models."""

from __future__ import annotations

import asyncio

import aiomqtt

from contract import models as m
from contract.topics import Topics
from testing.mosquitto import Mosquitto
from tests.contract import samples


async def test_every_payload_round_trips_through_mosquitto(mosquitto: Mosquitto) -> None:
    topics = Topics("holdem", "roundtrip")
    sent: list[tuple[str, bytes, bool]] = []
    for event in samples.EVENTS:
        sent.append((topics.device_event("rfid-1"), event.to_json(), False))
    for status in samples.STATUSES:
        sent.append((topics.device_status("shuffler"), status.to_json(), True))
    for item in samples.INPUTS:
        sent.append((topics.input, item.to_json(), False))
    for command in samples.COMMANDS:
        sent.append((topics.device_cmd("sensors"), command.to_json(), False))
    sent.append((topics.alerts, samples.ALERT.to_json(), False))
    sent.append((topics.state, samples.STATE.to_json(), True))
    sent.append((topics.controller_status, samples.STATUSES[0].to_json(), True))

    received: list[tuple[str, bytes]] = []
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="reader") as reader:
        await reader.subscribe(f"{topics.base}/#", qos=1)
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="writer") as writer:
            for topic, payload, retain in sent:
                await writer.publish(topic, payload, qos=1, retain=retain)

        async def collect() -> None:
            async for message in reader.messages:
                assert isinstance(message.payload, bytes)
                received.append((str(message.topic), message.payload))
                if len(received) == len(sent):
                    return

        await asyncio.wait_for(collect(), timeout=10)

    assert [topic for topic, _ in received] == [topic for topic, _, _ in sent]
    for (topic, payload), (_, original, _) in zip(received, sent, strict=True):
        parsed: m.WireModel
        kind = topics.parse_device_topic(topic)
        if kind is not None and kind.kind == "event":
            parsed = m.parse_event(topic, payload)
        elif (kind is not None and kind.kind == "status") or topic == topics.controller_status:
            parsed = m.parse_status(topic, payload)
        elif kind is not None and kind.kind == "cmd":
            parsed = m.parse_command(topic, payload)
        elif topic == topics.input:
            parsed = m.parse_input(topic, payload)
        elif topic == topics.alerts:
            parsed = m.parse_alert(topic, payload)
        else:
            assert topic == topics.state
            parsed = m.parse_state(topic, payload)
        assert parsed.to_json() == original


async def test_retained_state_reaches_a_late_subscriber(mosquitto: Mosquitto) -> None:
    topics = Topics("holdem", "late")
    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as writer:
        await writer.publish(topics.state, samples.STATE.to_json(), qos=1, retain=True)
    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as reader:
        await reader.subscribe(topics.state, qos=1)

        async def first() -> m.PublicState:
            async for message in reader.messages:
                assert isinstance(message.payload, bytes)
                return m.parse_state(str(message.topic), message.payload)
            raise AssertionError("no message")

        assert await asyncio.wait_for(first(), timeout=5) == samples.STATE
