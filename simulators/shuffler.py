"""A simulated automatic shuffler with deck check, speaking the real protocol on a pseudo-terminal.

Realistic behaviour: a shuffle takes ``shuffle_s`` (divided by ``speed``), the machine checks the
deck it shuffled (count, missing and duplicate cards; never the order), it can jam or have its
door opened (either stops a shuffle), it refuses to start while busy, jammed, open or empty, and it
sends a heartbeat every half second. Start a shuffle with the driver's ShuffleCommand or with the
machine's own button (:meth:`ShufflerSimulator.press_start`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contract.cards import ALL_CARDS
from drivers.framing import Frame, Message
from drivers.shuffler.protocol import (
    CODEC,
    HEARTBEAT_S,
    Ack,
    Fault,
    FaultCode,
    GetStatus,
    Heartbeat,
    MachineState,
    Nak,
    NakReason,
    ShuffleComplete,
    Shuffling,
    StartShuffle,
    StatusReport,
)
from drivers.transport.nullmodem import LineNoise
from simulators.serial_device import CableKind, SerialDeviceSimulator


@dataclass(frozen=True)
class CheckOverride:
    """A deck check result forced on the next shuffle (``fail_check``)."""

    count: int | None
    missing: tuple[str, ...]
    duplicates: tuple[str, ...]


class ShufflerSimulator(SerialDeviceSimulator):
    """The shuffler's device end; the driver opens :attr:`port`."""

    def __init__(
        self,
        *,
        name: str = "shuffler",
        shuffle_s: float = 4.0,
        speed: float = 1.0,
        heartbeat_s: float = HEARTBEAT_S,
        recognises_cards: bool = True,
        directory: Path | None = None,
        cable: CableKind = "pty",
        line: LineNoise | None = None,
    ) -> None:
        super().__init__(name, CODEC, heartbeat_s, directory, cable=cable, line=line)
        self.shuffle_s = shuffle_s
        self.speed = speed
        self.recognises_cards = recognises_cards
        self.state = MachineState.IDLE
        self.door_open = False
        self.jammed = False
        self.deck_label = ""
        self.cards: list[str] = []
        self._override: CheckOverride | None = None
        self._shuffle: asyncio.Task[None] | None = None
        self.shuffles = 0
        self.commands_received = 0

    # ------------------------------------------------------------------ lifecycle

    # ------------------------------------------------------------------ the physical machine

    def load_deck(self, deck: str, cards: Sequence[str]) -> None:
        """Put a deck in the input tray; ``deck`` is the label the operator keys in."""
        for card in cards:
            if card not in ALL_CARDS:
                raise ValueError(f"not a card code: {card!r}")
        self.deck_label = deck
        self.cards = list(cards)
        if self.state == MachineState.READY:
            self.state = MachineState.IDLE

    def fail_check(
        self,
        count: int | None = None,
        missing: Sequence[str] = (),
        duplicates: Sequence[str] = (),
    ) -> None:
        """Make the next shuffle's deck check fail with these findings."""
        self._override = CheckOverride(count, tuple(missing), tuple(duplicates))

    def press_start(self) -> NakReason | None:
        """The machine's own start button; returns why it refused, or None."""
        return self._start("")

    def jam(self) -> None:
        """Cards jam: a shuffle in progress stops; the machine reports a jam until cleared."""
        self._abort_shuffle()
        self.jammed = True
        self.state = MachineState.FAULT
        self._send(Fault(FaultCode.JAM, True))

    def clear_jam(self) -> None:
        self.jammed = False
        self.state = MachineState.IDLE
        self._send(Fault(FaultCode.JAM, False))

    def open_door(self) -> None:
        """Open the door: the interlock stops a shuffle in progress."""
        self._abort_shuffle()
        self.door_open = True
        self._send(Fault(FaultCode.DOOR_OPEN, True))

    def close_door(self) -> None:
        self.door_open = False
        self._send(Fault(FaultCode.DOOR_OPEN, False))

    def take_deck(self) -> None:
        """The dealer takes the shuffled deck out of the output tray."""
        if self.state == MachineState.READY:
            self.state = MachineState.IDLE
            self.cards = []

    # ------------------------------------------------------------------ protocol

    def _status(self) -> StatusReport:
        return StatusReport(
            self.state,
            door_open=self.door_open,
            jammed=self.jammed,
            recognises_cards=self.recognises_cards,
            loaded=min(len(self.cards), 255),
        )

    def _handle(self, frame: Frame) -> None:
        self.commands_received += 1
        message = frame.message
        if isinstance(message, GetStatus):
            self._send(self._status())
        elif isinstance(message, StartShuffle):
            reason = self._start(message.deck)
            self._send(Ack(frame.seq) if reason is None else Nak(frame.seq, reason))
        else:
            self._send(Nak(frame.seq, NakReason.UNKNOWN_COMMAND))

    def _start(self, deck: str) -> NakReason | None:
        if self.jammed:
            return NakReason.JAMMED
        if self.door_open:
            return NakReason.DOOR_OPEN
        if self.state == MachineState.SHUFFLING:
            return NakReason.BUSY
        if not self.cards:
            return NakReason.NO_DECK
        label = deck or self.deck_label
        self.state = MachineState.SHUFFLING
        self._send(Shuffling(label))
        self._shuffle = self._spawn(self._run_shuffle(label), "shuffle")
        return None

    def _abort_shuffle(self) -> None:
        if self._shuffle is not None and not self._shuffle.done():
            self._shuffle.cancel()
            self.state = MachineState.IDLE

    async def _run_shuffle(self, label: str) -> None:
        await asyncio.sleep(self.shuffle_s / self.speed)
        self.shuffles += 1
        self.state = MachineState.READY
        self._send(self._check(label))

    def _check(self, label: str) -> ShuffleComplete:
        override, self._override = self._override, None
        if override is not None:
            count = len(self.cards) if override.count is None else override.count
            return ShuffleComplete(label, count, False, override.missing, override.duplicates)
        count = min(len(self.cards), 255)
        if not self.recognises_cards:
            return ShuffleComplete(label, count, count == len(ALL_CARDS))
        seen = Counter(self.cards)
        missing = tuple(card for card in ALL_CARDS if card not in seen)
        duplicates = tuple(card for card in ALL_CARDS if seen[card] > 1)
        ok = count == len(ALL_CARDS) and not missing and not duplicates
        return ShuffleComplete(label, count, ok, missing, duplicates)

    def _heartbeat(self) -> Message:
        return Heartbeat(self._uptime_ms())
