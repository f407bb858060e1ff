"""Sensor board wire protocol: frames inside USB reports, shared by the driver and the simulator.

Every USB interrupt transfer carries one frame (``docs/protocols/sensors.md``)::

    A5 5A | type | seq | len | payload (len bytes) | CRC-16 (big-endian)

The CRC is CRC-16/CCITT-FALSE (``binascii.crc_hqx`` seeded with 0xFFFF) over type, seq, len and the
payload. The decoder works on a byte stream: it hunts for the start marker, checks length and CRC,
and on any mismatch skips one byte and hunts again, so garbage, truncation and bit flips cost at
most the damaged frame. Pure functions, no I/O.
"""

from __future__ import annotations

import binascii
import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from contract.models import KEY_NAMES, KeyName, LampColour

log = logging.getLogger(__name__)

MAGIC: Final = b"\xa5\x5a"
HEADER_LEN: Final = 5  # magic, type, seq, len
CRC_LEN: Final = 2
MAX_PAYLOAD: Final = 57  # one frame fits a 64-byte full-speed interrupt packet
MAX_FRAME: Final = HEADER_LEN + MAX_PAYLOAD + CRC_LEN
MAX_SEATS: Final = 10
MAX_KEYS_PER_REPORT: Final = 8

# Message types: board -> host below 0x80, host -> board from 0x80.
TYPE_INPUT: Final = 0x01
TYPE_LAMP: Final = 0x81
TYPE_BUZZER: Final = 0x82
TYPE_KEY_ACK: Final = 0x83

#: Key codes on the wire, 1-based in contract order (``new_hand`` = 1 ... ``ack`` = 7).
KEY_CODES: Final[dict[str, int]] = {name: code for code, name in enumerate(KEY_NAMES, start=1)}
KEY_BY_CODE: Final[dict[int, str]] = {code: name for name, code in KEY_CODES.items()}
LAMP_COLOURS: Final[tuple[LampColour, ...]] = ("off", "green", "amber", "red", "blue", "white")
LAMP_CODES: Final[dict[str, int]] = {name: code for code, name in enumerate(LAMP_COLOURS)}

_INPUT_FIXED: Final = struct.Struct(">BHHBBB")  # button, blinds, occupied, lamp, flags, nkeys
_KEY_ENTRY: Final = struct.Struct(">BBB")  # number, code, seat
_SEAT_MASK: Final = (1 << MAX_SEATS) - 1
FLAG_KEY_OVERFLOW: Final = 0x01
FLAG_BUZZER: Final = 0x02
_KNOWN_FLAGS: Final = FLAG_KEY_OVERFLOW | FLAG_BUZZER
LAMP_BLINK_BIT: Final = 0x80


