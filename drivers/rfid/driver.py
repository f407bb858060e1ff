"""The RFID reader's driver: antenna sweeps in, ``tag`` present/absent transitions out.

:class:`RfidReader` is the reader's part of its :class:`~drivers.driver.Driver`: a serial line
(:class:`~drivers.framed_port.FramedPort` with the reader's codec, silent for three heartbeats
means gone), its :class:`~drivers.exchange.SerialExchange` (``GetInfo`` answered by ``Info``
opens it, then the driver sets the sweep its antenna map names; ``SetSweep`` is answered by Ack
or Nak) and the :class:`~drivers.rfid.presence.PresenceTracker` that turns reads into arrivals
and departures (``docs/protocols/rfid.md``). :func:`rfid_driver` makes the driver the registry
opens for ``driver = "rfid"``.
"""

from __future__ import annotations

import time
from typing import Final

from config.models import MqttSection, RfidReaderDevice
from contract.cards import is_chip_zone
from contract.models import DeviceCommand, SweepCommand, TagEvent
from contract.topics import Topics
from drivers.driver import Driver, DriverOptions
from drivers.errors import CommandRejected
from drivers.exchange import SerialExchange
from drivers.framing import Frame
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
from drivers.session import DeviceSession, DriverLink

#: Sweeps timed at the start of a session before ``hold_ms`` is compared with them.
SWEEPS_TIMED: Final = 3


class RfidReader:
    """An RFID reader with an antenna multiplexer on a serial line, for one driver's session."""

    def __init__(
        self, config: RfidReaderDevice, session: DeviceSession, *, min_rssi: int = DEFAULT_MIN_RSSI
    ) -> None:
        self.config = config
        self.session = session
        self.exchange = SerialExchange.on_line(config, CODEC, session, heartbeat_s=HEARTBEAT_S)
        self.port = self.exchange.port
        self.antennas: dict[int, str] = dict(config.antennas)
        #: The sweep the reader runs (the driver's, once the reader took it).
        self.sweep: tuple[int, ...] = tuple(sorted(self.antennas))
        self.dwell_ms = config.dwell_ms
        # Chips swept or pushed into a chip zone are reported there before they are reported gone
        # from where they lay, so a betting area never seems emptied for nowhere.
        self.tracker = PresenceTracker(
            config.hold_ms / 1000,
            min_rssi=min_rssi,
            arrive_first=[a for a, zone in self.antennas.items() if is_chip_zone(zone)],
        )
        #: What the reader said of itself in the handshake.
        self.info: Info | None = None
        #: The time of a sweep, once the first sweeps of a session were timed (see _time_sweeps).
        self.sweep_s: float | None = None
        self._first_dwells: list[float] = []
        self._unknown_antennas: set[int] = set()

    # ------------------------------------------------------------------ the Device part

    async def connect(self) -> None:
        """Learn the reader, then set our sweep."""
        self.info = info = await self.exchange.open(GetInfo(), Info)
        beyond = [a for a in self.sweep if a > info.antenna_count]
        if beyond:
            self.session.log.error(
                "%s: configured antennas %s do not exist: the reader has %d",
                self.session.device_id,
                beyond,
                info.antenna_count,
            )
        reply = await self.exchange.request(SetSweep(self.dwell_ms, self.sweep))
        if isinstance(reply, Nak):
            self.session.log.error(
                "%s: reader refused the sweep %s (%s); it keeps sweeping %s",
                self.session.device_id,
                self.sweep,
                reply.reason.name.lower(),
                info.sweep,
            )

    def session_started(self) -> None:
        # A new session starts from what the reader sees now.
        self.tracker.clear()
        self._first_dwells.clear()  # timed afresh unless they are known

    async def serve(self) -> None:
        await self.exchange.serve(self._on_frame, self._tick)

    async def disconnect(self) -> None:
        await self.exchange.close()

    async def execute(self, command: DeviceCommand) -> None:
        if not isinstance(command, SweepCommand):
            raise CommandRejected(f"the RFID reader does not execute {command.cmd!r}")
        unknown = [a for a in command.antennas if a not in self.antennas]
        if unknown:
            raise CommandRejected(f"antennas {unknown} are not in the configuration")
        reply = await self.exchange.request(SetSweep(command.dwell_ms, tuple(command.antennas)))
        if isinstance(reply, Nak):
            raise CommandRejected(f"the reader refused the sweep: {reply.reason.name.lower()}")
        self.sweep, self.dwell_ms = tuple(command.antennas), command.dwell_ms

    # ------------------------------------------------------------------ frames -> events

    def _on_frame(self, frame: Frame) -> None:
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
            self.session.report_error("reader_error", f"reader error {message.code.name.lower()}{where}")
        # Heartbeats only prove the reader is there.

    def _tick(self) -> None:
        self._publish(self.tracker.expire(time.monotonic()))
        self.session.tick_faults()

    def _publish(self, transitions: list[Transition]) -> None:
        for transition in transitions:
            zone = self.antennas.get(transition.antenna)
            if zone is None:
                self._unmapped(transition.antenna)
                continue
            self.session.emit(
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
            self.session.log.error(
                "%s: inventory from antenna %d, which the configuration does not map to a zone; "
                "ignoring its reads",
                self.session.device_id,
                antenna,
            )

    def _time_sweeps(self, antenna: int, now: float) -> None:
        """Time the reader's first sweeps (by its first antenna's dwells, this session's); warn
        once when ``hold_ms`` is under three of them: departures are then decided by missed
        sweeps, later than ``hold_ms``. Timed, not worked out from ``dwell_ms``: a reader's
        anti-collision (chips) can make a sweep longer, a simulated one shorter."""
        if self.sweep_s is not None or antenna != self.sweep[0]:
            return
        self._first_dwells.append(now)
        if len(self._first_dwells) < SWEEPS_TIMED + 1:
            return
        self.sweep_s = sweep_s = (self._first_dwells[-1] - self._first_dwells[0]) / SWEEPS_TIMED
        if self.config.hold_ms / 1000 < 3 * sweep_s:
            self.session.log.warning(
                "%s: hold_ms %d is under three sweeps (%d antennas, %.0f ms a sweep): departures "
                "will be decided by missed sweeps, later than hold_ms",
                self.session.device_id,
                self.config.hold_ms,
                len(self.sweep),
                1000 * sweep_s,
            )


def rfid_driver(
    config: RfidReaderDevice,
    mqtt: MqttSection,
    topics: Topics,
    options: DriverOptions | None = None,
    *,
    link: DriverLink | None = None,
    min_rssi: int = DEFAULT_MIN_RSSI,
) -> Driver[RfidReader]:
    """The driver of an RFID reader; ``await driver.run()`` runs it until cancelled."""
    return Driver.for_device(
        config,
        mqtt,
        topics,
        lambda session: RfidReader(config, session, min_rssi=min_rssi),
        options=options,
        link=link,
    )
