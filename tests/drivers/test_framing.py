"""Codec properties: round trips, chunked streams, recovery from garbage, truncation, bit flips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.framing import SERIAL_LAYOUT, START, Codec, Frame, FrameError, Message, RawFrame, decode_raw
from drivers.rfid import protocol as rfid
from drivers.shuffler import protocol as shuffler
from tests.drivers.codec_strategies import rfid_messages, shuffler_messages

CODECS = {"shuffler": (shuffler.CODEC, shuffler_messages), "rfid": (rfid.CODEC, rfid_messages)}


@given(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=300))
def test_raw_frame_round_trip(seq: int, kind: int, payload: bytes) -> None:
    data = RawFrame(seq, kind, payload).to_bytes()
    assert data.startswith(START)
    assert decode_raw(data, SERIAL_LAYOUT, 1024) == (len(data), RawFrame(seq, kind, payload))
    assert decode_raw(data[:-1], SERIAL_LAYOUT, 1024) == (0, None)  # incomplete: wait for more


@pytest.mark.parametrize("name", CODECS)
@given(data=st.data())
@settings(max_examples=300)
def test_message_round_trip(name: str, data: st.DataObject) -> None:
    codec, messages = CODECS[name]
    message: Message = data.draw(messages)
    seq = data.draw(st.integers(0, 255))
    wire = codec.encode(seq, message)
    assert codec.decode(wire) == (len(wire), Frame(seq, message))
    # Canonical: decoding then encoding gives the same bytes.
    assert Frame(seq, message).to_bytes() == wire


@pytest.mark.parametrize("name", CODECS)
@given(data=st.data())
@settings(max_examples=100)
def test_stream_in_chunks_with_garbage_between(name: str, data: st.DataObject) -> None:
    codec, messages = CODECS[name]
    sent = data.draw(st.lists(messages, min_size=1, max_size=6))
    # Garbage without a start marker's first byte cannot hide a frame.
    garbage = st.binary(max_size=12).map(lambda b: b.replace(b"\xa5", b""))
    stream = b"".join(data.draw(garbage) + codec.encode(i, m) for i, m in enumerate(sent))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    decoder = codec.stream()
    got: list[Message] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got.extend(frame.message for frame in decoder.feed(stream[start:end]))
    assert got == sent
    assert decoder.corrupt == 0


def test_recovers_after_bit_flip_and_truncation() -> None:
    codec = shuffler.CODEC
    good = codec.encode(1, shuffler.Heartbeat(10))
    flipped = bytearray(codec.encode(2, shuffler.Heartbeat(20)))
    flipped[8] ^= 0x10
    truncated = codec.encode(3, shuffler.Shuffling("A"))[:7]
    decoder = codec.stream()
    frames = decoder.feed(bytes(flipped) + truncated + good)
    assert [f.seq for f in frames] == [1]
    assert decoder.corrupt >= 2  # the flipped frame and the truncated one
    kinds = {e.kind for e in decoder.drain_errors()}
    assert "crc" in kinds


def test_implausible_length_resyncs_at_once() -> None:
    good = rfid.CODEC.encode(5, rfid.Heartbeat(1))
    bogus = START + b"\xff\xff\x00\x83"  # length 65535 > the reader's maximum payload
    decoder = rfid.CODEC.stream()
    frames = decoder.feed(bogus + good)
    assert [f.seq for f in frames] == [5]
    # The bytes after the bogus marker are its remains: one error, not two.
    assert [e.kind for e in decoder.drain_errors()] == ["length"]


def test_good_crc_bad_payload_is_reported_not_returned() -> None:
    wrong = RawFrame(1, shuffler.Fault.TYPE, b"\x09\x01").to_bytes()  # no fault code 9
    unknown = RawFrame(2, 0x7F, b"").to_bytes()
    stream = shuffler.CODEC.stream()
    assert stream.feed(wrong + unknown) == []
    assert stream.corrupt == 2
    details = [e.detail for e in stream.drain_errors()]
    assert any("unknown FaultCode 9" in d for d in details)
    assert any("unknown message type 0x7F" in d for d in details)
    used, error = shuffler.CODEC.decode(wrong)
    assert used == len(wrong)
    assert isinstance(error, FrameError)
    assert error.kind == "message"


@pytest.mark.parametrize(
    ("codec", "payload"),
    [
        (shuffler.CODEC, RawFrame(1, shuffler.StatusReport.TYPE, b"\x00\xf0\x00")),
        (shuffler.CODEC, RawFrame(1, shuffler.ShuffleComplete.TYPE, b"\x00\x34\x01\x01\x40\x00")),
        (rfid.CODEC, RawFrame(1, rfid.Inventory.TYPE, b"\x01\x00\x01\x02\xaa\xbb\xc0\x00")),
        (rfid.CODEC, RawFrame(1, rfid.Inventory.TYPE, b"\x00\x00\x00")),
        (rfid.CODEC, RawFrame(1, rfid.Heartbeat.TYPE, b"\x00\x00\x00\x01\x02")),
        (rfid.CODEC, RawFrame(1, rfid.InventoryPage.TYPE, b"\x18\x07\x00\x02\x00")),  # last=2
        (rfid.CODEC, RawFrame(1, rfid.InventoryPage.TYPE, b"\x00\x07\x00\x01\x00")),  # antenna 0
        (rfid.CODEC, RawFrame(1, rfid.InventoryPage.TYPE, b"\x18\x07\x00\x01\x01")),  # no read
    ],
)
def test_malformed_payloads_are_rejected(codec: Codec, payload: RawFrame) -> None:
    stream = codec.stream()
    assert stream.feed(payload.to_bytes()) == []
    assert stream.corrupt == 1
