"""What aiomqtt 2.x does not offer publicly, in one place: manual acknowledgements.

aiomqtt has no public API for paho's application-controlled acknowledgements (aiomqtt issue
#345, "manual acknowledgement"); paho has had one since 2.0 (``manual_ack_set``, ``ack``). The
controller needs it to acknowledge a message only once it is journaled, so its paho client is
reached the way that issue describes. Nothing else in tablectl touches aiomqtt's internals.

A message id is valid only on the connection it arrived on, so messages are also tagged with the
connection they came from (a public attribute set on aiomqtt's own message objects).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import aiomqtt


def enable_manual_acks(client: aiomqtt.Client) -> None:
    """Send PUBACK only when told (see :func:`acknowledge`)."""
    client._client.manual_ack_set(True)


def acknowledge(client: aiomqtt.Client, message: aiomqtt.Message) -> None:
    """Acknowledge a QoS 1 message (a no-op for QoS 0) on the current connection."""
    if message.qos > 0:
        client._client.ack(message.mid, message.qos)


def connection_tagged_queue(
    connection: Callable[[], int],
) -> type[asyncio.Queue[aiomqtt.Message]]:
    """A message queue class that tags each message with the connection it arrived on.

    A message received before a lost connection and handed out after the reconnection must not
    be acknowledged on the new one (:func:`arrived_on` says which one it came from).
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
