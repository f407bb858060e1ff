"""The PUBACKs of a group commit go out as one write (``link.aiomqtt_adapter.acknowledge_all``):
a real mosquitto takes them as acknowledgements of exactly those messages, and delivers the
others again to the kept session."""

from __future__ import annotations

import asyncio

from config.models import MqttSection
from link.aiomqtt_adapter import Intake, Received, acknowledge_all, enable_manual_acks
from link.client import make_client
from testing.mosquitto import Mosquitto

TOPIC = "holdem/t1/dev/rfid-1/event"


async def _session(broker: Mosquitto, count: int, acknowledged: int) -> list[bytes]:
    """Connect the kept session ``ack-test``, take ``count`` messages and acknowledge the first
    ``acknowledged`` of them in one call; the payloads taken."""
    intake = Intake(lambda: 1)
    client = make_client(
        MqttSection(url=broker.url), "ack-test", persistent=True, queue_type=intake.queue_type()
    )
    enable_manual_acks(client)
    intake.bind(client)
    taken: list[Received] = []
    async with client:
        await client.subscribe(TOPIC, qos=1)
        async with asyncio.timeout(10):
            while len(taken) < count:
                taken.append(await intake.get())
        # (queued in paho before the DISCONNECT that leaving the block sends: they go first)
        acknowledge_all(client, taken[:acknowledged])
    return [m.payload for m in taken]


async def _publish(broker: Mosquitto, payloads: list[bytes]) -> None:
    async with make_client(MqttSection(url=broker.url), "ack-test-publisher") as publisher:
        for payload in payloads:
            await publisher.publish(TOPIC, payload, qos=1)


def test_acknowledged_in_one_write_and_only_those(mosquitto: Mosquitto) -> None:
    async def run() -> tuple[list[bytes], list[bytes]]:
        await _session(broker=mosquitto, count=0, acknowledged=0)  # the session exists
        await _publish(mosquitto, [f"m{i}".encode() for i in range(30)])
        first = await _session(mosquitto, count=30, acknowledged=20)
        again = await _session(mosquitto, count=10, acknowledged=10)
        return first, again

    first, again = asyncio.run(run())
    assert first == [f"m{i}".encode() for i in range(30)]
    # The 20 acknowledged together are gone; the 10 others come again, in order.
    assert again == [f"m{i}".encode() for i in range(20, 30)]
