"""The table PC's mosquitto: configuration, password file, ACL, and the floor broker's share.

The ACL is the heart of the table's secrecy: tag UIDs (hence hole cards) travel on
``dev/{device}/event``, which only the drivers publish (each its own) and only the controller
reads. mosquitto checks every publish against it (an unauthorised one is dropped silently) and
every delivery (a subscription to ``#`` only yields what the user may read).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Final

from config.exposure import is_loopback
from config.models import FloorBridgeSection, LanListenerSection, TableConfig
from contract.topics import Topics
from controller.deploy.artefacts import DeployError
from controller.deploy.bridge import BridgeSpec, bridge_section, public_topics
from controller.deploy.identities import Identity
from controller.deploy.passwords import password_file

# Queue limits: an hour's outage of a client (the controller restarting, the floor link) at a
# busy table. docs/deploy.md ("Queue limits") gives the measurements behind these figures.
#: A fast dealer with an automatic shuffler.
BUSY_HANDS_PER_HOUR: Final = 40
#: Broker messages a hand: ~92 measured without chips (tablectl demo, 50 hands, 9 seats); chip
#: reads multiply the tag events (the game issue), so five times that, rounded up.
MESSAGES_PER_HAND: Final = 500
OUTAGE_HOURS: Final = 1
QUEUED_MESSAGES: Final = BUSY_HANDS_PER_HOUR * MESSAGES_PER_HAND * OUTAGE_HOURS
#: Messages average ~210 bytes (state ~700, with alerts up to a few KiB): 2 KiB each is ample.
QUEUED_BYTES: Final = QUEUED_MESSAGES * 2048
MAX_PACKET_SIZE: Final = 1 << 20
AUTOSAVE_S: Final = 10
SESSION_EXPIRY: Final = "14d"


@dataclass(frozen=True)
class BrokerPaths:
    """Where the broker's files go on the table PC."""

    #: The directory of mosquitto.conf, the password file and the ACL (/etc/mosquitto).
    config_dir: Path
    #: persistence_location (/var/lib/mosquitto).
    state_dir: Path

    @property
    def conf(self) -> Path:
        return self.config_dir / "mosquitto.conf"

    @property
    def passwd(self) -> Path:
        return self.config_dir / "tablectl.passwd"

    @property
    def acl(self) -> Path:
        return self.config_dir / "tablectl.acl"


def loopback_port(config: TableConfig) -> int:
    """The port of the loopback listener: the one the controller's ``[mqtt] url`` names."""
    mqtt = config.mqtt
    if mqtt.embedded or not is_loopback(mqtt.host) or mqtt.use_tls:
        raise DeployError(
            f"[mqtt] url = {mqtt.url!r}: tablectl deploy renders the table PC's own broker, so the "
            "controller must reach it as mqtt://127.0.0.1:PORT"
        )
    return mqtt.port


def _acl_block(user: str, rules: list[tuple[str, str]]) -> str:
    lines = [f"user {user}"] + [f"topic {access} {topic}" for access, topic in rules]
    return "\n".join(lines) + "\n"


def acl(config: TableConfig, found: list[Identity]) -> str:
    """The ACL of the table's broker: each identity may touch exactly its topics."""
    topics = Topics(config.mqtt.root, config.table.id)
    public = public_topics(topics)
    floor_input = config.deploy.floor is not None and config.deploy.floor.allow_input
    blocks = [
        f"# ACL of table {config.table.id}'s broker, rendered by tablectl deploy. Access not "
        "granted here is denied:\n# a forbidden publish is dropped, a forbidden topic is never "
        "delivered.\n"
    ]
    for identity in found:
        rules: list[tuple[str, str]]
        if identity.role == "controller":
            rules = [
                ("read", f"{topics.base}/dev/#"),
                ("write", f"{topics.base}/dev/+/cmd"),
                ("read", topics.input),
                # Its own retained status, read back at start: another controller of this
                # table still online makes it refuse (docs/service.md, one controller per table).
                ("readwrite", topics.controller_status),
            ] + [("write", topic) for topic in public if topic != topics.controller_status]
        elif identity.role == "device" and identity.device is not None:
            rules = [
                ("write", topics.device_event(identity.device)),
                # Its own status, read back for the session number it last used.
                ("readwrite", topics.device_status(identity.device)),
                ("read", topics.device_cmd(identity.device)),
            ]
        elif identity.role == "console":
            rules = [("write", topics.input)] + [("read", topic) for topic in public]
        elif identity.role == "floor":
            rules = [("read", topic) for topic in public]
            if floor_input:
                rules.append(("write", topics.input))
        else:
            continue  # the bridge is a user of the floor broker, not of this one
        blocks.append(f"# {identity.role}{f' {identity.device}' if identity.device else ''}\n")
        blocks.append(_acl_block(identity.name, rules) + "\n")
    return "".join(blocks)


