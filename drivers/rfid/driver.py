"""The RFID reader driver: antenna sweeps in, ``tag`` present/absent transitions out."""

from __future__ import annotations

import time
from typing import Any, Final

from config.models import MqttSection, RfidReaderDevice
from contract.cards import is_chip_zone
from contract.models import DeviceCommand, SweepCommand, TagEvent
from contract.topics import Topics
from drivers.driver import DriverOptions
from drivers.errors import CommandRejected
from drivers.framing import Frame, Message
from drivers.rfid.presence import DEFAULT_MIN_RSSI, PresenceTracker, Transition
from drivers.rfid.protocol import (
    CODEC,
    HEARTBEAT_S,
    GetInfo,
    Info,
    Inventory,
    InventoryPage,
    Nak,
    ReaderError,
    SetSweep,
)
from drivers.serial_driver import SerialDriver

#: Sweeps timed at the start of a session before ``hold_ms`` is compared with them.
SWEEPS_TIMED: Final = 3


class RfidDriver(SerialDriver):
    """Drives an RFID reader with an antenna multiplexer over a serial port."""

    kind = "rfid"
    codec = CODEC
    silence_s = 3 * HEARTBEAT_S

    def __init__(
        self,
        device: RfidReaderDevice,
        mqtt: MqttSection,
        topics: Topics,
        options: DriverOptions | None = None,
        *,
        min_rssi: int = DEFAULT_MIN_RSSI,
        **kwargs: Any,
    ) -> None:
        options = options or DriverOptions(
            reconnect_max_s=device.reconnect_max_s,
            fault_errors=device.fault_crc_errors,
            fault_window_s=device.fault_window_s,
            resend_buffer=device.resend_buffer,
        )
        super().__init__(device, mqtt, topics, options, **kwargs)
        self.reader = device
        self.antennas: dict[int, str] = dict(device.antennas)
        self.sweep: tuple[int, ...] = tuple(sorted(self.antennas))
        self.dwell_ms = device.dwell_ms
        # Chips swept or pushed into a chip zone are reported there before they are reported gone
        # from where they lay, so a betting area never seems emptied for nowhere.
        self.tracker = PresenceTracker(
            device.hold_ms / 1000,
            min_rssi=min_rssi,
            arrive_first=[a for a, zone in self.antennas.items() if is_chip_zone(zone)],
        )
        self.info: Info | None = None
        self._unknown_antennas: set[int] = set()
        # The first sweeps' times, until they are known (see _time_sweeps).
        self._first_dwells: list[float] = []
        self._sweeps_timed: float | None = None

    def _time_sweeps(self, antenna: int, now: float) -> None:
        """Time the reader's first sweeps (by its first antenna's dwells, this session's); warn
        once when ``hold_ms`` is under three of them: departures are then decided by missed
        sweeps, later than ``hold_ms``. Timed, not worked out from ``dwell_ms``: a reader's
        anti-collision (chips) can make a sweep longer, a simulated one shorter."""
        if self._sweeps_timed is not None or antenna != self.sweep[0]:
            return
        self._first_dwells.append(now)
        if len(self._first_dwells) < SWEEPS_TIMED + 1:
            return
        sweep_s = (self._first_dwells[-1] - self._first_dwells[0]) / SWEEPS_TIMED
        self._sweeps_timed = sweep_s
        if self.reader.hold_ms / 1000 < 3 * sweep_s:
            self.log.warning(
                "%s: hold_ms %d is under three sweeps (%d antennas, %.0f ms a sweep): departures "
                "will be decided by missed sweeps, later than hold_ms",
                self.device_id,
                self.reader.hold_ms,
                len(self.sweep),
                1000 * sweep_s,
            )

    # ---- handshake: learn the reader, then set our sweep

    def handshake_request(self) -> Message:
        return GetInfo()

    def is_handshake_reply(self, message: Message) -> bool:
        return isinstance(message, Info)

    async def on_handshake(self, message: Message) -> None:
        assert isinstance(message, Info)
        self.info = message
        beyond = [a for a in self.sweep if a > message.antenna_count]
        if beyond:
            self.log.error(
                "%s: configured antennas %s do not exist: the reader has %d",
                self.device_id,
                beyond,
                message.antenna_count,
            )
        reply = await self.request(SetSweep(self.dwell_ms, self.sweep))
        if isinstance(reply, Nak):
            self.log.error(
                "%s: reader refused the sweep %s (%s); it keeps sweeping %s",
                self.device_id,
                self.sweep,
                reply.reason.name.lower(),
                message.sweep,
            )

    def on_session_start(self) -> None:
        # A new session starts from what the reader sees now.
        self.tracker.clear()
        self._first_dwells.clear()  # timed afresh unless they are known

    # ---- frames -> events

    def handle(self, frame: Frame) -> None:
        message = frame.message
        if isinstance(message, Inventory | InventoryPage):
            if message.antenna not in self.antennas:
                self._unmapped(message.antenna)
                return
            now = time.monotonic()
            if isinstance(message, Inventory):
                self._publish(self.tracker.observe(message, now))
                self._time_sweeps(message.antenna, now)
            else:
                self._publish(self.tracker.observe_page(message, now))
                if message.last:
                    self._time_sweeps(message.antenna, now)
        elif isinstance(message, ReaderError):
            where = f" on antenna {message.antenna}" if message.antenna else ""
            self.report_error("reader_error", f"reader error {message.code.name.lower()}{where}")
        # Heartbeats only prove the reader is there.

    def tick(self) -> None:
        self._publish(self.tracker.expire(time.monotonic()))
        super().tick()

    def _publish(self, transitions: list[Transition]) -> None:
        for transition in transitions:
            zone = self.antennas.get(transition.antenna)
            if zone is None:
                self._unmapped(transition.antenna)
                continue
            self.emit(
                TagEvent,
                antenna=transition.antenna,
                zone=zone,
                uid=transition.uid,
                present=transition.present,
                face=transition.face,
            )

    def _unmapped(self, antenna: int) -> None:
        if antenna not in self._unknown_antennas:
            self._unknown_antennas.add(antenna)
            self.log.error(
                "%s: inventory from antenna %d, which the configuration does not map to a zone; "
                "ignoring its reads",
                self.device_id,
                antenna,
            )

    # ---- commands

    async def execute(self, command: DeviceCommand) -> None:
        if not isinstance(command, SweepCommand):
            raise CommandRejected(f"the RFID reader does not execute {command.cmd!r}")
        unknown = [a for a in command.antennas if a not in self.antennas]
        if unknown:
            raise CommandRejected(f"antennas {unknown} are not in the configuration")
        reply = await self.request(SetSweep(command.dwell_ms, tuple(command.antennas)))
        if isinstance(reply, Nak):
            raise CommandRejected(f"the reader refused the sweep: {reply.reason.name.lower()}")
        self.sweep, self.dwell_ms = tuple(command.antennas), command.dwell_ms
