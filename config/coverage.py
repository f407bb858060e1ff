"""Does every zone the game needs have an antenna, and only one where one is meant?

A seat no antenna covers is a seat whose cards are never read: every hand dealt to it looks like
a skipped seat. Two antennas on one seat (and none on the next) is the usual typo of a hand-written
antenna map. ``tablectl config check`` refuses the first (``tablectl run`` starts, the engine follows the
other seats) and warns about the second, naming the antennas' keys.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from config.exposure import Finding
from config.models import DeclaredDevice, RfidReaderDevice, TableConfig
from contract.cards import bet_zone, seat_zone

#: Zones of the table a hand needs (besides the seats), one antenna each at least.
TABLE_ZONES = ("board", "burn", "muck")
#: Zones that may have several antennas (the board: the flop on one, turn and river on another).
SHARED_ZONES = frozenset({"board", "pot", "muck", "aside"})


@dataclass(frozen=True)
class Coverage:
    """What ``config check`` says about the antenna map: errors (a seat never read) and warnings."""

    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)


def coverage(config: TableConfig) -> Coverage:
    """Seats (and table zones) without an antenna, and seats with more than one. Nothing for a
    table whose card readers are not configured here (engine only: no ``rfid`` device)."""
    readers = [
        (index, device)
        for index, device in enumerate(config.devices)
        if isinstance(device, RfidReaderDevice) and device.enabled
    ]
    found = Coverage()
    if not readers or any(
        isinstance(device, DeclaredDevice) and device.driver == "rfid" for device in config.devices
    ):
        return found  # (a reader declared, its driver elsewhere: its antennas are not known here)
    covering: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    for index, device in readers:
        for antenna, zone in sorted(device.antennas.items()):
            covering[zone].append((index, device.id, antenna))
    first = readers[0][0]
    for seat in range(1, config.table.seats + 1):
        zone = seat_zone(seat)
        if not covering[zone]:
            found.errors.append(
                Finding(
                    ("devices", first, "antennas"),
                    f"no antenna covers {zone}: the cards dealt to seat {seat} are never read",
                    refuse=False,
                )
            )
    wanted = list(TABLE_ZONES)
    if config.chips is not None:
        wanted += ["pot", *(bet_zone(seat) for seat in range(1, config.table.seats + 1))]
    for zone in wanted:
        if not covering[zone]:
            found.warnings.append(
                Finding(("devices", first, "antennas"), f"no antenna covers {zone}", refuse=False)
            )
    for zone, antennas in sorted(covering.items()):
        if len(antennas) > 1 and zone not in SHARED_ZONES:
            named = ", ".join(f"{device} antenna {antenna}" for _, device, antenna in antennas)
            index, _, antenna = antennas[-1]
            found.warnings.append(
                Finding(
                    ("devices", index, "antennas", antenna),
                    f"{len(antennas)} antennas cover {zone} ({named}): is one of them meant for "
                    "another zone?",
                    refuse=False,
                )
            )
    return found
