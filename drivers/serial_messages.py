"""Message shapes the serial protocols share (each protocol gives them its own type byte).

A protocol subclasses them with its ``TYPE``::

    @dataclass(frozen=True, slots=True)
    class Ack(AckMessage):
        TYPE: ClassVar[int] = 0x85
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar, Self

from drivers.framing import FrameError, PayloadReader, pack_text


def enum_value(kind: type[enum.IntEnum], value: int, what: str) -> int:
    """``value`` checked against ``kind``; a :class:`FrameError` naming the message if unknown."""
    try:
        return kind(value)
    except ValueError:
        raise FrameError(f"{what}: unknown {kind.__name__} {value}") from None


@dataclass(frozen=True, slots=True)
class HeartbeatMessage:
    """Sent every few hundred milliseconds whatever else the device sends; ``uptime_ms`` wraps at 2**32."""

    TYPE: ClassVar[int]
    uptime_ms: int

    def payload(self) -> bytes:
        return (self.uptime_ms & 0xFFFFFFFF).to_bytes(4, "big")

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "Heartbeat")
        uptime = reader.u32()
        reader.end()
        return cls(uptime)


@dataclass(frozen=True, slots=True)
class AckMessage:
    """The command with sequence number ``ref`` was accepted."""

    TYPE: ClassVar[int]
    ref: int

    def payload(self) -> bytes:
        return bytes([self.ref & 0xFF])

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "Ack")
        ref = reader.u8()
        reader.end()
        return cls(ref)


@dataclass(frozen=True, slots=True)
class NakMessage:
    """The command with sequence number ``ref`` was refused; ``reason`` is one of ``REASONS``."""

    TYPE: ClassVar[int]
    REASONS: ClassVar[type[enum.IntEnum]]
    ref: int
    reason: enum.IntEnum

    def payload(self) -> bytes:
        return bytes([self.ref & 0xFF, self.reason])

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "Nak")
        ref = reader.u8()
        reason = cls.REASONS(enum_value(cls.REASONS, reader.u8(), "Nak"))
        reader.end()
        return cls(ref, reason)


@dataclass(frozen=True, slots=True)
class TextMessage:
    """A message whose payload is one length-prefixed ASCII text of at most ``LIMIT`` bytes."""

    TYPE: ClassVar[int]
    LIMIT: ClassVar[int] = 255
    text: str = ""

    def payload(self) -> bytes:
        return pack_text(self.text, self.LIMIT)

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, cls.__name__)
        text = reader.text()
        reader.end()
        return cls(text)
