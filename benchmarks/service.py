"""Every figure of the service around the engine, with the engine core's rate beside them.

Usage: ``.venv/bin/python benchmarks/service.py [--hands 300] [--backlogs 6000 60000]
[--floods 20000 100000] [--latency 500] [--only PART ...] [--ingest-runs N] [--profile FILE]``
(``--backlogs 6000 60000 1000000`` for the big restart: generating the million messages and
handing them to the broker take a few minutes; ``--only ingest --ingest-runs 3``: the ingest
alone, three times, each with a fresh service; ``--profile FILE``: the first ingest's service
under cProfile, for ``python -m pstats FILE``; ``--callgrind FILE``: under valgrind's callgrind
while it ingests, ``callgrind_annotate FILE`` or the total instructions divided by the events).

One run, one machine, one load. Rates are given per second of wall-clock time and per second of
CPU time of the process doing the work (the ratios of the two to the engine core's: on a shared
2-core machine the wall-clock ratio moves with the load, the CPU one much less). It prints, in
order:

1. **Engine core**: the engine alone on the hands below (in this process), events/s, best of 3.
2. **Replay**: the audit's full replay (read, parse, engine) of a journal of those hands,
   records/s, best of 3 (a fresh controller each), and its ratio to the engine core.
3. **Ingest**: ``tablectl run`` (fsync on) behind a mosquitto; the hands published in order by
   a publisher of pre-encoded QoS 1 packets (``benchmarks/mqtt_blast.py``: a Python MQTT
   client, some 4,000 messages/s, was slower than the service) until the journal holds the
   last: events/s, and the ratio to the engine (the service's CPU time for the CPU ratio).
4. **Restart behind a backlog**: the service is stopped, N valid events are queued for its
   persistent session (by the same publisher), it is started again: time from the process start
   to the retained ``online``, then to the last of the backlog journaled (drain rate); the ratio
   of the restart times at the largest and the smallest backlog.
5. **Hostile input**: N malformed payloads on device topics, then one valid fault: how late its
   alert is (from the moment the fault was published), the controller's CPU time per reject,
   its RSS before, at the peak and 2 s after.
6. **Alert latency** through mosquitto with ``set_tcp_nodelay true``: a device fault to its alert
   (p50, p99), and the echo floor of the same broker in the same run (a client that echoes
   each message), with the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiomqtt

from benchmarks.hostile_input import malformed
from benchmarks.mqtt_blast import Blaster
from benchmarks.service_throughput import ECHO, alert_change, hands
from config.loader import load_table
from config.registry import load_registry
from contract.models import FaultEvent, Status, parse_alert, parse_status
from contract.topics import Topics
from controller.journal import JournalFiles, JournalOptions, open_journal
from controller.journal.records import kind_prefix
from controller.service.table import TableController
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    EngineSettings,
    InputReceived,
    Received,
)
from engine.step import Engine
from link.client import NO_DELAY
from testing.mosquitto import Mosquitto, free_port

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "config" / "decks.example.csv"
TABLE = "bench"
TOPICS = Topics("holdem", TABLE)
#: ``tablectl run`` of this tree (``python -m controller.service.cli``: the code beside this script,
#: whatever the environment has installed).
RUN = [sys.executable, "-m", "controller.service.cli"]


def config_file(directory: Path, port: int, name: str, *, fsync: bool = True) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(
        f'[table]\nid = "{TABLE}"\nseats = 9\n\n[mqtt]\nurl = "mqtt://127.0.0.1:{port}"\n\n'
        f'[decks]\nregistry = "{REGISTRY}"\n\n'
        f'[journal]\npath = "{name}/journal.jsonl"\nfsync = {str(fsync).lower()}\n',
        encoding="utf-8",
    )
    return path


@dataclass(frozen=True)
class Rate:
    """Events per second of wall-clock time, and per second of CPU time of the process doing the
    work (all its threads). On a shared machine the wall-clock rate moves with the load; the CPU
    rate moves much less, so its ratio to the engine core's is the steadier figure."""

    wall: float
    cpu: float

    def versus(self, core: Rate) -> str:
        return f"{self.wall / core.wall:.2f} x engine core (in CPU time {self.cpu / core.cpu:.2f} x)"


