"""Who talks to the table's broker, and the generated secret of each identity.

- ``{table}-controller``: the controller (reads ``dev/#`` and ``input``, publishes the outputs);
- ``{table}-dev-{device}``: one per ``[[devices]]`` entry (its own event, status and cmd only);
- ``{table}-console``: a dealer console or tablet on the table PC (publishes ``input``);
- ``{table}-floor``: floor tools on the LAN listener (public topics; ``input`` when allowed);
- ``{table}-bridge``: the bridge's identity *at the floor broker* (not a user of the table's).

Secrets are 256-bit random strings. They are kept in the output directory so that rendering again
keeps them (``rotate`` makes new ones): the controller's and the drivers' in ``tablectl/secrets/``
(installed next to the configuration, which names them), the others in ``secrets/`` (handed over,
never installed on the table PC). Each file is mode 0600 in a 0700 directory; none is ever printed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TypeAlias

from config.models import TableConfig
from controller.deploy.artefacts import DeployError, write_private
from controller.journal.private_files import private_directory

Role: TypeAlias = Literal["controller", "device", "console", "floor", "bridge"]

#: Secrets the service itself reads (installed with the configuration).
SERVICE_SECRETS: Final = Path("tablectl") / "secrets"
#: Secrets handed over to their users (floor, console) or the floor broker's administrator.
HANDOVER_SECRETS: Final = Path("secrets")
SECRET_BYTES: Final = 32


@dataclass(frozen=True)
class Identity:
    """A broker user: its name, what it is, and for a driver the device id."""

    name: str
    role: Role
    device: str | None = None

    @property
    def secret_path(self) -> Path:
        """Where its secret lives, relative to the output directory."""
        folder = SERVICE_SECRETS if self.role in ("controller", "device") else HANDOVER_SECRETS
        return folder / self.name


def identities(config: TableConfig) -> list[Identity]:
    """Every identity of the table, controller first, then devices in configuration order."""
    table = config.table.id
    found = [Identity(f"{table}-controller", "controller")]
    found += [Identity(f"{table}-dev-{d.id}", "device", d.id) for d in config.devices]
    found += [Identity(f"{table}-console", "console"), Identity(f"{table}-floor", "floor")]
    if config.deploy.floor is not None:
        found.append(Identity(f"{table}-bridge", "bridge"))
    return found


def _read_secret(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise DeployError(f"{path}: cannot read the kept secret: {error}") from None
    return text or None


def load_or_create_secrets(out: Path, found: list[Identity], *, rotate: bool) -> dict[str, str]:
    """The secret of each identity, by name: kept from a previous rendering, or new (written)."""
    result: dict[str, str] = {}
    for identity in found:
        path = out / identity.secret_path
        secret = None if rotate else _read_secret(path)
        if secret is None:
            secret = secrets.token_urlsafe(SECRET_BYTES)
            private_directory(path.parent, "the rendered secrets")
            write_private(path, secret + "\n")
        result[identity.name] = secret
    return result
