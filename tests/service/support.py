"""Helpers of the service tests: a config file, the service as a real process, an MQTT probe."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import resource
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import aiomqtt

from config.loader import load_table
from contract.models import Alert, EventBase, Status, WireModel, parse_alert, parse_status
from contract.topics import Topics
from controller.service.network import Service
from link.client import NO_DELAY
from testing.chipset import write_chip_registry
from testing.script import Message, Table
from tests.conftest import EXAMPLE_REGISTRY, REPO
from tests.engine.game import CHIPS
from tests.engine.scenario import registry

TABLECTL = Path(sys.executable).parent / "tablectl"
#: ``tablectl run`` by default; TABLECTL_TEST_RUN=module starts ``python -m controller.service.cli``
#: instead (same code, without the CLI's other subcommands; for a tree where one is mid-change).
RUN_COMMAND = (
    [sys.executable, "-m", "controller.service.cli"]
    if os.environ.get("TABLECTL_TEST_RUN") == "module"
    else [str(TABLECTL), "run"]
)
WAIT_S = 10.0
_ids = itertools.count(1)


def now() -> datetime:
    return datetime.now(UTC)


def write_config(
    directory: Path,
    broker_url: str,
    *,
    table: str = "t1",
    seats: int = 9,
    profile: str = "roberts",
    action_feed: bool = False,
    sensors_board: bool = False,
    board_backend: str | None = None,
    fsync: bool = True,
    journal: str = "",
) -> Path:
    """A service configuration in ``directory``: only [table], [mqtt], [decks] and [journal]
    (``journal``: more keys of that section, TOML lines)."""
    text = (
        f'[table]\nid = "{table}"\nseats = {seats}\nprofile = "{profile}"\n'
        f"action_feed = {str(action_feed).lower()}\n\n"
        f'[mqtt]\nurl = "{broker_url}"\nroot = "holdem"\nkeepalive = 5\n\n'
        f'[decks]\nregistry = "{EXAMPLE_REGISTRY}"\n\n'
        f'[journal]\npath = "journal.jsonl"\nfsync = {str(fsync).lower()}\n{journal}'
    )
    if sensors_board:
        text += (
            '\n[display]\nbuzzer_ms = 250\n\n[[devices]]\nid = "sensors"\ndriver = "sensors"\n'
            "vendor_id = 0x1209\nproduct_id = 0x7AB1\n"
        )
        if board_backend is not None:
            text += f'backend = "{board_backend}"\n'
    path = directory / f"{table}.toml"
    path.write_text(text, encoding="utf-8")
    return path


#: A reader whose antennas cover the first three seats' stacks (its driver runs elsewhere: the
#: test publishes its events), and the chip registry the stacks are read with.
STACK_READER = """
[chips]
registry = "chips.csv"

[[devices]]
id = "rfid-1"
driver = "rfid"
enabled = false
port = "/dev/ttyACM0"

[devices.antennas]
1 = "stack:1"
2 = "stack:2"
3 = "stack:3"
"""


def write_session_config(
    directory: Path, broker_url: str, *, table: str, max_absence_s: int, stakes: str
) -> Path:
    """A nine-seat table whose session rules are followed (docs/rules.md, "The session"): the
    house's longest absence, ``stakes`` (a ``[stakes]`` section), the stacks read by
    :data:`STACK_READER` with the engine tests' chips."""
    config = write_config(directory, broker_url, table=table, seats=9)
    write_chip_registry(directory / "chips.csv", CHIPS)
    text = config.read_text(encoding="utf-8")
    text = text.replace("[table]\n", f"[table]\nmax_absence_s = {max_absence_s}\n", 1)
    config.write_text(text + stakes + STACK_READER, encoding="utf-8")
    return config


