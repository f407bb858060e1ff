"""The shuffler's wire protocol (documented in docs/protocols/shuffler.md); shared by the driver
and the simulator. Frames are :mod:`drivers.framing` frames; these are the messages inside.

Cards travel as one byte, their index in :data:`contract.cards.ALL_CARDS` (``As`` = 0,
``Ah`` = 1, ... ``2c`` = 51). The machine never reports the order of a deck.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar, Final, Self

from contract.cards import ALL_CARDS
from drivers.framing import Codec, FrameError, Message, PayloadReader, pack_text
from drivers.serial_messages import AckMessage, HeartbeatMessage, NakMessage, TextMessage, enum_value

MAX_PAYLOAD: Final = 256
DECK_LABEL_MAX: Final = 16
#: The shuffler sends a heartbeat this often when it has nothing else to say.
HEARTBEAT_S: Final = 0.5
_CARD_INDEX: Final = {card: index for index, card in enumerate(ALL_CARDS)}


def card_byte(card: str) -> int:
    """The wire byte of a card code."""
    try:
        return _CARD_INDEX[card]
    except KeyError:
        raise ValueError(f"not a card code: {card!r}") from None


def card_of(byte: int, what: str) -> str:
    """The card code of a wire byte (FrameError when out of range)."""
    if byte >= len(ALL_CARDS):
        raise FrameError(f"{what}: card byte {byte} out of range")
    return ALL_CARDS[byte]


def _pack_cards(cards: tuple[str, ...]) -> bytes:
    if len(cards) > 255:
        raise ValueError("too many cards in a list")
    return bytes([len(cards), *(card_byte(c) for c in cards)])


def _read_cards(reader: PayloadReader, what: str) -> tuple[str, ...]:
    count = reader.u8()
    return tuple(card_of(b, what) for b in reader.take(count))


class MachineState(enum.IntEnum):
    IDLE = 0
    SHUFFLING = 1
    READY = 2  # a shuffled deck waits in the output tray
    FAULT = 3


class FaultCode(enum.IntEnum):
    JAM = 1
    DOOR_OPEN = 2

    @property
    def contract_code(self) -> str:
        """The ``code`` of the contract FaultEvent."""
        return {FaultCode.JAM: "jam", FaultCode.DOOR_OPEN: "door_open"}[self]


class NakReason(enum.IntEnum):
    UNKNOWN_COMMAND = 1
    BUSY = 2
    DOOR_OPEN = 3
    JAMMED = 4
    NO_DECK = 5
    BAD_PAYLOAD = 6


# ---- host -> shuffler


@dataclass(frozen=True, slots=True)
class GetStatus:
    """Ask for a StatusReport (the driver's handshake after opening the port)."""

    TYPE: ClassVar[int] = 0x01

    def payload(self) -> bytes:
        return b""

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        PayloadReader(data, "GetStatus").end()
        return cls()


@dataclass(frozen=True, slots=True)
class StartShuffle(TextMessage):
    """Start shuffling the loaded deck; ``text`` is the deck label echoed in Shuffling and
    ShuffleComplete."""

    TYPE: ClassVar[int] = 0x02
    LIMIT: ClassVar[int] = DECK_LABEL_MAX

    @property
    def deck(self) -> str:
        return self.text


# ---- shuffler -> host


@dataclass(frozen=True, slots=True)
class StatusReport:
    """The machine's state, fault flags and the cards in its input tray."""

    TYPE: ClassVar[int] = 0x81
    state: MachineState
    door_open: bool = False
    jammed: bool = False
    recognises_cards: bool = True
    loaded: int = 0

    def payload(self) -> bytes:
        flags = (self.door_open << 0) | (self.jammed << 1) | (self.recognises_cards << 2)
        return bytes([self.state, flags, self.loaded])

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "StatusReport")
        state = MachineState(enum_value(MachineState, reader.u8(), "StatusReport"))
        flags, loaded = reader.u8(), reader.u8()
        reader.end()
        if flags & ~0b111:
            raise FrameError(f"StatusReport: reserved flag bits set (0x{flags:02X})")
        return cls(state, bool(flags & 1), bool(flags & 2), bool(flags & 4), loaded)


@dataclass(frozen=True, slots=True)
class Shuffling(TextMessage):
    """A shuffle started (by a StartShuffle or the machine's own start button); ``text`` is the
    deck label."""

    TYPE: ClassVar[int] = 0x82
    LIMIT: ClassVar[int] = DECK_LABEL_MAX

    @property
    def deck(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class ShuffleComplete:
    """A shuffled deck is ready, with the deck check's verdict (never the order)."""

    TYPE: ClassVar[int] = 0x83
    deck: str
    count: int
    ok: bool
    missing: tuple[str, ...] = ()
    duplicates: tuple[str, ...] = ()

    def payload(self) -> bytes:
        return (
            pack_text(self.deck, DECK_LABEL_MAX)
            + bytes([self.count, int(self.ok)])
            + _pack_cards(self.missing)
            + _pack_cards(self.duplicates)
        )

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "ShuffleComplete")
        deck = reader.text()
        count, ok = reader.u8(), reader.u8()
        if ok > 1:
            raise FrameError(f"ShuffleComplete: ok byte {ok} is not 0 or 1")
        missing = _read_cards(reader, "ShuffleComplete.missing")
        duplicates = _read_cards(reader, "ShuffleComplete.duplicates")
        reader.end()
        return cls(deck, count, bool(ok), missing, duplicates)


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault started (``active``) or cleared."""

    TYPE: ClassVar[int] = 0x84
    code: FaultCode
    active: bool

    def payload(self) -> bytes:
        return bytes([self.code, int(self.active)])

    @classmethod
    def from_payload(cls, data: bytes) -> Self:
        reader = PayloadReader(data, "Fault")
        code = FaultCode(enum_value(FaultCode, reader.u8(), "Fault"))
        active = reader.u8()
        reader.end()
        if active > 1:
            raise FrameError(f"Fault: active byte {active} is not 0 or 1")
        return cls(code, bool(active))


@dataclass(frozen=True, slots=True)
class Heartbeat(HeartbeatMessage):
    """Sent every HEARTBEAT_S; ``uptime_ms`` wraps at 2**32."""

    TYPE: ClassVar[int] = 0x85


@dataclass(frozen=True, slots=True)
class Ack(AckMessage):
    """The command with sequence number ``ref`` was accepted."""

    TYPE: ClassVar[int] = 0x86


@dataclass(frozen=True, slots=True)
class Nak(NakMessage):
    """The command with sequence number ``ref`` was refused, and why (a :class:`NakReason`)."""

    TYPE: ClassVar[int] = 0x87
    REASONS: ClassVar[type[enum.IntEnum]] = NakReason


HOST_MESSAGES: Final[tuple[type[Message], ...]] = (GetStatus, StartShuffle)
DEVICE_MESSAGES: Final[tuple[type[Message], ...]] = (
    StatusReport,
    Shuffling,
    ShuffleComplete,
    Fault,
    Heartbeat,
    Ack,
    Nak,
)
#: One codec knows every message of both directions.
CODEC: Final = Codec("shuffler", HOST_MESSAGES + DEVICE_MESSAGES, MAX_PAYLOAD)
