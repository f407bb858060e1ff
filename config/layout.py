"""The standard antenna layout of a table's RFID reader (the example configuration's).

Antennas 1..seats lie under the seats, then come the board (two antennas: the flop on the first,
turn and river on the second), the burn, the muck and the aside zone; on a table that reads
chips, then one betting area per seat, the pot and the rake. The demo, the simulated table and
the test renderers all take their antenna maps from here.
"""

from __future__ import annotations

from typing import Final

from contract.cards import Zone, bet_zone, seat_zone

#: The zones after the seats, in antenna order.
TABLE_ZONES: Final[tuple[Zone, ...]] = ("board", "board", "burn", "muck", "aside")
#: The chip zones after the betting areas, in antenna order.
CHIP_TABLE_ZONES: Final[tuple[Zone, ...]] = ("pot", "rake")


def standard_antennas(seats: int, *, chips: bool = False) -> dict[int, Zone]:
    """Antenna number -> zone for a table of ``seats`` seats (``chips``: with chip antennas)."""
    zones: list[Zone] = [seat_zone(seat) for seat in range(1, seats + 1)]
    zones += TABLE_ZONES
    if chips:
        zones += [bet_zone(seat) for seat in range(1, seats + 1)]
        zones += CHIP_TABLE_ZONES
    return dict(enumerate(zones, start=1))
