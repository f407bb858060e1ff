"""The one binary framer of every device protocol (shuffler, RFID reader, sensor board); pure.

Every frame is ``A5 5A | header | payload | crc:u16`` (big-endian). The header holds the payload
length, a sequence number and a message type; the protocols differ only in their order and width,
which a :class:`FrameLayout` states:

- the serial protocols: ``len:u16 | seq:u8 | type:u8`` (:data:`SERIAL_LAYOUT`);
- the sensor board's USB reports: ``type:u8 | seq:u8 | len:u8`` (:data:`USB_REPORT_LAYOUT`).

``crc`` is CRC-16/CCITT-FALSE (``binascii.crc_hqx`` seeded with 0xFFFF) over header and payload.
A receiver resynchronises by length: it looks for the start marker, checks that the length is
plausible (at most the protocol's ``max_payload``), waits for the whole frame, checks the CRC and,
on any mismatch, drops just the first marker byte and searches again, so a valid frame that
follows garbage, a truncated frame or a bit flip is still found.

The messages inside frames are small frozen dataclasses, one per type byte, each with
``payload()`` and ``from_payload()``; a :class:`Codec` is one protocol's layout, limit and
message classes. :meth:`Codec.decode` is the one-shot decoder, ``decode(buffer) -> (bytes used,
frame or error)``; :class:`FrameStream` decodes a byte stream. :class:`FrameError` is the one error
type: raised by encoders and payload parsers, returned (never raised) by the decoders.
"""

from __future__ import annotations

import binascii
import struct
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Final, Literal, Protocol, Self, TypeAlias

START: Final = b"\xa5\x5a"
CRC_LEN: Final = 2
CRC_INIT: Final = 0xFFFF
_CRC: Final = struct.Struct(">H")

