"""The sensor board's driver: input reports in, contract events out; lamp and buzzer commands back.

:class:`SensorBoard` is the board's part of its :class:`~drivers.driver.Driver`: a USB line
(:class:`~drivers.framed_port.FramedPort` over :mod:`drivers.transport.usb`: ``usb:VID:PID``
through libusb, or ``sim:PATH``, the configuration's ``backend``, for a board simulated in
another process; a transfer is one frame, so anything else in it is an error) and the
:class:`~drivers.sensors.tracker.ReportTracker` that turns reports into changes
(``docs/protocols/sensors.md``). :func:`sensor_board_driver` makes the driver the registry opens
for ``driver = "sensors"``.

The board resends queued key presses until they are acknowledged, so the driver acknowledges a
press only once the broker has acknowledged its event (PUBACK): a press is published once, none
is lost between two polls, and none is lost with a driver that dies while its event waits for the
broker (the board still holds it and the next session publishes it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from config.models import MqttSection, SensorBoardDevice
from contract.models import BuzzerCommand, DeviceCommand, FaultEvent, LampColour, LampCommand
from contract.topics import Topics
from drivers.driver import Driver, DriverOptions
from drivers.errors import CommandRejected, DeviceUnavailable
from drivers.framed_port import FramedPort
from drivers.framing import Frame
from drivers.sensors.protocol import CODEC, BuzzerReport, InputReport, KeyAck, LampReport
from drivers.sensors.tracker import ReportTracker, key_after
from drivers.session import DeviceSession, DriverLink
from drivers.transport.usb import usb_url

#: The board reports at least every 250 ms; this much silence means it hangs.
SILENCE_S: Final = 2.0
#: How often the driver looks at its fault window while the board is quiet.
TICK_S: Final = 0.25
#: A lamp the board does not show this long after it was sent is sent again (lost OUT frame).
LAMP_RETRY_S: Final = 0.5


def transport_url(device: SensorBoardDevice) -> str:
    """``sim:PATH`` for a simulated board (``backend``), else ``usb:VID:PID[?serial=SN]``."""
    if device.backend is not None:
        return device.backend
    return usb_url(device.vendor_id, device.product_id, device.serial_number)


class SensorBoard:
    """The USB sensor board (button, blinds, seats, keypad, lamp, buzzer), for one driver's session."""

    def __init__(
        self,
        config: SensorBoardDevice,
        session: DeviceSession,
        *,
        usb_backend: Any = None,
        silence_s: float = SILENCE_S,
    ) -> None:
        """``usb_backend``: a pyusb backend (a board simulated in this process: tests, benchmarks)."""
        self.config = config
        self.session = session
        transport_options: dict[str, Any] = {
            "vendor_id": config.vendor_id,
            "product_id": config.product_id,
            "serial_number": config.serial_number,
            "timeout_ms": config.poll_ms,
        }
        if usb_backend is not None:
            transport_options["backend"] = usb_backend
        self.port = FramedPort(
            transport_url(config),
            CODEC,
            session,
            silence_s=silence_s,
            transport_options=transport_options,
            tick_s=TICK_S,
            garbage_is_error=True,
        )
        self.tracker = ReportTracker()
        #: The last key press whose event the broker acknowledged, and the last one acknowledged
        #: to the board, as (session, board number).
        self._key_published: tuple[int, int] | None = None
        self._key_acked: tuple[int, int] | None = None
        self._lamp_sent_at = 0.0
        #: The lamp the controller asked for; restored after a replug (the board forgets it).
        self.lamp: tuple[LampColour, bool] = ("off", False)

    # ------------------------------------------------------------------ the Device part

    async def connect(self) -> None:
        """Enumerating is not answering: a board that sends no report opens no session."""
        port = self.port
        await port.open()
        deadline = time.monotonic() + port.silence_s
        while (remaining := deadline - time.monotonic()) > 0:
            frames = await port.read_frames(remaining)
            for frame in frames:
                port.keep(frame)
            if frames:
                return
        raise DeviceUnavailable(f"the board sends no input report within {port.silence_s:g} s")

    def session_started(self) -> None:
        self.tracker.start_session()
        self._key_published = self._key_acked = None

    async def serve(self) -> None:
        if self.lamp != ("off", False):
            await self._send_lamp()
        while True:
            for frame in await self.port.next_frames():
                await self._on_frame(frame)
            self.session.tick_faults()

    async def disconnect(self) -> None:
        await self.port.close()

    async def execute(self, command: DeviceCommand) -> None:
        if isinstance(command, LampCommand):
            self.lamp = (command.colour, command.blink)
            await self._send_lamp()
        elif isinstance(command, BuzzerCommand):
            await self.port.send(BuzzerReport(command.duration_ms))
        else:
            raise CommandRejected(f"the sensor board has no {command.cmd!r} command")

    # ------------------------------------------------------------------ reports -> events

    async def _on_frame(self, frame: Frame) -> None:
        if isinstance(frame.message, InputReport):
            await self._on_report(frame.message)
        else:
            self.session.report_error(
                "crc_errors", f"unexpected {type(frame.message).__name__} frame from the board"
            )

    async def _on_report(self, report: InputReport) -> None:
        session = self.session
        for change in self.tracker.update(report):
            if change.key_number is None:
                session.emit(change.event, **change.fields)
            else:
                session.emit(
                    change.event,
                    on_published=self._published_key(session.number, change.key_number),
                    **change.fields,
                )
        if report.key_overflow:
            text = "the board's key queue overflowed: key presses were lost on the board"
            session.log.error("%s: %s", session.device_id, text)
            session.emit(FaultEvent, code="key_overflow", text=text)
        await self._acknowledge_keys(report)
        shown = (report.lamp, report.blink)
        if shown != self.lamp and time.monotonic() - self._lamp_sent_at > LAMP_RETRY_S:
            session.log.warning(
                "%s: the board shows lamp %s, not %s: sending it again", session.device_id, shown, self.lamp
            )
            await self._send_lamp()

    def _published_key(self, session: int, number: int) -> Callable[[], None]:
        def published() -> None:
            # Events reach the broker in order: the latest acknowledged press covers the ones
            # before it (a key ack is cumulative). A press of an earlier session is the old
            # board's: its numbers mean nothing to the board now plugged in.
            if session == self.session.number:
                self._key_published = (session, number)

        return published

    async def _acknowledge_keys(self, report: InputReport) -> None:
        """Acknowledge to the board the presses the broker has. The board resends the others
        every 50 ms, so this runs often enough while any wait; a press the board still sends
        although it was acknowledged means the ack was lost on the wire: it is sent again."""
        published = self._key_published
        if published is None:
            return
        number = published[1]
        lost_ack = any(not key_after(press.number, number) for press in report.keys)
        if published != self._key_acked or lost_ack:
            await self.port.send(KeyAck(number))
            self._key_acked = published

    async def _send_lamp(self) -> None:
        colour, blink = self.lamp
        self._lamp_sent_at = time.monotonic()
        await self.port.send(LampReport(colour, blink))


def sensor_board_driver(
    config: SensorBoardDevice,
    mqtt: MqttSection,
    topics: Topics,
    options: DriverOptions | None = None,
    *,
    link: DriverLink | None = None,
    usb_backend: Any = None,
    silence_s: float = SILENCE_S,
) -> Driver[SensorBoard]:
    """The driver of a USB sensor board; ``await driver.run()`` runs it until cancelled."""
    return Driver.for_device(
        config,
        mqtt,
        topics,
        lambda session: SensorBoard(config, session, usb_backend=usb_backend, silence_s=silence_s),
        options=options,
        link=link,
    )
