"""``tablectl config check FILE``: everything wrong with a table's configuration, one line each.

It refuses what ``tablectl run`` refuses (a broker reachable from the network in the clear or
without credentials, unless ``[mqtt] allow_insecure``), names every validation error (a device by
its id: ``devices.rfid-1.baudrate``), and reports the antenna map's gaps (a seat no antenna
covers is an error, a seat two antennas cover a warning: :mod:`config.coverage`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from config.coverage import coverage
from config.errors import ConfigError
from config.exposure import REFUSING, broker_findings, describe, refusal, secret_file_findings
from config.loader import load_table, table_chips
from config.models import DeclaredDevice, TableConfig
from config.registry import DeckRegistry


@dataclass
class Report:
    """What ``config check`` prints: ``errors`` and ``warnings`` (standard error), ``summary``
    (standard output, only when there is no error)."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    summary: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors


def check(path: Path) -> Report:
    """Check the configuration in ``path`` and its registries."""
    report = Report()
    try:
        config, registry = load_table(path)
    except ConfigError as error:
        report.errors += error.problems
        return report
    # What ``tablectl run`` refuses, in the very words it stops with (every such finding).
    refused = refusal(path, config) is not None
    for finding in broker_findings(config):
        line = describe(path, finding, config)
        if refused and finding.refuse:
            report.errors.append(line + REFUSING)
        else:
            report.warnings.append(line)
    found = coverage(config)
    report.errors += [describe(path, finding, config) for finding in found.errors]
    report.warnings += [
        describe(path, finding, config) for finding in secret_file_findings(config) + found.warnings
    ]
    report.warnings += [f"{path}: {note}" for note in session_notes(config)]
    if report.ok:
        report.summary = f"{path}: ok: {_summary(config, registry)}"
    return report


def session_notes(config: TableConfig) -> list[str]:
    """The session's rules this table cannot follow for want of evidence (docs/rules.md, "The
    session"): buy-in limits without a ``stack:N`` zone, absence without a seat sensor."""
    stack_zones = any(
        zone.startswith("stack:")
        for device in config.devices
        for zone in getattr(device, "antennas", {}).values()
    )
    notes: list[str] = []
    stakes = config.stakes
    limits = [key for key in ("min_buy_in", "max_rebuy") if stakes is not None and getattr(stakes, key)]
    if not stack_zones and limits:
        named = " and ".join("[stakes] " + key for key in limits)
        notes.append(
            f"{named} set but no antenna covers a stack:N zone: buy_in_out_of_limits and "
            "rebuy_during_hand stay silent"
        )
    if config.table.max_absence_s is not None and not any(
        device.driver == "sensors" for device in config.devices
    ):
        notes.append(
            "[table] max_absence_s is set but no sensors device reports the seats: "
            "absence_over_limit stays silent unless seat events come from elsewhere"
        )
    return notes


def _summary(config: TableConfig, registry: DeckRegistry) -> str:
    decks = ", ".join(f"{deck} ({len(cards)} cards)" for deck, cards in sorted(registry.decks.items()))
    devices = (
        ", ".join(
            f"{d.id} ({d.driver}{', declared' if isinstance(d, DeclaredDevice) else ''})"
            for d in config.devices
        )
        or "none (engine only)"
    )
    if config.table.declared_devices_only:
        devices += ", no others"
    game = ""
    if config.chips is not None:
        chips = table_chips(config, registry)
        game += f"; chips {len(chips) if chips is not None else 0}"
    if config.stakes is not None:
        stakes = config.stakes
        game += (
            f"; stakes {stakes.structure} {stakes.small_blind}/{stakes.big_blind}"
            + (f" ante {stakes.ante}" if stakes.ante else "")
            + (f" rake {stakes.rake_percent:g}%" if stakes.rake_percent else "")
        )
    if not any(
        zone.startswith("stack:") for d in config.devices for zone in getattr(d, "antennas", {}).values()
    ):
        game += "; stacks not read (buy-in and rebuy codes silent)"
    if config.stakes is not None and config.stakes.levels:
        game += f"; tournament, {len(config.stakes.levels)} levels"
    grace = f"; start-up grace {config.table.startup_grace_s:g} s" if config.devices else ""
    return (
        f"table {config.table.id}, {config.table.seats} seats, profile {config.table.profile}; "
        f"decks {decks}{game}{grace}; devices {devices}"
    )
