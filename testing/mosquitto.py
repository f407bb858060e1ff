"""A private mosquitto broker on a free loopback port, started and stopped by the test.

By default a minimal broker without persistence; with ``config=TABLE_PC_CONF`` the table PC's
broker as shipped (``deploy/mosquitto/table-pc.conf``: TCP_NODELAY, persistence, queue limits),
its listener, persistence location and log moved to the test's port and directory, and its
clients' authentication either the test's password file and ACL (``auth``) or, for the tests
whose clients carry no credentials (what they test is delivery, not who), anonymous. ``kill()``
stops it with SIGKILL (no final save), ``start()`` brings it back on the same port.
"""

from __future__ import annotations

import contextlib
import getpass
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: The broker configuration the table PC runs (the fault tests and benchmarks use it).
TABLE_PC_CONF: Final = Path(__file__).resolve().parent.parent / "deploy" / "mosquitto" / "table-pc.conf"
#: Settings of a shipped configuration that name this machine's places: replaced for a test.
_PLACES: Final = frozenset({"listener", "persistence_location", "log_dest", "pid_file", "user"})
#: The settings of who may connect (replaced by ``Mosquitto.auth``, or by anonymous access).
_AUTH: Final = frozenset({"allow_anonymous", "password_file", "acl_file"})


def _ephemeral_ports() -> range:
    """The ports the kernel gives outgoing connections (Linux's default when unreadable)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return range(int(low), int(high) + 1)
    except (OSError, ValueError):
        return range(32768, 61000)


#: Where a test's servers listen: below the kernel's ephemeral range. A port the kernel hands out
#: for ``bind(0)`` is one it may also give the next outgoing connection (the floor's tests open
#: hundreds) in the moment between the test finding it free and its server binding it: a node
#: of a test's NATS cluster once failed to start so. No client is ever given a port from here.
_SERVER_PORTS: Final = range(20000, max(20001, min(_ephemeral_ports().start, 32768)))
#: Drawn from the system's randomness: pytest-randomly seeds ``random`` alike in every xdist
#: worker, which would have them draw the same ports in the same order.
_DRAW: Final = random.SystemRandom()


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago, outside the kernel's ephemeral range
    when there is room below it (two test processes drawing the same port is then what is left:
    one chance in thousands, and the loser's bind check moves on)."""
    for _ in range(100):
        port = _DRAW.choice(_SERVER_PORTS)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        found: int = sock.getsockname()[1]
        return found


@dataclass
class Mosquitto:
    """A running private broker; ``restart()`` stops and starts it again on the same port."""

    port: int
    workdir: Path
    process: subprocess.Popen[bytes] | None = None
    #: More configuration lines (``set_tcp_nodelay true`` for latency figures).
    extra_conf: str = ""

    host: str = "127.0.0.1"
    #: A mosquitto configuration to run (e.g. TABLE_PC_CONF), None for the minimal one.
    config: Path | None = None
    #: mosquitto's own defaults (20 unacknowledged messages in flight, 1,000 queued): a broker
    #: nobody configured for the table.
    stock: bool = False
    #: With ``config``: the password file and ACL its clients authenticate with (None: the
    #: configuration's authentication replaced by anonymous access).
    auth: tuple[Path, Path] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def start(self) -> None:
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        conf = self.workdir / "mosquitto.conf"
        conf.write_text(self.conf_text())
        log = (self.workdir / "mosquitto.log").open("ab")
        self.process = subprocess.Popen([binary, "-c", str(conf)], stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"mosquitto exited with {self.process.returncode}: "
                    f"{(self.workdir / 'mosquitto.log').read_text()}"
                )
            with contextlib.suppress(OSError), socket.create_connection((self.host, self.port), 0.2):
                return
            time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not listen on port {self.port} within 10 s")

    def conf_text(self) -> str:
        """The configuration file the broker is started with."""
        if self.stock:
            return (
                f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                "log_dest stderr\nlog_type error\nlog_type warning\n" + self.extra_conf
            )
        if self.config is None:
            return (
                f"listener {self.port} 127.0.0.1\n"
                "allow_anonymous true\n"
                "persistence false\n"
                "log_dest stderr\n"
                "log_type error\n"
                "log_type warning\n"
                # As the table PC's broker ships: without it every small packet after the first
                # waits for a delayed ACK (~40 ms), and a test's round trips are mostly waiting.
                "set_tcp_nodelay true\n"
                "max_queued_messages 100000\n"
                # The controller acknowledges a message only once its record is durable;
                # mosquitto's default of 20 unacknowledged messages would make it stop delivering
                # (while the disk is full, or an fsync is slow), and the controller holds what it
                # cannot write yet. 1,000 as deploy/mosquitto/table-pc.conf: no limit makes a
                # reconnection behind a large backlog stall the broker (docs/service.md).
                "max_inflight_messages 1000\n" + self.extra_conf
            )
        kept = []
        for line in self.config.read_text(encoding="utf-8").splitlines():
            words = line.split("#", 1)[0].split()
            if words and words[0] in _PLACES | _AUTH:
                continue
            kept.append(line)
        if self.auth is None:
            kept.append("allow_anonymous true")
        else:
            kept += ["allow_anonymous false", f"password_file {self.auth[0]}", f"acl_file {self.auth[1]}"]
        kept += [
            f"listener {self.port} {self.host}",
            f"persistence_location {self.workdir}/",
            "log_dest stderr",
            # started as root mosquitto becomes its own user, who cannot write the test's files
            f"user {getpass.getuser()}",
        ]
        return "\n".join(kept) + "\n" + self.extra_conf

    def kill(self) -> None:
        """SIGKILL: no goodbye, no final save of the persistence file."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(5)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None

    def restart(self, down_s: float = 0.5) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()


@contextlib.contextmanager
def running_mosquitto(
    workdir: Path,
    config: Path | None = None,
    auth: tuple[Path, Path] | None = None,
    *,
    stock: bool = False,
) -> Iterator[Mosquitto]:
    """Start a private mosquitto in ``workdir`` (with ``config``, e.g. TABLE_PC_CONF, and its
    clients' password file and ACL ``auth``; ``stock``: mosquitto's defaults) and stop it on
    exit."""
    broker = Mosquitto(port=free_port(), workdir=workdir, config=config, auth=auth, stock=stock)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
