"""The sensor board codec: round trips, recovery from damage, the protocol page's examples, fuzzing."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.models import KEY_NAMES
from drivers.framing import START as MAGIC
from drivers.framing import USB_REPORT_LAYOUT, Frame, FrameError, FrameStream, RawFrame, crc16
from drivers.sensors.protocol import (
    CODEC,
    LAMP_COLOURS,
    MAX_KEYS_PER_REPORT,
    TYPE_BUZZER,
    TYPE_INPUT,
    TYPE_KEY_ACK,
    TYPE_LAMP,
    BuzzerReport,
    InputReport,
    KeyAck,
    KeyPress,
    LampReport,
)

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "protocols" / "sensors.md"

seats = st.integers(min_value=1, max_value=10)
seat_sets = st.frozensets(seats)
byte = st.integers(min_value=0, max_value=255)
key_presses = st.builds(KeyPress, number=byte, key=st.sampled_from(KEY_NAMES), seat=st.none() | seats)
input_reports = st.builds(
    InputReport,
    button=st.none() | seats,
    blinds=seat_sets,
    occupied=seat_sets,
    lamp=st.sampled_from(LAMP_COLOURS),
    blink=st.booleans(),
    buzzer=st.booleans(),
    key_overflow=st.booleans(),
    keys=st.lists(key_presses, max_size=MAX_KEYS_PER_REPORT).map(tuple),
)
host_messages = st.one_of(
    st.builds(LampReport, colour=st.sampled_from(LAMP_COLOURS), blink=st.booleans()),
    st.builds(BuzzerReport, duration_ms=st.integers(min_value=0, max_value=0xFFFF)),
    st.builds(KeyAck, number=byte),
)
frames = st.builds(Frame, seq=byte, message=st.one_of(input_reports, host_messages))


def encode(frame_type: int, seq: int, payload: bytes) -> bytes:
    """A frame with a good CRC around any type and payload."""
    return RawFrame(seq, frame_type, payload).to_bytes(USB_REPORT_LAYOUT)


def errors_of(stream: FrameStream) -> int:
    """How many errors the stream reported (and forget them)."""
    return len(stream.drain_errors())


@settings(deadline=None)  # a loaded CI machine must not turn a slow example into a failure
@given(frames)
def test_every_frame_round_trips(frame: Frame) -> None:
    data = frame.to_bytes()
    assert CODEC.decode(data) == (len(data), frame)
    assert Frame.from_bytes(data, CODEC) == frame
    assert len(data) <= 64  # one full-speed interrupt packet


@settings(deadline=None)  # a loaded CI machine must not turn a slow example into a failure
@given(st.lists(frames, min_size=1, max_size=6), st.data())
def test_a_stream_split_anywhere_decodes_to_the_same_frames(sent: list[Frame], data: st.DataObject) -> None:
    stream = b"".join(f.to_bytes() for f in sent)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    decoder = CODEC.stream()
    got: list[Frame] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += decoder.feed(stream[start:end])
    assert got == sent
    assert errors_of(decoder) == 0


@settings(deadline=None)  # a loaded CI machine must not turn a slow example into a failure
@given(frames, st.binary(max_size=40))
def test_garbage_before_a_frame_is_skipped_and_counted(frame: Frame, garbage: bytes) -> None:
    decoder = CODEC.stream()
    got = decoder.feed_transfer(garbage.replace(MAGIC[:1], b"\x00") + frame.to_bytes())
    assert got == [frame]
    assert errors_of(decoder) == (1 if garbage else 0)


def test_every_single_bit_flip_is_detected() -> None:
    report = InputReport(
        button=2,
        blinds=frozenset({1, 2}),
        occupied=frozenset(range(1, 10)),
        keys=(KeyPress(1, "all_in", 5), KeyPress(2, "misdeal")),
    )
    data = CODEC.encode(9, report)
    for position in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[position] ^= 1 << bit
            decoder = CODEC.stream()
            assert decoder.feed_transfer(bytes(damaged)) == []
            assert errors_of(decoder) >= 1


def test_truncated_frame_waits_then_is_dropped_at_the_end_of_the_transfer() -> None:
    data = CODEC.encode(1, LampReport("green"))
    assert CODEC.decode(data[:-1]) == CODEC.decode(data[:4]) == CODEC.decode(b"") == (0, None)
    decoder = CODEC.stream()
    assert decoder.feed_transfer(data[:-3]) == []
    assert [e.kind for e in decoder.drain_errors()] == ["truncated"]
    # The next transfer is decoded normally: nothing of the truncated one lingers.
    assert decoder.feed_transfer(data) == [Frame(1, LampReport("green"))]


def test_truncated_frame_followed_by_a_whole_one_recovers_in_a_stream() -> None:
    first, second = CODEC.encode(1, KeyAck(5)), CODEC.encode(2, BuzzerReport(100))
    decoder = CODEC.stream()
    assert decoder.feed(first[:-2] + second + second) == [Frame(2, BuzzerReport(100))] * 2
    assert errors_of(decoder) >= 1


@pytest.mark.parametrize(
    ("frame_type", "payload", "complaint"),
    [
        (TYPE_INPUT, bytes(7), "fixed part is 8"),
        (TYPE_INPUT, bytes(7) + b"\x01", "1 keys has 8 payload bytes"),
        (TYPE_INPUT, b"\x0b" + bytes(7), "button seat 11"),
        (TYPE_INPUT, b"\x00\x04\x00" + bytes(5), "bits above seat 10"),
        (TYPE_INPUT, bytes(5) + b"\x06" + bytes(2), "lamp colour code 6"),
        (TYPE_INPUT, bytes(6) + b"\x04\x00", "unknown flag bits 0x04"),
        (TYPE_INPUT, bytes(7) + b"\x01" + b"\x01\x09\x00", "key code 9"),
        (TYPE_INPUT, bytes(7) + b"\x01" + b"\x01\x01\x0b", "key seat 11"),
        (TYPE_INPUT, bytes(7) + b"\x09" + bytes(27), "9 keys"),
        (TYPE_LAMP, b"\x06\x00", "not colour"),
        (TYPE_LAMP, b"\x01\x02", "not colour"),
        (TYPE_BUZZER, b"\x01", "expected 2"),
        (TYPE_KEY_ACK, b"", "expected 1"),
        (0x42, b"", "unknown message type 0x42"),
    ],
)
def test_frames_with_a_good_crc_but_a_bad_payload_are_reported_not_returned(
    frame_type: int, payload: bytes, complaint: str
) -> None:
    data = encode(frame_type, 3, payload)
    used, result = CODEC.decode(data)
    assert used == len(data)
    assert isinstance(result, FrameError)
    assert result.kind == "message"
    assert complaint in result.detail
    decoder = CODEC.stream()
    assert decoder.feed_transfer(data + CODEC.encode(4, KeyAck(1))) == [Frame(4, KeyAck(1))]
    assert errors_of(decoder) == 1


def test_bytes_outside_frames_are_reported_as_garbage() -> None:
    decoder = CODEC.stream()
    assert decoder.feed_transfer(b"\x01\x02\x03") == []
    assert [(e.kind, e.skipped) for e in decoder.drain_errors()] == [("garbage", 3)]


def test_over_long_length_field_is_a_corrupt_frame() -> None:
    used, result = CODEC.decode(MAGIC + bytes([TYPE_INPUT, 0, 200]) + bytes(10))
    assert used == 1
    assert isinstance(result, FrameError)
    assert result.kind == "length"
    assert "length 200" in result.detail


@pytest.mark.parametrize(
    "frame",
    [
        lambda: InputReport(button=11, blinds=frozenset(), occupied=frozenset()),
        lambda: InputReport(button=None, blinds=frozenset({0}), occupied=frozenset()),
        lambda: InputReport(
            button=None,
            blinds=frozenset(),
            occupied=frozenset(),
            keys=tuple(KeyPress(n, "ack") for n in range(9)),
        ),
        lambda: InputReport(
            button=None,
            blinds=frozenset(),
            occupied=frozenset(),
            keys=(KeyPress(256, "ack"),),
        ),
        lambda: BuzzerReport(70_000),
        lambda: KeyAck(300),
    ],
)
def test_unencodable_frames_raise(frame: object) -> None:
    assert callable(frame)
    with pytest.raises(FrameError):
        Frame(0, frame()).to_bytes()


# ------------------------------------------------------------------ the protocol page


def page_examples() -> list[bytes]:
    blocks = re.findall(r"```hex\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    return [bytes.fromhex(block.replace("\n", " ")) for block in blocks]


def test_protocol_page_examples_decode_to_what_the_page_says() -> None:
    expected: list[Frame] = [
        Frame(
            0x2A,
            InputReport(
                button=3,
                blinds=frozenset({4, 5}),
                occupied=frozenset(range(1, 8)),
                lamp="amber",
                blink=True,
                keys=(KeyPress(12, "exposed", 4), KeyPress(13, "ack")),
            ),
        ),
        Frame(0x2B, InputReport(button=None, blinds=frozenset(), occupied=frozenset({1, 9, 10}))),
        Frame(5, LampReport("red", blink=True)),
        Frame(6, BuzzerReport(300)),
        Frame(7, KeyAck(13)),
    ]
    examples = page_examples()
    assert len(examples) == len(expected)
    for data, frame in zip(examples, expected, strict=True):
        assert CODEC.decode(data) == (len(data), frame)


# ------------------------------------------------------------------ fuzzing

FUZZ_STREAMS = 100_000


def _random_frame(rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    seq = rng.randrange(256)
    if kind == 0:
        return Frame(
            seq,
            InputReport(
                button=rng.choice([None, *range(1, 11)]),
                blinds=frozenset(rng.sample(range(1, 11), rng.randrange(4))),
                occupied=frozenset(rng.sample(range(1, 11), rng.randrange(11))),
                lamp=rng.choice(LAMP_COLOURS),
                keys=tuple(
                    KeyPress(rng.randrange(256), rng.choice(KEY_NAMES), rng.choice([None, 3]))  # type: ignore[arg-type]
                    for _ in range(rng.randrange(4))
                ),
            ),
        ).to_bytes()
    if kind == 1:
        return Frame(seq, LampReport(rng.choice(LAMP_COLOURS), rng.random() < 0.5)).to_bytes()
    if kind == 2:
        return Frame(seq, BuzzerReport(rng.randrange(65536))).to_bytes()
    return Frame(seq, KeyAck(rng.randrange(256))).to_bytes()


def _mutate(rng: random.Random, data: bytearray) -> None:
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        if not data:
            data += rng.randbytes(4)
        position = rng.randrange(len(data))
        if op == 0:
            data[position] ^= 1 << rng.randrange(8)
        elif op == 1:
            data.insert(position, rng.randrange(256))
        elif op == 2:
            del data[position]
        elif op == 3:
            del data[position:]
        elif op == 4:
            data[position:position] = data[: rng.randrange(1, 12)]
        else:
            data[position:position] = MAGIC + rng.randbytes(rng.randrange(6))


def _stream(rng: random.Random, index: int) -> bytes:
    mode = index % 4
    if mode == 0:  # noise
        return rng.randbytes(rng.randrange(1, 48))
    if mode == 1:  # noise full of start markers and plausible headers
        return b"".join(MAGIC + rng.randbytes(rng.randrange(0, 12)) for _ in range(rng.randrange(1, 5)))
    if mode == 2:  # a good CRC around a random payload: exercises payload validation
        frame_type = rng.choice([TYPE_INPUT, TYPE_LAMP, TYPE_BUZZER, TYPE_KEY_ACK, 0x7F])
        return encode(frame_type, rng.randrange(256), rng.randbytes(rng.randrange(0, 20)))
    data = bytearray(b"".join(_random_frame(rng) for _ in range(rng.randint(1, 3))))
    _mutate(rng, data)
    return bytes(data)


def _check_stream(stream: bytes) -> int:
    """Decode the whole stream; every frame returned must be exactly a CRC-valid span of it."""
    position, found = 0, 0
    while position < len(stream):
        used, result = CODEC.decode(stream[position:])
        if isinstance(result, Frame):
            raw = stream[position : position + used]
            assert raw[:2] == MAGIC
            assert crc16(raw[2:-2]) == int.from_bytes(raw[-2:], "big")
            assert result.to_bytes() == raw
            found += 1
        if used == 0:
            break
        position += used
    return found


def test_fuzz_random_and_mutated_streams_never_raise_nor_return_a_bad_frame() -> None:
    rng = random.Random(20261130)
    found = 0
    for index in range(FUZZ_STREAMS):
        found += _check_stream(_stream(rng, index))
    # The mutated and good-CRC streams must still yield frames: the fuzzer reaches the decoder's core.
    assert found > FUZZ_STREAMS // 10


def test_one_damaged_frame_counts_as_one_error() -> None:
    report = InputReport(button=2, blinds=frozenset(), occupied=frozenset())
    data = bytearray(CODEC.encode(1, report))
    data[6] ^= 0x10
    decoder = CODEC.stream()
    assert decoder.feed_transfer(bytes(data)) == []
    assert errors_of(decoder) == 1
    ack = CODEC.encode(2, KeyAck(9))
    assert decoder.feed_transfer(bytes(data) + ack) == [Frame(2, KeyAck(9))]
    assert errors_of(decoder) == 1
