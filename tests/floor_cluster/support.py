"""A floor at casino scale in a directory: ``tablectl deploy --floor``'s files, run for real.

Three ``nats-server`` nodes on loopback ports run the rendered configurations (TLS with a test
CA, JetStream in the test's directory); each table PC is ``tablectl deploy --config`` of a table
whose configuration holds the rendered ``[deploy.floor]`` and whose deploy directory holds the
secret the floor rendered for its bridge, its mosquitto running the rendered files; the floor
console and recorder are the real ``tablectl floor`` processes.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import ssl
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt

from controller.cli import main as tablectl
from testing.nats import NatsCluster, floor_file, node_ports, rendered_cluster
from tests.deploy.certs import Authority, make_ca, make_server_cert
from tests.deploy.support import Deployment, free_port, install, install_dir, source_config

TABLECTL = Path(sys.executable).parent / "tablectl"
CONSOLE = "floor-console"


def render(args: list[str]) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = tablectl(args)
    if code != 0:
        raise AssertionError(f"tablectl {' '.join(args)} failed with {code}")


@dataclass
class Floor:
    """The rendered floor (``out``), its running cluster, the test CA."""

    directory: Path
    out: Path
    cluster: NatsCluster
    ca: Authority
    tables: list[str]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def secret(self, name: str) -> str:
        return (self.out / "secrets" / name).read_text(encoding="utf-8").strip()

    @property
    def brokers(self) -> str:
        return self.cluster.urls("mqtts")

    def tls(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca.cert))

    def client(self, port: int, user: str, password: str, **options: Any) -> aiomqtt.Client:
        return aiomqtt.Client(
            "127.0.0.1",
            port,
            username=user,
            password=password,
            tls_context=self.tls(),
            identifier=options.pop("identifier", f"{user}-{uuid.uuid4().hex[:8]}"),
            timeout=10,
            **options,
        )

    def floor_process(self, log: Path, *args: str, record: bool = True) -> subprocess.Popen[bytes]:
        """``tablectl floor ARGS --broker (every node)`` as the console user."""
        environment = {**os.environ, "TABLECTL_FLOOR_PASSWORD": self.secret(CONSOLE)}
        command = [
            str(TABLECTL),
            "floor",
            *args,
            "--broker",
            self.brokers,
            "--username",
            CONSOLE,
            "--ca-file",
            str(self.ca.cert),
        ]
        process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=log.open("ab"))
        self.processes.append(process)
        return process

    def stop_processes(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5)


@contextlib.contextmanager
def running_floor(directory: Path, tables: list[str], *, allow_input: bool = False) -> Iterator[Floor]:
    """Render the floor for ``tables`` and run its three nodes (stopped on exit)."""
    certs_dir = directory / "certs"
    certs_dir.mkdir(parents=True)
    ca = make_ca(certs_dir, "house-ca")
    ports = node_ports(3)
    certs = {p.name: make_server_cert(certs_dir, ca, p.name, client_auth=True) for p in ports}
    toml = floor_file(directory, ports, ca_file=ca.cert, certs=certs, tables=tables, allow_input=allow_input)
    out = directory / "floor-out"
    render(["deploy", "--floor", str(toml), "--out", str(out)])
    logs = directory / "logs"
    logs.mkdir()
    cluster = rendered_cluster(out, ports, logs)
    floor = Floor(directory, out, cluster, ca, tables)
    cluster.start()
    try:
        cluster.wait_ready()
        yield floor
    finally:
        floor.stop_processes()
        cluster.stop()


@dataclass
class TablePc:
    """One table PC as deployed, bridging to the floor."""

    table: str
    deployment: Deployment

    @property
    def port(self) -> int:
        return self.deployment.port

    def controller(self) -> aiomqtt.Client:
        """A client with the controller's identity (it publishes the public topics)."""
        return aiomqtt.Client(
            "127.0.0.1",
            self.port,
            username=f"{self.table}-controller",
            password=self.deployment.secret(f"{self.table}-controller"),
            identifier=f"{self.table}-controller-{uuid.uuid4().hex[:6]}",
            timeout=10,
        )


@contextlib.contextmanager
def table_pcs(floor: Floor, directory: Path, tables: list[str] | None = None) -> Iterator[list[TablePc]]:
    """Every table of the floor (or ``tables``) deployed with the floor's [deploy.floor] and its
    bridge secret."""
    pcs: list[TablePc] = []
    with install_dir() as etc_root:
        try:
            for table in floor.tables if tables is None else tables:
                home = directory / f"pc-{table}"
                home.mkdir()
                etc = etc_root / table
                etc.mkdir()
                shutil.copystat(etc_root, etc)
                shutil.copymode(etc_root, etc)
                os.chown(etc, etc_root.stat().st_uid, etc_root.stat().st_gid)
                ca = install(floor.ca.cert, etc / "floor-ca.crt")
                floor_toml = (floor.out / "tables" / table / "deploy-floor.toml").read_text(encoding="utf-8")
                floor_toml = re.sub(r'(?m)^ca_file = ".*"$', f'ca_file = "{ca}"', floor_toml)
                port = free_port()
                source = source_config(home, port, extra="\n" + floor_toml, table=table)
                out = home / "out"
                (out / "secrets").mkdir(parents=True, mode=0o700)
                secret = f"secrets/{table}-bridge"
                shutil.copyfile(floor.out / secret, out / secret)
                deployment = Deployment(source, out, etc, port)
                deployment.render()
                deployment.start_broker()
                pcs.append(TablePc(table, deployment))
            yield pcs
        finally:
            for pc in pcs:
                pc.deployment.stop()