FrameErrorKind: TypeAlias = Literal["garbage", "length", "crc", "message", "truncated"]
HeaderField: TypeAlias = Literal["length", "seq", "type"]


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data``."""
    return binascii.crc_hqx(data, CRC_INIT)


class FrameError(ValueError):
    """Bytes that are not a frame, or a frame that is not a valid message.

    ``kind``: ``garbage`` (bytes outside frames), ``length`` (an implausible length), ``crc`` (a
    corrupt frame), ``truncated`` (a transfer ended inside a frame), ``message`` (a good CRC
    around an unknown type or a malformed payload; also what encoders raise). ``skipped``: the
    input bytes the decoder discarded for it.
    """

    def __init__(self, detail: str, *, kind: FrameErrorKind = "message", skipped: int = 0) -> None:
        super().__init__(detail)
        self.detail = detail
        self.kind: FrameErrorKind = kind
        self.skipped = skipped

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrameError) and (self.kind, self.detail, self.skipped) == (
            other.kind,
            other.detail,
            other.skipped,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.detail, self.skipped))

    def __repr__(self) -> str:
        return f"FrameError({self.detail!r}, kind={self.kind!r}, skipped={self.skipped})"


@dataclass(frozen=True, slots=True)
class FrameLayout:
    """Where a protocol puts length, sequence number and type in its header."""

    name: str
    #: ``struct`` format of the header after the start marker, big-endian.
    header: str
    fields: tuple[HeaderField, HeaderField, HeaderField]
    # Derived once (decoding is a hot path): the header's struct, where length, seq and type
    # sit in it, the header's size with the marker, and the largest length it can state.
    codec: struct.Struct = field(init=False, repr=False, compare=False)
    positions: tuple[int, int, int] = field(init=False, repr=False, compare=False)
    header_len: int = field(init=False, repr=False, compare=False)
    length_limit: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        codec = struct.Struct(self.header)
        length_at = self.fields.index("length")
        width = struct.calcsize(">" + self.header[1 + length_at])
        object.__setattr__(self, "codec", codec)
        object.__setattr__(
            self, "positions", (length_at, self.fields.index("seq"), self.fields.index("type"))
        )
        object.__setattr__(self, "header_len", len(START) + codec.size)
        object.__setattr__(self, "length_limit", (1 << (8 * width)) - 1)


SERIAL_LAYOUT: Final = FrameLayout("serial", ">HBB", ("length", "seq", "type"))
USB_REPORT_LAYOUT: Final = FrameLayout("usb report", ">BBB", ("type", "seq", "length"))


@dataclass(frozen=True, slots=True)
class RawFrame:
    """One frame before its payload is interpreted: sequence number, message type, payload."""

    seq: int
    type: int
    payload: bytes

    def to_bytes(self, layout: FrameLayout = SERIAL_LAYOUT) -> bytes:
        """The frame on the wire."""
        if not 0 <= self.seq <= 0xFF or not 0 <= self.type <= 0xFF:
            raise FrameError(f"seq {self.seq} and type {self.type} must be bytes")
        if len(self.payload) > layout.length_limit:
            raise FrameError(f"payload of {len(self.payload)} bytes does not fit a frame")
        values = {"length": len(self.payload), "seq": self.seq, "type": self.type}
        body = layout.codec.pack(*(values[f] for f in layout.fields)) + self.payload
        return START + body + _CRC.pack(crc16(body))


def decode_raw(
    buffer: bytes | bytearray, layout: FrameLayout, max_payload: int, pos: int = 0
) -> tuple[int, RawFrame | FrameError | None]:
    """The first frame of ``buffer[pos:]``: (bytes used, the frame, or why they were skipped).

    ``(0, None)`` means "need more bytes". Never raises on any input.
    """
    size = len(buffer) - pos
    found = buffer.find(START, pos)
    start = -1 if found < 0 else found - pos
    if start < 0:
        # Keep a trailing first marker byte: it may be the start of the next frame.
        keep = 1 if size > 0 and buffer[-1] == START[0] else 0
        skipped = size - keep
        if skipped == 0:
            return 0, None
        return skipped, FrameError(f"{skipped} bytes without a start marker", kind="garbage", skipped=skipped)
    if start > 0:
        return start, FrameError(f"{start} bytes before a start marker", kind="garbage", skipped=start)
    header_len = layout.header_len
    if size < header_len:
        return 0, None
    values = layout.codec.unpack_from(buffer, pos + 2)
    at_length, at_seq, at_type = layout.positions
    length, seq, kind = values[at_length], values[at_seq], values[at_type]
    if length > max_payload:
        return 1, FrameError(f"implausible length {length} (max {max_payload})", kind="length", skipped=1)
    end = header_len + length + CRC_LEN
    if size < end:
        return 0, None
    body = bytes(buffer[pos + 2 : pos + header_len + length])
    (crc,) = _CRC.unpack_from(buffer, pos + header_len + length)
    if crc != crc16(body):
        return 1, FrameError(
            f"CRC mismatch in a frame of type 0x{kind:02X}, seq {seq}", kind="crc", skipped=1
        )
    return end, RawFrame(seq, kind, body[header_len - 2 :])


# ------------------------------------------------------------------------------------------------
# Messages inside frames: each protocol declares its message classes.
# ------------------------------------------------------------------------------------------------


class Message(Protocol):
    """A protocol message: a frozen dataclass with a type byte and a payload layout."""

    TYPE: ClassVar[int]

    def payload(self) -> bytes:
        """The payload bytes of this message (FrameError when a field does not fit)."""
        ...

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        """Parse a payload; raise FrameError when malformed."""
        ...


#: The codec of each message class (a message knows its protocol through it).
_CODEC_OF: Final[dict[type[Message], Codec]] = {}


@dataclass(frozen=True, slots=True)
class Frame:
    """A decoded frame: its sequence number and the message it carries."""

    seq: int
    message: Message

    def to_bytes(self) -> bytes:
        """The frame on the wire, in the layout of the message's protocol."""
        return _CODEC_OF[type(self.message)].encode(self.seq, self.message)

    @classmethod
    def from_bytes(cls, data: bytes, codec: Codec) -> Frame:
        """Exactly one frame of ``codec``'s protocol (FrameError for anything else)."""
        return codec.from_bytes(data)


class PayloadReader:
    """Reads fields off a payload, raising FrameError on a short or over-long payload."""

    def __init__(self, data: bytes, what: str) -> None:
        self._data = data
        self._pos = 0
        self._what = what

    def take(self, count: int) -> bytes:
        if self._pos + count > len(self._data):
            raise FrameError(f"{self._what}: payload too short ({len(self._data)} bytes)")
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
            raise FrameError(f"{self._what}: text is not ASCII: {raw!r}") from None

    def end(self) -> None:
        if self._pos != len(self._data):
            raise FrameError(
                f"{self._what}: {len(self._data) - self._pos} unexpected bytes after the payload"
            )


