"""Test helpers: a subscriber collecting messages of some topics from a real broker."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import aiomqtt

from contract.models import DeviceEvent, Status, parse_event, parse_status
from drivers.driver import Device, Driver, stop_task


@dataclass
class Received:
    """Messages received so far, by topic, with waiters."""

    messages: list[tuple[str, bytes]] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    def on(self, topic: str) -> list[bytes]:
        return [payload for t, payload in self.messages if t == topic]

    def events(self, topic: str) -> list[DeviceEvent]:
        return [parse_event(topic, p) for p in self.on(topic)]

    def statuses(self, topic: str) -> list[Status]:
        return [parse_status(topic, p) for p in self.on(topic)]

    async def wait_for(self, predicate: Callable[[], bool], within: float = 5.0) -> None:
        async def wait() -> None:
            async with self.changed:
                await self.changed.wait_for(predicate)

        async with asyncio.timeout(within):
            await wait()


@contextlib.asynccontextmanager
async def subscribed(port: int, *topics: str) -> AsyncIterator[Received]:
    """Collect every message on ``topics`` (filters allowed) while the block runs."""
    received = Received()
    async with aiomqtt.Client("127.0.0.1", port, identifier=None) as client:
        for topic in topics:
            await client.subscribe(topic, qos=1)

        async def collect() -> None:
            async for message in client.messages:
                payload = message.payload
                assert isinstance(payload, bytes)
                async with received.changed:
                    received.messages.append((message.topic.value, payload))
                    received.changed.notify_all()

        task = asyncio.create_task(collect())
        try:
            yield received
        finally:
            await stop_task(task)


async def publish(port: int, topic: str, payload: bytes, retain: bool = False) -> None:
    async with aiomqtt.Client("127.0.0.1", port) as client:
        await client.publish(topic, payload, qos=1, retain=retain)


@contextlib.asynccontextmanager
async def driver_online(driver: Driver[Device], port: int) -> AsyncIterator[Received]:
    """Run ``driver`` until it is online and connected to the broker; stop it on exit.

    Yields what its status and event topics carry from before it started.
    """
    status = driver.topics.device_status(driver.device_id)
    events = driver.topics.device_event(driver.device_id)
    async with subscribed(port, status, events) as got:
        task = asyncio.create_task(driver.run())
        await got.wait_for(lambda: any(s.state == "online" for s in got.statuses(status)))
        await asyncio.wait_for(driver.broker_ready.wait(), 5)
        try:
            yield got
        finally:
            await stop_task(task)
