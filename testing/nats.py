"""A NATS cluster (JetStream, the MQTT gateway) of processes started by a test, on loopback ports.

:func:`floor_file` writes a ``FLOOR.toml`` for nodes on 127.0.0.1 (free ports, a test CA's
certificates, JetStream in the test's directory); ``tablectl deploy --floor`` renders it, and
:class:`NatsNode` runs each rendered ``nats-server.conf`` as it is. ``kill()`` is SIGKILL (no
goodbye: the other nodes and the clients find out by themselves), ``start()`` brings the node
back with its JetStream directory. :meth:`NatsCluster.wait_ready` waits until every running node
says JetStream is current (``/healthz``) and the MQTT gateway takes a connection.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from testing.mosquitto import free_port


def nats_binary() -> str:
    found = shutil.which("nats-server") or "/usr/sbin/nats-server"
    if not Path(found).exists():
        raise RuntimeError("nats-server not found (Debian's nats-server package installs it)")
    return found


@dataclass
class NatsNode:
    name: str
    conf: Path
    mqtt_port: int
    monitor_port: int
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen([nats_binary(), "-c", str(self.conf)], stdout=log, stderr=log)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                raise RuntimeError(f"nats-server {self.name} exited with {code}:\n{self.log}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.mqtt_port), 0.2):
                return
            time.sleep(0.05)
        raise RuntimeError(f"nats-server {self.name} did not listen on {self.mqtt_port}:\n{self.log}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def healthy(self, *, streams_only: bool = False) -> bool:
        """``/healthz``: the node is up and its JetStream current (with ``streams_only``: its
        meta group and streams, not every consumer)."""
        query = "?js-server-only=true" if streams_only else ""
        url = f"http://127.0.0.1:{self.monitor_port}/healthz{query}"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return bool(json.load(answer).get("status") == "ok")
        except (OSError, ValueError):
            return False

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # lame duck, then exit
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None


@dataclass
class NatsCluster:
    nodes: list[NatsNode] = field(default_factory=list)

    def start(self) -> None:
        """Start every node; if one cannot start, the ones started are stopped (none is left
        running behind the error)."""
        try:
            for node in self.nodes:
                node.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def wait_ready(self, within: float = 60.0) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if all(node.healthy() for node in self.nodes if node.running):
                return
            time.sleep(0.2)
        logs = "\n".join(f"--- {n.name}\n{n.log[-3000:]}" for n in self.nodes)
        raise RuntimeError(f"the NATS cluster was not ready within {within:g} s:\n{logs}")

    def urls(self, scheme: str = "mqtts") -> str:
        return ",".join(f"{scheme}://127.0.0.1:{node.mqtt_port}" for node in self.nodes)


@dataclass(frozen=True)
class NodePorts:
    name: str
    mqtt: int
    cluster: int
    client: int
    monitor: int


def node_ports(count: int = 3) -> list[NodePorts]:
    """Four ports for each of ``count`` nodes, all different: each is free when drawn, and none
    is bound until the nodes start, so a draw that repeats one is drawn again (a cluster's nodes
    once got the same port for a listener and a monitor, and one of them could not start)."""
    drawn: list[int] = []
    while len(drawn) < 4 * count:
        port = free_port()
        if port not in drawn:
            drawn.append(port)
    return [NodePorts(f"n{i + 1}", *drawn[4 * i : 4 * i + 4]) for i in range(count)]


def floor_file(
    directory: Path,
    ports: list[NodePorts],
    *,
    ca_file: Path,
    certs: dict[str, tuple[Path, Path]],
    tables: list[str],
    allow_input: bool = False,
    table_ca: Path | None = None,
    console_ca: Path | None = None,
    postgres_port: int = 5432,
) -> Path:
    """A FLOOR.toml of nodes on loopback (``certs``: each node's certificate and key)."""
    lines = [
        "[floor]",
        'root = "holdem"',
        'cluster = "test-floor"',
        f'ca_file = "{ca_file}"',
        f'store_dir = "{directory / "jetstream"}"',
        "",
    ]
    for node in ports:
        cert, key = certs[node.name]
        lines += [
            "[[nodes]]",
            f'name = "{node.name}"',
            'host = "127.0.0.1"',
            f"mqtt_port = {node.mqtt}",
            f"cluster_port = {node.cluster}",
            f"client_port = {node.client}",
            f"monitor_port = {node.monitor}",
            f'cert_file = "{cert}"',
            f'key_file = "{key}"',
            "",
        ]
    lines += [
        "[tables]",
        "ids = [" + ", ".join(f'"{t}"' for t in tables) + "]",
        f"allow_input = {'true' if allow_input else 'false'}",
        f'ca_file = "{table_ca or ca_file}"',
        "",
        "[consoles]",
        'users = ["floor-console"]',
        f'ca_file = "{console_ca or ca_file}"',
        "",
        "[postgresql]",
        'host = "127.0.0.1"',
        f"port = {postgres_port}",
        'sslmode = "disable"',
        "",
    ]
    path = directory / "floor.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def rendered_cluster(out: Path, ports: list[NodePorts], logs: Path) -> NatsCluster:
    """The nodes as ``tablectl deploy --floor`` rendered them into ``out`` (JetStream's directory
    per node: the rendered store_dir is shared, so each node runs in a copy naming its own)."""
    nodes = []
    for node in ports:
        conf = out / "nodes" / node.name / "nats-server.conf"
        text = conf.read_text(encoding="utf-8")
        # One machine, three nodes: each its own JetStream directory (on a floor: one per machine).
        marker = 'store_dir: "'
        start = text.index(marker) + len(marker)
        end = text.index('"', start)
        local = logs / f"{node.name}.conf"
        local.write_text(text[:start] + f"{text[start:end]}/{node.name}" + text[end:], encoding="utf-8")
        nodes.append(NatsNode(node.name, local, node.mqtt, node.monitor, logs / f"{node.name}.log"))
    return NatsCluster(nodes)