def engine_inputs(topics: Topics, messages: list[tuple[str, bytes]]) -> list[Received]:
    """What the engine core is given for ``messages`` (parsed outside any measured time)."""
    from contract.models import parse_event, parse_input, parse_status

    at = datetime(2026, 11, 30, tzinfo=UTC)
    received: list[Received] = []
    for topic, payload in messages:
        if topic == topics.input:
            received.append(InputReceived(parse_input(topic, payload), at))
            continue
        parsed = topics.parse_device_topic(topic)
        assert parsed is not None
        if parsed.kind == "event":
            received.append(DeviceEventReceived(parsed.device, parse_event(topic, payload), at))
        else:
            received.append(DeviceStatusReceived(parsed.device, parse_status(topic, payload), at))
    return received


def engine_rate(messages: list[tuple[str, bytes]], repeat: int = 3) -> Rate:
    """Events/s of the engine core alone on ``messages`` (best of ``repeat``, wall clock and CPU
    time)."""
    received = engine_inputs(TOPICS, messages)
    settings = EngineSettings(seats=9, profile="roberts", registry=load_registry(REGISTRY))
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        engine = Engine(settings)
        started, cpu = time.perf_counter(), time.process_time()
        for item in received:
            engine.handle(item)
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return Rate(len(received) / best, len(received) / best_cpu)


def replay_rate(directory: Path, messages: list[tuple[str, bytes]], repeat: int = 3) -> Rate:
    """Records/s of the audit's full replay of a journal of ``messages`` (best of ``repeat``,
    each through a fresh controller: measured as :func:`engine_rate` measures the core)."""
    config = config_file(directory, 1883, "replay", fsync=False)
    (directory / "replay").mkdir(mode=0o700)
    journal = open_journal(JournalFiles(directory / "replay" / "journal.jsonl"), JournalOptions(fsync=False))
    at = datetime(2026, 11, 30, tzinfo=UTC)
    for topic, payload in messages:
        journal.received(topic, payload, at)
    journal.close()
    table_config, registry = load_table(config)
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        controller = TableController(table_config, registry)
        started, cpu = time.perf_counter(), time.process_time()
        recovery = controller.replay()
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        assert recovery.replayed == len(messages), recovery
    return Rate(len(messages) / best, len(messages) / best_cpu)