def passwd(found: list[Identity], secrets: dict[str, str]) -> str:
    """The table broker's password file (every identity but the bridge)."""
    return password_file({i.name: secrets[i.name] for i in found if i.role != "bridge"})


def _lan_listener(lan: LanListenerSection | None) -> str:
    if lan is None:
        return "# No LAN listener ([deploy.lan] not configured): nothing outside this PC connects.\n"
    lines = [
        "",
        "# Floor tools on the card room's network: TLS only, same users and ACL.",
        f"listener {lan.port} {lan.bind}",
        f"certfile {lan.cert_file}",
        f"keyfile {lan.key_file}",
        "tls_version tlsv1.2",
    ]
    if lan.client_ca_file is not None:
        lines += [f"cafile {lan.client_ca_file}", "require_certificate true"]
    return "\n".join(lines) + "\n"


def _bridge(config: TableConfig, floor: FloorBridgeSection | None, secret: str | None) -> str:
    if floor is None or secret is None:
        return "\n# No bridge to the floor ([deploy.floor] not configured).\n"
    return bridge_section(
        BridgeSpec(
            table=config.table.id,
            root=config.mqtt.root,
            addresses=tuple(floor.addresses),
            ca_file=floor.ca_file,
            password=secret,
            allow_input=floor.allow_input,
            cert_file=floor.cert_file,
            key_file=floor.key_file,
            # Several nodes are a NATS cluster (see controller.deploy.bridge); one broker, as before.
            retained=len(floor.addresses) == 1,
        )
    )


def _human(size: int) -> str:
    return f"{size / (1 << 20):.0f} MiB"


def mosquitto_conf(config: TableConfig, paths: BrokerPaths, secrets: dict[str, str], source: Path) -> str:
    """mosquitto.conf of the table PC (it holds the bridge's password when there is a bridge)."""
    template = Template(
        resources.files("controller.deploy").joinpath("templates/mosquitto.conf").read_text("utf-8")
    )
    floor = config.deploy.floor
    bridge_secret = secrets.get(f"{config.table.id}-bridge")
    return template.substitute(
        table=config.table.id,
        config=source,
        conf_path=paths.conf,
        holds_secret="it holds the bridge's password" if floor else "it names the password file",
        passwd_path=paths.passwd,
        acl_path=paths.acl,
        state_dir=paths.state_dir,
        autosave_s=AUTOSAVE_S,
        session_expiry=SESSION_EXPIRY,
        hands_per_hour=BUSY_HANDS_PER_HOUR,
        messages_per_hand=MESSAGES_PER_HAND,
        queued_messages=QUEUED_MESSAGES,
        queued_bytes=QUEUED_BYTES,
        queued_bytes_human=_human(QUEUED_BYTES),
        max_packet_size=MAX_PACKET_SIZE,
        port=loopback_port(config),
        lan_listener=_lan_listener(config.deploy.lan),
        bridge=_bridge(config, floor, bridge_secret),
    )


def floor_acl(config: TableConfig) -> str:
    """The floor broker's ACL entry for this table's bridge (for the floor's administrator)."""
    topics = Topics(config.mqtt.root, config.table.id)
    floor = config.deploy.floor
    rules = [("write", topic) for topic in public_topics(topics)]
    if floor is not None and floor.allow_input:
        rules.append(("read", topics.input))
    return (
        f"# Add to the floor broker's ACL: table {config.table.id}'s bridge may publish its public "
        "topics only.\n" + _acl_block(f"{config.table.id}-bridge", rules)
    )


def floor_passwd(config: TableConfig, secrets: dict[str, str]) -> str:
    """The floor broker's password file line for this table's bridge."""
    name = f"{config.table.id}-bridge"
    return password_file({name: secrets[name]})
