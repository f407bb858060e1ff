"""The USB sensor board, simulated byte for byte behind a pyusb backend.

Physical side (tests, the demo's virtual dealer): :meth:`press`, :meth:`move_button`,
:meth:`set_occupied`, :meth:`set_blind`, :meth:`unplug`/:meth:`replug`, and what the board shows:
:attr:`lamp`, :attr:`buzzer_active`. USB side: :attr:`backend` for ``usb.core.find`` in this
process, or :meth:`serve` to reach it from another process through ``backend = "sim:PATH"``.

Like the firmware it imitates, the board answers an IN transfer with an input report as soon as
something changed or a key press waits, otherwise after its idle period (a heartbeat); it keeps
key presses queued until the host acknowledges them and resends unacknowledged ones.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from config.models import SensorBoardDevice
from contract.models import KEY_NAMES, KeyName, LampColour
from drivers.sensors.protocol import (
    CODEC,
    MAX_KEYS_PER_REPORT,
    MAX_SEATS,
    BuzzerReport,
    InputReport,
    KeyAck,
    KeyPress,
    LampReport,
)
from drivers.transport.usb_sim import DeviceGone, SimulatedBackend, TransferTimeout, UsbIdentity
from simulators.usb_server import UnixDeviceServer, serve_unix

log = logging.getLogger(__name__)

DEFAULT_VENDOR_ID: Final = 0x1209
DEFAULT_PRODUCT_ID: Final = 0x7AB1


@dataclass(frozen=True, slots=True)
class Lamp:
    """What the alert lamp shows."""

    colour: LampColour = "off"
    blink: bool = False


def _after(number: int, reference: int) -> bool:
    """True when key number ``number`` comes after ``reference`` (modulo 256)."""
    return 0 < (number - reference) & 0xFF < 128


class SensorBoardSimulator:
    """A sensor board: button, blind zones, seat occupancy, keypad, lamp and buzzer."""

    def __init__(
        self,
        vendor_id: int = DEFAULT_VENDOR_ID,
        product_id: int = DEFAULT_PRODUCT_ID,
        serial_number: str = "SB-0001",
        *,
        idle_ms: int = 250,
        resend_ms: int = 50,
        key_queue: int = 32,
        seed: int | None = None,
    ) -> None:
        self.vendor_id = vendor_id
        self.product_id = product_id
        self.serial_number = serial_number
        self.idle_s = idle_ms / 1000
        self.resend_s = resend_ms / 1000
        if not 1 <= key_queue <= 127:
            # Key numbers wrap at 256; beyond 127 queued presses "newer" becomes ambiguous.
            raise ValueError(f"key queue of {key_queue}: 1..127 presses")
        self.key_queue_size = key_queue
        self.reports_sent = 0
        self.out_frames = 0
        self._rng = random.Random(seed)
        self._cond = threading.Condition()
        self._decoder = CODEC.stream()
        self._server: UnixDeviceServer | None = None
        # Physical state: survives a power cycle.
        self._button: int | None = None
        self._blinds: set[int] = set()
        self._occupied: set[int] = set()
        # Electronic state: lost when unplugged.
        self._plugged = True
        self._address = 1
        self._corrupt_next = 0
        self._corrupt_out = 0
        self._frozen = False
        self.out_errors = 0
        self._power_on()

    def _power_on(self) -> None:
        self._lamp = Lamp()
        self._buzz_until = 0.0
        self._keys: collections.deque[KeyPress] = collections.deque()
        self._next_key = 1
        self._sent_upto: int | None = None  # highest key number already in a report
        self._overflow = False
        self._report_seq = 0
        self._dirty = True
        self._last_report = 0.0

    # ----------------------------------------------------------------------------------------
    # Physical side
    # ----------------------------------------------------------------------------------------

    def press(self, key: KeyName | str, seat: int | None = None) -> None:
        """The dealer presses a key (with a seat key first, for keys about a seat)."""
        if key not in KEY_NAMES:
            raise ValueError(f"unknown key {key!r}; keys are {', '.join(KEY_NAMES)}")
        self._check_seat(seat, allow_none=True)
        with self._cond:
            if not self._plugged:
                log.info("sensor board unplugged: key %s goes nowhere", key)
                return
            if len(self._keys) >= self.key_queue_size:
                self._overflow = True
                log.warning("sensor board key queue full: %s press dropped", key)
                self._cond.notify_all()
                return
            self._keys.append(KeyPress(number=self._next_key, key=key, seat=seat))  # type: ignore[arg-type]
            self._next_key = (self._next_key + 1) & 0xFF
            self._cond.notify_all()

    def move_button(self, seat: int | None) -> None:
        """Put the dealer button in front of ``seat``, or lift it (None)."""
        self._check_seat(seat, allow_none=True)
        with self._cond:
            self._button = seat
            self._changed()

    def set_occupied(self, seat: int, occupied: bool) -> None:
        self._check_seat(seat)
        with self._cond:
            (self._occupied.add if occupied else self._occupied.discard)(seat)
            self._changed()

    def set_blind(self, seat: int, present: bool) -> None:
        self._check_seat(seat)
        with self._cond:
            (self._blinds.add if present else self._blinds.discard)(seat)
            self._changed()

    @property
    def lamp(self) -> Lamp:
        with self._cond:
            return self._lamp

    @property
    def buzzer_active(self) -> bool:
        with self._cond:
            return self._plugged and time.monotonic() < self._buzz_until

    @property
    def plugged(self) -> bool:
        return self._plugged

    @property
    def pending_keys(self) -> int:
        """Key presses the host has not acknowledged yet."""
        with self._cond:
            return len(self._keys)

    def unplug(self) -> None:
        """Pull the cable: transfers fail with ENODEV, the board loses power (lamp, key queue)."""
        with self._cond:
            self._plugged = False
            self._cond.notify_all()

    def replug(self) -> None:
        """Plug it back in: it enumerates at a new address and powers up afresh."""
        with self._cond:
            if self._plugged:
                return
            self._power_on()
            self._address += 1
            self._plugged = True
            self._cond.notify_all()

    def corrupt_reports(self, count: int) -> None:
        """Damage the next ``count`` input reports on the wire (a flipped bit each)."""
        with self._cond:
            self._corrupt_next += count
            self._cond.notify_all()

    def freeze(self, frozen: bool = True) -> None:
        """A hung firmware: still enumerated, but it NAKs every IN transfer (no reports at all)."""
        with self._cond:
            self._frozen = frozen
            self._cond.notify_all()

    def corrupt_commands(self, count: int) -> None:
        """Damage the next ``count`` output transfers from the host (the board ignores them)."""
        with self._cond:
            self._corrupt_out += count

    def snapshot(self) -> dict[str, Any]:
        """What the board senses and shows, as plain data."""
        with self._cond:
            return {
                "plugged": self._plugged,
                "button": self._button,
                "occupied": sorted(self._occupied),
                "blinds": sorted(self._blinds),
                "lamp": {"colour": self._lamp.colour, "blink": self._lamp.blink},
                "buzzer": self._plugged and time.monotonic() < self._buzz_until,
                "pending_keys": len(self._keys),
            }

    def control(self, args: object) -> dict[str, Any]:
        """The physical side over the socket (``simulators.sensors_ctl``): one action, or state.

        ``args`` is a list of words: ``press KEY [SEAT]``, ``button SEAT|none``,
        ``seat SEAT on|off``, ``blind SEAT on|off``, ``unplug``, ``replug`` or ``state``.
        """
        if not isinstance(args, list) or not args or not all(isinstance(a, str) for a in args):
            return {"ok": False, "error": "bad request: args must be a non-empty list of words"}
        action, rest = args[0], args[1:]
        try:
            if action == "press" and len(rest) in (1, 2):
                self.press(rest[0], int(rest[1]) if len(rest) == 2 else None)
            elif action == "button" and len(rest) == 1:
                self.move_button(None if rest[0] == "none" else int(rest[0]))
            elif action in ("seat", "blind") and len(rest) == 2 and rest[1] in ("on", "off"):
                setter = self.set_occupied if action == "seat" else self.set_blind
                setter(int(rest[0]), rest[1] == "on")
            elif action == "unplug" and not rest:
                self.unplug()
            elif action == "replug" and not rest:
                self.replug()
            elif action != "state" or rest:
                return {"ok": False, "error": f"bad request: cannot {' '.join(args)!r}"}
        except ValueError as error:
            return {"ok": False, "error": f"bad request: {error}"}
        return {"ok": True, "state": self.snapshot()}

    @staticmethod
    def _check_seat(seat: int | None, allow_none: bool = False) -> None:
        if seat is None and allow_none:
            return
        if seat is None or not 1 <= seat <= MAX_SEATS:
            raise ValueError(f"seat {seat} outside 1..{MAX_SEATS}")

    def _changed(self) -> None:
        self._dirty = True
        self._cond.notify_all()

    # ----------------------------------------------------------------------------------------
    # USB side (UsbDeviceModel)
    # ----------------------------------------------------------------------------------------

    @classmethod
    def for_device(cls, device: SensorBoardDevice, **options: Any) -> SensorBoardSimulator:
        """A board that answers to the configured vendor, product and serial number."""
        return cls(device.vendor_id, device.product_id, device.serial_number or "SB-0001", **options)

    def serve_for(self, device: SensorBoardDevice, socket_dir: str | os.PathLike[str]) -> SensorBoardDevice:
        """Serve on ``socket_dir/<device id>.sock``; returns ``device`` pointed at it."""
        spec = self.serve(Path(socket_dir) / f"{device.id}.sock")
        return device.model_copy(update={"backend": spec})

    @property
    def backend(self) -> SimulatedBackend:
        """A pyusb backend on which ``usb.core.find`` finds this board."""
        return SimulatedBackend(self)

    def serve(self, path: str | os.PathLike[str]) -> str:
        """Serve the board on a unix socket; returns the ``backend`` config value to reach it."""
        if self._server is not None:
            raise RuntimeError(f"already served at {self._server.path}")
        self._server = serve_unix(self, Path(path))
        return f"sim:{path}"

    async def start(self) -> None:
        """Nothing to start in process; present for symmetry with the other simulators."""

    async def close(self) -> None:
        """Stop serving on the unix socket, if it was."""
        if self._server is not None:
            server, self._server = self._server, None
            await asyncio.to_thread(server.close)  # joins threads: not on the event loop

    def identity(self) -> UsbIdentity | None:
        with self._cond:
            if not self._plugged:
                return None
            return UsbIdentity(
                vendor_id=self.vendor_id,
                product_id=self.product_id,
                address=self._address,
                serial_number=self.serial_number,
                product="tablectl sensor board (simulated)",
            )

    def _check_address(self, address: int) -> None:
        if not self._plugged or address != self._address:
            raise DeviceGone

    def _report_due(self, now: float) -> float:
        """0 when a report is due now, else the seconds until one will be."""
        if self._frozen:
            return 3600.0
        if self._dirty or self._corrupt_next:
            return 0.0
        # A press not yet in any report goes out at once, but only one that fits in a report:
        # presses queued beyond the report's window wait for the host's ack to make room, the
        # others are resent every resend_s (not back to back, flooding the host with copies).
        if self._keys:
            last_sendable = self._keys[min(len(self._keys), MAX_KEYS_PER_REPORT) - 1].number
            if self._sent_upto is None or _after(last_sendable, self._sent_upto):
                return 0.0
        period = self.resend_s if self._keys else self.idle_s
        return max(0.0, self._last_report + period - now)

    def read_in(self, address: int, size: int, timeout_ms: int) -> bytes:
        deadline = time.monotonic() + timeout_ms / 1000
        with self._cond:
            while True:
                self._check_address(address)
                now = time.monotonic()
                wait = self._report_due(now)
                if wait == 0.0:
                    return self._next_report(now)[:size]
                remaining = deadline - now
                if remaining <= 0:
                    raise TransferTimeout
                self._cond.wait(min(wait, remaining))

    def _next_report(self, now: float) -> bytes:
        keys = tuple(list(self._keys)[:MAX_KEYS_PER_REPORT])
        report = InputReport(
            button=self._button,
            blinds=frozenset(self._blinds),
            occupied=frozenset(self._occupied),
            lamp=self._lamp.colour,
            blink=self._lamp.blink,
            buzzer=now < self._buzz_until,
            key_overflow=self._overflow,
            keys=keys,
        )
        seq, self._report_seq = self._report_seq, (self._report_seq + 1) & 0xFF
        self._dirty = False
        self._overflow = False
        self._last_report = now
        self.reports_sent += 1
        if keys and (self._sent_upto is None or _after(keys[-1].number, self._sent_upto)):
            self._sent_upto = keys[-1].number
        data = bytearray(CODEC.encode(seq, report))
        if self._corrupt_next:
            self._corrupt_next -= 1
            self._dirty = True  # the state it carried must go out again, intact
            position = self._rng.randrange(2, len(data))
            data[position] ^= 1 << self._rng.randrange(8)
        return bytes(data)

    def write_out(self, address: int, data: bytes, timeout_ms: int) -> int:
        with self._cond:
            self._check_address(address)
            if self._corrupt_out:
                self._corrupt_out -= 1
                damaged = bytearray(data)
                damaged[self._rng.randrange(len(damaged))] ^= 1 << self._rng.randrange(8)
                data = bytes(damaged)
            frames = self._decoder.feed_transfer(data)
            errors = self._decoder.drain_errors()
            self.out_errors += len(errors)
            for error in errors:
                log.info("sensor board ignores a damaged transfer from the host: %s", error.detail)
            for received in frames:
                frame = received.message
                self.out_frames += 1
                if isinstance(frame, LampReport):
                    self._lamp = Lamp(frame.colour, frame.blink)
                    self._dirty = True
                elif isinstance(frame, BuzzerReport):
                    self._buzz_until = time.monotonic() + frame.duration_ms / 1000
                    self._dirty = True
                elif isinstance(frame, KeyAck):
                    self._acknowledge(frame.number)
                else:
                    log.warning("sensor board ignores a %s from the host", type(frame).__name__)
            self._cond.notify_all()
            return len(data)  # what went over the wire, damaged or not

    def _acknowledge(self, number: int) -> None:
        while self._keys and not _after(self._keys[0].number, number):
            self._keys.popleft()
