"""An in-process null-modem cable: two byte-stream ends, with a line that can misbehave.

:func:`null_modem_pair` gives two connected :class:`NullModemEnd` transports; what one writes the
other reads. Each direction has its own :class:`LineNoise`: it can split writes into small chunks,
delay them, drop some and flip a bit in others (one seeded RNG per direction), so a driver can be
tested against every way a serial line goes wrong, fast, without a pty or a broker.

A simulated device plugs a :class:`NullModemPort` in under a name; a driver then opens it by URL,
``nullmodem:NAME``, as it would open ``/dev/ttyUSB0``. Unplugging hangs up the driver's end (its
read raises :class:`~drivers.errors.DeviceLost`) and makes the name unknown until it is plugged
in again (opening raises :class:`~drivers.errors.DeviceUnavailable`), as with a pulled adapter.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from drivers.errors import DeviceLost, DeviceUnavailable

SCHEME: Final = "nullmodem:"
_HANGUP: Final = None


@dataclass(frozen=True, slots=True)
class LineNoise:
    """How one direction of the cable misbehaves (the default: a perfect line)."""

    #: Deliver at most this many bytes at a time (None: each write whole).
    chunk: int | None = None
    #: Every chunk arrives this much later (order is kept).
    delay_s: float = 0.0
    #: Share of chunks lost on the line.
    drop_rate: float = 0.0
    #: Share of chunks that arrive with one bit flipped.
    corrupt_rate: float = 0.0
    seed: int | None = 0


class _Line:
    """One direction: chunks ``send``'s bytes, applies the noise, hands them to ``deliver``."""

    def __init__(self, noise: LineNoise, deliver: Callable[[bytes | None], None]) -> None:
        self.noise = noise
        self._deliver = deliver
        self._rng = random.Random(noise.seed)
        self._loop = asyncio.get_running_loop()
        self._delayed: asyncio.Queue[tuple[float, bytes | None]] | None = None
        self._pump: asyncio.Task[None] | None = None
        self.dropped = 0
        self.corrupted = 0

    def send(self, data: bytes) -> None:
        size = self.noise.chunk or len(data) or 1
        for start in range(0, len(data), size):
            chunk = bytearray(data[start : start + size])
            if self.noise.drop_rate and self._rng.random() < self.noise.drop_rate:
                self.dropped += 1
                continue
            if self.noise.corrupt_rate and self._rng.random() < self.noise.corrupt_rate:
                chunk[self._rng.randrange(len(chunk))] ^= 1 << self._rng.randrange(8)
                self.corrupted += 1
            self._later(bytes(chunk))

    def hang_up(self) -> None:
        """The end of the line: delivered after every chunk already on its way."""
        self._later(_HANGUP)

    def _later(self, item: bytes | None) -> None:
        if self.noise.delay_s <= 0:
            self._loop.call_soon(self._deliver, item)
            return
        if self._delayed is None:
            self._delayed = asyncio.Queue()
            self._pump = self._loop.create_task(self._run_delayed(self._delayed))
        self._delayed.put_nowait((self._loop.time() + self.noise.delay_s, item))

    async def _run_delayed(self, queue: asyncio.Queue[tuple[float, bytes | None]]) -> None:
        while True:
            due, item = await queue.get()
            await asyncio.sleep(max(0.0, due - self._loop.time()))
            self._deliver(item)
            if item is _HANGUP:
                return

    def close(self) -> None:
        if self._pump is not None and not self._pump.done():
            self._pump.cancel()


