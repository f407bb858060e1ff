"""Fuzz: 100,000+ random and mutated byte streams per codec.

No exception escapes the decoder, consumption always progresses, and every frame it returns is
a genuine frame of the stream: its exact bytes, CRC included, are in the input (so no frame with
a wrong CRC ever comes out).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

from drivers.framing import START, Codec, Frame, Message
from drivers.rfid import protocol as rfid
from drivers.shuffler import protocol as shuffler
from tests.drivers.codec_strategies import rfid_messages, shuffler_messages

STREAMS_PER_CODEC = 100_000


def _pool(messages: list[Message], codec: Codec) -> list[bytes]:
    return [codec.encode(i, m) for i, m in enumerate(messages)]


def _sample_messages(strategy: SearchStrategy[Message], count: int) -> list[Message]:
    found: list[Message] = []

    @settings(max_examples=count, database=None, suppress_health_check=list(HealthCheck), deadline=None)
    @given(strategy)
    def collect(message: Message) -> None:
        found.append(message)

    collect()
    return found


def _mutate(rng: random.Random, data: bytearray) -> None:
    for _ in range(rng.randint(1, 3)):
        choice = rng.randrange(6)
        if not data:
            data.extend(START)
        index = rng.randrange(len(data))
        if choice == 0:  # bit flip
            data[index] ^= 1 << rng.randrange(8)
        elif choice == 1:  # byte replaced
            data[index] = rng.randrange(256)
        elif choice == 2:  # byte inserted
            data.insert(index, rng.randrange(256))
        elif choice == 3:  # byte deleted
            del data[index]
        elif choice == 4:  # truncated
            del data[index:]
        else:  # a stray start marker
            data[index:index] = START


def _stream(rng: random.Random, pool: list[bytes]) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:  # pure noise
        return rng.randbytes(rng.randrange(48))
    if kind == 1:  # noise sprinkled with start markers
        parts = [rng.randbytes(rng.randrange(8)) for _ in range(rng.randrange(1, 5))]
        return START.join(parts)
    frames = bytearray(b"".join(rng.choice(pool) for _ in range(rng.randint(1, 3))))
    if kind == 2:  # mutated valid frames
        _mutate(rng, frames)
    else:  # valid frames cut into a noisy prefix
        frames[0:0] = rng.randbytes(rng.randrange(6))
    return bytes(frames)


@pytest.mark.parametrize(
    ("codec", "strategy"),
    [(shuffler.CODEC, shuffler_messages), (rfid.CODEC, rfid_messages)],
    ids=["shuffler", "rfid"],
)
def test_fuzz_no_exception_no_false_frame(codec: Codec, strategy: SearchStrategy[Message]) -> None:
    rng = random.Random(20261130)
    pool = _pool(_sample_messages(strategy, 200), codec)
    returned = 0
    for _ in range(STREAMS_PER_CODEC):
        data = _stream(rng, pool)
        # The one-shot decode(buffer) API: always progresses, never past the end.
        offset = 0
        while offset < len(data):
            consumed, frame = codec.decode(data[offset:])
            assert 0 <= consumed <= len(data) - offset
            if consumed == 0:
                break
            if isinstance(frame, Frame):
                assert frame.to_bytes() in data
                returned += 1
            offset += consumed
        # The stream API, fed in two chunks.
        cut = rng.randrange(len(data) + 1)
        stream = codec.stream()
        frames = stream.feed(data[:cut]) + stream.feed(data[cut:])
        for frame in frames:
            assert frame.to_bytes() in data
    assert returned > STREAMS_PER_CODEC // 10  # the mutated streams still carried good frames
