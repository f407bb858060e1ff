"""The floor console's MQTT subscription: public topics of every table, reconnecting with backoff."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable

import aiomqtt

from config.models import MqttSection
from contract.topics import floor_filters
from link.backoff import Backoff
from link.client import make_client

log = logging.getLogger(__name__)

Handle = Callable[[str, bytes, float], None]
Connection = Callable[[bool, str | None], None]


def floor_client_id(root: str) -> str:
    """A fresh id per run: the console keeps no broker session (the retained topics suffice)."""
    return f"tablectl-floor-{root.replace('/', '-')}-{secrets.token_hex(4)}"


class FloorFeed:
    """Subscribes to ``floor_filters(root)`` and hands every message to ``handle(topic, payload,
    received_ms)``; ``connection(up, why)`` hears when the broker connection comes and goes."""

    def __init__(
        self, mqtt: MqttSection, handle: Handle, connection: Connection, *, client_id: str | None = None
    ) -> None:
        self.mqtt = mqtt
        self.handle = handle
        self.connection = connection
        self.client_id = client_id or floor_client_id(mqtt.root)
        self.filters = floor_filters(mqtt.root)

    async def run(self, stop: asyncio.Event) -> None:
        client = make_client(self.mqtt, self.client_id)
        backoff = Backoff()
        while not stop.is_set():
            try:
                async with client:
                    await client.subscribe([(topic, 1) for topic in self.filters])
                    log.info(
                        "floor: connected to %s:%d, subscribed to %s",
                        self.mqtt.host, self.mqtt.port, ", ".join(self.filters),
                    )
                    backoff.reset()
                    self.connection(True, None)
                    await self._receive(client, stop)
                    return
            except aiomqtt.MqttError as error:
                log.warning("floor: broker %s:%d: %s", self.mqtt.host, self.mqtt.port, error)
                self.connection(False, f"no broker connection: {error}")
            delay = backoff.next()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)

    async def _receive(self, client: aiomqtt.Client, stop: asyncio.Event) -> None:
        async def receive() -> None:
            async for message in client.messages:
                payload = message.payload
                if isinstance(payload, bytes | bytearray):
                    data = bytes(payload)
                else:
                    data = b"" if payload is None else str(payload).encode()
                self.handle(str(message.topic), data, time.time() * 1000)

        receiver = asyncio.create_task(receive())
        stopper = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({receiver, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
            receiver.cancel()
            await asyncio.gather(stopper, receiver, return_exceptions=True)
        if not receiver.cancelled():
            receiver.result()  # re-raises the MqttError of a lost connection
