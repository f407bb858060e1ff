"""``tablectl deploy --floor FLOOR.toml --out DIR``: the floor at casino scale, rendered.

From one description of the floor (its nodes, its tables, its consoles, its database) this
renders everything its machines need besides the packages (one module: the floor's own
configuration file and its artefacts are one thing):

- ``nodes/NODE/nats-server.conf``: each node of the NATS cluster (JetStream, which keeps the MQTT
  sessions and retained messages in streams replicated across the nodes; the MQTT listener over
  TLS; the routes to the other nodes over TLS with client certificates; the users);
- the users, each allowed exactly its topics: one per table (``T-bridge``), whose bridge may
  publish only that table's ``alerts``, ``state``, ``hands`` and ``controller/status`` (and read
  its ``input`` when the house lets the floor acknowledge), and the consoles' users, which may
  only read the public topics of every table; every user is MQTT only (no NATS protocol
  client can connect with it), and passwords are stored as bcrypt hashes;
- ``tables/T/bridge.conf`` and ``tables/T/deploy-floor.toml``: the table PC's bridge listing
  every node (``controller.deploy.bridge``), and the ``[deploy.floor]`` section that makes the
  table's own ``tablectl deploy --config`` render the same bridge;
- ``postgresql/setup.sql``: the database, its schema ``floor``, the recorders' role (owns the
  schema: migrates and writes) and the readers' role (reads only), passwords as SCRAM-SHA-256
  verifiers; ``postgresql/pg_hba.conf``: the lines that let them in over TLS;
- ``consoles/floor.env`` and ``consoles/tablectl-floor.service``: a console's environment (the
  broker and store URLs, the password) and its systemd unit;
- ``secrets/``: every generated secret (kept on the next rendering, ``--rotate`` makes new ones).

Topics map to NATS subjects by ``/`` -> ``.``, so table ids and the root may not hold a ``.``
(NATS would turn it into ``//``); the file is refused naming the entry. See ``docs/deploy.md``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from contract.topics import FLOOR_KINDS, Topics, check_segment
from controller.deploy.artefacts import Artefact, DeployError
from controller.deploy.bridge import BridgeSpec, bridge_section, bridge_user
from controller.deploy.identities import Identity, load_or_create_secrets

#: bcrypt's cost for the users' passwords. The secrets are 256-bit random strings, which no
#: work factor protects further; a low cost keeps a node's CPU free when hundreds of bridges
#: reconnect at once after a node's death (each connection verifies a hash).
BCRYPT_COST: Final = 4
SCRAM_ITERATIONS: Final = 4096
#: How long a node waits for the acknowledgement of a QoS 1 message before sending it again (a
#: recorder that died with messages not yet stored gets them again this soon).
ACK_WAIT: Final = "10s"


def _segment(what: str) -> AfterValidator:
    def check(value: str) -> str:
        check_segment(what, value)
        if "." in value:
            raise ValueError(f"{what} {value!r}: no '.' on a NATS floor (MQTT topics map to subjects by '.')")
        return value

    return AfterValidator(check)


def _absolute(value: Path) -> Path:
    if not value.is_absolute():
        raise ValueError(f"{value}: give the absolute path the file has on its machine")
    return value


TargetPath = Annotated[Path, AfterValidator(_absolute)]
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")]
RoleName = Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_]{0,62}$")]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FloorSection(_Section):
    root: str = Field(default="holdem", description="The tables' topic root.")
    cluster: Name = Field(default="floor", description="The NATS cluster's name.")
    ca_file: TargetPath = Field(description="The house CA that signed every node's certificate.")
    store_dir: TargetPath = Field(
        default=Path("/var/lib/nats-server"), description="JetStream's directory on each node."
    )

    @model_validator(mode="after")
    def _root(self) -> FloorSection:
        for part in self.root.split("/"):
            check_segment("topic root", part)
            if "." in part:
                raise ValueError(f"root {self.root!r}: no '.' on a NATS floor")
        return self


class NodeSection(_Section):
    name: Name
    host: str = Field(
        min_length=1,
        description="The address tables, consoles and the other nodes "
        "reach this node at (its certificate names it).",
    )
    bind: str | None = Field(default=None, description="The address to listen on (default: host).")
    mqtt_port: int = Field(default=8883, ge=1, le=65535)
    cluster_port: int = Field(default=6222, ge=1, le=65535)
    client_port: int = Field(default=4222, ge=1, le=65535, description="NATS clients, loopback only.")
    monitor_port: int = Field(default=8222, ge=1, le=65535, description="/healthz, loopback only.")
    cert_file: TargetPath
    key_file: TargetPath


class TablesSection(_Section):
    ids: list[Annotated[str, _segment("table id")]] = Field(min_length=1)
    allow_input: bool = Field(default=False, description="The floor may acknowledge alerts (input in).")
    #: Where the tables keep the floor's CA (for their bridge).
    ca_file: TargetPath = Field(default=Path("/etc/mosquitto/certs/floor-ca.crt"))


class ConsolesSection(_Section):
    users: list[Name] = Field(default_factory=lambda: ["floor-console"], min_length=1)
    listen: str = Field(default="127.0.0.1:8090")
    ca_file: TargetPath = Field(
        default=Path("/etc/tablectl/floor-ca.crt"), description="Where the consoles keep the floor's CA."
    )


class PostgresSection(_Section):
    host: str = Field(min_length=1)
    port: int = Field(default=5432, ge=1, le=65535)
    database: RoleName = "tablectl_floor"
    owner: RoleName = Field(default="tablectl_floor", description="The recorders' role: owns the schema.")
    reader: RoleName = Field(default="tablectl_floor_reader", description="Reads only.")
    sslmode: str = Field(default="verify-full", pattern=r"^(disable|require|verify-ca|verify-full)$")
    clients: str = Field(
        default="0.0.0.0/0", description="Where consoles and recorders connect from (pg_hba.conf address)."
    )


class FloorFile(_Section):
    floor: FloorSection
    nodes: list[NodeSection] = Field(min_length=1)
    tables: TablesSection
    consoles: ConsolesSection = Field(default_factory=ConsolesSection)
    postgresql: PostgresSection

    @model_validator(mode="after")
    def _unique(self) -> FloorFile:
        names = [node.name for node in self.nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"nodes: a name is used twice ({', '.join(names)})")
        if len(set(self.tables.ids)) != len(self.tables.ids):
            raise ValueError("tables.ids: a table is listed twice")
        return self


def load_floor(path: Path) -> FloorFile:
    """Read and check FLOOR.toml; DeployError naming the file and the place."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DeployError(f"{path}: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise DeployError(f"{path}: {error}") from None
    try:
        return FloorFile.model_validate(data)
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        place = ".".join(str(p) for p in problem["loc"])
        raise DeployError(f"{path}: {place}: {problem['msg']}") from None


