"""The embedded amqtt broker: loopback only, anonymous, MQTT 3.1.1, retained messages, clean stop."""

from __future__ import annotations

import asyncio
import socket

import aiomqtt
import pytest

from controller.broker.embedded import LOOPBACK, BrokerError, EmbeddedBroker


async def _first_message(client: aiomqtt.Client, topic: str) -> aiomqtt.Message:
    async for message in client.messages:
        if str(message.topic) == topic:  # amqtt may deliver other sessions' retained messages
            return message
    raise AssertionError("message stream ended")


async def test_round_trip_and_retained_state_through_the_embedded_broker() -> None:
    async with EmbeddedBroker() as broker:
        assert broker.url == f"mqtt://{LOOPBACK}:{broker.port}"
        async with aiomqtt.Client(
            LOOPBACK, broker.port or 0, protocol=aiomqtt.ProtocolVersion.V311, identifier="pub"
        ) as publisher:
            await publisher.publish("holdem/t9/state", b'{"phase":"idle"}', qos=1, retain=True)
            async with aiomqtt.Client(
                LOOPBACK, broker.port or 0, protocol=aiomqtt.ProtocolVersion.V311, identifier="sub"
            ) as subscriber:
                await subscriber.subscribe("holdem/t9/#", qos=1)
                retained = await asyncio.wait_for(_first_message(subscriber, "holdem/t9/state"), 5)
                assert retained.payload == b'{"phase":"idle"}'
                assert retained.retain
                await publisher.publish("holdem/t9/alerts", b"a", qos=1)
                live = await asyncio.wait_for(_first_message(subscriber, "holdem/t9/alerts"), 5)
                assert live.payload == b"a"


async def test_listens_on_loopback_only_and_releases_the_port() -> None:
    broker = EmbeddedBroker()
    await broker.start()
    port = broker.port
    assert port is not None
    # Nothing on the machine's other addresses: bound to 127.0.0.1, not 0.0.0.0.
    server = broker._broker._servers["default"].instance  # type: ignore[union-attr]
    assert {sock.getsockname()[0] for sock in server.sockets} == {LOOPBACK}
    other = EmbeddedBroker()
    await other.start()
    assert other.port not in (None, port)
    await other.stop()
    await broker.stop()
    with pytest.raises(ConnectionRefusedError), socket.create_connection((LOOPBACK, port), timeout=1):
        pass
    with pytest.raises(BrokerError, match="not running"):
        _ = broker.url


async def test_a_busy_port_is_a_clear_error() -> None:
    async with EmbeddedBroker() as first:
        taken = first.port or 0
        with pytest.raises(BrokerError, match=f"{LOOPBACK}:{taken}"):
            await EmbeddedBroker(taken).start()
