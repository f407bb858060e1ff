"""``tablectl deploy --floor``: what it renders, checked by the tools that run it (``nats-server -t``,
mosquitto's configuration as a table renders it, PostgreSQL running the SQL)."""

from __future__ import annotations

import contextlib
import io
import re
import secrets
import subprocess
import sys
import tomllib
from pathlib import Path

import psycopg
import pytest

from config.models import FloorBridgeSection
from controller.cli import main as tablectl
from controller.deploy.bridge import state_restart_s
from controller.floor.stores import store_for
from testing.nats import floor_file, nats_binary, node_ports
from testing.postgres import server_url, with_database
from tests.deploy.certs import make_ca, make_server_cert


def render(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = tablectl(args)
    return code, out.getvalue()


@pytest.fixture
def rendered(tmp_path: Path) -> tuple[Path, Path]:
    ca = make_ca(tmp_path, "house-ca")
    ports = node_ports(3)
    certs = {p.name: make_server_cert(tmp_path, ca, p.name, client_auth=True) for p in ports}
    toml = floor_file(tmp_path, ports, ca_file=ca.cert, certs=certs, tables=["t1", "t2", "t3", "t4"])
    out = tmp_path / "out"
    code, printed = render(["deploy", "--floor", str(toml), "--out", str(out)])
    assert code == 0, printed
    assert "nodes/n1/nats-server.conf" in printed
    for name in ("t1-bridge", "floor-console", "pg-tablectl_floor"):
        assert (out / "secrets" / name).read_text().strip() not in printed  # never a secret printed
    return toml, out


def test_every_node_configuration_is_one_nats_server_accepts(rendered: tuple[Path, Path]) -> None:
    _, out = rendered
    for node in ("n1", "n2", "n3"):
        conf = out / "nodes" / node / "nats-server.conf"
        assert conf.stat().st_mode & 0o777 == 0o600  # it holds the users' hashes
        command = [nats_binary(), "-c", str(conf), "-t"]
        check = subprocess.run(command, capture_output=True, text=True, check=False)
        assert check.returncode == 0, check.stdout + check.stderr
        text = conf.read_text()
        assert "stream_replicas: 3" in text
        assert text.count("nats-route://") == 2  # the two other nodes
        assert "verify: true" in text  # routes prove themselves with their certificates
        assert re.search(r'listen: "127\.0\.0\.1:\d+"', text)  # NATS clients on loopback only


def test_each_user_may_touch_exactly_its_topics(rendered: tuple[Path, Path]) -> None:
    _, out = rendered
    text = (out / "nodes" / "n1" / "nats-server.conf").read_text()
    t1 = next(line for line in text.splitlines() if '"t1-bridge"' in line)
    index = text.splitlines().index(t1)
    t1_rules = text.splitlines()[index + 1]
    assert t1_rules.strip() == (
        'permissions: {publish: {allow: ["holdem.t1.alerts", "holdem.t1.state", "holdem.t1.hands", '
        '"holdem.t1.controller.status"]}, subscribe: {deny: [">"]}}}'
    )
    assert 'allowed_connection_types: ["MQTT"]' in t1
    assert re.search(r'password: "\$2a\$04\$[./A-Za-z0-9]{53}"', t1)  # a bcrypt hash, not the secret
    console = text.splitlines()[
        text.splitlines().index(next(line for line in text.splitlines() if '"floor-console"' in line)) + 1
    ]
    assert 'publish: {deny: [">"]}' in console
    assert '"holdem.*.alerts"' in console
    assert "dev" not in console
    for name in ("t1-bridge", "floor-console"):
        assert (out / "secrets" / name).read_text().strip() not in text


def test_the_state_paths_come_back_after_an_election_spread_over_the_tables() -> None:
    # A NATS election takes 4-9 s: a state path tried first after it is not held and closed, and
    # the tables' paths do not all come back in the same second.
    delays = [state_restart_s(f"t{k:04d}") for k in range(500)]
    assert min(delays) == 10
    assert max(delays) == 19
    shares = [delays.count(delay) for delay in range(10, 20)]
    assert max(shares) <= 2 * min(shares), shares


def test_the_tables_bridge_lists_every_node_starting_from_its_own(rendered: tuple[Path, Path]) -> None:
    toml, out = rendered
    nodes = tomllib.loads(toml.read_text())["nodes"]
    ports = [n["mqtt_port"] for n in nodes]
    for index, table in enumerate(["t1", "t2", "t3", "t4"]):
        bridge = (out / "tables" / table / "bridge.conf").read_text()
        order = [ports[(index + k) % 3] for k in range(3)]
        assert f"addresses {' '.join(f'127.0.0.1:{p}' for p in order)}" in bridge
        for line in (
            "round_robin true",
            "try_private false",
            "cleansession false",
            "restart_timeout 1 2",
            "keepalive_interval 10",
            "bridge_protocol_version mqttv311",
            f"remote_username {table}-bridge",
            f"topic holdem/{table}/alerts out 1",
            # Nothing retained reaches the cluster (JetStream would store it before routing it).
            "bridge_outgoing_retain false",
        ):
            assert line in bridge.splitlines(), line
        main, state_paths = bridge.split(f"connection tablectl-{table}-floor-state\n")
        first, second = state_paths.split(f"connection tablectl-{table}-floor-state-2\n")
        # The session's connection carries the history; the state has two paths of its own, no
        # session, from the second and the third node.
        assert [line for line in main.splitlines() if line.startswith("topic")] == [
            f"topic holdem/{table}/{kind} out 1" for kind in ("alerts", "hands", "controller/status")
        ]
        for path, shift, suffix in ((first, 1, ""), (second, 2, "-2")):
            state_order = order[shift:] + order[:shift]
            assert f"addresses {' '.join(f'127.0.0.1:{p}' for p in state_order)}" in path
            for line in (
                "cleansession true",
                # Taken up later than the session's, each table at its own time (10-19 s).
                f"restart_timeout {state_restart_s(table)}",
                "bridge_outgoing_retain false",
                f"remote_clientid tablectl-{table}-bridge-state{suffix}",
                f"remote_username {table}-bridge",
            ):
                assert line in path.splitlines(), line
            # The state, and a QoS 0 copy of the alerts and hands for the pages.
            assert [line for line in path.splitlines() if line.startswith("topic")] == [
                f"topic holdem/{table}/{kind} out 0" for kind in ("state", "alerts", "hands")
            ]
        assert "cleansession false" in main.splitlines()
        assert not [line for line in bridge.splitlines() if line.startswith("topic") and "dev" in line]
        assert (out / "secrets" / f"{table}-bridge").read_text().strip() in bridge
        section = tomllib.loads((out / "tables" / table / "deploy-floor.toml").read_text())["deploy"]["floor"]
        floor = FloorBridgeSection.model_validate(section)
        assert [port for _, port in floor.addresses] == order


def test_rendering_again_keeps_the_secrets_and_a_bad_file_is_one_line(
    rendered: tuple[Path, Path], tmp_path: Path
) -> None:
    toml, out = rendered
    before = (out / "secrets" / "t1-bridge").read_text()
    assert render(["deploy", "--floor", str(toml), "--out", str(out)])[0] == 0
    assert (out / "secrets" / "t1-bridge").read_text() == before
    assert render(["deploy", "--floor", str(toml), "--out", str(out), "--rotate"])[0] == 0
    assert (out / "secrets" / "t1-bridge").read_text() != before
    bad = tmp_path / "bad.toml"
    bad.write_text(toml.read_text().replace('ids = ["t1"', 'ids = ["t.1"'))
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "tablectl"),
            "deploy",
            "--floor",
            str(bad),
            "--out",
            str(tmp_path / "bad-out"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0
    assert "tables.ids.0" in done.stderr
    assert "no '.' on a NATS floor" in done.stderr


def test_the_database_sql_makes_the_roles_the_schema_and_a_reader_that_cannot_write(
    tmp_path: Path,
) -> None:
    ca = make_ca(tmp_path, "ca")
    ports = node_ports(3)
    certs = {p.name: make_server_cert(tmp_path, ca, p.name, client_auth=True) for p in ports}
    toml = floor_file(tmp_path, ports, ca_file=ca.cert, certs=certs, tables=["t1"])
    suffix = secrets.token_hex(4)
    owner, reader, database = f"tf_owner_{suffix}", f"tf_reader_{suffix}", f"tf_floor_{suffix}"
    text = toml.read_text().replace(
        "[postgresql]\n", f'[postgresql]\nowner = "{owner}"\nreader = "{reader}"\ndatabase = "{database}"\n'
    )
    toml.write_text(text)
    out = tmp_path / "out"
    assert render(["deploy", "--floor", str(toml), "--out", str(out)])[0] == 0
    sql = (out / "postgresql" / "setup.sql").read_text()
    assert (out / "secrets" / f"pg-{owner}").read_text().strip() not in sql  # a verifier, not the password
    admin = server_url()
    try:
        command = ["psql", admin, "-v", "ON_ERROR_STOP=1", "-q", "-f", str(out / "postgresql" / "setup.sql")]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        with psycopg.connect(admin) as db:
            found = db.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (owner,)).fetchone()
            assert found is not None
            (verifier,) = found
            assert verifier.startswith("SCRAM-SHA-256$4096:")
        as_owner = with_database(admin.replace("postgres@", f"{owner}@"), database)
        store = store_for(as_owner)  # the recorders' role migrates and writes
        import asyncio

        async def migrate() -> None:
            await store.open()
            await store.close()

        asyncio.run(migrate())
        as_reader = with_database(admin.replace("postgres@", f"{reader}@"), database)
        with psycopg.connect(as_reader) as db:
            assert db.execute("SELECT count(*) FROM floor.hand_results").fetchone() == (0,)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                db.execute(
                    "INSERT INTO floor.status_changes (table_id, state, session, ts, ts_ms, "
                    "received_ms) VALUES ('t1', 'online', 1, 'x', 0, 0)"
                )
    finally:
        with psycopg.connect(admin, autocommit=True) as db:
            db.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            for role in (owner, reader):
                db.execute(f'DROP ROLE IF EXISTS "{role}"')
