"""Broker connection helpers of the service: the aiomqtt client from ``[mqtt]``, and the backoff."""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import aiomqtt

from config.models import MqttSection

#: Seconds to wait for CONNACK, SUBACK, PUBACK before the connection is considered broken.
BROKER_TIMEOUT_S: Final = 5.0
#: Alerts are small messages that must go out at once: without TCP_NODELAY, Nagle's algorithm and
#: the broker's delayed ACK hold each one back for tens of milliseconds.
NO_DELAY: Final = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)


def client_id(mqtt: MqttSection, table: str) -> str:
    """The configured client id, or one derived from the root and table (stable across restarts).

    Stable, because the session is persistent: after a crash the broker hands the restarted
    controller the events that arrived meanwhile.
    """
    if mqtt.client_id:
        return mqtt.client_id
    return re.sub(r"[^A-Za-z0-9_.-]", "-", f"tablectl-{mqtt.root}-{table}")


def tls_context(mqtt: MqttSection) -> ssl.SSLContext | None:
    """The TLS context for an ``mqtts://`` URL or a ``[mqtt.tls]`` section, else None."""
    if not mqtt.use_tls:
        return None
    tls = mqtt.tls
    context = ssl.create_default_context(
        cafile=str(tls.ca_file) if tls is not None and tls.ca_file is not None else None
    )
    if tls is not None and tls.cert_file is not None:
        context.load_cert_chain(
            str(tls.cert_file), str(tls.key_file) if tls.key_file is not None else None
        )
    if tls is not None and tls.insecure:
        context.check_hostname = False
    return context


def connection_tagged_queue(
    connection: Callable[[], int],
) -> type[asyncio.Queue[aiomqtt.Message]]:
    """A message queue class that tags each message with the connection it arrived on.

    A message id is only valid on its connection: a message received before a lost connection
    and handed out after the reconnection must not be acknowledged on the new one.
    """

    class ConnectionTaggedQueue(asyncio.Queue[aiomqtt.Message]):
        def put_nowait(self, item: aiomqtt.Message) -> None:
            item.connection = connection()  # type: ignore[attr-defined]
            super().put_nowait(item)

    return ConnectionTaggedQueue


def arrived_on(message: aiomqtt.Message) -> int:
    """The connection number ``connection_tagged_queue`` gave ``message`` (0: untagged)."""
    number: int = getattr(message, "connection", 0)
    return number


# aiomqtt 2.x has no public API for paho's application-controlled acknowledgements yet
# (aiomqtt issue #345); its paho client is reached the way that issue describes.


def enable_manual_acks(client: aiomqtt.Client) -> None:
    """Send PUBACK only when told: a message is acknowledged once it is journaled."""
    client._client.manual_ack_set(True)


def acknowledge(client: aiomqtt.Client, message: aiomqtt.Message) -> None:
    """Acknowledge a QoS 1 message (a no-op for QoS 0) on the current connection."""
    if message.qos > 0:
        client._client.ack(message.mid, message.qos)


def make_client(
    mqtt: MqttSection,
    identifier: str,
    will: aiomqtt.Will | None,
    *,
    queue_type: type[asyncio.Queue[aiomqtt.Message]] | None = None,
    clean_session: bool = False,
) -> aiomqtt.Client:
    """A client for the configured broker (call inside the running event loop).

    The same client is re-entered after every lost connection, so that messages it had already
    received but not yet handed out are kept. The session is persistent unless
    ``clean_session`` (a reader of retained topics only, such as the floor console, needs none).
    """
    context = tls_context(mqtt)
    return aiomqtt.Client(
        mqtt.host,
        mqtt.port,
        username=mqtt.username,
        password=mqtt.password.get_secret_value() if mqtt.password is not None else None,
        identifier=identifier,
        will=will,
        clean_session=clean_session,
        keepalive=mqtt.keepalive,
        timeout=BROKER_TIMEOUT_S,
        tls_context=context,
        tls_insecure=bool(mqtt.tls is not None and mqtt.tls.insecure) if context else None,
        socket_options=NO_DELAY,
        queue_type=queue_type,
    )


@dataclass
class Backoff:
    """Exponential backoff: ``first``, doubling up to ``ceiling``; ``reset()`` after a success."""

    first: float = 0.1
    ceiling: float = 5.0
    _next: float = 0.0

    def __post_init__(self) -> None:
        self._next = self.first

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.ceiling)
        return delay

    def reset(self) -> None:
        self._next = self.first
