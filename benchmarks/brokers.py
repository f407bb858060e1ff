"""A private mosquitto for the benchmarks, configured as the table PC runs it.

``set_tcp_nodelay true`` (small messages are not held back by Nagle's algorithm) and no limit on
messages in flight (the controller acknowledges a message only once it is journaled).
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from tests.support.mosquitto import free_port


@contextlib.contextmanager
def table_mosquitto(directory: Path, *, nodelay: bool = True) -> Iterator[int]:
    """A mosquitto on a free loopback port (``nodelay``: with ``set_tcp_nodelay true``); its port."""
    port = free_port()
    conf = directory / f"mosquitto-{port}.conf"
    conf.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_inflight_messages 0\n"
        f"max_queued_messages 100000\n{'set_tcp_nodelay true' if nodelay else ''}\n",
        encoding="utf-8",
    )
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    broker = subprocess.Popen([binary, "-c", str(conf)], stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.02)
        yield port
    finally:
        broker.terminate()
        broker.wait(5)
