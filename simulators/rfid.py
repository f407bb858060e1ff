"""A simulated RFID reader with an antenna multiplexer, speaking the real protocol on a pty.

It sweeps its antennas continuously like the hardware. On each antenna it runs the ISO 15693
16-slot anti-collision over the tags lying there (:mod:`simulators.iso15693`): the antenna's
dwell lasts ``dwell_ms`` or the anti-collision time, whichever is longer (about 9 ms per tag: a
pot of 300 chips holds the reader 2.8 s). It then sends one Inventory with every tag found, or,
when more than ``page_reads`` tags answer, an InventoryPage each time that many were found and
a last page when the dwell ends. Frames leave through a UART of ``baudrate`` (115200 by default),
so a page of 32 reads spends 31 ms on the line.

Noise knobs, all drawn from one seeded RNG: ``miss_rate`` (a tag that is there is not reported in
a dwell), ``duplicate_rate`` (a tag reported twice in one dwell), ``crosstalk_rate`` (a
neighbouring antenna hears a tag, weakly; it then takes its slot in that antenna's
anti-collision too), ``corrupt_rate`` (a frame is damaged on the line: bit flip, truncation or
noise bytes). ``speed`` divides the anti-collision and line times (tests that need many sweeps
of a full pot, the demo flat out; 1.0 is the real reader), and the dwells too, at most
:data:`MAX_DWELL_SPEEDUP` times.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from contract.cards import is_uid
from drivers.framing import Frame, Message
from drivers.rfid.protocol import (
    CODEC,
    HEARTBEAT_S,
    MAX_READS_PER_FRAME,
    Ack,
    GetInfo,
    Heartbeat,
    Info,
    Inventory,
    InventoryPage,
    Nak,
    NakReason,
    Orientation,
    ReaderError,
    ReaderErrorCode,
    SetSweep,
    TagRead,
)
from drivers.transport.nullmodem import LineNoise
from simulators.iso15693 import InventoryRun, inventory
from simulators.serial_device import CableKind, SerialDeviceSimulator

#: Signal strength of a tag on its own antenna, and heard by a neighbour (dBm).
OWN_RSSI = -45
CROSSTALK_RSSI = -72
#: Reads the simulated reader buffers before it sends a page (the protocol allows up to 255).
DEFAULT_PAGE_READS: Final = 32
DEFAULT_BAUDRATE: Final = 115_200
#: How much ``speed`` may shorten a dwell: flat out (speed in the hundreds) the configured
#: milliseconds divided by the speed would be microseconds, and the simulator would spend the
#: machine on empty inventories; a dwell lasts at least a quarter of its configured time (eight
#: times faster made the demo slower: the frames cost more than the shorter sweeps saved).
#: Dwells due together run back to back and their frames leave in one write, as a USB serial
#: adapter delivers what its latency timer collected.
MAX_DWELL_SPEEDUP: Final = 4.0
#: How far the dwells may fall behind their clock and catch up (the event loop wakes a little
#: late from every sleep: a millisecond's timer resolution); later than that, they start afresh.
_LAG_S: Final = 0.003
_YIELD_S: Final = 0.0005
_ORIENTATION = {None: Orientation.UNKNOWN, "up": Orientation.UP, "down": Orientation.DOWN}


@dataclass(frozen=True)
class SentPage:
    """A page as the simulator sent it: when it was due (its last tag identified, or the dwell's
    end) and when it left, both on the event loop's clock."""

    antenna: int
    round: int
    page: int
    last: bool
    due: float
    sent: float


@dataclass(frozen=True)
class PlacedTag:
    antenna: int
    face: str | None


class PlacedTags(dict[str, PlacedTag]):
    """The tags lying on the reader's antennas (UID -> where), counting its changes: a sweep
    reads the same tags dwell after dwell, and what lies on an antenna is worked out again only
    after something moved (a pot of chips is read a thousand times a second flat out)."""

    version = 0

    def __setitem__(self, uid: str, tag: PlacedTag) -> None:
        self.version += 1
        super().__setitem__(uid, tag)

    def __delitem__(self, uid: str) -> None:
        self.version += 1
        super().__delitem__(uid)

    def pop(self, uid: str, default: PlacedTag | None = None) -> PlacedTag | None:  # type: ignore[override]
        self.version += 1
        return super().pop(uid, default)

    def clear(self) -> None:
        self.version += 1
        super().clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.version += 1
        super().update(*args, **kwargs)

    def setdefault(self, uid: str, default: PlacedTag) -> PlacedTag:
        self.version += 1
        return super().setdefault(uid, default)

    def popitem(self) -> tuple[str, PlacedTag]:
        self.version += 1
        return super().popitem()


