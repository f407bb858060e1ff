"""What aiomqtt 2.x does not offer publicly, in one place: manual acknowledgements, the socket.

aiomqtt has no public API for paho's application-controlled acknowledgements (aiomqtt issue
#345, "manual acknowledgement"); paho has had one since 2.0 (``manual_ack_set``, ``ack``). The
controller needs it to acknowledge a message only once it is journaled, so its paho client is
reached the way that issue describes. Nothing else in tablectl touches aiomqtt's internals.

A message id is valid only on the connection it arrived on, so messages are also tagged with the
connection they came from (a public attribute set on aiomqtt's own message objects).

:func:`socket_of` gives a connected client's socket (paho's public ``socket()``, behind aiomqtt),
for diagnostics and the tests that check its options (TCP_NODELAY).

:func:`tolerate_socket_race` keeps one harmless race of aiomqtt's out of the logs' tracebacks.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable
from typing import Any

import aiomqtt

log = logging.getLogger(__name__)


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


def socket_of(client: aiomqtt.Client) -> socket.socket | None:
    """The TCP socket of a connected client (None while it is not connected)."""
    sock = client._client.socket()
    return sock if isinstance(sock, socket.socket) else None


def tolerate_socket_race(loop: asyncio.AbstractEventLoop) -> None:
    """Log aiomqtt's socket race on a lost connection as one WARNING line, not a traceback.

    aiomqtt asks the loop to watch its socket through ``call_soon_threadsafe`` (paho calls it
    from another thread); when the broker goes away in between, the socket is closed before the
    callback runs, and asyncio's default handler logs "Exception in callback ...add_writer" with
    an ``EBADF`` traceback. Nothing is lost (the connection is gone, the client's own loop sees
    it and reconnects). Any other exception goes to the handler the loop had.
    """
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        handle = repr(context.get("handle"))
        if (
            isinstance(error, OSError)
            and error.errno == errno.EBADF
            and ("add_writer" in handle or "add_reader" in handle)
        ):
            log.warning("MQTT socket closed before the loop watched it (connection lost): %s", error)
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
