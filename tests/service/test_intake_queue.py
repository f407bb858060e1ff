"""The intake's queue (``link.aiomqtt_adapter.Intake``): messages queued in order, as text
topics and payload bytes, tagged with their connection, whether the intake read them itself or
paho did (through aiomqtt's callback and the queue class the client is built with); a consumer
waiting in ``get`` is served."""

from __future__ import annotations

import asyncio

import aiomqtt

from config.models import MqttSection
from link.aiomqtt_adapter import Intake, Received
from link.client import make_client


def _message(topic: str, mid: int, payload: bytes = b"{}") -> aiomqtt.Message:
    return aiomqtt.Message(topic, payload, 1, False, mid, None)


async def test_messages_are_taken_in_order_tagged_with_their_connection() -> None:
    connection = 3
    intake = Intake(lambda: connection)
    queue = intake.queue_type()()  # (what aiomqtt's callback puts paho's messages into)
    for mid in range(1, 4):
        queue.put_nowait(_message("holdem/t1/dev/rfid-1/event", mid))
    intake.put(Received("holdem/t1/dev/rfid-1/event", b"{}", 1, 4, 3))  # (read by the intake itself)
    queue.put_nowait(_message("holdem/t1/dev/rfid-1/event", 5))
    connection = 4
    queue.put_nowait(_message("holdem/t1/input", 6))
    assert intake.waiting == 6
    taken = [intake.get_nowait() for _ in range(6)]
    assert [m.mid for m in taken if m is not None] == [1, 2, 3, 4, 5, 6]
    assert [m.connection for m in taken if m is not None] == [3, 3, 3, 3, 3, 4]
    assert all(type(m.topic) is str and type(m.payload) is bytes for m in taken if m is not None)
    assert intake.waiting == 0
    assert intake.get_nowait() is None
    assert queue.qsize() == 0  # (nothing is left in aiomqtt's queue)


async def test_a_consumer_waiting_in_get_is_served() -> None:
    intake = Intake(lambda: 1)
    client = make_client(MqttSection(url="mqtt://127.0.0.1:1"), "intake-test", queue_type=intake.queue_type())
    intake.bind(client)
    waiting = asyncio.ensure_future(intake.get())
    await asyncio.sleep(0)  # (the consumer is now waiting in get)
    assert not waiting.done()
    client._queue.put_nowait(_message("holdem/t1/input", 9))  # (as aiomqtt's callback does)
    message = await asyncio.wait_for(waiting, 10)  # (a guard: a consumer never woken hangs)
    assert message.mid == 9
    assert intake.waiting == 0
