"""The intake's queue (``link.aiomqtt_adapter.Intake``): messages queued in
order, tagged with their connection; a consumer waiting in ``get`` (aiomqtt's own iterator) is
still served; one aiomqtt ``Topic`` per topic, bounded."""

from __future__ import annotations

import asyncio

import aiomqtt

from link.aiomqtt_adapter import MAX_TOPICS, Intake, arrived_on


def _message(topic: str, mid: int) -> aiomqtt.Message:
    return aiomqtt.Message(topic, b"{}", 1, False, mid, None)


async def test_messages_are_taken_in_order_tagged_with_their_connection() -> None:
    connection = 3
    queue = Intake(lambda: connection).queue_type()()
    for mid in range(1, 6):
        queue.put_nowait(_message("holdem/t1/dev/rfid-1/event", mid))
    connection = 4
    queue.put_nowait(_message("holdem/t1/input", 6))
    assert queue.qsize() == 6
    taken = [queue.get_nowait() for _ in range(6)]
    assert [m.mid for m in taken] == [1, 2, 3, 4, 5, 6]
    assert [arrived_on(m) for m in taken] == [3, 3, 3, 3, 3, 4]
    assert queue.qsize() == 0


async def test_a_consumer_waiting_in_get_is_served() -> None:
    queue = Intake(lambda: 1).queue_type()()
    waiting = asyncio.ensure_future(queue.get())
    await asyncio.sleep(0)  # (the consumer is now waiting in get)
    queue.put_nowait(_message("holdem/t1/input", 9))
    message = await asyncio.wait_for(waiting, 10)  # (a guard: a consumer never woken hangs)
    assert message.mid == 9
    assert queue.qsize() == 0


def test_one_topic_object_per_topic_and_no_more_than_the_bound() -> None:
    intake = Intake(lambda: 1)
    first = intake._topic("holdem/t1/dev/rfid-1/event")
    assert intake._topic("holdem/t1/dev/rfid-1/event") is first
    assert str(first) == "holdem/t1/dev/rfid-1/event"
    for i in range(MAX_TOPICS + 50):
        assert str(intake._topic(f"holdem/t1/dev/d{i}/event")) == f"holdem/t1/dev/d{i}/event"
    assert len(intake._topics) == MAX_TOPICS
    beyond = f"holdem/t1/dev/d{MAX_TOPICS + 10}/event"
    assert intake._topic(beyond) is not intake._topic(beyond)  # made anew, not kept
