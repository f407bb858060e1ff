"""The systemd notify protocol with the standard library: ``READY=1``, ``WATCHDOG=1``, ``STOPPING=1``.

Under ``Type=notify`` systemd passes ``$NOTIFY_SOCKET``, a unix datagram socket (a path, or an
abstract name written with a leading ``@``), and with ``WatchdogSec=`` also ``$WATCHDOG_USEC``
(and ``$WATCHDOG_PID``). Each notification is one datagram of ``KEY=value`` lines. Outside systemd
there is no socket and every call here does nothing.

The watchdog is pinged by a task of the event loop itself, at half the interval systemd allows:
a loop that stalls (a blocking call, a livelock) stops the pings and systemd restarts the service.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)


class Notifier:
    """Sends notifications to the service manager; a no-op when not run by one."""

    def __init__(self, address: str | None, watchdog_usec: int | None = None) -> None:
        self.address = address
        self.watchdog_usec = watchdog_usec
        self._failed = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """The notifier systemd's environment describes (``NOTIFY_SOCKET``, ``WATCHDOG_USEC``)."""
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET") or None
        watchdog: int | None = None
        pid = env.get("WATCHDOG_PID")
        # WATCHDOG_PID names the process the watchdog is meant for; a child inheriting the
        # environment must not ping in its parent's stead.
        if pid is None or pid == str(os.getpid()):
            with contextlib.suppress(ValueError):
                watchdog = int(env.get("WATCHDOG_USEC", "")) or None
        return cls(address, watchdog)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    @property
    def watchdog_interval(self) -> float | None:
        """Seconds between two pings: half of what systemd allows, or None without a watchdog."""
        if not self.enabled or self.watchdog_usec is None:
            return None
        return self.watchdog_usec / 2_000_000

    def notify(self, *fields: str) -> bool:
        """Send ``fields`` (``"READY=1"``, ...) as one datagram; False when it could not be sent."""
        if self.address is None:
            return False
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(target)
                sock.sendall("\n".join(fields).encode())
        except OSError as error:
            if not self._failed:  # once: a missing manager must not flood the log
                log.warning("systemd notify socket %s: %s", self.address, error)
            self._failed = True
            return False
        return True

    def ready(self, status: str) -> None:
        self.notify("READY=1", f"STATUS={status}")

    def stopping(self) -> None:
        self.notify("STOPPING=1", "STATUS=stopping")

    async def keep_alive(self) -> None:
        """Ping the watchdog from the event loop until cancelled (returns at once without one)."""
        interval = self.watchdog_interval
        if interval is None:
            return
        while True:
            self.notify("WATCHDOG=1")
            await asyncio.sleep(interval)

    def start_watchdog(self) -> asyncio.Task[None] | None:
        """The pinging task, or None when systemd set no watchdog."""
        if self.watchdog_interval is None:
            return None
        log.info("systemd watchdog: a ping every %.1f s", self.watchdog_interval)
        return asyncio.create_task(self.keep_alive(), name="systemd-watchdog")