# --------------------------------------------------------------------------------------------
# Secrets and their hashes
# --------------------------------------------------------------------------------------------


def bcrypt_hash(secret: str) -> str:
    try:
        import bcrypt
    except ModuleNotFoundError:
        raise DeployError("tablectl deploy --floor needs bcrypt: pip install 'tablectl[floor]'") from None
    hashed: bytes = bcrypt.hashpw(secret.encode(), bcrypt.gensalt(BCRYPT_COST, prefix=b"2a"))
    return hashed.decode()


def scram_verifier(password: str, *, salt: bytes | None = None) -> str:
    """PostgreSQL's SCRAM-SHA-256 verifier of ``password`` (what ``CREATE ROLE ... PASSWORD``
    stores): the password itself never appears in the rendered SQL."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, SCRAM_ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode()

    return f"SCRAM-SHA-256${SCRAM_ITERATIONS}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def floor_identities(floor: FloorFile) -> list[Identity]:
    found = [Identity(bridge_user(table), "bridge") for table in floor.tables.ids]
    found += [Identity(user, "floor") for user in floor.consoles.users]
    found += [Identity(f"pg-{role}", "floor") for role in (floor.postgresql.owner, floor.postgresql.reader)]
    return found


# --------------------------------------------------------------------------------------------
# The nodes
# --------------------------------------------------------------------------------------------


def subject(topic: str) -> str:
    """The NATS subject of an MQTT topic (or filter: ``+`` -> ``*``, ``#`` -> ``>``)."""
    return ".".join({"+": "*", "#": ">"}.get(part, part) for part in topic.split("/"))


def _q(value: object) -> str:
    return json.dumps(str(value))  # a JSON string is a NATS configuration string


def _list(values: list[str]) -> str:
    return "[" + ", ".join(_q(v) for v in values) + "]"


def _rules(rules: dict[str, list[str]]) -> str:
    return "{" + ", ".join(f"{kind}: {_list(subjects)}" for kind, subjects in rules.items()) + "}"


def users_block(floor: FloorFile, passwords: dict[str, str]) -> str:
    """The ``authorization`` block: each user its topics, MQTT only, bcrypt hashes."""
    root = floor.floor.root
    entries: list[tuple[str, str, dict[str, list[str]], dict[str, list[str]]]] = []
    for table in floor.tables.ids:
        topics = Topics(root, table)
        publish = [subject(t) for t in (topics.alerts, topics.state, topics.hands, topics.controller_status)]
        subscribe: dict[str, list[str]] = {"deny": [">"]}
        if floor.tables.allow_input:
            subscribe = {"allow": ["$MQTT.sub.>", subject(topics.input)]}
        entries.append(
            (
                bridge_user(table),
                f"table {table}'s bridge: its own public topics out"
                + (", its input in" if floor.tables.allow_input else ""),
                {"allow": publish},
                subscribe,
            )
        )
    public = [subject(f"{root}/+/{kind}") for kind in FLOOR_KINDS]
    for user in floor.consoles.users:
        entries.append(
            (
                user,
                "a console or recorder: reads every table's public topics, publishes nothing",
                {"deny": [">"]},
                {"allow": ["$MQTT.sub.>", *public]},
            )
        )
    lines = ["authorization {", "  users: ["]
    for name, why, may_publish, may_subscribe in entries:
        lines.append(f"    # {why}")
        lines.append(
            f"    {{user: {_q(name)}, password: {_q(bcrypt_hash(passwords[name]))}, "
            'allowed_connection_types: ["MQTT"],'
        )
        lines.append(
            f"     permissions: {{publish: {_rules(may_publish)}, subscribe: {_rules(may_subscribe)}}}}}"
        )
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def node_conf(floor: FloorFile, node: NodeSection, users: str) -> str:
    """One node's nats-server.conf."""
    bind = node.bind or node.host
    replicas = min(3, len(floor.nodes))
    routes = [f"nats-route://{other.host}:{other.cluster_port}" for other in floor.nodes if other is not node]
    tls = (
        f"tls {{cert_file: {_q(node.cert_file)}, key_file: {_q(node.key_file)}, "
        f"ca_file: {_q(floor.floor.ca_file)}"
    )
    return f"""\
# NATS node {node.name} of the floor cluster {floor.floor.cluster!r}, rendered by tablectl deploy --floor.
# Do not edit: change the floor's file and render again. Install as /etc/nats-server.conf on
# {node.host} (0640 root:nats: it holds the users' password hashes).
server_name: {_q(node.name)}

# NATS protocol clients: none but the administrator's tools, on this machine only.
listen: {_q(f"127.0.0.1:{node.client_port}")}
# Monitoring (/healthz, /jsz), on this machine only.
http: {_q(f"127.0.0.1:{node.monitor_port}")}
max_payload: 1MB

# JetStream keeps the MQTT sessions, the QoS 1 messages not yet acknowledged and the retained
# messages in streams replicated on {replicas} nodes: losing a node loses none of them.
jetstream {{
  store_dir: {_q(floor.floor.store_dir)}
}}

cluster {{
  name: {_q(floor.floor.cluster)}
  listen: {_q(f"{bind}:{node.cluster_port}")}
  routes: {_list(routes)}
  # Routes over TLS, each node proving itself with its certificate.
  {tls}, verify: true, timeout: 5}}
}}

# The tables' bridges, the consoles and the recorders: MQTT 3.1.1 over TLS.
mqtt {{
  listen: {_q(f"{bind}:{node.mqtt_port}")}
  {tls}, timeout: 5}}
  stream_replicas: {replicas}
  # A QoS 1 message not acknowledged this soon is sent again (a recorder that died holding it).
  ack_wait: {_q(ACK_WAIT)}
}}

{users}"""


# --------------------------------------------------------------------------------------------
# PostgreSQL, consoles, tables
# --------------------------------------------------------------------------------------------


def setup_sql(floor: FloorFile, passwords: dict[str, str]) -> str:
    pg = floor.postgresql
    owner, reader, database = pg.owner, pg.reader, pg.database  # names checked by their pattern
    return f"""\
-- The floor's history database, rendered by tablectl deploy --floor. Run once on {pg.host} as the
-- database superuser:  psql -U postgres -f setup.sql   (again after --rotate: the ALTER ROLEs).
-- Passwords are SCRAM-SHA-256 verifiers: the passwords themselves are in secrets/pg-*.
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{owner}') THEN CREATE ROLE {owner} LOGIN; END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{reader}') THEN CREATE ROLE {reader} LOGIN; END IF;
END $$;
ALTER ROLE {owner} LOGIN PASSWORD '{scram_verifier(passwords[f"pg-{owner}"])}';
ALTER ROLE {reader} LOGIN PASSWORD '{scram_verifier(passwords[f"pg-{reader}"])}';
SELECT 'CREATE DATABASE {database} OWNER {owner}'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '{database}') \\gexec
REVOKE ALL ON DATABASE {database} FROM PUBLIC;
GRANT CONNECT ON DATABASE {database} TO {owner}, {reader};
\\connect {database}
-- The recorders own the schema: they create and migrate its tables (schema_migrations) and write.
CREATE SCHEMA IF NOT EXISTS floor AUTHORIZATION {owner};
REVOKE ALL ON SCHEMA public FROM PUBLIC;
-- Consoles started with --no-record, reports and the house's own tools read only.
GRANT USAGE ON SCHEMA floor TO {reader};
GRANT SELECT ON ALL TABLES IN SCHEMA floor TO {reader};
ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA floor GRANT SELECT ON TABLES TO {reader};
"""  # noqa: S608 - role and database names match ^[a-z_][a-z0-9_]*$, verifiers are base64


def pg_hba(floor: FloorFile) -> str:
    pg = floor.postgresql
    return (
        "# Add to pg_hba.conf on the database server (before any broader line), then reload:\n"
        "# the floor's roles over TLS only, with their SCRAM passwords.\n"
        f"hostssl {pg.database} {pg.owner},{pg.reader} {pg.clients} scram-sha-256\n"
    )


def store_url(floor: FloorFile, role: str, password: str) -> str:
    pg = floor.postgresql
    return f"postgresql://{role}:{password}@{pg.host}:{pg.port}/{pg.database}?sslmode={pg.sslmode}"


def broker_urls(floor: FloorFile) -> str:
    return ",".join(f"mqtts://{node.host}:{node.mqtt_port}" for node in floor.nodes)


def console_env(floor: FloorFile, passwords: dict[str, str]) -> str:
    user = floor.consoles.users[0]
    owner = floor.postgresql.owner
    return (
        "# The environment of a floor console or recorder (systemd EnvironmentFile=), rendered by\n"
        "# tablectl deploy --floor. It holds secrets: 0600, root only.\n"
        f"TABLECTL_FLOOR_BROKERS={broker_urls(floor)}\n"
        f"TABLECTL_FLOOR_USER={user}\n"
        f"TABLECTL_FLOOR_PASSWORD={passwords[user]}\n"
        f"TABLECTL_FLOOR_STORE={store_url(floor, owner, passwords[f'pg-{owner}'])}\n"
        f"TABLECTL_FLOOR_LISTEN={floor.consoles.listen}\n"
        f"TABLECTL_FLOOR_CA={floor.consoles.ca_file}\n"
    )


def console_unit(floor: FloorFile) -> str:
    return f"""\
# A floor console (it also records), rendered by tablectl deploy --floor. Run as many as you like,
# on as many machines: none holds anything another needs.
[Unit]
Description=tablectl floor console ({floor.floor.cluster})
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
EnvironmentFile=/etc/tablectl/floor.env
ExecStart=/opt/tablectl/bin/tablectl floor --broker ${{TABLECTL_FLOOR_BROKERS}} --root {floor.floor.root} \\
    --username ${{TABLECTL_FLOOR_USER}} --ca-file ${{TABLECTL_FLOOR_CA}} --listen ${{TABLECTL_FLOOR_LISTEN}}
Restart=always
RestartSec=2
DynamicUser=yes
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes

[Install]
WantedBy=multi-user.target
"""


def table_floor_toml(floor: FloorFile, table: str, order: list[NodeSection]) -> str:
    urls = ",".join(f"mqtts://{node.host}:{node.mqtt_port}" for node in order)
    return (
        f"# Table {table}'s [deploy.floor], rendered by tablectl deploy --floor: put it in the table's\n"
        f"# configuration, and secrets/{bridge_user(table)} from the floor's rendering into the table's\n"
        "# deploy directory (secrets/), then run tablectl deploy --config there.\n"
        "[deploy.floor]\n"
        f"url = {_q(urls)}\n"
        f"ca_file = {_q(floor.tables.ca_file)}\n"
        f"allow_input = {'true' if floor.tables.allow_input else 'false'}\n"
    )


@dataclass
class FloorRendered:
    artefacts: list[Artefact]
    notes: list[str] = field(default_factory=list)


def render_floor(floor: FloorFile, out: Path, *, rotate: bool = False) -> FloorRendered:
    """Every artefact of the floor (secrets created or kept under ``out``, nothing else written)."""
    found = floor_identities(floor)
    passwords = load_or_create_secrets(out, found, rotate=rotate)
    users = users_block(floor, passwords)
    artefacts = [
        Artefact(
            Path("nodes") / node.name / "nats-server.conf",
            node_conf(floor, node, users),
            f"/etc/nats-server.conf on {node.name} ({node.host})",
            "root:nats",
            "0640",
            secret=True,
        )
        for node in floor.nodes
    ]
    for index, table in enumerate(floor.tables.ids):
        # Each table starts from another node: the bridges spread over the cluster.
        shift = index % len(floor.nodes)
        order = floor.nodes[shift:] + floor.nodes[:shift]
        spec = BridgeSpec(
            table=table,
            root=floor.floor.root,
            addresses=tuple((node.host, node.mqtt_port) for node in order),
            ca_file=floor.tables.ca_file,
            password=passwords[bridge_user(table)],
            allow_input=floor.tables.allow_input,
            retained=False,
        )
        artefacts += [
            Artefact(
                Path("tables") / table / "bridge.conf",
                bridge_section(spec),
                f"table {table}: the bridge tablectl deploy --config renders from deploy-floor.toml",
                "-",
                "-",
                secret=True,
            ),
            Artefact(
                Path("tables") / table / "deploy-floor.toml",
                table_floor_toml(floor, table, order),
                f"table {table}: its configuration's [deploy.floor]",
                "-",
                "-",
            ),
        ]
    artefacts += [
        Artefact(
            Path("postgresql/setup.sql"),
            setup_sql(floor, passwords),
            f"run once on {floor.postgresql.host} as the superuser",
            "-",
            "-",
        ),
        Artefact(
            Path("postgresql/pg_hba.conf"),
            pg_hba(floor),
            f"add to pg_hba.conf on {floor.postgresql.host}",
            "-",
            "-",
        ),
        Artefact(
            Path("consoles/floor.env"),
            console_env(floor, passwords),
            "/etc/tablectl/floor.env on each console's machine",
            "root:root",
            "0600",
            secret=True,
        ),
        Artefact(
            Path("consoles/tablectl-floor.service"),
            console_unit(floor),
            "/etc/systemd/system/tablectl-floor.service",
            "root:root",
            "0644",
        ),
    ]
    for identity in found:
        artefacts.append(
            Artefact(
                identity.secret_path,
                passwords[identity.name] + "\n",
                _handover(identity.name, floor),
                "-",
                "-",
                secret=True,
            )
        )
    notes = [
        f"cluster {floor.floor.cluster!r}: {len(floor.nodes)} nodes, streams replicated on "
        f"{min(3, len(floor.nodes))}; brokers {broker_urls(floor)}",
        f"{len(floor.tables.ids)} tables: copy secrets/T-bridge to each table's deploy directory "
        "(secrets/) and tables/T/deploy-floor.toml into its configuration",
    ]
    if len(floor.nodes) < 3:
        notes.append("fewer than 3 nodes: losing one stops JetStream (a quorum needs 2 of 3)")
    return FloorRendered(artefacts, notes)


def _handover(name: str, floor: FloorFile) -> str:
    if name.startswith("pg-"):
        return "kept here: its verifier is in postgresql/setup.sql, itself in consoles/floor.env"
    if name in floor.consoles.users:
        return "kept here: in consoles/floor.env (its hash in the nodes' configuration)"
    return "hand over to the table PC's deploy directory, secrets/ (its hash in the nodes')"
