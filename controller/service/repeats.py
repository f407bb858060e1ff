"""Messages the broker delivers again: recognised, so that none is applied twice.

A message is acknowledged to the broker only once its record is durable, so after a crash (or a
lost connection) the broker delivers again what was journaled but not yet acknowledged. Every
payload of the contract carries its device's ``seq`` or its own timestamp, so the same topic and
the same bytes are the same message: the controller keeps the digests of the last messages it
journaled and skips such a repeat (it is acknowledged once its first record is durable).
"""

from __future__ import annotations

import hashlib
import itertools
from collections import OrderedDict
from typing import Final

#: How many recent messages are remembered (a redelivery window is far smaller).
CAPACITY: Final = 4096
#: How many a checkpoint keeps: what a crash can leave unacknowledged is a group commit or two.
IN_CHECKPOINT: Final = 256


def digest(topic: str, payload: bytes) -> bytes:
    return hashlib.blake2b(topic.encode() + b"\0" + payload, digest_size=16).digest()


class RecentMessages:
    """The digests of the last ``capacity`` messages journaled, with their record numbers."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._seen: OrderedDict[bytes, int] = OrderedDict()

    def find(self, key: bytes) -> int | None:
        """The record number of an earlier message with this :func:`digest`, if it is recent."""
        return self._seen.get(key)

    def add(self, key: bytes, n: int) -> None:
        self._seen[key] = n
        if len(self._seen) > self.capacity:
            self._seen.popitem(last=False)

    def forget(self, lost: tuple[tuple[int, int], ...]) -> None:
        """Forget messages whose records were lost: delivered again, they must be journaled."""
        if lost:
            self._seen = OrderedDict(
                (d, n) for d, n in self._seen.items() if not any(a <= n <= b for a, b in lost)
            )

    def export(self, count: int = IN_CHECKPOINT) -> tuple[bytes, tuple[int, ...]]:
        """The newest ``count`` digests (joined: a checkpoint stores two values, not thousands)
        and their record numbers, oldest first."""
        newest = list(itertools.islice(reversed(self._seen.items()), count))[::-1]
        return b"".join(d for d, _ in newest), tuple(n for _, n in newest)

    def load(self, exported: tuple[bytes, tuple[int, ...]]) -> None:
        digests, numbers = exported
        size = len(digests) // len(numbers) if numbers else 0
        self._seen = OrderedDict((digests[i * size : (i + 1) * size], n) for i, n in enumerate(numbers))