class NullModemEnd:
    """One end of the cable, a byte-stream transport (``read`` / ``write`` / ``close``)."""

    packets = False

    def __init__(self, url: str) -> None:
        self.url = url
        self._incoming: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._line: _Line | None = None
        self._closed = False
        self._hung_up = False

    def _receive(self, data: bytes | None) -> None:
        if not self._closed:
            self._incoming.put_nowait(data)

    async def read(self) -> bytes:
        """The next bytes from the other end; DeviceLost once it hung up."""
        if self._closed or self._hung_up:
            raise DeviceLost(f"{self.url}: closed")
        data = await self._incoming.get()
        if data is _HANGUP:
            self._hung_up = True
            raise DeviceLost(f"{self.url}: end of file (the other end hung up)")
        return data

    async def write(self, data: bytes) -> None:
        if self._closed or self._hung_up or self._line is None:
            raise DeviceLost(f"{self.url}: closed")
        self._line.send(data)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._line is not None:
            self._line.hang_up()


def null_modem_pair(
    a_to_b: LineNoise | None = None, b_to_a: LineNoise | None = None, *, name: str = "pair"
) -> tuple[NullModemEnd, NullModemEnd]:
    """Two connected ends (call inside the running event loop)."""
    a, b = NullModemEnd(f"{SCHEME}{name}/a"), NullModemEnd(f"{SCHEME}{name}/b")
    a._line = _Line(a_to_b or LineNoise(), b._receive)
    b._line = _Line(b_to_a or LineNoise(), a._receive)
    return a, b


#: Ports plugged in, by name (one process, one table of cables).
_PORTS: Final[dict[str, NullModemPort]] = {}


class NullModemPort:
    """A simulated device's end of the cable: ``nullmodem:NAME`` while plugged in.

    ``on_data`` receives the host's bytes; :meth:`write` sends bytes to the host (dropped, and
    counted, while no host has the cable open, like a device talking to nobody).
    """

    def __init__(
        self,
        name: str,
        on_data: Callable[[bytes], None],
        *,
        to_host: LineNoise | None = None,
        to_device: LineNoise | None = None,
    ) -> None:
        self.name = name
        self._on_data = on_data
        self.to_host = to_host or LineNoise()
        self.to_device = to_device or LineNoise()
        self._host: NullModemEnd | None = None
        self._to_host_line: _Line | None = None
        self.bytes_dropped = 0

    @property
    def url(self) -> str:
        """What the driver opens."""
        return f"{SCHEME}{self.name}"

    @property
    def plugged(self) -> bool:
        return _PORTS.get(self.name) is self

    def plug(self) -> None:
        owner = _PORTS.get(self.name)
        if owner is not None and owner is not self:
            raise ValueError(f"{self.url} is already plugged in by another device")
        _PORTS[self.name] = self

    def unplug(self) -> None:
        """Pull the cable: the host's end hangs up, the name is unknown until plugged again."""
        if self.plugged:
            del _PORTS[self.name]
        self._hang_up()

    def close(self) -> None:
        self.unplug()

    def connect(self) -> NullModemEnd:
        """A host opens the cable (a second open replaces the first, which is hung up)."""
        self._hang_up()
        host = NullModemEnd(self.url)
        host._line = _Line(self.to_device, functools.partial(self._from_host, host))
        self._to_host_line = _Line(self.to_host, host._receive)
        self._host = host
        return host

    def write(self, data: bytes) -> bool:
        """Send bytes to the host; False (and counted) when no host has the cable open."""
        if self._host is None or self._to_host_line is None or self._host._closed:
            self.bytes_dropped += len(data)
            return False
        self._to_host_line.send(data)
        return True

    def _from_host(self, host: NullModemEnd, data: bytes | None) -> None:
        if host is not self._host:
            return  # a connection that was replaced or hung up
        if data is _HANGUP:
            self._host = None
            return
        self._on_data(data)

    def _hang_up(self) -> None:
        line, self._to_host_line, self._host = self._to_host_line, None, None
        if line is not None:
            line.hang_up()


async def open_null_modem(url: str, **_: Any) -> NullModemEnd:
    """Open ``nullmodem:NAME`` (DeviceUnavailable when nothing is plugged in under NAME)."""
    port = _PORTS.get(url.removeprefix(SCHEME))
    if port is None:
        raise DeviceUnavailable(f"{url}: nothing plugged in")
    return port.connect()