class RfidReaderSimulator(SerialDeviceSimulator):
    """The reader's device end; the driver opens :attr:`port`."""

    def __init__(
        self,
        *,
        name: str = "rfid",
        antenna_count: int = 16,
        dwell_ms: int = 20,
        seed: int | None = 0,
        miss_rate: float = 0.0,
        duplicate_rate: float = 0.0,
        crosstalk_rate: float = 0.0,
        corrupt_rate: float = 0.0,
        reports_orientation: bool = True,
        heartbeat_s: float = HEARTBEAT_S,
        directory: Path | None = None,
        cable: CableKind = "pty",
        line: LineNoise | None = None,
        speed: float = 1.0,
        page_reads: int = DEFAULT_PAGE_READS,
        baudrate: int | None = DEFAULT_BAUDRATE,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed {speed} must be positive")
        if not 1 <= page_reads <= MAX_READS_PER_FRAME:
            raise ValueError(f"page_reads {page_reads} must be 1..{MAX_READS_PER_FRAME}")
        # A faster world is faster on the line too: the UART's rate scales with ``speed``.
        line_rate = None if baudrate is None else round(baudrate * speed)
        super().__init__(name, CODEC, heartbeat_s, directory, cable=cable, line=line, baudrate=line_rate)
        self.antenna_count = antenna_count
        self.dwell_ms = dwell_ms
        self.sweep: tuple[int, ...] = tuple(range(1, antenna_count + 1))
        self.rng = random.Random(seed)
        self.miss_rate = miss_rate
        self.duplicate_rate = duplicate_rate
        self.crosstalk_rate = crosstalk_rate
        self.corrupt_rate = corrupt_rate
        self.reports_orientation = reports_orientation
        self.speed = speed
        self.page_reads = page_reads
        self.tags = PlacedTags()
        # antenna -> (the tags' version it was worked out for, its UIDs, their anti-collision)
        self._on_antenna: dict[int, tuple[int, list[str], InventoryRun]] = {}
        self._round = 0
        # When the next dwell begins: dwells follow each other on this clock, not on when the
        # event loop got round to the last one, so a sweep lasts its antennas' dwells, not
        # that plus the loop's lag at every antenna (a millisecond dwell would last 1.3).
        self._dwell_clock: float | None = None
        self._runs: dict[frozenset[str], InventoryRun] = {}
        self.frames_sent = 0
        self.frames_corrupted = 0
        self.pages_sent = 0
        #: The latest pages sent, with when each was due: the anti-collision's pace, which a
        #: host's read times only blur (a busy event loop delivers late pages together).
        self.recent_pages: deque[SentPage] = deque(maxlen=64)
        self.sweeps = 0
        #: Completed dwells per antenna (tests wait for these instead of sleeping).
        self.dwells: dict[int, int] = {}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await super().start()
        self._spawn(self._sweeps(), "sweep")

    # ------------------------------------------------------------------ the physical table

    def _check(self, uid: str, antenna: int, face: str | None) -> str:
        uid = uid.upper()
        if not is_uid(uid) or len(uid) % 2:
            raise ValueError(f"not a tag UID (even number of hex digits, 8..20): {uid!r}")
        if not 1 <= antenna <= self.antenna_count:
            raise ValueError(f"antenna {antenna} does not exist (1..{self.antenna_count})")
        if face not in _ORIENTATION:
            raise ValueError(f"face {face!r} must be 'up', 'down' or None")
        return uid

    def place(self, uid: str, antenna: int, face: str | None = None) -> None:
        """Put a tagged card or chip on an antenna (``face``: "up", "down" or None)."""
        self.tags[self._check(uid, antenna, face)] = PlacedTag(antenna, face)

    def place_all(self, uids: Iterable[str], antenna: int, face: str | None = None) -> None:
        """Put several tags on an antenna at once (a stack of chips); none on bad input."""
        checked = [self._check(uid, antenna, face) for uid in uids]
        for uid in checked:
            self.tags[uid] = PlacedTag(antenna, face)

    def remove(self, uid: str) -> None:
        """Take a tag off the table (unknown UIDs are ignored: it is already off)."""
        self.tags.pop(uid.upper(), None)

    def remove_all(self, uids: Iterable[str]) -> None:
        """Take several tags off the table at once."""
        for uid in uids:
            self.remove(uid)

    def move(self, uid: str, antenna: int, face: str | None = None) -> None:
        """Move a tag to another antenna, keeping its face unless one is given."""
        old = self.tags.get(uid.upper())
        self.place(uid, antenna, face if face is not None or old is None else old.face)

    def move_all(self, uids: Iterable[str], antenna: int) -> None:
        """Move several tags to another antenna at once, each keeping its face (the dealer's
        sweep or push); none moves on bad input."""
        checked = [self._check(uid, antenna, None) for uid in uids]
        for uid in checked:
            old = self.tags.get(uid)
            self.tags[uid] = PlacedTag(antenna, None if old is None else old.face)

    def flip(self, uid: str, face: str) -> None:
        """Turn a card over where it lies."""
        tag = self.tags[uid.upper()]
        self.place(uid, tag.antenna, face)

    def on_antenna(self, antenna: int) -> list[str]:
        """The UIDs lying on ``antenna`` now."""
        return list(self._lying(antenna)[1])

    def _lying(self, antenna: int) -> tuple[int, list[str], InventoryRun]:
        """What lies on ``antenna`` and its anti-collision, worked out once per change."""
        cached = self._on_antenna.get(antenna)
        version = self.tags.version
        if cached is None or cached[0] != version:
            uids = [uid for uid, tag in self.tags.items() if tag.antenna == antenna]
            cached = self._on_antenna[antenna] = (version, uids, self.anticollision(uids))
        return cached

    def inject_error(self, code: ReaderErrorCode, antenna: int = 0) -> None:
        """Make the reader report an error."""
        self._send(ReaderError(code, antenna))

    # ------------------------------------------------------------------ the reader

    def anticollision(self, uids: Iterable[str]) -> InventoryRun:
        """The anti-collision over these tags (cached: a stack of chips is inventoried often)."""
        key = frozenset(uids)
        run = self._runs.get(key)
        if run is None:
            if len(self._runs) > 256:
                self._runs.clear()
            run = self._runs[key] = inventory(key)
        return run

    def _orientation(self, tag: PlacedTag) -> Orientation:
        return _ORIENTATION[tag.face] if self.reports_orientation else Orientation.UNKNOWN

    def _crosstalk(self, antenna: int) -> dict[str, PlacedTag]:
        """Tags on the neighbouring antennas that this antenna hears this dwell."""
        if not self.crosstalk_rate:
            return {}
        return {
            uid: tag
            for uid, tag in self.tags.items()
            if abs(tag.antenna - antenna) == 1 and self.rng.random() < self.crosstalk_rate
        }

    def _reads(self, uids: Iterable[str], antenna: int, heard: dict[str, PlacedTag]) -> list[TagRead]:
        """What the reader reports of the tags it identified, noise included.

        A tag taken away before the reader reached it is not reported; one heard from a
        neighbouring antenna is reported weakly.
        """
        reads: list[TagRead] = []
        for uid in uids:
            tag = self.tags.get(uid)
            if tag is not None and tag.antenna == antenna:
                if self.rng.random() < self.miss_rate:
                    continue
                read = TagRead(uid, OWN_RSSI + self.rng.randint(-3, 3), self._orientation(tag))
                reads.append(read)
                if self.rng.random() < self.duplicate_rate:
                    reads.append(read)
            elif uid in heard:
                rssi = CROSSTALK_RSSI + self.rng.randint(-4, 4)
                reads.append(TagRead(uid, rssi, self._orientation(heard[uid])))
        return reads

    async def _dwell(self, antenna: int) -> None:
        """One antenna's turn: the anti-collision, its pages as they fill, the closing frame."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        start = self._dwell_clock
        dwell_s = self.dwell_s
        if start is None or not now - max(dwell_s, _LAG_S) <= start <= now:
            start = now  # the first dwell, or a reader held up for long: start afresh
        heard = self._crosstalk(antenna)
        _, lying, run = self._lying(antenna)
        if heard:
            run = self.anticollision([*lying, *heard])
        found = [uid for _, uid in run.found]
        # Page numbers are one byte: a dwell needing more than 256 pages gets fuller ones.
        size = max(self.page_reads, -(-len(found) // 256))
        page = 0
        buffered = 0
        # Full pages leave as soon as their last tag is identified (never the last one: the
        # frame that closes the dwell carries the rest).
        while len(found) - buffered > size:
            chunk = found[buffered : buffered + size]
            buffered += size
            due = start + run.found[buffered - 1][0] / self.speed
            await _sleep_until(loop, due)
            page = self._send_page(antenna, page, False, self._reads(chunk, antenna, heard), due)
        end = start + max(dwell_s, run.duration_s / self.speed)
        self._dwell_clock = end
        await _sleep_until(loop, end)
        reads = self._reads(found[buffered:], antenna, heard)
        if page == 0 and len(reads) <= MAX_READS_PER_FRAME:
            self._send(Inventory(antenna, self._round, tuple(reads)))
        else:
            self._send_page(antenna, page, True, reads, end)
        self.dwells[antenna] = self.dwells.get(antenna, 0) + 1

    @property
    def dwell_s(self) -> float:
        """An antenna's dwell in real time: the configured one, shortened by ``speed`` (at most
        :data:`MAX_DWELL_SPEEDUP` times)."""
        return self.dwell_ms / 1000 / min(self.speed, MAX_DWELL_SPEEDUP)

    def _send_page(self, antenna: int, page: int, last: bool, reads: list[TagRead], due: float) -> int:
        """Send reads as pages from number ``page``, due at ``due``; returns the number of the
        next page."""
        # Duplicated reads can overfill a frame: the overflow follows in the next page.
        while True:
            part, reads = reads[:MAX_READS_PER_FRAME], reads[MAX_READS_PER_FRAME:]
            closes = last and not reads
            self._send(InventoryPage(antenna, self._round, page, closes, tuple(part)))
            self.pages_sent += 1
            sent = asyncio.get_running_loop().time()
            self.recent_pages.append(SentPage(antenna, self._round, page, closes, due, sent))
            page += 1
            if not reads:
                return page

    def _send(self, message: Message) -> None:
        data = self._frame(message)
        if self.corrupt_rate and self.rng.random() < self.corrupt_rate:
            data = self._damage(data)
        self.frames_sent += 1
        self._transmit(data)

    def _damage(self, data: bytes) -> bytes:
        self.frames_corrupted += 1
        kind = self.rng.randrange(3)
        if kind == 0:  # a bit flip after the start marker
            damaged = bytearray(data)
            index = self.rng.randrange(2, len(damaged))
            damaged[index] ^= 1 << self.rng.randrange(8)
            return bytes(damaged)
        if kind == 1:  # truncated
            return data[: self.rng.randrange(2, len(data))]
        noise = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 8)))
        return noise + data[: len(data) // 2]

    async def _sweeps(self) -> None:
        while True:
            for antenna in self.sweep:
                await self._dwell(antenna)
            self._round = (self._round + 1) & 0xFF
            self.sweeps += 1

    def _heartbeat(self) -> Message:
        return Heartbeat(self._uptime_ms())

    def _handle(self, frame: Frame) -> None:
        message = frame.message
        if isinstance(message, GetInfo):
            self._send(Info(self.antenna_count, self.dwell_ms, self.sweep))
        elif isinstance(message, SetSweep):
            if any(a > self.antenna_count for a in message.antennas):
                self._send(Nak(frame.seq, NakReason.BAD_ANTENNA))
            else:
                self.sweep, self.dwell_ms = message.antennas, message.dwell_ms
                self._send(Ack(frame.seq))
        else:
            self._send(Nak(frame.seq, NakReason.UNKNOWN_COMMAND))


async def _sleep_until(loop: asyncio.AbstractEventLoop, when: float) -> None:
    """Wait until ``when``; when it has passed already, go on at once (dwells that fell due
    together run back to back and their frames leave together), letting the loop run every
    :data:`_YIELD_S` or so all the same."""
    now = loop.time()
    if when > now:
        await asyncio.sleep(when - now)
    elif now - when > _YIELD_S:
        await asyncio.sleep(0)
