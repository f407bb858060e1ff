"""A QoS 1 publisher that costs next to nothing, for the service benchmark (not shipped).

A Python MQTT client (aiomqtt over paho) builds, writes and acknowledges each message in Python:
some 250 µs a message on the development machine, about 4,000 messages/s, which is slower than
the service it is meant to feed, and on a 2-core machine it takes CPU from it. This one encodes
every MQTT 3.1.1 PUBLISH packet (QoS 1) before the clock starts, writes them in large chunks on a
plain socket and counts the broker's PUBACKs in a thread, keeping at most ``window`` messages
unacknowledged (packet ids are reused only once acknowledged). The order of the messages is kept:
one connection, one stream.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Sequence

#: Packet types (the high nibble of the first byte).
_CONNECT = 0x10
_CONNACK = 0x20
_PUBLISH_QOS1 = 0x32
_PUBACK = 0x40
_SUBSCRIBE = 0x82
_DISCONNECT = b"\xe0\x00"
#: Packets per ``sendall``.
_CHUNK = 500


def _length(value: int) -> bytes:
    """MQTT's variable-length ``remaining length``."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def connect_packet(client_id: str, keepalive: int = 60, *, clean: bool = True) -> bytes:
    """CONNECT, MQTT 3.1.1, a clean session or (``clean=False``) the one the broker keeps."""
    flags = 0x02 if clean else 0x00
    body = _text("MQTT") + bytes([4, flags]) + keepalive.to_bytes(2, "big") + _text(client_id)
    return bytes([_CONNECT]) + _length(len(body)) + body


def publish_packet(topic: str, payload: bytes, packet_id: int, *, retain: bool = False) -> bytes:
    body = _text(topic) + packet_id.to_bytes(2, "big") + payload
    return bytes([_PUBLISH_QOS1 | (1 if retain else 0)]) + _length(len(body)) + body


def subscribe_packet(topic: str, packet_id: int = 1) -> bytes:
    """SUBSCRIBE to one filter at QoS 1."""
    body = packet_id.to_bytes(2, "big") + _text(topic) + b"\x01"
    return bytes([_SUBSCRIBE]) + _length(len(body)) + body


class Blaster:
    """Publishes pre-encoded messages on one connection (see the module docstring)."""

    def __init__(
        self,
        port: int,
        messages: Sequence[tuple[str, bytes]],
        *,
        client_id: str = "bench-blast",
        window: int = 20_000,
    ) -> None:
        self.port = port
        self.client_id = client_id
        self.window = min(window, 65_000)
        self.packets = [publish_packet(t, p, i % 65_535 + 1) for i, (t, p) in enumerate(messages)]
        self._acked = 0
        self._changed = threading.Condition()
        self._error: BaseException | None = None

    def run(self) -> None:
        """Connect, publish every message, return once the broker acknowledged them all."""
        with socket.create_connection(("127.0.0.1", self.port)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(connect_packet(self.client_id))
            connack = _read_exactly(sock, 4)
            if connack[0] != _CONNACK or connack[3] != 0:
                raise ConnectionError(f"the broker refused the connection: {connack.hex()}")
            reader = threading.Thread(target=self._count_acks, args=(sock,), daemon=True)
            reader.start()
            total = len(self.packets)
            for start in range(0, total, _CHUNK):
                end = min(total, start + _CHUNK)
                self._wait_until(end - self.window)
                sock.sendall(b"".join(self.packets[start:end]))
            self._wait_until(total)
            sock.sendall(_DISCONNECT)
            reader.join(5)

    def _wait_until(self, acked: int) -> None:
        """Wait until the broker acknowledged ``acked`` messages (raise what the reader met)."""
        with self._changed:
            self._changed.wait_for(lambda: self._acked >= acked or self._error is not None)
        if self._error is not None:
            raise self._error

    def _count_acks(self, sock: socket.socket) -> None:
        buffer = b""
        total = len(self.packets)
        try:
            while self._acked < total:
                data = sock.recv(65_536)
                if not data:
                    raise ConnectionError("the broker closed the connection")
                buffer += data
                # Only PUBACKs come to a publisher that subscribes to nothing: 4 bytes each.
                whole = len(buffer) // 4
                if buffer[: whole * 4 : 4].strip(bytes([_PUBACK])):
                    raise ConnectionError("a packet other than PUBACK from the broker")
                buffer = buffer[whole * 4 :]
                with self._changed:
                    self._acked += whole
                    self._changed.notify_all()
        except BaseException as error:
            with self._changed:
                self._error = error
                self._changed.notify_all()


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        piece = sock.recv(size - len(data))
        if not piece:
            raise ConnectionError("the broker closed the connection")
        data += piece
    return data