@dataclass
class ServiceProcess:
    """``tablectl run --config FILE`` as a real process, its log in a file."""

    config: Path
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    #: RLIMIT_FSIZE of the process, in bytes: writes beyond it fail (a disk that is full).
    file_size_limit: int | None = None
    extra_args: tuple[str, ...] = ()

    def start(self) -> None:
        log = self.log_path.open("ab")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        limit = self.file_size_limit

        def limit_file_size() -> None:
            if limit is not None:
                # The hard limit stays open: limit_file_size() frees the disk again later.
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

        self.process = subprocess.Popen(
            [*RUN_COMMAND, "--config", str(self.config), *self.extra_args],
            stdout=log,
            stderr=log,
            cwd=REPO,
            env=env,
            preexec_fn=limit_file_size if limit is not None else None,  # noqa: PLW1509
        )

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def limit_file_size(self, size: int | None) -> None:
        """Let no file of the process grow beyond ``size`` bytes from now on (None: no limit).

        A disk that fills up (and is freed again) under the running service: writes beyond the
        limit fail with ``File too large`` (EFBIG), as the kernel does it.
        """
        assert self.process is not None
        soft = resource.RLIM_INFINITY if size is None else size
        resource.prlimit(self.process.pid, resource.RLIMIT_FSIZE, (soft, resource.RLIM_INFINITY))

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)

    def wait(self, within: float = WAIT_S) -> int:
        assert self.process is not None
        return self.process.wait(within)

    def kill(self) -> None:
        """kill -9: no chance to say goodbye."""
        if self.running():
            self.signal(signal.SIGKILL)
            self.wait()

    def stop(self) -> None:
        if self.running():
            self.signal(signal.SIGTERM)
            try:
                self.wait()
            except subprocess.TimeoutExpired:
                self.kill()


