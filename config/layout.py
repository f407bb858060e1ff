"""The standard antenna layout of a table's RFID reader (the example configuration's).

Antennas 1..seats lie under the seats, then come the board (two antennas: the flop on the first,
turn and river on the second), the burn, the muck and the aside zone. The demo, the simulated
table and the test renderers all take their antenna maps from here.
"""

from __future__ import annotations

from typing import Final

from contract.cards import Zone, seat_zone

#: The zones after the seats, in antenna order.
TABLE_ZONES: Final[tuple[Zone, ...]] = ("board", "board", "burn", "muck", "aside")


def standard_antennas(seats: int) -> dict[int, Zone]:
    """Antenna number -> zone for a table of ``seats`` seats."""
    antennas: dict[int, Zone] = {seat: seat_zone(seat) for seat in range(1, seats + 1)}
    for number, zone in enumerate(TABLE_ZONES, start=seats + 1):
        antennas[number] = zone
    return antennas
