"""systemd's notify protocol: READY=1 once online, WATCHDOG=1 from the event loop, STOPPING=1.

A fake service manager binds the ``NOTIFY_SOCKET`` datagram socket (abstract or a path) and
records every notification with its arrival time, from a thread of its own (so that it keeps
listening while the event loop under test is blocked).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiomqtt
import pytest

from config.loader import load_table
from contract.models import parse_status
from controller.service.cli import serve
from controller.service.systemd import Notifier
from testing.mosquitto import Mosquitto
from tests.service.support import write_config


@dataclass
class FakeManager:
    """The receiving end of ``$NOTIFY_SOCKET``."""

    address: str
    sock: socket.socket
    received: list[tuple[float, str]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _listen(self) -> None:
        self.sock.settimeout(0.05)
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            with self._lock:
                self.received.append((time.monotonic(), data.decode()))

    def messages(self) -> list[tuple[float, str]]:
        with self._lock:
            return list(self.received)

    def times_of(self, field_: str) -> list[float]:
        return [t for t, text in self.messages() if field_ in text.split("\n")]

    async def wait_for(self, field_: str, *, count: int = 1, within: float = 15.0) -> float:
        """The arrival time of the ``count``-th datagram holding ``field_``."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            times = self.times_of(field_)
            if len(times) >= count:
                return times[count - 1]
            await asyncio.sleep(0.01)
        raise AssertionError(f"{field_} x{count} not received within {within} s: {self.messages()}")


@contextlib.contextmanager
def fake_manager(path: Path | None = None) -> Iterator[FakeManager]:
    """A notify socket: abstract (``@name``) by default, else a file system path."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if path is None:
        name = f"tablectl-test-{uuid.uuid4().hex}"
        sock.bind("\0" + name)
        address = "@" + name
    else:
        sock.bind(str(path))
        address = str(path)
    manager = FakeManager(address, sock)
    thread = threading.Thread(target=manager._listen, daemon=True)
    thread.start()
    try:
        yield manager
    finally:
        manager._stop.set()
        thread.join(2)
        sock.close()


def test_notifications_reach_an_abstract_or_a_path_socket(tmp_path: Path) -> None:
    for path in (None, tmp_path / "notify"):
        with fake_manager(path) as manager:
            notifier = Notifier.from_environment({"NOTIFY_SOCKET": manager.address})
            assert notifier.notify("READY=1", "STATUS=up")
            deadline = time.monotonic() + 5
            while not manager.messages() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert [text for _, text in manager.messages()] == ["READY=1\nSTATUS=up"]


def test_without_a_manager_or_for_another_process_nothing_is_sent() -> None:
    assert not Notifier.from_environment({}).notify("READY=1")
    assert Notifier.from_environment({}).watchdog_interval is None
    other = Notifier.from_environment(
        {"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(os.getpid() + 1)}
    )
    assert other.watchdog_interval is None  # the watchdog is meant for another process
    mine = Notifier.from_environment(
        {"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(os.getpid())}
    )
    assert mine.watchdog_interval == 0.5
    # A socket nobody listens on: reported once, never raised.
    assert not mine.notify("WATCHDOG=1")


async def _retained_status(port: int, topic: str) -> str:
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"check-{uuid.uuid4().hex}") as client:
        await client.subscribe(topic, qos=1)
        async with asyncio.timeout(5):
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                return parse_status(topic, message.payload).state
    raise AssertionError("no retained status")


async def test_ready_once_online_watchdog_from_the_loop_and_stopping(
    tmp_path: Path, mosquitto_session: Mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tablectl run``'s entry point under a fake systemd, in this process and event loop."""
    config_path = write_config(tmp_path, mosquitto_session.url, table="tnotify")
    config, registry = load_table(config_path)
    interval_s = 0.1
    with fake_manager() as manager:
        monkeypatch.setenv("NOTIFY_SOCKET", manager.address)
        monkeypatch.setenv("WATCHDOG_USEC", str(int(interval_s * 2 * 1_000_000)))
        monkeypatch.delenv("WATCHDOG_PID", raising=False)
        running = asyncio.create_task(serve(config, registry))
        await manager.wait_for("READY=1")
        # READY=1 comes only after the retained `online` is on the broker.
        status = f"holdem/{config.table.id}/controller/status"
        assert await _retained_status(mosquitto_session.port, status) == "online"
        first_ping = await manager.wait_for("WATCHDOG=1", count=3)
        assert manager.times_of("READY=1")[0] <= manager.times_of("WATCHDOG=1")[0]

        # Block the event loop (as a stalled loop would): the pings stop until it runs again.
        pings_before = len(manager.times_of("WATCHDOG=1"))
        blocked_at = time.monotonic()
        time.sleep(1.0)  # noqa: ASYNC251 - blocking the loop is the point of this test
        released_at = time.monotonic()
        resumed = await manager.wait_for("WATCHDOG=1", count=pings_before + 1)
        pings = manager.times_of("WATCHDOG=1")
        during = [t for t in pings if blocked_at + interval_s < t < released_at]
        assert during == [], f"pinged while the loop was blocked: {during}"
        assert resumed >= released_at
        assert first_ping < blocked_at

        # The handler serve installed stops the service (without it SIGTERM would end pytest).
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(running, 10) == 0
        await manager.wait_for("STOPPING=1")
