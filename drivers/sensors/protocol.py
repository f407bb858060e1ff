"""Sensor board wire protocol: the messages inside its USB reports, shared by driver and simulator.

Every USB interrupt transfer carries one :mod:`drivers.framing` frame in the USB report layout
(``docs/protocols/sensors.md``)::

    A5 5A | type | seq | len | payload (len bytes) | CRC-16 (big-endian)

These are the messages inside: the board's input report and the host's lamp, buzzer and key
acknowledgement. Pure, no I/O.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import ClassVar, Final, Self

from contract.models import KEY_NAMES, KeyName, LampColour
from drivers.framing import USB_REPORT_LAYOUT, Codec, FrameError, Message

MAX_PAYLOAD: Final = 57  # one frame fits a 64-byte full-speed interrupt packet
MAX_SEATS: Final = 10
MAX_KEYS_PER_REPORT: Final = 8

# Message types: board -> host below 0x80, host -> board from 0x80.
TYPE_INPUT: Final = 0x01
TYPE_LAMP: Final = 0x81
TYPE_BUZZER: Final = 0x82
TYPE_KEY_ACK: Final = 0x83

#: Key codes on the wire, 1-based in contract order (``new_hand`` = 1 ... ``ack`` = 7, ``last_hands`` = 8).
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
# Messages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyPress:
    """One keypad press as the board queued it; ``number`` counts presses modulo 256."""

    number: int
    key: KeyName
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class InputReport:
    """Board -> host: the whole sensor state plus the oldest unacknowledged key presses.

    The frame's ``seq`` is the board's report counter.
    """

    TYPE: ClassVar[int] = TYPE_INPUT
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

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        if len(data) < _INPUT_FIXED.size:
            raise FrameError(f"input report payload of {len(data)} bytes, fixed part is 8")
        button, blinds, occupied, lamp, flags, nkeys = _INPUT_FIXED.unpack_from(data)
        expected = _INPUT_FIXED.size + nkeys * _KEY_ENTRY.size
        if nkeys > MAX_KEYS_PER_REPORT or len(data) != expected:
            raise FrameError(f"input report with {nkeys} keys has {len(data)} payload bytes")
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
            number, code, seat = _KEY_ENTRY.unpack_from(data, _INPUT_FIXED.size + index * 3)
            name = KEY_BY_CODE.get(code)
            if name is None:
                raise FrameError(f"key code {code} unknown")
            if seat > MAX_SEATS:
                raise FrameError(f"key seat {seat} outside 0..{MAX_SEATS}")
            keys.append(KeyPress(number=number, key=name, seat=seat or None))  # type: ignore[arg-type]
        return cls(
            button=button or None,
            blinds=bitmap_to_seats(blinds),
            occupied=bitmap_to_seats(occupied),
            lamp=LAMP_COLOURS[colour],
            blink=bool(lamp & LAMP_BLINK_BIT),
            buzzer=bool(flags & FLAG_BUZZER),
            key_overflow=bool(flags & FLAG_KEY_OVERFLOW),
            keys=tuple(keys),
        )


@dataclass(frozen=True, slots=True)
class LampReport:
    """Host -> board: set the alert lamp."""

    TYPE: ClassVar[int] = TYPE_LAMP
    colour: LampColour
    blink: bool = False

    def payload(self) -> bytes:
        return bytes([LAMP_CODES[self.colour], 1 if self.blink else 0])

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        if len(data) != 2 or data[0] >= len(LAMP_COLOURS) or data[1] > 1:
            raise FrameError(f"lamp payload {data.hex()} is not colour 0..5, blink 0..1")
        return cls(colour=LAMP_COLOURS[data[0]], blink=data[1] == 1)


@dataclass(frozen=True, slots=True)
class BuzzerReport:
    """Host -> board: sound the buzzer for ``duration_ms`` (0 silences it)."""

    TYPE: ClassVar[int] = TYPE_BUZZER
    duration_ms: int

    def payload(self) -> bytes:
        if not 0 <= self.duration_ms <= 0xFFFF:
            raise FrameError(f"buzzer duration {self.duration_ms} ms outside 0..65535")
        return struct.pack(">H", self.duration_ms)

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        if len(data) != 2:
            raise FrameError(f"buzzer payload of {len(data)} bytes, expected 2")
        return cls(duration_ms=int.from_bytes(data, "big"))


@dataclass(frozen=True, slots=True)
class KeyAck:
    """Host -> board: every key press up to and including ``number`` has been received."""

    TYPE: ClassVar[int] = TYPE_KEY_ACK
    number: int

    def payload(self) -> bytes:
        if not 0 <= self.number <= 0xFF:
            raise FrameError(f"key number {self.number} outside 0..255")
        return bytes([self.number])

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        if len(data) != 1:
            raise FrameError(f"key ack payload of {len(data)} bytes, expected 1")
        return cls(number=data[0])


BOARD_MESSAGES: Final[tuple[type[Message], ...]] = (InputReport,)
HOST_MESSAGES: Final[tuple[type[Message], ...]] = (LampReport, BuzzerReport, KeyAck)
#: One codec knows every message of both directions.
CODEC: Final = Codec("sensors", BOARD_MESSAGES + HOST_MESSAGES, MAX_PAYLOAD, USB_REPORT_LAYOUT)
