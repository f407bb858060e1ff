"""A private mosquitto for the benchmarks, configured as the table PC runs it.

``set_tcp_nodelay true`` (small messages are not held back by Nagle's algorithm), on top of the
tests' broker (``testing.mosquitto``), which already sets no limit on messages in flight (the
controller acknowledges a message only once it is journaled).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from testing.mosquitto import Mosquitto, free_port


@contextlib.contextmanager
def table_mosquitto(directory: Path, *, nodelay: bool = True) -> Iterator[int]:
    """A mosquitto on a free loopback port (``nodelay``: with ``set_tcp_nodelay true``); its port."""
    port = free_port()
    workdir = directory / f"mosquitto-{port}"
    workdir.mkdir()
    broker = Mosquitto(port, workdir, extra_conf="set_tcp_nodelay true\n" if nodelay else "")
    broker.start()
    try:
        yield port
    finally:
        broker.stop()