async def start_service(
    config: Path, log: Path, *, profile: Path | None = None, callgrind: Path | None = None
) -> asyncio.subprocess.Process:
    """``tablectl run`` of this tree; with ``profile``, under cProfile (its event loop's thread:
    the journal's threads are not in it), the statistics written there when it stops; with
    ``callgrind``, under valgrind's callgrind, instrumented only once told (:func:`instrument`)."""
    handle = log.open("ab")
    run = RUN if profile is None else [sys.executable, "-m", "cProfile", "-o", str(profile), *RUN[1:]]
    if callgrind is not None:
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={callgrind}"]
        run = [*valgrind, *run]
    try:
        return await asyncio.create_subprocess_exec(
            *run,
            "--config",
            str(config),
            stdout=handle,
            stderr=handle,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    finally:
        handle.close()


async def instrument(service: asyncio.subprocess.Process, on: bool) -> None:
    """Callgrind's instrumentation of ``service`` on or off (``callgrind_control``)."""
    control = await asyncio.create_subprocess_exec(
        "callgrind_control", "-i", "on" if on else "off", str(service.pid), stdout=asyncio.subprocess.DEVNULL
    )
    await control.wait()


async def stop_service(service: asyncio.subprocess.Process) -> None:
    if service.returncode is None:
        service.terminate()
        await asyncio.wait_for(service.wait(), 30)


async def wait_status(client: aiomqtt.Client, state: str = "online") -> None:
    async for message in client.messages:
        if str(message.topic) == TOPICS.controller_status:
            assert isinstance(message.payload, bytes)
            if parse_status(TOPICS.controller_status, message.payload).state == state:
                return


async def publish_all(client: aiomqtt.Client, messages: list[tuple[str, bytes]]) -> None:
    """Publish through a Python client (QoS 1, 200 at a time): some 4,000 messages/s."""
    for start in range(0, len(messages), 200):
        batch = messages[start : start + 200]
        await asyncio.gather(*(client.publish(t, p, qos=1) for t, p in batch))


async def blast(port: int, messages: list[tuple[str, bytes]], name: str) -> float:
    """Publish ``messages`` in order with the pre-encoded publisher (``benchmarks/mqtt_blast.py``:
    a Python client would be slower than the service); return its rate, messages/s (the
    encoding before the clock starts)."""
    blaster = Blaster(port, messages, client_id=f"bench-{name}-blast")
    started = time.perf_counter()
    await asyncio.to_thread(blaster.run)
    return len(messages) / (time.perf_counter() - started)


class ReceivedCount:
    """The ``received`` records of a journal, counted as the service writes them: only what was
    appended since the last look is read (the benchmark must not take the service's CPU, and
    a journal of a million records is hundreds of MiB). Segments are followed by inode: the
    active segment is renamed when it is closed."""

    def __init__(self, journal: Path) -> None:
        self.files = JournalFiles(journal)
        self._read: dict[int, int] = {}
        self.count = 0

    def update(self) -> int:
        line = b"\n" + kind_prefix("received")
        for segment in self.files.segments():
            try:
                with segment.path.open("rb") as file:
                    inode = os.fstat(file.fileno()).st_ino
                    start = self._read.get(inode, 0)
                    file.seek(start)
                    data = file.read()
            except FileNotFoundError:
                continue  # renamed meanwhile: read under its new name next time
            whole = data.rfind(b"\n") + 1  # a line being written is counted once it is whole
            self.count += (b"\n" + data[:whole]).count(line)
            self._read[inode] = start + whole
        return self.count


async def journaled(journal: Path, count: int, within: float) -> bool:
    """Poll the journal until it holds ``count`` received records."""
    counter = ReceivedCount(journal)
    deadline = time.perf_counter() + within
    while time.perf_counter() < deadline:
        if counter.update() >= count:
            return True
        await asyncio.sleep(0.05)
    return False


def client(port: int, name: str) -> aiomqtt.Client:
    made = aiomqtt.Client("127.0.0.1", port, identifier=name, socket_options=NO_DELAY, timeout=30)
    made.pending_calls_threshold = 10_000
    return made


async def ingest_rate(
    directory: Path,
    port: int,
    messages: list[tuple[str, bytes]],
    name: str = "ingest",
    profile: Path | None = None,
    callgrind: Path | None = None,
    broker: int | None = None,
) -> tuple[Rate, float]:
    """(events/s end to end and per CPU second of the service, messages/s the broker took from
    the publisher)."""
    config = config_file(directory, port, name)
    service = await start_service(config, directory / f"{name}.log", profile=profile, callgrind=callgrind)
    try:
        async with client(port, "bench-ingest") as observer:
            await observer.subscribe(TOPICS.controller_status, qos=1)
            await asyncio.wait_for(wait_status(observer), 30 if callgrind is None else 300)
            if callgrind is not None:
                await instrument(service, True)
            started, cpu = time.perf_counter(), cpu_s(service.pid)
            threads = thread_cpu_s(service.pid)
            broker_cpu = cpu_s(broker) if broker is not None else 0.0
            published, done = await asyncio.gather(
                blast(port, messages, name),
                journaled(directory / name / "journal.jsonl", len(messages), 600),
            )
            elapsed, cpu = time.perf_counter() - started, cpu_s(service.pid) - cpu
            per_thread = thread_cpu_s(service.pid)
            broker_cpu = cpu_s(broker) - broker_cpu if broker is not None else 0.0
            if callgrind is not None:
                await instrument(service, False)
        assert done, "the journal never held every message"
        spent = {
            name: (user - threads.get(name, (0.0, 0.0))[0], system - threads.get(name, (0.0, 0.0))[1])
            for name, (user, system) in per_thread.items()
        }
        print(
            "  the service's threads, us of CPU a message (user + system): "
            + ", ".join(
                f"{name} {user / len(messages) * 1e6:.1f} + {system / len(messages) * 1e6:.1f}"
                for name, (user, system) in sorted(spent.items(), key=lambda item: -sum(item[1]))
                if user + system > 0
            )
            + (f"; the broker {broker_cpu / len(messages) * 1e6:.1f}" if broker is not None else "")
        )
        return Rate(len(messages) / elapsed, len(messages) / cpu), published
    finally:
        await stop_service(service)


async def restart_behind(
    directory: Path, port: int, messages: list[tuple[str, bytes]], name: str
) -> tuple[float, float, Rate]:
    """(start to ``online`` s, start to the whole backlog journaled s, events/s from the process
    start to the last journaled: the service takes the backlog from its first connection, before
    ``online``, so the time to ``online`` is not subtracted; the CPU rate counts the service's
    whole CPU time, its start included)."""
    config = config_file(directory, port, name)
    log = directory / f"{name}.log"
    journal = directory / name / "journal.jsonl"
    async with client(port, f"bench-{name}") as observer:
        await observer.subscribe(TOPICS.controller_status, qos=1)
        service = await start_service(config, log)  # creates the persistent session
        await asyncio.wait_for(wait_status(observer), 30)
        await stop_service(service)
        await asyncio.wait_for(wait_status(observer, "offline"), 30)
        await blast(port, messages, name)
        before = ReceivedCount(journal).update()
        started = time.perf_counter()
        service = await start_service(config, log)
        try:
            try:
                await asyncio.wait_for(wait_status(observer), 60)
            except TimeoutError:
                print(f"restart behind {len(messages):,} queued: NOT online after 60 s")
                raise
            online = time.perf_counter() - started
            # The service's own CPU time until then: on a loaded machine the wall clock mostly
            # measures how long it waited for a core (Python's imports are most of the start).
            online_cpu = cpu_s(service.pid)
            print(
                f"restart behind {len(messages):,} queued: online after {online:.2f} s (target <= 2 s), "
                f"{online_cpu:.2f} s of the service's CPU time",
                flush=True,
            )
            # A million messages take minutes on a loaded machine.
            done = await journaled(journal, before + len(messages), max(900, len(messages) / 200))
            drained, cpu = time.perf_counter() - started, cpu_s(service.pid)
            assert done, f"{name}: the backlog was not journaled"
        finally:
            await stop_service(service)
    return online, drained, Rate(len(messages) / drained, len(messages) / cpu)


def flood_payloads(count: int) -> list[tuple[str, bytes]]:
    """The hostile benchmark's payloads on this table's topics, ``count`` of them in turn (a tag
    from a board that may not send one is malformed only with its [[devices]] entry: left out)."""
    bad = [
        (topic.replace("holdem/hostile/", f"{TOPICS.base}/"), payload)
        for topic, payload in malformed()
        if "/dev/sensors/" not in topic
    ]
    return [bad[i % len(bad)] for i in range(count)]


def reject_cost(directory: Path, count: int = 20_000) -> float:
    """CPU µs per malformed payload in the controller itself (classify, count, sample), in
    this process: what the service spends beyond reading the socket and acknowledging."""
    from contract.timestamps import utc_now

    # The reports' WARNING lines (one per topic) are not the figure.
    logging.getLogger("controller").setLevel(logging.ERROR)
    config = config_file(directory, 1883, "reject", fsync=False)
    (directory / "reject").mkdir(mode=0o700)
    table_config, registry = load_table(config)
    controller = TableController(table_config, registry)
    controller.recover(utc_now())
    flood = flood_payloads(count)
    now = utc_now()
    started = time.process_time()
    for topic, payload in flood:
        controller.receive(topic, payload, now)
    elapsed = time.process_time() - started
    controller.close()
    return elapsed / count * 1e6


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_s(pid: int) -> dict[str, tuple[float, float]]:
    """Each thread's (user, system) CPU seconds so far: ``main`` (the event loop's) and the
    others by thread id (Python does not name its threads for the system)."""
    out: dict[str, tuple[float, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue  # (ended meanwhile)
        name = "main" if task.name == str(pid) else f"thread {task.name}"
        out[name] = (int(fields[11]) / tick, int(fields[12]) / tick)
    return out


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def behind_flood(directory: Path, port: int, count: int) -> dict[str, float]:
    """A valid fault published after ``count`` malformed payloads: its alert's delay."""
    name = f"flood-{count}"
    config = config_file(directory, port, name)
    service = await start_service(config, directory / f"{name}.log")
    flood = flood_payloads(count)
    try:
        async with client(port, f"bench-{name}") as probe:
            await probe.subscribe([(TOPICS.controller_status, 1), (TOPICS.alerts, 1)])
            await asyncio.wait_for(wait_status(probe), 30)
            rss_before, cpu_before = rss_mib(service.pid), cpu_s(service.pid)
            peak = rss_before
            sampling = True

            async def sample_rss() -> None:
                nonlocal peak
                while sampling:
                    peak = max(peak, rss_mib(service.pid))
                    await asyncio.sleep(0.05)

            sampler = asyncio.create_task(sample_rss())
            await publish_all(probe, flood)
            event = FaultEvent(seq=1, ts=datetime.now(UTC), code="jam", text="bench")
            started = time.perf_counter()
            await probe.publish(TOPICS.device_event("shuffler"), event.to_json(), qos=1)
            await asyncio.wait_for(alert_change(probe, "shuffler", "raised"), 120)
            late = time.perf_counter() - started
            cpu = cpu_s(service.pid) - cpu_before
            await asyncio.sleep(2)
            sampling = False
            await sampler
            rss_after = rss_mib(service.pid)
    finally:
        await stop_service(service)
    return {
        "late_s": late,
        "cpu_us": cpu / count * 1e6,
        "rss_before": rss_before,
        "rss_peak": peak,
        "rss_after": rss_after,
    }


async def arrival_of_alert(
    probe: aiomqtt.Client, device: str, change: str, service: asyncio.subprocess.Process, log: Path
) -> float:
    """The :func:`time.perf_counter` time at which the alert change ``change`` of ``device``
    reached the probe, or an error saying why none came within 10 s (the service gone, with its
    log's last lines), instead of waiting for ever.

    The time is taken as the message is handed over by the probe's client, before the probe
    parses it to see whether it is the awaited one: the echo floor's probe stops its clock at
    the same point (and only compares bytes), so both figures cover the same path and the
    ratio compares the controller with the echo client, not the two probes' own work (parsing
    an alert with the contract's model, a task for a time limit: some 0.15 ms, seen in a packet
    capture as the difference between the probe's figure and the wire's).
    """
    try:
        async with asyncio.timeout(10):
            async for message in probe.messages:
                arrived = time.perf_counter()
                if str(message.topic) != TOPICS.alerts or not isinstance(message.payload, bytes):
                    continue
                alert = parse_alert(TOPICS.alerts, message.payload)
                if alert.device == device and alert.status == change:
                    return arrived
    except TimeoutError:
        pass
    state = "is running" if service.returncode is None else f"exited with {service.returncode}"
    text = await asyncio.to_thread(log.read_text, encoding="utf-8", errors="replace")
    tail = "".join(text.splitlines(keepends=True)[-15:])
    raise RuntimeError(
        f"no '{change}' alert of {device} within 10 s; the service {state}; its log ends:\n{tail}"
    )


async def alert_latency(directory: Path, port: int, count: int) -> list[float]:
    """A device fault to its alert, ``count`` times (and each fault's resolution, not timed).

    Measured as the echo floor is (:func:`echo_floor`): the payload is encoded before the clock
    starts, the clock stops when the awaited message reaches the probe.
    """
    config = config_file(directory, port, "latency")
    log = directory / "latency.log"
    service = await start_service(config, log)
    samples: list[float] = []
    try:
        async with client(port, "bench-latency") as probe:
            await probe.subscribe([(TOPICS.controller_status, 1), (TOPICS.alerts, 1)])
            await asyncio.wait_for(wait_status(probe), 30)
            for index in range(count + 20):
                device = f"dev-{index % 10}"
                seq = index // 10 + 1
                fault = FaultEvent(seq=seq, ts=datetime.now(UTC), code="jam", text="bench").to_json()
                started = time.perf_counter()
                await probe.publish(TOPICS.device_event(device), fault, qos=1)
                arrived = await arrival_of_alert(probe, device, "raised", service, log)
                if index >= 20:  # warm-up
                    samples.append((arrived - started) * 1000)
                online = Status(state="online", ts=datetime.now(UTC), session=1)
                await probe.publish(TOPICS.device_status(device), online.to_json(), qos=1)
                await arrival_of_alert(probe, device, "resolved", service, log)
    finally:
        await stop_service(service)
    return sorted(samples)


async def echo_floor(port: int, count: int) -> list[float]:
    """The same device fault echoed by a plain client through the same broker, timed as
    :func:`alert_latency` times the alert: the floor under it."""
    echo = await asyncio.create_subprocess_exec(sys.executable, "-c", ECHO, str(port))
    samples: list[float] = []
    try:
        async with client(port, "bench-floor") as probe:
            await probe.subscribe([("bench/ready", 1), ("bench/out", 1)])
            async for message in probe.messages:
                if str(message.topic) == "bench/ready":
                    break
            for index in range(count + 20):
                # the message the alert latency's probe publishes (its seq makes each one unique)
                payload = FaultEvent(seq=index + 1, ts=datetime.now(UTC), code="jam", text="bench").to_json()
                started = time.perf_counter()
                await probe.publish("bench/in", payload, qos=1)
                async for message in probe.messages:
                    arrived = time.perf_counter()
                    if message.payload == payload:
                        break
                if index >= 20:
                    samples.append((arrived - started) * 1000)
    finally:
        echo.terminate()
        await echo.wait()
    return sorted(samples)


def percentile(samples: list[float], fraction: float) -> float:
    return samples[min(len(samples) - 1, int(len(samples) * fraction))]


def backlog_messages(count: int, seed: int) -> list[tuple[str, bytes]]:
    """``count`` valid events: one session of legal hands of the virtual dealer, as many as it
    takes (about 70 messages a hand), as a table would have queued them during an outage."""
    out: list[tuple[str, bytes]] = []
    needed = count // 60 + 10
    while len(out) < count:
        out = hands(needed, seed=seed)
        needed *= 2
    return out[:count]


#: The parts of the benchmark, in the order they run (``--only`` picks some).
PARTS = ("reject", "replay", "ingest", "backlogs", "floods", "latency")


async def run(args: argparse.Namespace) -> None:
    parts = set(args.only or PARTS)
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2-core machine shared)")
    messages = hands(args.hands)
    core = engine_rate(messages)
    print(
        f"engine core:      {core.wall:,.0f} events/s, {core.cpu:,.0f} per CPU second "
        f"({len(messages)} events, {args.hands} hands)"
    )
    with tempfile.TemporaryDirectory(prefix="tablectl-service-bench-") as name:
        directory = Path(name)
        os.chmod(directory, 0o700)
        if "reject" in parts:
            rejected = reject_cost(directory)
            print(
                f"reject in the controller: {rejected:.1f} us CPU per malformed payload "
                f"({1e6 / rejected:,.0f}/s; target <= 20 us, >= 50,000/s); an engine event: "
                f"{1e6 / core.cpu:.1f} us CPU"
            )
        if "replay" in parts:
            replay = replay_rate(directory, messages)
            print(f"replay:           {replay.wall:,.0f} records/s = {replay.versus(core)} (>= 0.5)")
        if not parts & {"ingest", "backlogs", "floods", "latency"}:
            return
        port = free_port()
        broker_dir = directory / "broker"
        broker_dir.mkdir()
        extra = "set_tcp_nodelay true\nmax_queued_messages 0\nmax_queued_bytes 0\n"
        broker = Mosquitto(port, broker_dir, extra_conf=extra)
        broker.start()
        try:
            for index in range(args.ingest_runs if "ingest" in parts else 0):
                first = index == 0
                ingest, publisher = await ingest_rate(
                    directory,
                    port,
                    messages,
                    f"ingest-{index}",
                    args.profile if first else None,
                    args.callgrind if first else None,
                    broker.process.pid if broker.process is not None else None,
                )
                print(
                    f"ingest (fsync):   {ingest.wall:,.0f} events/s = {ingest.versus(core)} (>= 0.2); "
                    f"the broker took them at {publisher:,.0f}/s; load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
            restarts: dict[int, float] = {}
            for size in args.backlogs if "backlogs" in parts else []:
                backlog = backlog_messages(size, seed=size)
                online, drained, rate = await restart_behind(directory, port, backlog, f"backlog-{size}")
                restarts[size] = online
                print(
                    f"  and the {size:,} journaled after {drained:.2f} s ({rate.wall:,.0f} events/s "
                    f"= {rate.versus(core)})"
                )
            if len(restarts) > 1:
                low, high = min(restarts), max(restarts)
                print(
                    f"restart ratio {high:,} / {low:,} queued: {restarts[high] / restarts[low]:.2f} "
                    "(target <= 1.5 at 60,000 / 6,000)"
                )
            for count in args.floods if "floods" in parts else []:
                figures = await behind_flood(directory, port, count)
                print(
                    f"behind {count:,} malformed: alert {figures['late_s']:.2f} s late; "
                    f"service CPU {figures['cpu_us']:.1f} us per reject, reading and acknowledging "
                    "included "
                    f"({1e6 / max(figures['cpu_us'], 1e-9):,.0f}/s); "
                    f"RSS {figures['rss_before']:.0f} -> peak {figures['rss_peak']:.0f} -> "
                    f"{figures['rss_after']:.0f} MiB 2 s later"
                )
            if not args.latency or "latency" not in parts:
                return
            alerts = await alert_latency(directory, port, args.latency)
            floor = await echo_floor(port, args.latency)
            p50, p99 = statistics.median(alerts), percentile(alerts, 0.99)
            f50, f99 = statistics.median(floor), percentile(floor, 0.99)
            print(
                f"alert latency:    p50 {p50:.2f} ms, p99 {p99:.2f} ms; echo floor p50 {f50:.2f} ms, "
                f"p99 {f99:.2f} ms; ratio p50 {p50 / f50:.2f} (target <= 2), p99 {p99 / f99:.2f} "
                "(target <= 3)"
            )
        finally:
            broker.stop()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--backlogs", type=int, nargs="*", default=[6_000, 60_000])
    parser.add_argument("--floods", type=int, nargs="*", default=[20_000, 100_000])
    parser.add_argument("--latency", type=int, default=500)
    parser.add_argument("--only", nargs="+", choices=PARTS, help="only these parts (the engine core always)")
    parser.add_argument(
        "--ingest-runs", type=int, default=1, help="ingest this many times, a fresh service each"
    )
    parser.add_argument(
        "--profile", type=Path, help="the (first) ingest's service under cProfile, its output here"
    )
    parser.add_argument(
        "--callgrind",
        type=Path,
        help="the (first) ingest's service under callgrind, instrumented while it ingests, its output here",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
