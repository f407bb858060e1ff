"""What amqtt 0.12 does not offer publicly, in one place (the embedded broker only).

- A subscription arriving while the broker sends retained messages to a connecting client makes
  amqtt iterate its subscription table while it changes ("dictionary changed size during
  iteration": the loop awaits inside), which drops the connecting client. The table is replaced
  by a dict whose iteration walks a snapshot, which is what that loop means to do.
- amqtt has no accessor for the port a listener bound (port 0: the system picks a free one); its
  server object is read instead.

Neither is reported upstream yet (no amqtt issue found for either as of 0.12.1); both go when
amqtt offers a public way. Nothing else in tablectl touches amqtt's internals.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

from amqtt.broker import Broker


class _SnapshotDict(dict[str, Any]):
    """A dict whose iteration walks a snapshot of its keys."""

    def __iter__(self) -> Iterator[str]:
        return iter(list(super().keys()))


def iterate_subscriptions_safely(broker: Broker) -> None:
    """Make a broker not yet started iterate its subscriptions over snapshots."""
    broker._subscriptions = _SnapshotDict()


def bound_port(broker: Broker, listener: str, host: str) -> int | None:
    """The port ``listener`` of a started broker bound on ``host`` (None: not found)."""
    server = broker._servers.get(listener)
    instance = getattr(server, "instance", None)
    sockets: list[socket.socket] = list(getattr(instance, "sockets", None) or [])
    for sock in sockets:
        bound_host, port = sock.getsockname()[:2]
        if bound_host == host:
            return int(port)
    return None
