"""PostgreSQL for the floor's tests and benchmarks: a database of their own, created and dropped.

``temporary_database()`` creates a fresh database on the server ``TABLECTL_TEST_POSTGRES`` names
(default: the machine's server, ``postgresql://postgres@127.0.0.1:5432/postgres``; ``scripts/test``
starts one when none runs) and drops it afterwards, whatever the test left connected to it.

:class:`PrivatePostgres` is a cluster of its own (``initdb``, ``pg_ctl``) on a free loopback port,
for a test that restarts or kills the database server; run as root, it runs as an unprivileged
user (PostgreSQL refuses root), ``nobody`` by default.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit, urlunsplit

import psycopg

from testing.mosquitto import free_port

DEFAULT_SERVER: Final = "postgresql://postgres@127.0.0.1:5432/postgres"
BIN_DIRS: Final = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin")


def server_url() -> str:
    return os.environ.get("TABLECTL_TEST_POSTGRES", DEFAULT_SERVER)


def with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def create_database(admin_url: str, name: str) -> str:
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return with_database(admin_url, name)


def drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def temporary_database(admin_url: str | None = None, prefix: str = "tablectl_test") -> Iterator[str]:
    """A new database on the server (its URL), dropped on exit."""
    admin = admin_url or server_url()
    name = f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"
    url = create_database(admin, name)
    try:
        yield url
    finally:
        drop_database(admin, name)


def pg_binary(name: str) -> str:
    for directory in BIN_DIRS:
        candidate = Path(directory) / name
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found (Debian's postgresql package installs it)")
    return found


@dataclass
class PrivatePostgres:
    """A PostgreSQL cluster on a free port; ``stop`` (``immediate``: as a crash) and ``start`` it."""

    workdir: Path
    port: int = 0
    user: str = "nobody"

    def __post_init__(self) -> None:
        if not self.port:
            self.port = free_port()
        # As root, the server runs as ``user``, who cannot enter pytest's private directories:
        # its files go to a directory of /tmp of its own (removed by ``remove``).
        self.home = Path(tempfile.mkdtemp(prefix="tablectl-pg-")) if os.geteuid() == 0 else self.workdir
        self.data = self.home / "pgdata"
        self.log = self.home / "postgres.log"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        kwargs: dict[str, object] = {}
        if os.geteuid() == 0:
            entry = pwd.getpwnam(self.user)
            kwargs = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        return subprocess.run(  # type: ignore[call-overload, no-any-return]
            list(command),
            capture_output=True,
            text=True,
            timeout=60,
            check=check,
            cwd=self.home,
            **kwargs,
        )

    def init(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            entry = pwd.getpwnam(self.user)
            os.chown(self.home, entry.pw_uid, entry.pw_gid)
        self._run(
            pg_binary("initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.home}'\nfsync = on\n"
                "max_connections = 50\nshared_buffers = 32MB\n"
            )

    def start(self) -> None:
        self._run(pg_binary("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "30", "start")
        self._wait_ready()

    def _wait_ready(self, within: float = 30.0) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            with contextlib.suppress(psycopg.Error):
                with psycopg.connect(self.url, connect_timeout=2) as connection:
                    connection.execute("SELECT 1")
                return
            time.sleep(0.1)
        raise RuntimeError(f"private PostgreSQL on port {self.port} not ready: {self.log.read_text()}")

    def stop(self, mode: str = "fast") -> None:
        self._run(pg_binary("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def remove(self) -> None:
        """Stop it and remove its files (its log is copied to ``workdir`` first)."""
        self.stop("immediate")
        with contextlib.suppress(OSError):
            self.workdir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.log, self.workdir / "postgres.log")
        if self.home != self.workdir:
            shutil.rmtree(self.home, ignore_errors=True)


@contextlib.contextmanager
def private_postgres(workdir: Path) -> Iterator[PrivatePostgres]:
    server = PrivatePostgres(workdir)
    server.init()
    server.start()
    try:
        yield server
    finally:
        server.remove()


def main(argv: list[str]) -> int:
    """``python -m testing.postgres start|stop STATE``: a private server for ``scripts/test`` when
    the machine runs none it can use; ``start`` prints its URL, ``STATE`` remembers where it is."""
    import json
    import sys

    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m testing.postgres start|stop STATE_FILE", file=sys.stderr)
        return 2
    action, state = argv[0], Path(argv[1])
    if action == "start":
        state.parent.mkdir(parents=True, exist_ok=True)
        server = PrivatePostgres(state.parent / "test-postgres")
        server.init()
        server.start()
        state.write_text(json.dumps({"home": str(server.home), "port": server.port}), encoding="utf-8")
        print(server.url)
        return 0
    try:
        found = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    server = PrivatePostgres(state.parent / "test-postgres", port=int(found["port"]))
    shutil.rmtree(server.home, ignore_errors=True)
    server.home = Path(found["home"])
    server.data, server.log = server.home / "pgdata", server.home / "postgres.log"
    server.remove()
    state.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
