"""The shuffler driver: shuffle commands in, ``shuffling`` / ``shuffle_complete`` / ``fault`` out."""

from __future__ import annotations

from typing import Any

from config.models import MqttSection, ShufflerDevice
from contract.models import (
    DeviceCommand,
    ShuffleCommand,
    ShuffleCompleteEvent,
    ShufflingEvent,
)
from contract.topics import Topics
from drivers.driver import DriverOptions
from drivers.errors import CommandRejected
from drivers.framing import Frame, Message
from drivers.serial_driver import SerialDriver
from drivers.shuffler.protocol import (
    CODEC,
    DECK_LABEL_MAX,
    HEARTBEAT_S,
    Fault,
    FaultCode,
    GetStatus,
    Nak,
    ShuffleComplete,
    Shuffling,
    StartShuffle,
    StatusReport,
)

_FAULT_TEXT = {
    FaultCode.JAM: "the shuffler is jammed: clear the card path and reload the deck",
    FaultCode.DOOR_OPEN: "the shuffler door is open",
}


class ShufflerDriver(SerialDriver):
    """Drives an automatic shuffler with deck check over a serial port."""

    kind = "shuffler"
    codec = CODEC
    #: Three heartbeat periods without a frame: the shuffler is gone.
    silence_s = 3 * HEARTBEAT_S

    def __init__(
        self,
        device: ShufflerDevice,
        mqtt: MqttSection,
        topics: Topics,
        options: DriverOptions | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(device, mqtt, topics, options, **kwargs)
        self._first_status: StatusReport | None = None
        self.last_status: StatusReport | None = None

    def handshake_request(self) -> Message:
        return GetStatus()

    def is_handshake_reply(self, message: Message) -> bool:
        return isinstance(message, StatusReport)

    async def on_handshake(self, message: Message) -> None:
        assert isinstance(message, StatusReport)
        self._first_status = message

    def on_session_start(self) -> None:
        # Faults the machine already had when we connected belong to the new session.
        if self._first_status is not None:
            self._apply_status(self._first_status)
            self._first_status = None

    def _apply_status(self, status: StatusReport) -> None:
        self.last_status = status
        for code, active in ((FaultCode.JAM, status.jammed), (FaultCode.DOOR_OPEN, status.door_open)):
            self._set_fault(code, active)

    def _set_fault(self, code: FaultCode, active: bool) -> None:
        if active:
            self.raise_fault(code.contract_code, _FAULT_TEXT[code])
        else:
            self.clear_fault(code.contract_code)

    def handle(self, frame: Frame) -> None:
        message = frame.message
        if isinstance(message, Shuffling):
            self.emit(ShufflingEvent, deck=message.deck or None)
        elif isinstance(message, ShuffleComplete):
            self.emit(
                ShuffleCompleteEvent,
                deck=message.deck or None,
                count=message.count,
                ok=message.ok,
                missing=list(message.missing),
                duplicates=list(message.duplicates),
            )
            self.log.info(
                "%s: shuffle complete, deck %s, %d cards, check %s",
                self.device_id,
                message.deck or "?",
                message.count,
                "ok" if message.ok else "FAILED",
            )
        elif isinstance(message, Fault):
            self._set_fault(message.code, message.active)
        elif isinstance(message, StatusReport):
            self._apply_status(message)
        # Heartbeats only prove the machine is there (FramedDriver notes every frame).

    async def execute(self, command: DeviceCommand) -> None:
        if not isinstance(command, ShuffleCommand):
            raise CommandRejected(f"the shuffler does not execute {command.cmd!r}")
        deck = command.deck or ""
        if len(deck) > DECK_LABEL_MAX or not deck.isascii():
            raise CommandRejected(f"deck label {deck!r}: at most {DECK_LABEL_MAX} ASCII characters")
        reply = await self.request(StartShuffle(deck))
        if isinstance(reply, Nak):
            raise CommandRejected(f"the shuffler refused to start: {reply.reason.name.lower()}")
