"""The binary frame both serial protocols (shuffler, RFID reader) use; pure functions, no I/O.

Layout (multi-byte fields big-endian)::

    A5 5A | len:u16 | seq:u8 | type:u8 | payload (len bytes) | crc:u16

``crc`` is CRC-16/CCITT-FALSE (``binascii.crc_hqx`` with initial value 0xFFFF) over
``len, seq, type, payload``. A receiver resynchronises by length: it looks for the start marker,
checks that ``len`` is plausible (at most ``max_payload``), waits for the whole frame, checks the
CRC and, on any mismatch, drops just the first marker byte and searches again, so a valid frame
that follows garbage, a truncated frame or a bit flip is still found.
"""

from __future__ import annotations

import binascii
import struct
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Protocol, Self

START: Final = b"\xa5\x5a"
HEADER_LEN: Final = 6  # start marker, len, seq, type
CRC_LEN: Final = 2
OVERHEAD: Final = HEADER_LEN + CRC_LEN
CRC_INIT: Final = 0xFFFF
_HEAD: Final = struct.Struct(">2sHBB")
_CRC: Final = struct.Struct(">H")


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data``."""
    return binascii.crc_hqx(data, CRC_INIT)


@dataclass(frozen=True, slots=True)
class RawFrame:
    """One frame before its payload is interpreted: sequence number, message type, payload."""

    seq: int
    type: int
    payload: bytes

    def to_bytes(self) -> bytes:
        """The frame on the wire."""
        if not 0 <= self.seq <= 0xFF or not 0 <= self.type <= 0xFF:
            raise ValueError(f"seq {self.seq} and type {self.type} must be bytes")
        if len(self.payload) > 0xFFFF:
            raise ValueError(f"payload of {len(self.payload)} bytes does not fit a frame")
        body = struct.pack(">HBB", len(self.payload), self.seq, self.type) + self.payload
        return START + body + _CRC.pack(crc16(body))


@dataclass(frozen=True, slots=True)
class FrameError:
    """Why some bytes were not a frame (for the log and the error counters)."""

    #: "crc" (corrupt frame), "length" (implausible length), "garbage" (bytes outside frames),
    #: "message" (good CRC, malformed payload)
    kind: str
    detail: str
    skipped: int


def decode_raw(
    buffer: bytes | bytearray, max_payload: int, pos: int = 0
) -> tuple[RawFrame | None, int, FrameError | None]:
    """Decode the first frame of ``buffer[pos:]``: (frame or None, bytes consumed, error or None).

    ``(None, 0, None)`` means "need more bytes". A non-zero ``consumed`` without a frame means
    bytes were discarded (garbage before a marker, or the marker of a corrupt frame); call again
    with the rest. Never raises on any input.
    """
    size = len(buffer) - pos
    found = buffer.find(START, pos)
    start = -1 if found < 0 else found - pos
    if start < 0:
        # Keep a trailing first marker byte: it may be the start of the next frame.
        keep = 1 if size > 0 and buffer[-1] == START[0] else 0
        skipped = size - keep
        if skipped == 0:
            return None, 0, None
        return None, skipped, FrameError("garbage", f"{skipped} bytes without a start marker", skipped)
    if start > 0:
        return None, start, FrameError("garbage", f"{start} bytes before a start marker", start)
    if size < HEADER_LEN:
        return None, 0, None
    _, length, seq, kind = _HEAD.unpack_from(buffer, pos)
    if length > max_payload:
        return None, 1, FrameError("length", f"implausible length {length} (max {max_payload})", 1)
    end = HEADER_LEN + length + CRC_LEN
    if size < end:
        return None, 0, None
    body = bytes(buffer[pos + 2 : pos + HEADER_LEN + length])
    (crc,) = _CRC.unpack_from(buffer, pos + HEADER_LEN + length)
    if crc != crc16(body):
        return (
            None,
            1,
            FrameError("crc", f"CRC mismatch in a frame of type 0x{kind:02X}, seq {seq}", 1),
        )
    return RawFrame(seq, kind, body[4:]), end, None


class StreamDecoder:
    """Accumulates bytes from a stream and yields whole frames; keeps the errors it met.

    Garbage bytes and corrupt frames are counted and described in ``errors`` (drained by the
    driver, which logs them with the device id); they never come out as frames.
    """

    def __init__(self, max_payload: int, max_errors_kept: int = 100) -> None:
        self.max_payload = max_payload
        self._buffer = bytearray()
        self.errors: deque[FrameError] = deque(maxlen=max_errors_kept)
        self.frames = 0
        self.corrupt = 0
        self.garbage_bytes = 0

    def feed(self, data: bytes) -> list[RawFrame]:
        """Add ``data``; return the frames now complete, in order."""
        self._buffer += data
        frames: list[RawFrame] = []
        pos = 0
        while pos < len(self._buffer):
            frame, consumed, error = decode_raw(self._buffer, self.max_payload, pos)
            if consumed == 0:
                break
            pos += consumed
            if error is not None:
                self._note(error)
            if frame is not None:
                self.frames += 1
                frames.append(frame)
        del self._buffer[:pos]
        return frames

    def _note(self, error: FrameError) -> None:
        if error.kind == "garbage":
            self.garbage_bytes += error.skipped
        else:
            self.corrupt += 1
        self.errors.append(error)

    def drain_errors(self) -> list[FrameError]:
        """The errors met since the last call."""
        errors = list(self.errors)
        self.errors.clear()
        return errors

    @property
    def pending(self) -> int:
        """Bytes waiting for the rest of a frame."""
        return len(self._buffer)

    def reset(self) -> None:
        """Forget a partial frame (after a reconnect)."""
        self._buffer.clear()


# ------------------------------------------------------------------------------------------------
# Messages inside frames: each protocol declares its message classes; this part is shared.
# ------------------------------------------------------------------------------------------------


class MessageError(ValueError):
    """A frame with a good CRC whose payload is not a valid message of the protocol."""


class Message(Protocol):
    """A protocol message: a frozen dataclass with a type byte and a payload layout."""

    TYPE: ClassVar[int]

    def payload(self) -> bytes:
        """The payload bytes of this message."""
        ...

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        """Parse a payload; raise MessageError when malformed."""
        ...


@dataclass(frozen=True, slots=True)
class Frame:
    """A decoded frame: its sequence number and the message it carries."""

    seq: int
    message: Message

    def to_bytes(self) -> bytes:
        """The frame on the wire."""
        return RawFrame(self.seq, self.message.TYPE, self.message.payload()).to_bytes()


class PayloadReader:
    """Reads fields off a payload, raising MessageError on a short or over-long payload."""

    def __init__(self, data: bytes, what: str) -> None:
        self._data = data
        self._pos = 0
        self._what = what

    def take(self, count: int) -> bytes:
        if self._pos + count > len(self._data):
            raise MessageError(f"{self._what}: payload too short ({len(self._data)} bytes)")
        chunk = self._data[self._pos : self._pos + count]
        self._pos += count
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def i8(self) -> int:
        value: int = struct.unpack(">b", self.take(1))[0]
        return value

    def u16(self) -> int:
        value: int = struct.unpack(">H", self.take(2))[0]
        return value

    def u32(self) -> int:
        value: int = struct.unpack(">I", self.take(4))[0]
        return value

    def text(self) -> str:
        """A length-prefixed (u8) ASCII string."""
        raw = self.take(self.u8())
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError:
            raise MessageError(f"{self._what}: text is not ASCII: {raw!r}") from None

    def end(self) -> None:
        if self._pos != len(self._data):
            raise MessageError(
                f"{self._what}: {len(self._data) - self._pos} unexpected bytes after the payload"
            )


def pack_text(text: str, limit: int = 255) -> bytes:
    """A length-prefixed ASCII string (raises ValueError if too long or not ASCII)."""
    raw = text.encode("ascii")
    if len(raw) > limit:
        raise ValueError(f"text {text!r} longer than {limit} bytes")
    return bytes([len(raw)]) + raw


class Codec:
    """Frame <-> bytes for one protocol (its message classes and maximum payload)."""

    def __init__(self, name: str, messages: Sequence[type[Message]], max_payload: int) -> None:
        self.name = name
        self.max_payload = max_payload
        self.messages: dict[int, type[Message]] = {m.TYPE: m for m in messages}

    def encode(self, seq: int, message: Message) -> bytes:
        return Frame(seq & 0xFF, message).to_bytes()

    def parse(self, raw: RawFrame) -> Frame:
        """The message a raw frame carries; MessageError for an unknown type or a bad payload."""
        cls = self.messages.get(raw.type)
        if cls is None:
            raise MessageError(f"{self.name}: unknown message type 0x{raw.type:02X}")
        return Frame(raw.seq, cls.from_payload(raw.payload))

    def decode(self, buffer: bytes | bytearray) -> tuple[Frame | None, int]:
        """The first frame of ``buffer`` (or None) and the bytes consumed; never raises.

        A frame with a wrong CRC or a malformed payload is consumed and not returned.
        """
        raw, consumed, _ = decode_raw(buffer, self.max_payload)
        if raw is None:
            return None, consumed
        try:
            return self.parse(raw), consumed
        except MessageError:
            return None, consumed

    def stream(self) -> FrameStream:
        return FrameStream(self)


class FrameStream:
    """A stream decoder for one protocol: bytes in, messages out, errors kept for the log."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.raw = StreamDecoder(codec.max_payload)
        self.bad_messages = 0

    def feed(self, data: bytes) -> list[Frame]:
        frames: list[Frame] = []
        for raw in self.raw.feed(data):
            try:
                frames.append(self.codec.parse(raw))
            except MessageError as error:
                self.bad_messages += 1
                self.raw.errors.append(FrameError("message", str(error), 0))
        return frames

    def drain_errors(self) -> list[FrameError]:
        return self.raw.drain_errors()

    @property
    def corrupt(self) -> int:
        """Corrupt frames and malformed messages so far."""
        return self.raw.corrupt + self.bad_messages

    def reset(self) -> None:
        self.raw.reset()
