"""A table PC in a directory: its configuration, ``tablectl deploy``'s files, installed, running.

The broker runs the *rendered* mosquitto.conf, password file and ACL. mosquitto started as root
drops to the ``mosquitto`` user before it reads the password file and the ACL, so they are
installed the way docs/deploy.md says (0640 root:mosquitto, in a directory mosquitto may enter),
under a temporary directory of /tmp rather than pytest's private one.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt

from controller.cli import main as tablectl
from testing.script import Message
from tests.conftest import EXAMPLE_REGISTRY

TABLE = "t1"
DEVICES = ("shuffler", "rfid-1", "sensors")


def _as_root() -> bool:
    return os.geteuid() == 0


def _mosquitto_ids() -> tuple[int, int] | None:
    """(uid, gid) of the mosquitto user when running as root (it then drops to it), else None."""
    if not _as_root():
        return None
    import grp
    import pwd

    try:
        return pwd.getpwnam("mosquitto").pw_uid, grp.getgrnam("mosquitto").gr_gid
    except KeyError:
        return None


@contextlib.contextmanager
def install_dir() -> Iterator[Path]:
    """A directory the broker (possibly as user mosquitto) can read: like /etc/mosquitto."""
    path = Path(tempfile.mkdtemp(prefix="tablectl-deploy-"))
    ids = _mosquitto_ids()
    try:
        if ids is not None:
            os.chown(path, 0, ids[1])
            path.chmod(0o750)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def install(source: Path, target: Path, *, mode: int = 0o640) -> Path:
    """Copy a rendered file where the broker reads it, 0640 root:mosquitto (docs/deploy.md)."""
    shutil.copyfile(source, target)
    target.chmod(mode)
    ids = _mosquitto_ids()
    if ids is not None:
        os.chown(target, 0, ids[1])
    return target


def state_dir(parent: Path) -> Path:
    """mosquitto's persistence directory, owned by the user it runs as."""
    path = parent / "state"
    path.mkdir(mode=0o700)
    ids = _mosquitto_ids()
    if ids is not None:
        os.chown(path, *ids)
    return path


