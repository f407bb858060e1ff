"""udev rules: stable names under /dev/tablectl/ and access for the service user, per device.

Devices are matched by the USB vendor and product id and, when configured, the serial number
(two identical adapters are told apart only by it). Serial devices are the tty of their USB-serial
adapter; the sensor board is the USB device itself (libusb opens /dev/bus/usb/...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from config.models import DeclaredDevice, DeviceConfig, DriverConfig, SensorBoardDevice, TableConfig
from controller.deploy.artefacts import DeployError

STABLE_DIR = Path("/dev/tablectl")
_SAFE = re.compile(r"^[A-Za-z0-9._+\-/ ]+$")


@dataclass(frozen=True)
class UdevResult:
    text: str
    #: Ids of the devices that have a rule (hence a stable name).
    named: frozenset[str]
    #: Devices left without a rule (no USB identity configured), with why.
    skipped: list[str]


def stable_name(device: DeviceConfig) -> Path:
    return STABLE_DIR / device.id


def _rule(device: DriverConfig, index: int, user: str) -> str | None:
    vendor, product = device.vendor_id, device.product_id
    if vendor is None or product is None:
        return None
    serial = device.serial_number
    if serial is not None and not _SAFE.match(serial):
        raise DeployError(
            f"devices.{index}.serial_number {serial!r}: only letters, digits and ._+-/ and space "
            "can be matched by a udev rule"
        )
    usb = isinstance(device, SensorBoardDevice)
    # A tty's USB attributes are on a parent (ATTRS); the USB device's own are ATTR.
    attr = "ATTR" if usb else "ATTRS"
    match = ['SUBSYSTEM=="usb"', 'ENV{DEVTYPE}=="usb_device"'] if usb else ['SUBSYSTEM=="tty"']
    match += [f'{attr}{{idVendor}}=="{vendor:04x}"', f'{attr}{{idProduct}}=="{product:04x}"']
    if serial is not None:
        match.append(f'{attr}{{serial}}=="{serial}"')
    link = stable_name(device).relative_to("/dev")
    actions = [f'SYMLINK+="{link}"', f'GROUP="{user}"', 'MODE="0660"']
    return ", ".join(match + actions)


def udev_rules(config: TableConfig) -> UdevResult:
    user = config.deploy.user
    lines = [
        f"# udev rules of table {config.table.id}, rendered by tablectl deploy. Install as",
        f"# /etc/udev/rules.d/70-tablectl-{config.table.id}.rules (0644, root:root), then",
        "#   udevadm control --reload && udevadm trigger",
        f"# Each device gets /dev/tablectl/<device id>, readable and writable by group {user} only.",
        "",
    ]
    skipped = []
    named = set()
    for index, device in enumerate(config.devices):
        if isinstance(device, DeclaredDevice):
            reason = f"{device.id}: declared, its driver runs elsewhere, no rule"
            skipped.append(reason)
            lines += [f"# {reason}", ""]
            continue
        rule = _rule(device, index, user)
        if rule is None:
            reason = f"{device.id}: no vendor_id/product_id in the configuration, no rule"
            skipped.append(reason)
            lines += [f"# {reason}", ""]
            continue
        named.add(device.id)
        lines.append(f"# {device.id} ({device.driver})")
        if device.serial_number is None:
            lines.append("# no serial_number: a second adapter of the same model would take this name")
        lines += [rule, ""]
    return UdevResult("\n".join(lines), frozenset(named), skipped)
