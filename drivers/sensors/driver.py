"""The sensor board driver: input reports in, contract events out; lamp and buzzer commands back.

The USB calls block: IN transfers run back to back in a thread of the connection's own (an IN
transfer waits at most ``poll_ms``, which bounds how long a shutdown waits for it) and OUT
transfers in worker threads (``asyncio.to_thread``). The board resends queued key
presses until they are acknowledged, so the driver acknowledges each report's keys after
publishing them: a press is published once, and none is lost between two polls.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

from config.models import MqttSection, SensorBoardDevice
from contract.models import BuzzerCommand, DeviceCommand, FaultEvent, LampColour, LampCommand
from contract.topics import Topics
from drivers.base import CommandRejected, DeviceLost, DeviceUnavailable, Driver, DriverOptions
from drivers.sensors.protocol import (
    BuzzerReport,
    FrameDecoder,
    HostFrame,
    InputReport,
    KeyAck,
    LampReport,
)
from drivers.sensors.tracker import ReportTracker
from drivers.transport.usb import BoardLink, InTransferThread

#: The board reports at least every 250 ms; this much silence means it hangs.
SILENCE_S: Final = 2.0
#: How often the driver looks at its fault window while the board is quiet.
TICK_S: Final = 0.25
#: A lamp the board does not show this long after it was sent is sent again (lost OUT frame).
LAMP_RETRY_S: Final = 0.5


def usb_backend_for(device: SensorBoardDevice) -> Any:
    """The pyusb backend the configuration names: None (libusb) or a simulated board's socket."""
    if device.backend is None:
        return None
    # Imported here: production with real hardware never loads the simulator package.
    from drivers.transport.usb_sim import backend_from_spec

    return backend_from_spec(device.backend)


class SensorBoardDriver(Driver):
    """Driver of the USB sensor board (button, blinds, seats, keypad, lamp, buzzer)."""

    kind = "sensors"

    def __init__(
        self,
        device: SensorBoardDevice,
        mqtt: MqttSection,
        topics: Topics,
        options: DriverOptions | None = None,
        *,
        usb_backend: Any = None,
        silence_s: float = SILENCE_S,
    ) -> None:
        super().__init__(
            device.id,
            mqtt,
            topics,
            options or DriverOptions(reconnect_max_s=device.reconnect_max_s),
        )
        self.config = device
        self.usb_backend = usb_backend if usb_backend is not None else usb_backend_for(device)
        self.silence_s = silence_s
        self.tracker = ReportTracker()
        self.decoder = FrameDecoder(device.id, on_error=self._on_corrupt)
        self._link: BoardLink | None = None
        self._reader: InTransferThread | None = None
        self._out_seq = 0
        self._write_lock = asyncio.Lock()
        self._lamp_sent_at = 0.0
        self._first_transfer: bytes | None = None
        #: The lamp the controller asked for; restored after a replug (the board forgets it).
        self.lamp: tuple[LampColour, bool] = ("off", False)

    # ------------------------------------------------------------------ device hooks

    async def connect(self) -> None:
        cfg = self.config
        link = await asyncio.to_thread(
            BoardLink.open, cfg.vendor_id, cfg.product_id, cfg.serial_number, self.usb_backend
        )
        self._link = link
        self._reader = InTransferThread(link, cfg.poll_ms, f"usb-in {self.device_id}")
        # Enumerating is not answering: a hung board must not open a session.
        self._first_transfer = await self._reader.get(self.silence_s)
        if self._first_transfer is None:
            raise DeviceUnavailable(f"the board sends no input report within {self.silence_s:g} s")

    def on_session_start(self) -> None:
        self.tracker.start_session()

    async def serve(self) -> None:
        reader = self._reader
        if reader is None:
            raise DeviceLost("sensor board not connected")
        if self.lamp != ("off", False):
            await self._send_lamp()
        last_heard = time.monotonic()
        while True:
            data, self._first_transfer = self._first_transfer, None
            if data is None:
                data = await reader.get(TICK_S)
            now = time.monotonic()
            if data is None:
                if now - last_heard > self.silence_s:
                    raise DeviceLost(f"no input report for {self.silence_s:g} s")
                self.tick_faults()
                continue
            last_heard = now
            for frame in self.decoder.feed_transfer(data):
                if isinstance(frame, InputReport):
                    await self._on_report(frame)
                else:
                    self.report_error("crc_errors", f"unexpected {type(frame).__name__} frame from the board")
            self.tick_faults()

    async def disconnect(self) -> None:
        reader, self._reader = self._reader, None
        link, self._link = self._link, None
        self._first_transfer = None
        if reader is not None:
            await reader.stop()
        if link is not None:
            await asyncio.to_thread(link.close)

    async def execute(self, command: DeviceCommand) -> None:
        if isinstance(command, LampCommand):
            self.lamp = (command.colour, command.blink)
            await self._send_lamp()
        elif isinstance(command, BuzzerCommand):
            await self._send(BuzzerReport(self._next_seq(), command.duration_ms))
        else:
            raise CommandRejected(f"the sensor board has no {command.cmd!r} command")

    # ------------------------------------------------------------------ internals

    async def _on_report(self, report: InputReport) -> None:
        for change in self.tracker.update(report):
            self.emit(change.event, **change.fields)
        if report.key_overflow:
            text = "the board's key queue overflowed: key presses were lost on the board"
            self.log.error("%s: %s", self.device_id, text)
            self.emit(FaultEvent, code="key_overflow", text=text)
        if report.keys:
            await self._send(KeyAck(self._next_seq(), report.keys[-1].number))
        shown = (report.lamp, report.blink)
        if shown != self.lamp and time.monotonic() - self._lamp_sent_at > LAMP_RETRY_S:
            self.log.warning(
                "%s: the board shows lamp %s, not %s: sending it again", self.device_id, shown, self.lamp
            )
            await self._send_lamp()

    async def _send_lamp(self) -> None:
        colour, blink = self.lamp
        self._lamp_sent_at = time.monotonic()
        await self._send(LampReport(self._next_seq(), colour, blink))

    def _on_corrupt(self, error: str) -> None:
        self.report_error("crc_errors", f"corrupt input report: {error}")

    async def _send(self, frame: HostFrame) -> None:
        link = self._require_link()
        async with self._write_lock:  # one OUT transfer at a time, in order
            await asyncio.to_thread(link.write, frame.to_bytes())

    def _require_link(self) -> BoardLink:
        if self._link is None:
            raise DeviceLost("sensor board not connected")
        return self._link

    def _next_seq(self) -> int:
        self._out_seq = (self._out_seq + 1) & 0xFF
        return self._out_seq
