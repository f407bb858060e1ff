"""Each protocol page's example frames decode, and to the message its heading names."""

from __future__ import annotations

import re

import pytest

from drivers.framing import Codec
from drivers.rfid import protocol as rfid
from drivers.shuffler import protocol as shuffler
from tests.conftest import REPO

HEADING = re.compile(r"^### 0x([0-9A-Fa-f]{2}) (\w+)", re.MULTILINE)
BLOCK = re.compile(r"^```hex\n(.*?)\n```", re.MULTILINE | re.DOTALL)


def examples(text: str) -> list[tuple[int, str, bytes]]:
    """(type byte, message name, frame bytes) for every hex block, from the heading above it."""
    found = []
    for block in BLOCK.finditer(text):
        headings = [h for h in HEADING.finditer(text) if h.start() < block.start()]
        assert headings, f"hex block at offset {block.start()} is under no message heading"
        heading = headings[-1]
        found.append((int(heading.group(1), 16), heading.group(2), bytes.fromhex(block.group(1))))
    return found


@pytest.mark.parametrize(
    ("page", "codec"),
    [("shuffler.md", shuffler.CODEC), ("rfid.md", rfid.CODEC)],
)
def test_example_frames_decode(page: str, codec: Codec) -> None:
    text = (REPO / "docs" / "protocols" / page).read_text(encoding="utf-8")
    found = examples(text)
    documented = {int(h.group(1), 16) for h in HEADING.finditer(text)}
    assert documented == set(codec.messages), "every message type has its section"
    assert {kind for kind, _, _ in found} == set(codec.messages), "every message has an example"
    for kind, name, data in found:
        stream = codec.stream()
        frames = stream.feed(data)
        assert stream.drain_errors() == [], f"{page} {name}: {data.hex(' ')}"
        assert len(frames) == 1, f"{page} {name}: {data.hex(' ')}"
        message = frames[0].message
        assert (type(message).__name__, message.TYPE) == (name, kind)
        assert frames[0].to_bytes() == data