async def until(condition: Callable[[], bool], *, within: float = WAIT_S, what: str = "") -> None:
    """Poll ``condition`` (cheap, e.g. a file read) until it holds; fail after ``within`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"not within {within} s: {what or condition}")
        await asyncio.sleep(0.02)


def script(table: Table, *lines: str) -> list[Message]:
    """Render table script lines (``testing.script``) into the messages devices would publish."""
    out: list[Message] = []
    for line in lines:
        out += table.run(line)
    return out


def new_table(seats: int = 9) -> Table:
    """A scripted table with decks A and B of the example registry."""
    return Table(registry(), table_seats=seats)


@dataclass(frozen=True)
class Received:
    topic: str
    payload: bytes
    retain: bool


@dataclass
class Probe:
    """A test client on the table's topics: publishes like a driver, records all it sees."""

    port: int
    topics: Topics
    messages: list[Received] = field(default_factory=list)
    _client: aiomqtt.Client | None = None
    _reader: asyncio.Task[None] | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _seq: dict[str, int] = field(default_factory=dict)

    async def __aenter__(self) -> Probe:
        self._client = aiomqtt.Client(
            "127.0.0.1",
            self.port,
            identifier=f"probe-{os.getpid()}-{next(_ids)}",
            timeout=5,
            socket_options=NO_DELAY,  # a device's publishes leave at once, as the drivers' do
        )
        await self._client.__aenter__()
        await self._client.subscribe(f"{self.topics.base}/#", qos=1)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await self._reader
        if self._client is not None:
            with contextlib.suppress(aiomqtt.MqttError):
                await self._client.__aexit__(None, None, None)

    async def _read(self) -> None:
        assert self._client is not None
        with contextlib.suppress(aiomqtt.MqttError):
            async for message in self._client.messages:
                payload = message.payload
                assert isinstance(payload, bytes)
                self.messages.append(Received(str(message.topic), payload, message.retain))
                self._changed.set()

    # ---- waiting ------------------------------------------------------------------------

    async def wait_for(
        self, predicate: Callable[[Received], bool], *, after: int = 0, within: float = WAIT_S
    ) -> Received:
        """The first message from index ``after`` on that matches ``predicate``."""

        async def scan() -> Received:
            index = after
            while True:
                while index < len(self.messages):
                    message = self.messages[index]
                    index += 1
                    if predicate(message):
                        return message
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(scan(), within)
        except TimeoutError:
            seen = "\n".join(f"  {m.topic} {m.payload[:200]!r}" for m in self.messages[after:])
            raise AssertionError(f"no matching message within {within} s; saw:\n{seen}") from None

    async def status(self, state: str, *, after: int = 0, within: float = WAIT_S) -> Status:
        topic = self.topics.controller_status
        message = await self.wait_for(
            lambda m: m.topic == topic and parse_status(topic, m.payload).state == state,
            after=after,
            within=within,
        )
        return parse_status(topic, message.payload)

    async def alert(
        self, code: str, *, status: str = "raised", after: int = 0, within: float = WAIT_S
    ) -> Alert:
        topic = self.topics.alerts

        def match(m: Received) -> bool:
            if m.topic != topic:
                return False
            alert = parse_alert(topic, m.payload)
            return alert.code == code and alert.status == status

        message = await self.wait_for(match, after=after, within=within)
        return parse_alert(topic, message.payload)

    def alerts(self) -> list[Alert]:
        return [parse_alert(m.topic, m.payload) for m in self.messages if m.topic == self.topics.alerts]

    # ---- publishing ---------------------------------------------------------------------

    async def publish(self, topic: str, payload: bytes | str, *, retain: bool = False) -> None:
        assert self._client is not None
        await self._client.publish(topic, payload, qos=1, retain=retain)

    async def event(self, device: str, model: type[EventBase], **fields: object) -> None:
        """Publish a device event under ``device`` with the next seq of that device."""
        seq = self._seq.get(device, 0) + 1
        self._seq[device] = seq
        event = model(seq=seq, ts=now(), **fields)
        await self.publish(self.topics.device_event(device), event.to_json())

    async def send(self, topic: str, payload: WireModel) -> None:
        await self.publish(topic, payload.to_json())

    async def play(self, messages: Iterable[Message], *, rename: Mapping[str, str] | None = None) -> int:
        """Publish table script messages as the devices and the console would, in order.

        ``rename`` maps the script's device ids (``rfid-1``, ``shuffler``, ``sensors``) to others.
        Returns how many messages were published.
        """
        count = 0
        for message in messages:
            payload = message.payload
            data = payload.encode() if isinstance(payload, str) else payload.to_json()
            device = message.device or ""
            device = (rename or {}).get(device, device)
            if message.kind == "input":
                await self.publish(self.topics.input, data)
            elif message.kind == "status":
                # Device status is retained, as the contract says.
                await self.publish(self.topics.device_status(device), data, retain=True)
            else:
                await self.publish(self.topics.device_event(device), data)
            count += 1
        return count


@contextlib.asynccontextmanager
async def running_service(config: Path) -> AsyncIterator[Service]:
    """The service in this process (its async entry point), stopped on exit like by SIGTERM."""
    table_config, deck_registry = load_table(config)
    service = Service(table_config, deck_registry, stop=asyncio.Event())
    task = asyncio.create_task(service.run())
    try:
        yield service
    finally:
        service.stop.set()
        assert await asyncio.wait_for(task, WAIT_S) == 0


@contextlib.asynccontextmanager
async def probe(port: int, table: str) -> AsyncIterator[Probe]:
    async with Probe(port, Topics("holdem", table)) as p:
        yield p


@dataclass
class Calls:
    """How many calls were counted."""

    count: int = 0


@contextlib.contextmanager
def threadsafe_calls(loop: asyncio.AbstractEventLoop) -> Iterator[Calls]:
    """Count ``loop.call_soon_threadsafe`` calls while inside (each a write to the loop's
    self-pipe, and a wake-up of the loop)."""
    calls = Calls()
    original = loop.call_soon_threadsafe

    def counting(*args: Any, **kwargs: Any) -> asyncio.Handle:
        calls.count += 1
        return original(*args, **kwargs)

    loop.call_soon_threadsafe = counting  # type: ignore[method-assign, assignment]
    try:
        yield calls
    finally:
        del loop.call_soon_threadsafe  # (the class's own again)
