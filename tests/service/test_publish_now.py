"""``link.aiomqtt_adapter.publish_now`` writes the message to the socket before it returns (no
turn of the event loop needed: aiomqtt's ``publish`` writes only at the loop's next ``select``),
and its coroutine completes on the broker's PUBACK; messages handed in turn arrive in order."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time

from paho.mqtt import client as paho_client
from paho.mqtt.enums import CallbackAPIVersion

from config.models import MqttSection
from link.aiomqtt_adapter import publish_now, socket_of
from link.client import make_client
from testing.mosquitto import Mosquitto
from tests.service.support import threadsafe_calls

TOPIC = "holdem/t1/alerts"


def _subscriber(broker: Mosquitto, got: queue.Queue[bytes], ready: threading.Event) -> paho_client.Client:
    """A subscriber on a thread of its own (paho's loop), independent of the test's event loop."""
    sub = paho_client.Client(CallbackAPIVersion.VERSION2, client_id="publish-now-sub")
    sub.on_connect = lambda c, *_: c.subscribe(TOPIC, qos=1)
    sub.on_subscribe = lambda *_: ready.set()
    sub.on_message = lambda c, u, m: got.put(bytes(m.payload))
    sub.connect(broker.host, broker.port)
    sub.loop_start()
    return sub


def test_written_before_it_returns_and_acknowledged_after(mosquitto: Mosquitto) -> None:
    got: queue.Queue[bytes] = queue.Queue()
    ready = threading.Event()
    sub = _subscriber(mosquitto, got, ready)
    try:
        assert ready.wait(10)

        async def run() -> list[bytes]:
            async with make_client(MqttSection(url=mosquitto.url), "publish-now-pub") as client:
                acknowledged = [
                    publish_now(client, TOPIC, f"alert {i}".encode(), qos=1, retain=False) for i in range(3)
                ]
                # The event loop is held here (no turn, no select): only what was written to the
                # socket during the calls can reach the subscriber meanwhile.
                arrived: list[bytes] = []
                deadline = time.monotonic() + 5
                while len(arrived) < 3 and time.monotonic() < deadline:
                    with contextlib.suppress(queue.Empty):
                        arrived.append(got.get(timeout=0.1))
                async with asyncio.timeout(5):
                    for confirmation in acknowledged:
                        await confirmation
                return arrived

        assert asyncio.run(run()) == [b"alert 0", b"alert 1", b"alert 2"]
    finally:
        sub.loop_stop()
        sub.disconnect()


def test_the_loop_is_not_asked_to_watch_for_writing_what_was_written(mosquitto: Mosquitto) -> None:
    """A publish written at once leaves no wish to write behind: the loop does not watch the
    socket for writing at its next turn (a watch added and removed for nothing), and a publish
    made on the loop's thread wakes it through no self-pipe write."""

    async def run() -> tuple[bool, int]:
        loop = asyncio.get_running_loop()
        async with make_client(MqttSection(url=mosquitto.url), "publish-now-watch") as client:
            sock = socket_of(client)
            assert sock is not None
            with threadsafe_calls(loop) as threadsafe:
                acknowledged = [
                    publish_now(client, TOPIC, f"alert {i}".encode(), qos=1, retain=False) for i in range(3)
                ]
                # One turn: what the publishes queued on the loop runs (before the socket is
                # found writable and a watch made meanwhile removes itself)
                await asyncio.sleep(0)
                watched = loop.remove_writer(sock.fileno())  # True: it was watched for writing
            async with asyncio.timeout(5):
                for confirmation in acknowledged:
                    await confirmation
            return watched, threadsafe.count

    assert asyncio.run(run()) == (False, 0)
