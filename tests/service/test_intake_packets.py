"""The intake's own reading of PUBLISH packets (``link.aiomqtt_adapter._ReadAhead.take_publish``)
gives what paho's decoder gives, and leaves to paho whatever it does not take whole."""

from __future__ import annotations

import struct

import pytest
from paho.mqtt import _packet
from paho.mqtt.enums import MQTTProtocolVersion

from link.aiomqtt_adapter import _ReadAhead


def publish(
    topic: bytes, payload: bytes, *, qos: int = 1, mid: int = 7, dup: bool = False, retain: bool = False
) -> bytes:
    """A PUBLISH packet as a broker sends it (MQTT 3.1.1)."""
    body = struct.pack("!H", len(topic)) + topic + (struct.pack("!H", mid) if qos else b"") + payload
    length, size = bytearray(), len(body)
    while True:
        byte, size = size % 128, size // 128
        length.append(byte | (0x80 if size else 0))
        if not size:
            break
    header = 0x30 | (0x08 if dup else 0) | (qos << 1) | (0x01 if retain else 0)
    return bytes([header]) + bytes(length) + body


class _Socket:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def recv(self, size: int) -> bytes:
        taken, self.data = self.data[:size], self.data[size:]
        return taken


def ahead(data: bytes) -> _ReadAhead:
    """A read-ahead holding ``data`` (as after a read of the socket)."""
    reader = _ReadAhead(_Socket(data))
    first = reader.recv(1)
    reader._data, reader._at = first + reader._data[reader._at :], 0  # (put the byte back)
    return reader


@pytest.mark.parametrize(
    "packet",
    [
        publish(b"holdem/t1/dev/rfid-1/event", b'{"type":"tag"}'),
        publish(b"t", b"", qos=0, retain=True),
        publish(b"holdem/t1/input", b"x" * 300, dup=True, mid=65535),  # a 2-byte length
        publish(b"holdem/t1/input", b"y" * 20_000),  # a 3-byte length
        publish("h/ü".encode(), "é".encode()),
    ],
)
def test_a_whole_publish_is_taken_as_paho_decodes_it(packet: bytes) -> None:
    reader = ahead(packet + packet)
    for _ in range(2):
        taken = reader.take_publish()
        assert taken is not None
        header, topic, mid, payload = taken
        length_bytes = 1
        while packet[length_bytes] & 0x80:
            length_bytes += 1
        paho = _packet.decode_publish(packet[0], packet[length_bytes + 1 :], MQTTProtocolVersion.MQTTv311)
        assert (header, topic, mid, payload) == (packet[0], paho.topic, paho.mid, paho.payload)
        assert (bool(header & 0x08), (header >> 1) & 3, bool(header & 1)) == (paho.dup, paho.qos, paho.retain)
    assert reader.take_publish() is None
    assert reader.pending() == 0


@pytest.mark.parametrize(
    "data",
    [
        publish(b"t", b"payload")[:-1],  # not whole yet
        publish(b"t", b"payload")[:1],
        publish(b"t", b"payload", qos=2),  # QoS 2: paho's (PUBREC, PUBREL)
        b"\x40\x02\x00\x07",  # a PUBACK
        b"\x30\x02\x00\x00",  # an empty topic: malformed in MQTT 3.1.1
        b"\x32\x03\x00\x01t",  # QoS 1 without room for its message id
        b"\x30\xff\xff\xff\xff\x01",  # a remaining length over 4 bytes
    ],
)
def test_anything_else_is_left_whole_to_paho(data: bytes) -> None:
    reader = ahead(data)
    assert reader.take_publish() is None
    assert reader.recv(len(data)) == data  # nothing was taken off


class _Chunks:
    """A socket whose reads give the broker's writes as they came, cut anywhere."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def recv(self, size: int) -> bytes:
        if not self.chunks:
            raise BlockingIOError  # nothing to read yet
        chunk = self.chunks.pop(0)
        if len(chunk) > size:
            self.chunks.insert(0, chunk[size:])
        return chunk[:size]


def test_a_publish_cut_between_two_reads_is_taken_whole() -> None:
    packets = [publish(b"holdem/t1/dev/rfid-1/event", b'{"seq":%d}' % i, mid=i + 1) for i in range(5)]
    data = b"".join(packets)
    for cut in (1, 2, len(packets[0]) - 1, len(packets[0]) + 3):
        reader = _ReadAhead(_Chunks([data[:cut], data[cut:]]))
        taken = []
        while True:
            packet = reader.take_publish()
            if packet is None:
                if reader.read_more():
                    continue
                break
            taken.append(packet[2])
        assert taken == [1, 2, 3, 4, 5], cut
        assert reader.pending() == 0
        assert not reader.read_more()  # the socket has nothing now


def test_the_first_bytes_of_a_publish_are_held_not_pending() -> None:
    """A reader that went on reading while bytes are pending would spin until the rest came."""
    packet = publish(b"t", b"payload")
    reader = _ReadAhead(_Chunks([packet[:3]]))
    assert reader.take_publish() is None
    assert reader.read_more()
    assert reader.take_publish() is None
    assert reader.holds_incomplete()
    assert reader.pending() == 0
    reader.socket.chunks.append(packet[3:])
    assert reader.read_more()
    assert reader.take_publish() is not None


def test_a_packet_of_another_type_is_not_read_past() -> None:
    """Only a PUBLISH not yet whole makes the reader read on (a backlog stays in the socket)."""
    puback = b"\x40\x02\x00\x07"
    reader = _ReadAhead(_Chunks([puback + publish(b"t", b"x")[:2], b"more"]))
    assert reader.read_more()
    assert not reader.read_more()  # the PUBACK is paho's; nothing more is read
    assert reader.recv(4) == puback
    closed = _ReadAhead(_Chunks([publish(b"t", b"x")[:2], b""]))
    assert closed.read_more()
    assert not closed.read_more()
    assert closed.closed