def source_config(directory: Path, port: int, *, extra: str = "", table: str = TABLE) -> Path:
    """The operator's configuration: a table with its three devices, broker on loopback."""
    text = f"""\
# Table {table}: the operator's file (this comment must survive deploy).
[table]
id = "{table}"
seats = 9

[mqtt]
url = "mqtt://127.0.0.1:{port}"   # the table PC's own broker
keepalive = 5

[decks]
registry = "{EXAMPLE_REGISTRY}"

[journal]
path = "var/journal-{{table}}.jsonl"

[[devices]]
id = "shuffler"
driver = "shuffler"
port = "/dev/ttyUSB0"
vendor_id = 0x0403
product_id = 0x6001
serial_number = "FT4AB12C"

[[devices]]
id = "rfid-1"
driver = "rfid"
port = "/dev/ttyACM0"
vendor_id = 0x1FC9
product_id = 0x0083

[devices.antennas]
1 = "seat:1"
2 = "board"

[[devices]]
id = "sensors"
driver = "sensors"
vendor_id = 0x1209
product_id = 0x7AB1
serial_number = "SB-0042"
{extra}"""
    path = directory / f"{table}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class BrokerProcess:
    """mosquitto running a given configuration file; its log in ``log_path``."""

    conf: Path
    port: int
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen([binary, "-c", str(self.conf)], stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited with {self.process.returncode}:\n{self.log}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
                return
            time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not listen on {self.port} within 10 s:\n{self.log}")

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None


@dataclass
class Deployment:
    """A rendered table PC: ``out`` as tablectl deploy wrote it, ``etc`` as installed."""

    source: Path
    out: Path
    etc: Path
    port: int
    broker: BrokerProcess | None = None
    extra_args: list[str] = field(default_factory=list)

    @property
    def config(self) -> Path:
        """The rendered configuration (its secrets beside it, as on the table PC)."""
        return self.out / "tablectl" / self.source.name

    def secret(self, user: str) -> str:
        for folder in (self.out / "tablectl" / "secrets", self.out / "secrets"):
            path = folder / user
            if path.exists():
                return path.read_text(encoding="utf-8").strip()
        raise KeyError(user)

    def render(self) -> None:
        args = [
            "deploy",
            "--config",
            str(self.source),
            "--out",
            str(self.out),
            "--mosquitto-dir",
            str(self.etc),
            "--broker-state-dir",
            str(self.etc / "state"),
            *self.extra_args,
        ]
        with contextlib.redirect_stdout(io.StringIO()):
            code = tablectl(args)
        if code != 0:
            raise AssertionError(f"tablectl deploy failed with {code}")

    def start_broker(self) -> BrokerProcess:
        for name in ("mosquitto.conf", "tablectl.passwd", "tablectl.acl"):
            install(self.out / "mosquitto" / name, self.etc / name)
        if not (self.etc / "state").exists():
            state_dir(self.etc)
        self.broker = BrokerProcess(self.etc / "mosquitto.conf", self.port, self.out / "broker.log")
        self.broker.start()
        return self.broker

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()


@contextlib.contextmanager
def deployment(
    tmp_path: Path, *, extra: str | Callable[[Path], str] = "", start: bool = True
) -> Iterator[Deployment]:
    """Render a table PC from :func:`source_config` and run its broker (stopped on exit).

    ``extra`` is more configuration text, or a function of the installation directory (where
    certificates go) that returns it.
    """
    with install_dir() as etc:
        port = free_port()
        text = extra(etc) if callable(extra) else extra
        source = source_config(tmp_path, port, extra=text)
        rendered = Deployment(source, tmp_path / "out", etc, port)
        rendered.render()
        try:
            if start:
                rendered.start_broker()
            yield rendered
        finally:
            rendered.stop()


def client(port: int, user: str | None, password: str | None, **options: Any) -> aiomqtt.Client:
    return aiomqtt.Client(
        "127.0.0.1",
        port,
        username=user,
        password=password,
        identifier=f"{user or 'anon'}-{uuid.uuid4().hex[:8]}",
        timeout=5,
        **options,
    )


@dataclass
class Seen:
    """Messages one client received, in order."""

    messages: list[tuple[str, bytes]] = field(default_factory=list)

    def topics(self) -> list[str]:
        return [topic for topic, _ in self.messages]

    def on(self, topic: str) -> list[bytes]:
        return [payload for t, payload in self.messages if t == topic]


@contextlib.asynccontextmanager
async def listening(
    port: int, user: str | None, password: str | None, *filters: str, tls: ssl.SSLContext | None = None
) -> AsyncIterator[tuple[aiomqtt.Client, Seen]]:
    """A connected client subscribed to ``filters``, recording what it receives."""
    seen = Seen()
    async with client(port, user, password, tls_context=tls) as connection:
        for topic in filters:
            await connection.subscribe(topic, qos=1)

        async def collect() -> None:
            async for message in connection.messages:
                payload = message.payload
                assert isinstance(payload, bytes)
                seen.messages.append((str(message.topic), payload))

        task = asyncio.create_task(collect())
        try:
            yield connection, seen
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await task


async def until(predicate: Any, *, within: float = 10.0, what: str = "") -> None:
    """Poll ``predicate()`` until true; fail after ``within`` seconds."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within} s: {what}")
        await asyncio.sleep(0.02)


async def publish_as_devices(table: Deployment, messages: list[Message]) -> None:
    """Each message under the identity of the device (or the console) that sends it."""
    clients: dict[str, aiomqtt.Client] = {}
    try:
        for message in messages:
            user = f"{TABLE}-console" if message.kind == "input" else f"{TABLE}-dev-{message.device}"
            if user not in clients:
                clients[user] = client(table.port, user, table.secret(user))
                await clients[user].__aenter__()
            payload = message.payload
            data = payload.encode() if isinstance(payload, str) else payload.to_json()
            if message.kind == "input":
                topic = f"holdem/{TABLE}/input"
            elif message.kind == "status":
                topic = f"holdem/{TABLE}/dev/{message.device}/status"
            else:
                topic = f"holdem/{TABLE}/dev/{message.device}/event"
            await clients[user].publish(topic, data, qos=1, retain=message.kind == "status")
    finally:
        for connection in clients.values():
            await connection.__aexit__(None, None, None)
