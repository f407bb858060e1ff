"""Is the table's broker reachable from the network in the clear or without credentials?

Tag UIDs (hence hole cards) travel on the device topics: on a broker outside the PC's loopback
interface, a plain-text connection shows them to the whole network, and an anonymous one lets
anyone read or forge them. ``tablectl config check`` warns about both; ``tablectl run`` refuses
them unless ``[mqtt] allow_insecure = true`` says the house accepts it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from config.loader import describe_key
from config.models import MqttSection, TableConfig

#: How the line of a refused finding ends.
REFUSING = "; refusing to run (set [mqtt] allow_insecure = true if the house accepts it)"
LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or the name localhost: reachable from this PC only."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def authenticated(mqtt: MqttSection) -> bool:
    """A username with a password, or a TLS client certificate."""
    if mqtt.username and mqtt.password is not None:
        return True
    return mqtt.tls is not None and mqtt.tls.cert_file is not None


@dataclass(frozen=True)
class Finding:
    """One problem, with the configuration key it belongs to."""

    loc: tuple[str | int, ...]
    what: str
    #: ``tablectl run`` refuses to start over it (unless ``allow_insecure``).
    refuse: bool


def broker_findings(config: TableConfig) -> list[Finding]:
    """The controller's and the drivers' broker connections that the network could abuse."""
    mqtt = config.mqtt
    findings: list[Finding] = []
    exposed = not mqtt.embedded and not is_loopback(mqtt.host)
    if exposed and not mqtt.use_tls:
        findings.append(
            Finding(
                ("mqtt", "url"),
                f"plain-text broker {mqtt.url} outside 127.0.0.1/::1: tag UIDs and passwords "
                "cross the network readable (use mqtts://)",
                refuse=True,
            )
        )
    if exposed and not authenticated(mqtt):
        findings.append(
            Finding(
                ("mqtt", "url"),
                f"anonymous connection to {mqtt.url}, outside 127.0.0.1/::1: anyone on the network "
                "may read or forge device events (set username and password_file)",
                refuse=True,
            )
        )
    for index, device in enumerate(config.devices):
        own = config.device_mqtt(device)
        if device.mqtt is not None and exposed and not authenticated(own):
            findings.append(
                Finding(
                    ("devices", index, "mqtt"),
                    f"device {device.id} connects anonymously to {mqtt.url}, outside 127.0.0.1/::1",
                    refuse=True,
                )
            )
        elif device.mqtt is None and mqtt.username and device.enabled:
            findings.append(
                Finding(
                    ("devices", index, "id"),
                    f"device {device.id} connects as {mqtt.username}, the controller: the broker's "
                    "ACL cannot confine it to its own topics (give it [devices.mqtt] credentials)",
                    refuse=False,
                )
            )
    return findings


def describe(path: Path, finding: Finding, config: TableConfig | None = None) -> str:
    """``file:line: key: what`` for a finding of the configuration in ``path`` (a device by its
    id when ``config`` is given)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    device_ids = [device.id for device in config.devices] if config is not None else []
    return describe_key(path, text, finding.loc, finding.what, device_ids)


def refusal(path: Path, config: TableConfig) -> str | None:
    """The one line ``tablectl run`` stops with, or None when it may run."""
    if config.mqtt.allow_insecure:
        return None
    for finding in broker_findings(config):
        if finding.refuse:
            return f"{describe(path, finding, config)}{REFUSING}"
    return None


def secret_file_findings(config: TableConfig) -> list[Finding]:
    """Password files that users other than their owner may read."""
    sources: list[tuple[tuple[str | int, ...], Path | None]] = [
        (("mqtt", "password_file"), config.mqtt.password_file)
    ]
    sources += [
        (("devices", i, "mqtt", "password_file"), d.mqtt.password_file if d.mqtt else None)
        for i, d in enumerate(config.devices)
    ]
    findings = []
    for loc, file in sources:
        if file is None:
            continue
        try:
            mode = file.stat().st_mode & 0o777
        except OSError:
            continue  # the loader has read it; a race is not worth a warning
        if mode & 0o077:
            findings.append(
                Finding(loc, f"{file} is readable by others (mode {mode:04o}; chmod 600)", refuse=False)
            )
    return findings
