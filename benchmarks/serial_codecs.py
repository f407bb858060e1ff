"""Throughput of the serial codecs: frames and bytes decoded per second, clean and noisy streams.

Run: .venv/bin/python benchmarks/serial_codecs.py
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drivers.framing import Codec, Message
from drivers.rfid import protocol as rfid
from drivers.shuffler import protocol as shuffler

CHUNK = 4096


def _inventory(rng: random.Random, tags: int) -> rfid.Inventory:
    reads = tuple(
        rfid.TagRead(rng.randbytes(8).hex().upper(), -45, rfid.Orientation.DOWN) for _ in range(tags)
    )
    return rfid.Inventory(rng.randint(1, 14), 0, reads)


def _measure(name: str, codec: Codec, messages: list[Message], noise: float) -> None:
    rng = random.Random(1)
    parts: list[bytes] = []
    for seq, message in enumerate(messages):
        data = bytearray(codec.encode(seq, message))
        if rng.random() < noise:
            data[rng.randrange(2, len(data))] ^= 0x04
        parts.append(bytes(data))
    stream = b"".join(parts)
    decoder = codec.stream()
    start = time.perf_counter()
    frames = 0
    for offset in range(0, len(stream), CHUNK):
        frames += len(decoder.feed(stream[offset : offset + CHUNK]))
    elapsed = time.perf_counter() - start
    print(
        f"{name:<34} {frames / elapsed:>10,.0f} frames/s {len(stream) / elapsed / 1e6:>7.2f} MB/s"
        f"   ({frames} frames, {decoder.corrupt} corrupt, {len(stream):,} bytes)"
    )


def main() -> None:
    rng = random.Random(0)
    heartbeats: list[Message] = [shuffler.Heartbeat(i) for i in range(50_000)]
    inventories: list[Message] = [_inventory(rng, 3) for _ in range(20_000)]
    big: list[Message] = [_inventory(rng, 52) for _ in range(2_000)]
    _measure("shuffler heartbeats", shuffler.CODEC, heartbeats, 0.0)
    _measure("rfid inventories (3 tags)", rfid.CODEC, inventories, 0.0)
    _measure("rfid inventories (3 tags), 5% bad", rfid.CODEC, inventories, 0.05)
    _measure("rfid inventories (52 tags)", rfid.CODEC, big, 0.0)
    # What the link can carry: 115200 baud 8N1 is 11,520 bytes/s; one inventory per 20 ms dwell.
    print("the line itself: 115200 baud = 0.0115 MB/s; the example reader sends 50 inventories/s")


if __name__ == "__main__":
    main()
