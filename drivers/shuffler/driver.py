"""The shuffler's driver: shuffle commands in, ``shuffling`` / ``shuffle_complete`` / ``fault`` out.

:class:`Shuffler` is the shuffler's part of its :class:`~drivers.driver.Driver`: a serial line
(:class:`~drivers.framed_port.FramedPort` with the shuffler's codec, silent for three heartbeats
means gone) and its :class:`~drivers.exchange.SerialExchange` (``GetStatus`` answered by a
``StatusReport`` opens it; ``StartShuffle`` is answered by Ack or Nak). :func:`shuffler_driver`
makes the driver the registry opens for ``driver = "shuffler"``.
"""

from __future__ import annotations

from config.models import MqttSection, ShufflerDevice
from contract.models import (
    DeviceCommand,
    ShuffleCommand,
    ShuffleCompleteEvent,
    ShufflingEvent,
)
from contract.topics import Topics
from drivers.driver import Driver, DriverOptions
from drivers.errors import CommandRejected
from drivers.exchange import SerialExchange
from drivers.framing import Frame
from drivers.session import DeviceSession, DriverLink
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


class Shuffler:
    """An automatic shuffler with deck check on a serial line, for one driver's session."""

    def __init__(self, config: ShufflerDevice, session: DeviceSession) -> None:
        self.config = config
        self.session = session
        self.exchange = SerialExchange.on_line(config, CODEC, session, heartbeat_s=HEARTBEAT_S)
        self.port = self.exchange.port
        #: The machine's state as its last status report gave it.
        self.last_status: StatusReport | None = None
        self._first_status: StatusReport | None = None

    async def connect(self) -> None:
        self._first_status = await self.exchange.open(GetStatus(), StatusReport)

    def session_started(self) -> None:
        # Faults the machine already had when we connected belong to the new session.
        if self._first_status is not None:
            self._apply_status(self._first_status)
            self._first_status = None

    async def serve(self) -> None:
        await self.exchange.serve(self._on_frame, self.session.tick_faults)

    async def disconnect(self) -> None:
        await self.exchange.close()

    async def execute(self, command: DeviceCommand) -> None:
        if not isinstance(command, ShuffleCommand):
            raise CommandRejected(f"the shuffler does not execute {command.cmd!r}")
        deck = command.deck or ""
        if len(deck) > DECK_LABEL_MAX or not deck.isascii():
            raise CommandRejected(f"deck label {deck!r}: at most {DECK_LABEL_MAX} ASCII characters")
        reply = await self.exchange.request(StartShuffle(deck))
        if isinstance(reply, Nak):
            raise CommandRejected(f"the shuffler refused to start: {reply.reason.name.lower()}")

    # ------------------------------------------------------------------ frames -> events

    def _on_frame(self, frame: Frame) -> None:
        message = frame.message
        if isinstance(message, Shuffling):
            self.session.emit(ShufflingEvent, deck=message.deck or None)
        elif isinstance(message, ShuffleComplete):
            self.session.emit(
                ShuffleCompleteEvent,
                deck=message.deck or None,
                count=message.count,
                ok=message.ok,
                missing=list(message.missing),
                duplicates=list(message.duplicates),
            )
            self.session.log.info(
                "%s: shuffle complete, deck %s, %d cards, check %s",
                self.session.device_id,
                message.deck or "?",
                message.count,
                "ok" if message.ok else "FAILED",
            )
        elif isinstance(message, Fault):
            self._set_fault(message.code, message.active)
        elif isinstance(message, StatusReport):
            self._apply_status(message)
        # Heartbeats only prove the machine is there (the port notes every frame).

    def _apply_status(self, status: StatusReport) -> None:
        self.last_status = status
        for code, active in ((FaultCode.JAM, status.jammed), (FaultCode.DOOR_OPEN, status.door_open)):
            self._set_fault(code, active)

    def _set_fault(self, code: FaultCode, active: bool) -> None:
        if active:
            self.session.raise_fault(code.contract_code, _FAULT_TEXT[code])
        else:
            self.session.clear_fault(code.contract_code)


def shuffler_driver(
    config: ShufflerDevice,
    mqtt: MqttSection,
    topics: Topics,
    options: DriverOptions | None = None,
    *,
    link: DriverLink | None = None,
) -> Driver[Shuffler]:
    """The driver of an automatic shuffler; ``await driver.run()`` runs it until cancelled."""
    return Driver.for_device(
        config, mqtt, topics, lambda session: Shuffler(config, session), options=options, link=link
    )
