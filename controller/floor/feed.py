"""The floor's MQTT connections: the brokers of one floor, taken in turn when one is lost.

``--broker URL[,URL...]`` names one broker, or the nodes of one cluster (NATS with its MQTT
gateway: sessions and retained messages are the cluster's, any node serves them). :class:`Brokers`
says which to try next: the next one in the list after a failure, round and round, waiting (with
backoff) only once every node failed in a row. :class:`FloorFeed` is the console's live view:
public topics of every table, no session (the retained topics give the whole floor again).

A broker that closes the connection before its CONNACK (a NATS node does, after 4 s, while the
stream of the MQTT sessions has no leader) fails the attempt at once
(:func:`~link.aiomqtt_adapter.fail_connect_when_closed`): aiomqtt alone would wait out its
whole timeout, and the next node would be tried a second later than it could be.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import aiomqtt

from config.models import MqttSection
from contract.topics import floor_filters
from link.aiomqtt_adapter import fail_connect_when_closed
from link.backoff import Backoff
from link.client import make_client
from link.reconnect import reconnecting

log = logging.getLogger(__name__)

Handle = Callable[[str, bytes, float], None]
Connection = Callable[[bool, str | None], None]


def floor_client_id(root: str) -> str:
    """A fresh id per run: the console keeps no broker session (the retained topics suffice)."""
    return f"tablectl-floor-{root.replace('/', '-')}-{secrets.token_hex(4)}"


def where(mqtt: MqttSection) -> str:
    return f"{mqtt.host}:{mqtt.port}"


class Brokers:
    """The brokers of one floor, in turn: ``current`` until it fails, then the next."""

    def __init__(self, brokers: Sequence[MqttSection], *, first: int = 0) -> None:
        if not brokers:
            raise ValueError("no broker")
        self.all = list(brokers)
        self._index = first % len(self.all)
        self._failed_in_a_row = 0
        self.backoff = Backoff(0.2, 5.0)

    @property
    def current(self) -> MqttSection:
        return self.all[self._index]

    @property
    def index(self) -> int:
        return self._index

    def connected(self) -> None:
        self._failed_in_a_row = 0
        self.backoff.reset()

    def failed(self, avoid: int | None = None) -> float:
        """The current broker failed: move to the next; the delay before trying it (none while
        some node of the round has not been tried). ``avoid``: a broker not to move to while
        another is left (the one a partner connection is on: one node's death should not take
        both)."""
        self._index = (self._index + 1) % len(self.all)
        if self._index == avoid and len(self.all) > 2:
            self._index = (self._index + 1) % len(self.all)
        self._failed_in_a_row += 1
        if self._failed_in_a_row % len(self.all):
            return 0.0
        return self.backoff.next()

    def describe(self) -> str:
        return ", ".join(where(b) for b in self.all)


async def subscribe(client: aiomqtt.Client, filters: Sequence[str], qos: int) -> None:
    """Subscribe to every filter; a filter the broker refuses (SUBACK failure, as a NATS node
    answers while it cannot create the subscription's consumer) is a failed connection: the
    caller takes the next broker rather than sit there subscribed to nothing."""
    granted = await client.subscribe([(topic, qos) for topic in filters])
    codes = [code if isinstance(code, int) else int(code.value) for code in (granted or [])]
    refused = [topic for topic, code in zip(filters, codes, strict=False) if code >= 0x80]
    if refused:
        raise aiomqtt.MqttError(f"subscription refused by the broker: {', '.join(refused)}")


def floor_client(mqtt: MqttSection, identifier: str, **options: Any) -> aiomqtt.Client:
    """``make_client``, failing a connection closed before its CONNACK at once (see above)."""
    client = make_client(mqtt, identifier, **options)
    fail_connect_when_closed(client)
    return client


def payload_bytes(message: aiomqtt.Message) -> bytes:
    payload = message.payload
    if isinstance(payload, bytes | bytearray):
        return bytes(payload)
    return b"" if payload is None else str(payload).encode()


class FloorFeed:
    """Subscribes to ``floor_filters(root)`` and hands every message to ``handle(topic, payload,
    received_ms)``; ``connection(up, why)`` hears when the broker connection comes and goes."""

    def __init__(
        self,
        brokers: MqttSection | Sequence[MqttSection],
        handle: Handle,
        connection: Connection,
        *,
        client_id: str | None = None,
        filters: Sequence[str] | None = None,
        qos: int = 1,
        first: int = 0,
    ) -> None:
        self.brokers = Brokers([brokers] if isinstance(brokers, MqttSection) else brokers, first=first)
        self.mqtt = self.brokers.current
        self.handle = handle
        self.connection = connection
        self.client_id = client_id or floor_client_id(self.mqtt.root)
        self.filters = tuple(filters) if filters is not None else floor_filters(self.mqtt.root)
        self.qos = qos
        #: Another connection's brokers (the same ones), whose current node this feed does not
        #: move to when it fails over while another is left.
        self.avoid: Brokers | None = None
        self.connected = False

    async def run(self, stop: asyncio.Event) -> None:
        async def attempt() -> bool:
            mqtt = self.brokers.current
            async with floor_client(mqtt, self.client_id) as client:
                await subscribe(client, self.filters, self.qos)
                log.info("floor: connected to %s, subscribed to %s", where(mqtt), ", ".join(self.filters))
                self.brokers.connected()
                self.connected = True
                self.connection(True, None)
                await self._receive(client, stop)
            return True

        def lost(error: Exception) -> float:
            mqtt = self.brokers.current
            log.warning("floor: broker %s: %s", where(mqtt), error)
            self.connected = False
            self.connection(False, f"no broker connection ({where(mqtt)}): {error}")
            return self.brokers.failed(self.avoid.index if self.avoid is not None else None)

        await reconnecting(attempt, lost, stop=stop)

    async def _receive(self, client: aiomqtt.Client, stop: asyncio.Event) -> None:
        async def receive() -> None:
            async for message in client.messages:
                self.handle(str(message.topic), payload_bytes(message), time.time() * 1000)

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
