"""A whole simulated table: every device a TableConfig names, each on a real transport.

``SimulatedTable(config)`` starts a simulator per enabled device (shuffler and readers on
pseudo-terminals, the sensor board behind a unix-socket pyusb backend) and returns the config
rewritten to point each device at its simulator, so the production drivers connect to them
unchanged::

    async with SimulatedTable(config) as table:
        drivers = open_drivers(table.config)
        table.shuffler.load_deck("A", cards)
        table.place(uid, "seat:3", face="down")
        table.place_chips(stack, "bet:3")          # chips, several at once
        table.sweep(["bet:1", "bet:3"], "pot")     # the dealer's sweep into the pot

The zone helpers map zones to antennas from the reader's antenna map. A zone several antennas
cover (the board: flop on the first, turn and river on the second) is filled in order: the first
three cards go to its first antenna, the next ones to the second; chips go to a zone's first
antenna. Chip moves are atomic: every chip of one call changes place between two reads.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeVar

from config.models import (
    DeclaredDevice,
    DeviceConfig,
    DriverConfig,
    RfidReaderDevice,
    SensorBoardDevice,
    ShufflerDevice,
    TableConfig,
)
from simulators.rfid import RfidReaderSimulator
from simulators.sensors import SensorBoardSimulator
from simulators.shuffler import ShufflerSimulator

SimT = TypeVar("SimT")

#: Cards a zone's first antenna takes before the next one (the flop, then turn and river).
FIRST_ANTENNA_CARDS: Final = 3


class SimulatedTable:
    """Simulators for every enabled device of ``config``; :attr:`config` points at them."""

    def __init__(
        self,
        config: TableConfig,
        *,
        speed: float = 1.0,
        shuffle_s: float = 4.0,
        seed: int | None = 0,
        directory: Path | None = None,
        reader_options: dict[str, Any] | None = None,
    ) -> None:
        self.original = config
        self.speed = speed
        self.shuffle_s = shuffle_s
        self.seed = seed
        self.reader_options = reader_options or {}
        self._own_directory = directory is None
        self.directory = directory or Path(tempfile.mkdtemp(prefix="tablectl-table-"))
        self.shufflers: dict[str, ShufflerSimulator] = {}
        self.readers: dict[str, RfidReaderSimulator] = {}
        self.boards: dict[str, SensorBoardSimulator] = {}
        self.config = config
        self._zone_antennas: dict[str, list[tuple[str, int]]] = {}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> TableConfig:
        """Start every simulator; returns (and keeps in :attr:`config`) the rewritten config."""
        devices: list[DeviceConfig] = []
        try:
            for device in self.original.devices:
                if device.enabled and not isinstance(device, DeclaredDevice):
                    devices.append(await self._start_device(device))
                else:
                    devices.append(device)
        except BaseException:
            await self.close()
            raise
        self.config = self.original.model_copy(update={"devices": devices})
        return self.config

    async def _start_device(self, device: DriverConfig) -> DeviceConfig:
        if isinstance(device, ShufflerDevice):
            shuffler = ShufflerSimulator(
                name=device.id, shuffle_s=self.shuffle_s, speed=self.speed, directory=self.directory
            )
            await shuffler.start()
            self.shufflers[device.id] = shuffler
            return device.model_copy(update={"port": shuffler.port})
        if isinstance(device, RfidReaderDevice):
            options: dict[str, Any] = {"speed": self.speed, **self.reader_options}
            reader = RfidReaderSimulator(
                name=device.id,
                antenna_count=max(device.antennas, default=1),
                dwell_ms=device.dwell_ms,
                seed=self.seed,
                directory=self.directory,
                **options,
            )
            await reader.start()
            self.readers[device.id] = reader
            for antenna, zone in sorted(device.antennas.items()):
                self._zone_antennas.setdefault(zone, []).append((device.id, antenna))
            return device.model_copy(update={"port": reader.port})
        board = SensorBoardSimulator.for_device(device, seed=self.seed)
        await board.start()
        self.boards[device.id] = board
        served: SensorBoardDevice = board.serve_for(device, self.directory)
        return served

    async def close(self) -> None:
        for shuffler in self.shufflers.values():
            await shuffler.close()
        for reader in self.readers.values():
            await reader.close()
        for board in self.boards.values():
            await board.close()
        self.shufflers.clear()
        self.readers.clear()
        self.boards.clear()
        if self._own_directory:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.directory)

    async def __aenter__(self) -> SimulatedTable:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ the first of each kind

    @property
    def shuffler(self) -> ShufflerSimulator:
        """The (first) shuffler (LookupError when the table has none)."""
        return _first(self.shufflers, "shuffler")

    @property
    def reader(self) -> RfidReaderSimulator:
        return _first(self.readers, "RFID reader")

    @property
    def sensors(self) -> SensorBoardSimulator:
        return _first(self.boards, "sensor board")

    # ------------------------------------------------------------------ zone-level card moves

    def antenna_for(self, zone: str) -> tuple[RfidReaderSimulator, int]:
        """The reader and antenna where a card put in ``zone`` lies now."""
        covering = self._zone_antennas.get(zone)
        if not covering:
            raise LookupError(f"no antenna covers zone {zone!r} in this table's configuration")
        if len(covering) > 1:
            # Fill the first antenna (the flop) before the next ones (turn, river).
            first_id, first_antenna = covering[0]
            on_first = sum(1 for tag in self.readers[first_id].tags.values() if tag.antenna == first_antenna)
            index = 0 if on_first < FIRST_ANTENNA_CARDS else min(1, len(covering) - 1)
            reader_id, antenna = covering[index]
        else:
            reader_id, antenna = covering[0]
        return self.readers[reader_id], antenna

    def place(self, uid: str, zone: str, face: str | None = None) -> None:
        """Put a card in a zone (``face`` "up", "down" or None)."""
        self.remove(uid)
        reader, antenna = self.antenna_for(zone)
        reader.place(uid, antenna, face)

    def move(self, uid: str, zone: str, face: str | None = None) -> None:
        """Move a card to another zone, keeping its face unless one is given."""
        old = self.face_of(uid)
        self.place(uid, zone, face if face is not None else old)

    def remove(self, uid: str) -> None:
        """Take a card off the table."""
        for reader in self.readers.values():
            reader.remove(uid)

    def face_of(self, uid: str) -> str | None:
        for reader in self.readers.values():
            tag = reader.tags.get(uid.upper())
            if tag is not None:
                return tag.face
        return None

    def clear_cards(self) -> None:
        """Take every tag off the table, cards and chips (end of a hand)."""
        for reader in self.readers.values():
            reader.tags.clear()

    # ------------------------------------------------------------------ chips

    def _zone_antenna(self, zone: str) -> tuple[RfidReaderSimulator, int]:
        covering = self._zone_antennas.get(zone)
        if not covering:
            raise LookupError(f"no antenna covers zone {zone!r} in this table's configuration")
        reader_id, antenna = covering[0]
        return self.readers[reader_id], antenna

    def place_chips(self, uids: Iterable[str], zone: str) -> None:
        """Put chips in a zone, all at once (from the rack, or from wherever they lay)."""
        uids = [uid.upper() for uid in uids]
        reader, antenna = self._zone_antenna(zone)
        reader.place_all(uids, antenna)  # checks every UID before any chip moves
        for other in self.readers.values():
            if other is not reader:
                other.remove_all(uids)

    def move_chips(self, uids: Iterable[str], zone: str) -> None:
        """Move chips lying on the table to a zone, all at once (a bet, a push, a sweep)."""
        uids = [uid.upper() for uid in uids]
        missing = [uid for uid in uids if self.zone_of(uid) is None]
        if missing:
            raise LookupError(f"chips {missing} are not on the table")
        self.place_chips(uids, zone)

    def take_chips(self, uids: Iterable[str]) -> None:
        """Take chips off the table (to the rack, or a player's pocket)."""
        uids = list(uids)
        for reader in self.readers.values():
            reader.remove_all(uids)

    def sweep(self, zones: Iterable[str], into: str) -> list[str]:
        """Move everything lying in ``zones`` into ``into`` at once; returns the UIDs moved."""
        moved = [uid for zone in zones for uid in self.tags_in(zone)]
        self.move_chips(moved, into)
        return moved

    def tags_in(self, zone: str) -> list[str]:
        """The UIDs lying in ``zone`` now (on any of its antennas)."""
        return [
            uid
            for reader_id, antenna in self._zone_antennas.get(zone, [])
            for uid in self.readers[reader_id].on_antenna(antenna)
        ]

    def zone_of(self, uid: str) -> str | None:
        """The zone a tag lies in, or None when it is off the table."""
        uid = uid.upper()
        for zone, covering in self._zone_antennas.items():
            for reader_id, antenna in covering:
                tag = self.readers[reader_id].tags.get(uid)
                if tag is not None and tag.antenna == antenna:
                    return zone
        return None

    # ------------------------------------------------------------------ where things are

    def describe(self) -> list[str]:
        """One line per device: its id, kind and how a driver reaches it."""
        lines: list[str] = []
        for device in self.config.devices:
            if isinstance(device, DeclaredDevice):
                lines.append(f"{device.id} ({device.driver}): declared, its driver runs elsewhere")
            elif not device.enabled:
                lines.append(f"{device.id}: disabled")
            elif isinstance(device, ShufflerDevice | RfidReaderDevice):
                lines.append(f"{device.id} ({device.driver}): port = {device.port}")
            else:
                lines.append(
                    f"{device.id} ({device.driver}): backend = {device.backend} "
                    f"(vendor 0x{device.vendor_id:04X}, product 0x{device.product_id:04X})"
                )
        return lines


def _first(simulators: dict[str, SimT], what: str) -> SimT:
    if not simulators:
        raise LookupError(f"this table has no {what}")
    return next(iter(simulators.values()))