def pack_text(text: str, limit: int = 255) -> bytes:
    """A length-prefixed ASCII string (raises FrameError if too long or not ASCII)."""
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        raise FrameError(f"text {text!r} is not ASCII") from None
    if len(raw) > limit:
        raise FrameError(f"text {text!r} longer than {limit} bytes")
    return bytes([len(raw)]) + raw


class Codec:
    """Frame <-> bytes for one protocol: its layout, maximum payload and message classes."""

    def __init__(
        self,
        name: str,
        messages: Sequence[type[Message]],
        max_payload: int,
        layout: FrameLayout = SERIAL_LAYOUT,
    ) -> None:
        self.name = name
        self.layout = layout
        self.max_payload = max_payload
        self.messages: dict[int, type[Message]] = {m.TYPE: m for m in messages}
        for message in messages:
            _CODEC_OF[message] = self

    def encode(self, seq: int, message: Message) -> bytes:
        """The bytes of one frame (FrameError when the message does not fit)."""
        payload = message.payload()
        if len(payload) > self.max_payload:
            raise FrameError(f"{self.name}: payload of {len(payload)} bytes, at most {self.max_payload}")
        return RawFrame(seq & 0xFF, message.TYPE, payload).to_bytes(self.layout)

    def parse(self, raw: RawFrame) -> Frame:
        """The message a raw frame carries; FrameError for an unknown type or a bad payload."""
        cls = self.messages.get(raw.type)
        if cls is None:
            raise FrameError(f"{self.name}: unknown message type 0x{raw.type:02X}")
        return Frame(raw.seq, cls.from_payload(raw.payload))

    def decode(self, buffer: bytes | bytearray) -> tuple[int, Frame | FrameError | None]:
        """The first frame of ``buffer``: (bytes used, the frame or why they were skipped).

        ``(0, None)``: wait for more bytes. A frame with a good CRC but a bad payload is used
        up and comes back as its error. Never raises.
        """
        used, raw = decode_raw(buffer, self.layout, self.max_payload)
        if not isinstance(raw, RawFrame):
            return used, raw
        try:
            return used, self.parse(raw)
        except FrameError as error:
            return used, error

    def from_bytes(self, data: bytes) -> Frame:
        """Exactly one frame of this protocol (FrameError for anything else)."""
        used, result = self.decode(data)
        if isinstance(result, Frame) and used == len(data):
            return result
        if isinstance(result, FrameError):
            raise result
        raise FrameError(f"{self.name}: {len(data)} bytes are not one whole frame")

    def stream(self) -> FrameStream:
        return FrameStream(self)


class FrameStream:
    """A stream decoder: bytes in, frames out, errors kept for the receiver to log and count.

    After a corrupt frame the bytes up to the next start marker are its remains: they are
    counted (``garbage_bytes``) but not reported as an error of their own.
    """

    def __init__(self, codec: Codec, max_errors_kept: int = 100) -> None:
        self.codec = codec
        self._buffer = bytearray()
        self.errors: deque[FrameError] = deque(maxlen=max_errors_kept)
        self.frames = 0
        self.corrupt = 0
        self.garbage_bytes = 0
        self._resyncing = False

    def feed(self, data: bytes) -> list[Frame]:
        """Add ``data``; return the frames now complete, in order."""
        self._buffer += data
        frames: list[Frame] = []
        pos = 0
        codec = self.codec
        while pos < len(self._buffer):
            used, raw = decode_raw(self._buffer, codec.layout, codec.max_payload, pos)
            if used == 0:
                break
            pos += used
            if isinstance(raw, RawFrame):
                try:
                    frames.append(codec.parse(raw))
                except FrameError as error:
                    self._note(error)
                else:
                    self.frames += 1
                    self._resyncing = False
            elif raw is not None:
                self._note(raw)
        del self._buffer[:pos]
        return frames

    def feed_transfer(self, data: bytes) -> list[Frame]:
        """Decode one whole transfer of a packet transport (frames never span transfers)."""
        frames = self.feed(data)
        if self._buffer:
            if not self._resyncing:
                self._note(
                    FrameError(
                        f"truncated frame of {len(self._buffer)} bytes",
                        kind="truncated",
                        skipped=len(self._buffer),
                    )
                )
            self._buffer.clear()
        self._resyncing = False
        return frames

    def _note(self, error: FrameError) -> None:
        if error.kind == "garbage":
            self.garbage_bytes += error.skipped
            if self._resyncing:
                return
        else:
            self.corrupt += 1
            self._resyncing = error.kind != "message"
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
        self._resyncing = False
