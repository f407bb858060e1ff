"""The RFID reader's wire protocol (documented in docs/protocols/rfid.md); shared by the driver
and the simulator. Frames are :mod:`drivers.framing` frames; these are the messages inside.

The reader sweeps its antennas in turn; after each antenna's dwell it sends one Inventory with
every tag that antenna saw (possibly none: an empty inventory says "swept, nothing there"). An
antenna holding more tags than one frame carries (a pot of chips) reports them in InventoryPages
as its anti-collision finds them; the page marked ``last`` closes the dwell.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import ClassVar, Final, Self

from drivers.framing import Codec, FrameError, Message, PayloadReader
from drivers.serial_messages import AckMessage, HeartbeatMessage, NakMessage, enum_value

MAX_PAYLOAD: Final = 4096
#: Reads one Inventory or InventoryPage can carry (its count is one byte; 255 reads of the
#: longest UIDs, 13 bytes each, still fit MAX_PAYLOAD).
MAX_READS_PER_FRAME: Final = 255
UID_MIN_BYTES: Final = 4
UID_MAX_BYTES: Final = 10
HEARTBEAT_S: Final = 0.5


class Orientation(enum.IntEnum):
    UNKNOWN = 0
    UP = 1
    DOWN = 2

    @property
    def face(self) -> str | None:
        """The contract ``face``: "up", "down" or None."""
        return {Orientation.UNKNOWN: None, Orientation.UP: "up", Orientation.DOWN: "down"}[self]


class ReaderErrorCode(enum.IntEnum):
    ANTENNA_FAULT = 1
    RF_OVERLOAD = 2
    BUFFER_OVERFLOW = 3


class NakReason(enum.IntEnum):
    UNKNOWN_COMMAND = 1
    BAD_ANTENNA = 2
    BAD_PAYLOAD = 3


def _antennas(values: tuple[int, ...]) -> bytes:
    if len(values) > 255 or any(not 1 <= a <= 255 for a in values):
        raise ValueError(f"antennas {values} must be 1..255, at most 255 of them")
    return bytes([len(values), *values])


def _read_antennas(reader: PayloadReader, what: str) -> tuple[int, ...]:
    values = tuple(reader.take(reader.u8()))
    if 0 in values:
        raise FrameError(f"{what}: antenna 0 does not exist (antennas start at 1)")
    return values


# ---- host -> reader


@dataclass(frozen=True, slots=True)
class GetInfo:
    """Ask for an Info (the driver's handshake after opening the port)."""

    TYPE: ClassVar[int] = 0x01

    def payload(self) -> bytes:
        return b""

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        PayloadReader(data, "GetInfo").end()
        return cls()


@dataclass(frozen=True, slots=True)
class SetSweep:
    """Sweep these antennas in this order, ``dwell_ms`` each."""

    TYPE: ClassVar[int] = 0x02
    dwell_ms: int
    antennas: tuple[int, ...]

    def payload(self) -> bytes:
        return struct.pack(">H", self.dwell_ms) + _antennas(self.antennas)

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "SetSweep")
        dwell = reader.u16()
        antennas = _read_antennas(reader, "SetSweep")
        reader.end()
        if dwell == 0 or not antennas:
            raise FrameError("SetSweep: dwell and antenna list must not be empty")
        return cls(dwell, antennas)


# ---- reader -> host


@dataclass(frozen=True, slots=True)
class Info:
    """The reader's antenna count and its current sweep."""

    TYPE: ClassVar[int] = 0x81
    antenna_count: int
    dwell_ms: int
    sweep: tuple[int, ...]

    def payload(self) -> bytes:
        return bytes([self.antenna_count]) + struct.pack(">H", self.dwell_ms) + _antennas(self.sweep)

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "Info")
        count, dwell = reader.u8(), reader.u16()
        sweep = _read_antennas(reader, "Info")
        reader.end()
        return cls(count, dwell, sweep)


_ORIENTATIONS: Final = {int(o): o for o in Orientation}