class FrameError(ValueError):
    """A frame that cannot be encoded, or a payload that does not match its type."""


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data``."""
    return binascii.crc_hqx(data, 0xFFFF)


def seats_to_bitmap(seats: frozenset[int]) -> int:
    bitmap = 0
    for seat in seats:
        if not 1 <= seat <= MAX_SEATS:
            raise FrameError(f"seat {seat} outside 1..{MAX_SEATS}")
        bitmap |= 1 << (seat - 1)
    return bitmap


def bitmap_to_seats(bitmap: int) -> frozenset[int]:
    return frozenset(seat for seat in range(1, MAX_SEATS + 1) if bitmap & (1 << (seat - 1)))


# --------------------------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyPress:
    """One keypad press as the board queued it; ``number`` counts presses modulo 256."""

    number: int
    key: KeyName
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class InputReport:
    """Board -> host: the whole sensor state plus the oldest unacknowledged key presses."""

    seq: int
    button: int | None
    blinds: frozenset[int]
    occupied: frozenset[int]
    lamp: LampColour = "off"
    blink: bool = False
    buzzer: bool = False
    key_overflow: bool = False
    keys: tuple[KeyPress, ...] = field(default=())

    def payload(self) -> bytes:
        if self.button is not None and not 1 <= self.button <= MAX_SEATS:
            raise FrameError(f"button seat {self.button} outside 1..{MAX_SEATS}")
        if len(self.keys) > MAX_KEYS_PER_REPORT:
            raise FrameError(f"{len(self.keys)} keys in one report, at most {MAX_KEYS_PER_REPORT}")
        flags = (FLAG_KEY_OVERFLOW if self.key_overflow else 0) | (FLAG_BUZZER if self.buzzer else 0)
        lamp = LAMP_CODES[self.lamp] | (LAMP_BLINK_BIT if self.blink else 0)
        out = bytearray(
            _INPUT_FIXED.pack(
                self.button or 0,
                seats_to_bitmap(self.blinds),
                seats_to_bitmap(self.occupied),
                lamp,
                flags,
                len(self.keys),
            )
        )
        for press in self.keys:
            if not 0 <= press.number <= 0xFF:
                raise FrameError(f"key number {press.number} outside 0..255")
            if press.seat is not None and not 1 <= press.seat <= MAX_SEATS:
                raise FrameError(f"key seat {press.seat} outside 1..{MAX_SEATS}")
            out += _KEY_ENTRY.pack(press.number, KEY_CODES[press.key], press.seat or 0)
        return bytes(out)

    def to_bytes(self) -> bytes:
        return encode(TYPE_INPUT, self.seq, self.payload())


@dataclass(frozen=True, slots=True)
class LampReport:
    """Host -> board: set the alert lamp."""

    seq: int
    colour: LampColour
    blink: bool = False

    def payload(self) -> bytes:
        return bytes([LAMP_CODES[self.colour], 1 if self.blink else 0])

    def to_bytes(self) -> bytes:
        return encode(TYPE_LAMP, self.seq, self.payload())


@dataclass(frozen=True, slots=True)
class BuzzerReport:
    """Host -> board: sound the buzzer for ``duration_ms`` (0 silences it)."""

    seq: int
    duration_ms: int

    def payload(self) -> bytes:
        if not 0 <= self.duration_ms <= 0xFFFF:
            raise FrameError(f"buzzer duration {self.duration_ms} ms outside 0..65535")
        return struct.pack(">H", self.duration_ms)

    def to_bytes(self) -> bytes:
        return encode(TYPE_BUZZER, self.seq, self.payload())


@dataclass(frozen=True, slots=True)
class KeyAck:
    """Host -> board: every key press up to and including ``number`` has been received."""

    seq: int
    number: int

    def payload(self) -> bytes:
        if not 0 <= self.number <= 0xFF:
            raise FrameError(f"key number {self.number} outside 0..255")
        return bytes([self.number])

    def to_bytes(self) -> bytes:
        return encode(TYPE_KEY_ACK, self.seq, self.payload())


Frame: TypeAlias = InputReport | LampReport | BuzzerReport | KeyAck
HostFrame: TypeAlias = LampReport | BuzzerReport | KeyAck


def encode(frame_type: int, seq: int, payload: bytes) -> bytes:
    """The bytes of one frame."""
    if not 0 <= frame_type <= 0xFF or not 0 <= seq <= 0xFF:
        raise FrameError(f"type {frame_type} or seq {seq} outside 0..255")
    if len(payload) > MAX_PAYLOAD:
        raise FrameError(f"payload of {len(payload)} bytes, at most {MAX_PAYLOAD}")
    body = bytes([frame_type, seq, len(payload)]) + payload
    return MAGIC + body + crc16(body).to_bytes(2, "big")


# --------------------------------------------------------------------------------------------
# Payload parsing (after the CRC matched)
# --------------------------------------------------------------------------------------------


def _parse_input(seq: int, payload: bytes) -> InputReport:
    if len(payload) < _INPUT_FIXED.size:
        raise FrameError(f"input report payload of {len(payload)} bytes, fixed part is 8")
    button, blinds, occupied, lamp, flags, nkeys = _INPUT_FIXED.unpack_from(payload)
    expected = _INPUT_FIXED.size + nkeys * _KEY_ENTRY.size
    if nkeys > MAX_KEYS_PER_REPORT or len(payload) != expected:
        raise FrameError(f"input report with {nkeys} keys has {len(payload)} payload bytes")
    if button > MAX_SEATS:
        raise FrameError(f"button seat {button} outside 0..{MAX_SEATS}")
    if (blinds | occupied) & ~_SEAT_MASK:
        raise FrameError("seat bitmap has bits above seat 10")
    colour = lamp & ~LAMP_BLINK_BIT
    if colour >= len(LAMP_COLOURS):
        raise FrameError(f"lamp colour code {colour} unknown")
    if flags & ~_KNOWN_FLAGS:
        raise FrameError(f"unknown flag bits 0x{flags & ~_KNOWN_FLAGS:02x}")
    keys = []
    for index in range(nkeys):
        number, code, seat = _KEY_ENTRY.unpack_from(payload, _INPUT_FIXED.size + index * 3)
        name = KEY_BY_CODE.get(code)
        if name is None:
            raise FrameError(f"key code {code} unknown")
        if seat > MAX_SEATS:
            raise FrameError(f"key seat {seat} outside 0..{MAX_SEATS}")
        keys.append(KeyPress(number=number, key=name, seat=seat or None))  # type: ignore[arg-type]
    return InputReport(
        seq=seq,
        button=button or None,
        blinds=bitmap_to_seats(blinds),
        occupied=bitmap_to_seats(occupied),
        lamp=LAMP_COLOURS[colour],
        blink=bool(lamp & LAMP_BLINK_BIT),
        buzzer=bool(flags & FLAG_BUZZER),
        key_overflow=bool(flags & FLAG_KEY_OVERFLOW),
        keys=tuple(keys),
    )


def _parse_lamp(seq: int, payload: bytes) -> LampReport:
    if len(payload) != 2 or payload[0] >= len(LAMP_COLOURS) or payload[1] > 1:
        raise FrameError(f"lamp payload {payload.hex()} is not colour 0..5, blink 0..1")
    return LampReport(seq=seq, colour=LAMP_COLOURS[payload[0]], blink=payload[1] == 1)


def _parse_buzzer(seq: int, payload: bytes) -> BuzzerReport:
    if len(payload) != 2:
        raise FrameError(f"buzzer payload of {len(payload)} bytes, expected 2")
    return BuzzerReport(seq=seq, duration_ms=int.from_bytes(payload, "big"))


def _parse_key_ack(seq: int, payload: bytes) -> KeyAck:
    if len(payload) != 1:
        raise FrameError(f"key ack payload of {len(payload)} bytes, expected 1")
    return KeyAck(seq=seq, number=payload[0])


_PARSERS: Final[dict[int, Callable[[int, bytes], Frame]]] = {
    TYPE_INPUT: _parse_input,
    TYPE_LAMP: _parse_lamp,
    TYPE_BUZZER: _parse_buzzer,
    TYPE_KEY_ACK: _parse_key_ack,
}


# --------------------------------------------------------------------------------------------
# Stream decoding
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scan:
    """One step of decoding: a frame (or None), the bytes consumed, and what was wrong if anything.

    ``consumed == 0`` with no frame and no error means: wait for more bytes. ``garbage`` marks
    bytes skipped while hunting for a start marker (after a corrupt frame, its own remains).
    """

    frame: Frame | None
    consumed: int
    error: str | None = None
    garbage: bool = False


def scan(buffer: bytes) -> Scan:
    """Decode the first frame of ``buffer``, or say how many bytes to drop and why."""
    start = buffer.find(MAGIC)
    if start < 0:
        # Keep a trailing first magic byte: it may begin a frame whose rest has not arrived.
        keep = 1 if buffer.endswith(MAGIC[:1]) else 0
        dropped = len(buffer) - keep
        if dropped == 0:
            return Scan(None, 0)
        return Scan(None, dropped, f"{dropped} garbage bytes", garbage=True)
    if start > 0:
        return Scan(None, start, f"{start} garbage bytes before a start marker", garbage=True)
    if len(buffer) < HEADER_LEN:
        return Scan(None, 0)
    frame_type, seq, length = buffer[2], buffer[3], buffer[4]
    if length > MAX_PAYLOAD:
        return Scan(None, 1, f"length {length} exceeds {MAX_PAYLOAD}")
    total = HEADER_LEN + length + CRC_LEN
    if len(buffer) < total:
        return Scan(None, 0)
    body = buffer[2 : HEADER_LEN + length]
    if crc16(body) != int.from_bytes(buffer[total - CRC_LEN : total], "big"):
        return Scan(None, 1, f"CRC mismatch in a type 0x{frame_type:02x} frame")
    parser = _PARSERS.get(frame_type)
    if parser is None:
        return Scan(None, total, f"unknown frame type 0x{frame_type:02x}")
    try:
        frame = parser(seq, bytes(body[3:]))
    except FrameError as error:
        return Scan(None, total, f"malformed type 0x{frame_type:02x} frame: {error}")
    return Scan(frame, total)


def decode(buffer: bytes) -> tuple[Frame | None, int]:
    """The first frame of ``buffer`` (or None) and the number of bytes consumed."""
    result = scan(buffer)
    return result.frame, result.consumed


class FrameDecoder:
    """Stateful stream decoder: feed bytes, get frames; corrupt input is counted and logged.

    ``on_error`` (if given) is called with a description of every corrupt frame or garbage run,
    so a driver can raise a fault on an error burst.
    """

    def __init__(self, device_id: str, on_error: Callable[[str], None] | None = None) -> None:
        self.device_id = device_id
        self.on_error = on_error
        self.errors = 0
        self.frames = 0
        self._buffer = bytearray()
        # After a corrupt frame, the bytes up to the next start marker are its remains: one error.
        self._resyncing = False

    def feed(self, data: bytes) -> list[Frame]:
        """Append ``data`` and return every complete frame it finishes."""
        self._buffer += data
        frames: list[Frame] = []
        while self._buffer:
            result = scan(bytes(self._buffer))
            if result.error is not None and not (result.garbage and self._resyncing):
                self._report(result.error)
            if result.error is not None and not result.garbage:
                self._resyncing = True
            if result.frame is not None:
                self._resyncing = False
                self.frames += 1
                frames.append(result.frame)
            if result.consumed == 0:
                break
            del self._buffer[: result.consumed]
        return frames

    def flush(self) -> None:
        """End of a transfer: bytes still waiting can only be a truncated frame; drop them."""
        if self._buffer and not self._resyncing:
            self._report(f"truncated frame of {len(self._buffer)} bytes")
        self._buffer.clear()
        self._resyncing = False

    def feed_transfer(self, data: bytes) -> list[Frame]:
        """Decode one whole USB transfer (frames never span transfers)."""
        frames = self.feed(data)
        self.flush()
        return frames

    def _report(self, error: str) -> None:
        self.errors += 1
        if self.on_error is not None:
            self.on_error(error)  # the receiver logs it, with its own context
        else:
            log.warning("%s: corrupt input: %s", self.device_id, error)
