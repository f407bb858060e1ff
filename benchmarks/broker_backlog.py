"""The broker's own part of a restart behind a backlog (issue 20, point 1), without the service.

Usage: ``.venv/bin/python benchmarks/broker_backlog.py [--queued 1000000] [--inflight 0 20 1000]``

For each ``max_inflight_messages`` of mosquitto: a client with a persistent session subscribes
and leaves, ``--queued`` QoS 1 messages are queued for it (``benchmarks/mqtt_blast.py``), it
reconnects and at once publishes a retained message, as the controller publishes its ``online``;
printed: the time to its CONNACK and how long after it a subscriber of the retained topic got
the message. With no limit (0), mosquitto 2.0 queues every waiting message for the client's
socket before it reads the client's next packet: the reason ``deploy/mosquitto/table-pc.conf``
keeps 1,000 in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt

from benchmarks.mqtt_blast import Blaster, connect_packet, publish_packet, subscribe_packet
from testing.mosquitto import Mosquitto, free_port

QUEUED_TOPIC = "bench/dev/x/event"
PAYLOAD = b'{"v":1,"seq":1,"ts":"2026-11-30T01:00:00.000Z","type":"shuffling"}'
RETAINED_TOPIC = "bench/controller/status"


def connected(port: int, client_id: str) -> socket.socket:
    """A connection of ``client_id`` with its kept session, once the CONNACK came."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(connect_packet(client_id, clean=False))
    if sock.recv(4)[:1] != b"\x20":
        raise RuntimeError("no CONNACK")
    return sock


async def one(queued: int, inflight: int) -> tuple[float, float]:
    """(s to the CONNACK, s from it to the retained message at a subscriber)."""
    with tempfile.TemporaryDirectory(prefix="tablectl-broker-backlog-") as name:
        port = free_port()
        broker = Mosquitto(
            port,
            Path(name),
            extra_conf=f"max_queued_messages 0\nmax_queued_bytes 0\nmax_inflight_messages {inflight}\n",
        )
        broker.start()
        try:
            with connected(port, "bench-persistent") as sock:
                sock.sendall(subscribe_packet("bench/dev/#"))
                sock.recv(5)  # SUBACK
            await asyncio.to_thread(Blaster(port, [(QUEUED_TOPIC, PAYLOAD)] * queued).run)
            async with aiomqtt.Client("127.0.0.1", port, identifier="bench-observer") as observer:
                await observer.subscribe(RETAINED_TOPIC, qos=1)
                started = time.perf_counter()
                with connected(port, "bench-persistent") as sock:
                    acked = time.perf_counter()
                    sock.sendall(publish_packet(RETAINED_TOPIC, b"online", 1, retain=True))
                    async for _ in observer.messages:
                        break
                    arrived = time.perf_counter()
        finally:
            broker.stop()
    return acked - started, arrived - acked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queued", type=int, default=1_000_000)
    parser.add_argument("--inflight", type=int, nargs="+", default=[0, 20, 1000])
    args = parser.parse_args()
    for inflight in args.inflight:
        connack, retained = asyncio.run(one(args.queued, inflight))
        print(
            f"{args.queued:,} queued, max_inflight_messages {inflight}: CONNACK after {connack:.2f} s, "
            f"the retained message at a subscriber {retained:.2f} s after it "
            f"(load average {os.getloadavg()[0]:.1f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
