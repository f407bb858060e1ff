"""The event loop watches exactly the MQTT socket paho has now (link/aiomqtt_adapter.py).

aiomqtt asks the loop to watch paho's socket through ``call_soon_threadsafe`` and stops watching
it at once; a request that runs after the stop (paho wanted to write, then did not, in the same
turn of the loop) left the loop watching a socket paho had given up, and the socket's closing
left that watch behind. The next connection's socket, given the same descriptor, could then not
be watched at all ("Exception in callback add_reader ... FileNotFoundError", the demo's
broker-crash test): a connection nobody reads, the controller deaf until restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
from typing import Any

import aiomqtt

from config.models import MqttSection
from link.client import make_client
from testing.mosquitto import Mosquitto


def watched(loop: asyncio.AbstractEventLoop, fd: int) -> int:
    """What the loop's selector watches ``fd`` for (0: nothing)."""
    selector: selectors.BaseSelector = loop._selector  # type: ignore[attr-defined]
    key = selector.get_map().get(fd)
    return 0 if key is None else key.events


async def test_a_write_wanted_and_given_up_in_one_turn_leaves_no_watch_behind(mosquitto: Mosquitto) -> None:
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    client = make_client(MqttSection(url=mosquitto.url), "socket-watch")
    try:
        paho = client._client
        await client.__aenter__()
        sock = paho.socket()
        assert sock is not None
        fd = sock.fileno()
        # paho wants to write, then does not, before the loop ran the first request
        paho._call_socket_register_write()
        paho._call_socket_unregister_write()
        # The request runs at the loop's next turn, before a callback queued after it.
        turned = loop.create_future()
        loop.call_soon_threadsafe(turned.set_result, None)
        await turned
        assert not paho._registered_write
        assert watched(loop, fd) == selectors.EVENT_READ  # read, not write as well
        # The broker ends the connection (another client takes its id): paho closes the socket.
        async with make_client(MqttSection(url=mosquitto.url), "socket-watch"):
            with contextlib.suppress(aiomqtt.MqttError):
                await asyncio.wait_for(client._disconnected, 5)
        await client.__aexit__(None, None, None)
        assert watched(loop, fd) == 0  # nothing of the closed socket is watched
        # A new connection (usually given the descriptor just freed) is read: its PUBACK comes.
        async with client:
            await client.publish("socket/watch", b"x", qos=1, timeout=5)
        assert errors == []
    finally:
        loop.set_exception_handler(previous)