@dataclass(frozen=True, slots=True)
class TagRead:
    """One tag seen by an antenna: UID (upper-case hex), signal strength (dBm), orientation."""

    uid: str
    rssi: int
    orientation: Orientation = Orientation.UNKNOWN

    def to_bytes(self) -> bytes:
        raw = bytes.fromhex(self.uid)
        if not UID_MIN_BYTES <= len(raw) <= UID_MAX_BYTES:
            raise ValueError(f"UID {self.uid} must be {UID_MIN_BYTES}..{UID_MAX_BYTES} bytes")
        return bytes([len(raw)]) + raw + struct.pack(">bB", self.rssi, self.orientation)

    @classmethod
    def read(cls, reader: PayloadReader) -> Self:
        # One take per read, the signed byte and the enum by table: a pot of chips is
        # hundreds of reads per sweep.
        size = reader.u8()
        if not UID_MIN_BYTES <= size <= UID_MAX_BYTES:
            raise FrameError(f"Inventory: UID length {size} (must be 4..10)")
        raw = reader.take(size + 2)
        rssi, code = raw[size], raw[size + 1]
        orientation = _ORIENTATIONS.get(code)
        if orientation is None:
            orientation = Orientation(enum_value(Orientation, code, "Inventory"))
        return cls(raw[:size].hex().upper(), rssi - 256 if rssi > 127 else rssi, orientation)


def _reads_payload(reads: tuple[TagRead, ...], what: str) -> bytes:
    if len(reads) > MAX_READS_PER_FRAME:
        raise ValueError(f"at most {MAX_READS_PER_FRAME} reads per {what}")
    return bytes([len(reads)]) + b"".join(read.to_bytes() for read in reads)


def _read_reads(reader: PayloadReader) -> tuple[TagRead, ...]:
    return tuple(TagRead.read(reader) for _ in range(reader.u8()))


@dataclass(frozen=True, slots=True)
class Inventory:
    """The tags one antenna saw during its dwell in sweep round ``round`` (mod 256)."""

    TYPE: ClassVar[int] = 0x82
    antenna: int
    round: int
    reads: tuple[TagRead, ...] = ()

    def payload(self) -> bytes:
        return bytes([self.antenna, self.round & 0xFF]) + _reads_payload(self.reads, "inventory")

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "Inventory")
        antenna, round_ = reader.u8(), reader.u8()
        if antenna == 0:
            raise FrameError("Inventory: antenna 0 does not exist")
        reads = _read_reads(reader)
        reader.end()
        return cls(antenna, round_, reads)


@dataclass(frozen=True, slots=True)
class InventoryPage:
    """Part of one antenna's dwell: the reads its anti-collision found since the previous page.

    Pages of a dwell are numbered from 0; the one with ``last`` closes the dwell (it may carry no
    reads). A dwell whose reads fit one frame is sent as a plain :class:`Inventory` instead.
    """

    TYPE: ClassVar[int] = 0x87
    antenna: int
    round: int
    page: int
    last: bool
    reads: tuple[TagRead, ...] = ()

    def payload(self) -> bytes:
        head = bytes([self.antenna, self.round & 0xFF, self.page, int(self.last)])
        return head + _reads_payload(self.reads, "inventory page")

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "InventoryPage")
        antenna, round_, page, last = reader.u8(), reader.u8(), reader.u8(), reader.u8()
        if antenna == 0:
            raise FrameError("InventoryPage: antenna 0 does not exist")
        if last > 1:
            raise FrameError(f"InventoryPage: last must be 0 or 1, not {last}")
        reads = _read_reads(reader)
        reader.end()
        return cls(antenna, round_, page, bool(last), reads)


@dataclass(frozen=True, slots=True)
class Heartbeat(HeartbeatMessage):
    """Sent every HEARTBEAT_S whatever else the reader sends."""

    TYPE: ClassVar[int] = 0x83


@dataclass(frozen=True, slots=True)
class ReaderError:
    """A reader-side error, on an antenna (0 when it concerns the whole reader)."""

    TYPE: ClassVar[int] = 0x84
    code: ReaderErrorCode
    antenna: int = 0

    def payload(self) -> bytes:
        return bytes([self.code, self.antenna])

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "ReaderError")
        code = ReaderErrorCode(enum_value(ReaderErrorCode, reader.u8(), "ReaderError"))
        antenna = reader.u8()
        reader.end()
        return cls(code, antenna)


@dataclass(frozen=True, slots=True)
class Ack(AckMessage):
    """The command with sequence number ``ref`` was accepted."""

    TYPE: ClassVar[int] = 0x85


@dataclass(frozen=True, slots=True)
class Nak(NakMessage):
    """The command with sequence number ``ref`` was refused, and why (a :class:`NakReason`)."""

    TYPE: ClassVar[int] = 0x86
    REASONS: ClassVar[type[enum.IntEnum]] = NakReason


HOST_MESSAGES: Final[tuple[type[Message], ...]] = (GetInfo, SetSweep)
DEVICE_MESSAGES: Final[tuple[type[Message], ...]] = (
    Info,
    Inventory,
    Heartbeat,
    ReaderError,
    Ack,
    Nak,
    InventoryPage,
)
CODEC: Final = Codec("rfid", HOST_MESSAGES + DEVICE_MESSAGES, MAX_PAYLOAD)
