"""A TCP proxy in front of a broker that can hold back the broker's SUBACKs or PUBACKs (test
tooling).

A broker with a long backlog for a persistent session sends the backlog before the SUBACK of
the client's new subscriptions; on a test machine that backlog would have to be hundreds of
thousands of messages for the SUBACK to come late. The proxy makes it come late with a few:
while :attr:`MqttProxy.hold_subacks` is set, every SUBACK from the broker is kept back (the
packets after it pass), and :meth:`MqttProxy.release` forwards them. :attr:`MqttProxy.hold_pubacks`
does the same with the PUBACKs of what the client publishes (a broker behind a backlog answers
them late). Everything else passes unchanged, in order, both ways.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

#: MQTT control packet types SUBACK and PUBACK (the high nibble of the first byte).
SUBACK = 9
PUBACK = 4


def _remaining_length(data: bytes | bytearray, start: int) -> tuple[int, int] | None:
    """(remaining length, bytes it took) of the packet whose length field starts at ``start``;
    None while incomplete."""
    value = 0
    for used in range(4):
        if start + used >= len(data):
            return None
        byte = data[start + used]
        value |= (byte & 0x7F) << (7 * used)
        if not byte & 0x80:
            return value, used + 1
    raise ValueError("malformed MQTT remaining length")


@dataclass
class MqttProxy:
    """Listens on a loopback port; each connection is relayed to ``broker_port``."""

    broker_port: int
    host: str = "127.0.0.1"
    hold_subacks: bool = False
    hold_pubacks: bool = False
    #: SUBACKs and PUBACKs held back so far, in order (a positive signal for tests).
    held: list[bytes] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _clients: list[asyncio.StreamWriter] = field(default_factory=list)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._relay, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def release(self) -> None:
        """Stop holding; forward the packets held so far."""
        self.hold_subacks = self.hold_pubacks = False
        for writer in self._clients:
            for packet in self.held:
                writer.write(packet)
        self.held.clear()

    async def cut(self) -> None:
        """Break the connections relayed now (the listener stays: clients connect again); what
        was held is dropped with them, and nothing more is held."""
        self.hold_subacks = self.hold_pubacks = False
        self.held.clear()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _relay(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        broker_in, broker_out = await asyncio.open_connection(self.host, self.broker_port)
        self._clients = [client_out]
        up = asyncio.create_task(self._copy(client_in, broker_out))
        down = asyncio.create_task(self._from_broker(broker_in, client_out))
        self._tasks |= {up, down}
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (up, down):
                task.cancel()
            for writer in (client_out, broker_out):
                writer.close()
            self._tasks -= {up, down}

    @staticmethod
    async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()

    async def _from_broker(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        buffer = bytearray()
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                buffer += data
                out = bytearray()
                while len(buffer) >= 2:
                    length = _remaining_length(buffer, 1)
                    if length is None or len(buffer) < 1 + length[1] + length[0]:
                        break
                    size = 1 + length[1] + length[0]
                    packet = bytes(buffer[:size])
                    del buffer[:size]
                    kind = packet[0] >> 4
                    if (self.hold_subacks and kind == SUBACK) or (self.hold_pubacks and kind == PUBACK):
                        self.held.append(packet)
                    else:
                        out += packet
                if out:
                    writer.write(out)
                    await writer.drain()
