"""A simulated RFID reader with an antenna multiplexer, speaking the real protocol on a pty.

It sweeps its antennas continuously like the hardware: after each antenna's dwell it sends one
Inventory with every tag on that antenna, again and again. Noise knobs, all drawn from one seeded
RNG: ``miss_rate`` (a tag that is there is not reported in a dwell), ``duplicate_rate`` (a tag
reported twice in one inventory), ``crosstalk_rate`` (a neighbouring antenna hears a tag, weakly),
``corrupt_rate`` (a frame is damaged on the line: bit flip, truncation or noise bytes).
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from pathlib import Path

from contract.cards import is_uid
from drivers.framing import Frame, Message
from drivers.rfid.protocol import (
    CODEC,
    HEARTBEAT_S,
    Ack,
    GetInfo,
    Heartbeat,
    Info,
    Inventory,
    Nak,
    NakReason,
    Orientation,
    ReaderError,
    ReaderErrorCode,
    SetSweep,
    TagRead,
)
from drivers.transport.nullmodem import LineNoise
from simulators.serial_device import CableKind, SerialDeviceSimulator

#: Signal strength of a tag on its own antenna, and heard by a neighbour (dBm).
OWN_RSSI = -45
CROSSTALK_RSSI = -72
_ORIENTATION = {None: Orientation.UNKNOWN, "up": Orientation.UP, "down": Orientation.DOWN}


@dataclass
class PlacedTag:
    antenna: int
    face: str | None


class RfidReaderSimulator(SerialDeviceSimulator):
    """The reader's device end; the driver opens :attr:`port`."""

    def __init__(
        self,
        *,
        name: str = "rfid",
        antenna_count: int = 16,
        dwell_ms: int = 20,
        seed: int | None = 0,
        miss_rate: float = 0.0,
        duplicate_rate: float = 0.0,
        crosstalk_rate: float = 0.0,
        corrupt_rate: float = 0.0,
        reports_orientation: bool = True,
        heartbeat_s: float = HEARTBEAT_S,
        directory: Path | None = None,
        cable: CableKind = "pty",
        line: LineNoise | None = None,
    ) -> None:
        super().__init__(name, CODEC, heartbeat_s, directory, cable=cable, line=line)
        self.antenna_count = antenna_count
        self.dwell_ms = dwell_ms
        self.sweep: tuple[int, ...] = tuple(range(1, antenna_count + 1))
        self.rng = random.Random(seed)
        self.miss_rate = miss_rate
        self.duplicate_rate = duplicate_rate
        self.crosstalk_rate = crosstalk_rate
        self.corrupt_rate = corrupt_rate
        self.reports_orientation = reports_orientation
        self.tags: dict[str, PlacedTag] = {}
        self._round = 0
        self.frames_sent = 0
        self.frames_corrupted = 0
        self.sweeps = 0

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await super().start()
        self._spawn(self._sweeps(), "sweep")

    # ------------------------------------------------------------------ the physical table

    def place(self, uid: str, antenna: int, face: str | None = None) -> None:
        """Put a tagged card on an antenna (``face``: "up", "down" or None)."""
        uid = uid.upper()
        if not is_uid(uid) or len(uid) % 2:
            raise ValueError(f"not a tag UID (even number of hex digits, 8..20): {uid!r}")
        if not 1 <= antenna <= self.antenna_count:
            raise ValueError(f"antenna {antenna} does not exist (1..{self.antenna_count})")
        if face not in _ORIENTATION:
            raise ValueError(f"face {face!r} must be 'up', 'down' or None")
        self.tags[uid] = PlacedTag(antenna, face)

    def remove(self, uid: str) -> None:
        """Take a card off the table (unknown UIDs are ignored: it is already off)."""
        self.tags.pop(uid.upper(), None)

    def move(self, uid: str, antenna: int, face: str | None = None) -> None:
        """Move a card to another antenna, keeping its face unless one is given."""
        old = self.tags.get(uid.upper())
        self.place(uid, antenna, face if face is not None or old is None else old.face)

    def flip(self, uid: str, face: str) -> None:
        """Turn a card over where it lies."""
        tag = self.tags[uid.upper()]
        self.place(uid, tag.antenna, face)

    def inject_error(self, code: ReaderErrorCode, antenna: int = 0) -> None:
        """Make the reader report an error."""
        self._send(ReaderError(code, antenna))

    # ------------------------------------------------------------------ the reader

    def inventory(self, antenna: int) -> Inventory:
        """What ``antenna`` reports for one dwell, noise included."""
        reads: list[TagRead] = []
        for uid, tag in self.tags.items():
            orientation = _ORIENTATION[tag.face] if self.reports_orientation else Orientation.UNKNOWN
            if tag.antenna == antenna:
                if self.rng.random() < self.miss_rate:
                    continue
                read = TagRead(uid, OWN_RSSI + self.rng.randint(-3, 3), orientation)
                reads.append(read)
                if self.rng.random() < self.duplicate_rate:
                    reads.append(read)
            elif abs(tag.antenna - antenna) == 1 and self.rng.random() < self.crosstalk_rate:
                reads.append(TagRead(uid, CROSSTALK_RSSI + self.rng.randint(-4, 4), orientation))
        return Inventory(antenna, self._round, tuple(reads[:255]))

    def _send(self, message: Message) -> None:
        data = self._frame(message)
        if self.corrupt_rate and self.rng.random() < self.corrupt_rate:
            data = self._damage(data)
        self.frames_sent += 1
        self._cable.write(data)

    def _damage(self, data: bytes) -> bytes:
        self.frames_corrupted += 1
        kind = self.rng.randrange(3)
        if kind == 0:  # a bit flip after the start marker
            damaged = bytearray(data)
            index = self.rng.randrange(2, len(damaged))
            damaged[index] ^= 1 << self.rng.randrange(8)
            return bytes(damaged)
        if kind == 1:  # truncated
            return data[: self.rng.randrange(2, len(data))]
        noise = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 8)))
        return noise + data[: len(data) // 2]

    async def _sweeps(self) -> None:
        while True:
            for antenna in self.sweep:
                await asyncio.sleep(self.dwell_ms / 1000)
                self._send(self.inventory(antenna))
            self._round = (self._round + 1) & 0xFF
            self.sweeps += 1

    def _heartbeat(self) -> Message:
        return Heartbeat(self._uptime_ms())

    def _handle(self, frame: Frame) -> None:
        message = frame.message
        if isinstance(message, GetInfo):
            self._send(Info(self.antenna_count, self.dwell_ms, self.sweep))
        elif isinstance(message, SetSweep):
            if any(a > self.antenna_count for a in message.antennas):
                self._send(Nak(frame.seq, NakReason.BAD_ANTENNA))
            else:
                self.sweep, self.dwell_ms = message.antennas, message.dwell_ms
                self._send(Ack(frame.seq))
        else:
            self._send(Nak(frame.seq, NakReason.UNKNOWN_COMMAND))
