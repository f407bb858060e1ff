"""Render every artefact of the table PC from the table's configuration, and write them out."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from config.models import TableConfig
from controller.deploy import mosquitto
from controller.deploy.artefacts import Artefact, write_all
from controller.deploy.identities import identities, load_or_create_secrets
from controller.deploy.table_config import table_config_text
from controller.deploy.udev import udev_rules
from controller.deploy.unit import service_unit, unit_name


@dataclass(frozen=True)
class Options:
    """Where things go on the table PC, and how to render."""

    #: The configuration's path; it is also where the rendered copy is installed.
    config_path: Path
    out: Path
    executable: Path
    broker: mosquitto.BrokerPaths
    rotate: bool = False


@dataclass
class Rendered:
    artefacts: list[Artefact]
    notes: list[str] = field(default_factory=list)


def render(config: TableConfig, options: Options) -> Rendered:
    """Every artefact (secrets created or kept under ``options.out``, nothing else written)."""
    found = identities(config)
    port = mosquitto.loopback_port(config)  # fails early on a config without a local broker
    secrets = load_or_create_secrets(options.out, found, rotate=options.rotate)
    table = config.table.id
    config_dir = options.config_path.parent
    broker = options.broker
    user = config.deploy.user
    udev = udev_rules(config)
    artefacts = [
        Artefact(
            Path("mosquitto/mosquitto.conf"),
            mosquitto.mosquitto_conf(config, broker, secrets, options.config_path),
            str(broker.conf),
            "root:mosquitto",
            "0640",
            secret=config.deploy.floor is not None,
        ),
        Artefact(
            Path("mosquitto/tablectl.passwd"),
            mosquitto.passwd(found, secrets),
            str(broker.passwd),
            "root:mosquitto",
            "0640",
            secret=True,
        ),
        Artefact(
            Path("mosquitto/tablectl.acl"),
            mosquitto.acl(config, found),
            str(broker.acl),
            "root:mosquitto",
            "0640",
        ),
        Artefact(
            Path("systemd") / unit_name(config),
            service_unit(config, executable=options.executable, installed_config=options.config_path),
            f"/etc/systemd/system/{unit_name(config)}",
            "root:root",
            "0644",
        ),
        Artefact(
            Path(f"udev/70-tablectl-{table}.rules"),
            udev.text,
            f"/etc/udev/rules.d/70-tablectl-{table}.rules",
            "root:root",
            "0644",
        ),
        Artefact(
            Path("tablectl") / options.config_path.name,
            table_config_text(options.config_path, config, found, udev.named),
            str(options.config_path),
            f"root:{user}",
            "0640",
        ),
    ]
    for identity in found:
        if identity.role in ("controller", "device"):
            install, owner, mode = str(config_dir / "secrets" / identity.name), f"{user}:{user}", "0600"
        elif identity.role == "bridge":
            install, owner, mode = "kept here: its hash is in floor/, itself in mosquitto.conf", "-", "-"
        else:
            install, owner, mode = f"hand over to the {identity.role}'s user (not for this PC)", "-", "-"
        artefacts.append(
            Artefact(
                identity.secret_path,
                secrets[identity.name] + "\n",
                install,
                owner,
                mode,
                secret=True,
            )
        )
    notes = [f"udev: {reason}" for reason in udev.skipped]
    if config.deploy.floor is not None:
        artefacts += [
            Artefact(
                Path(f"floor/tablectl-{table}.passwd"),
                mosquitto.floor_passwd(config, secrets),
                "the floor broker's password file (append)",
                "-",
                "-",
                secret=True,
            ),
            Artefact(
                Path(f"floor/tablectl-{table}.acl"),
                mosquitto.floor_acl(config),
                "the floor broker's ACL (append)",
                "-",
                "-",
            ),
        ]
    else:
        notes.append("no [deploy.floor]: no bridge; the public topics stay on this PC")
    notes.append(f"broker: loopback listener 127.0.0.1:{port}")
    notes.append(f"service: writes only to {os.path.normpath(config.journal.path.parent)} (the journal's)")
    return Rendered(artefacts, notes)


def write(rendered: Rendered, out: Path) -> None:
    write_all(out, rendered.artefacts)
