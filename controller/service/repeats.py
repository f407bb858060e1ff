"""Messages the broker delivers again: recognised, so that none is applied twice.

A message is acknowledged to the broker only once its record is durable, so after a crash (or a
lost connection) the broker delivers again what was journaled but not yet acknowledged. Every
payload of the contract carries its device's ``seq`` or its own timestamp, so the same topic and
the same bytes are the same message: the controller keeps the last messages it journaled and
skips such a repeat (it is acknowledged once its first record is durable).

A message is remembered by itself (its topic and payload), and a checkpoint keeps the digests of
the newest (:func:`digest`: what is kept across a restart is a fixed size a message). A digest
for every message cost the event loop about 0.9 us a message (3.5 % of its share of the
interpreter's lock while it ingests); the key of a message is a tuple whose hash Python computes
once per payload. A payload longer than :data:`KEPT_BYTES` (valid events are some 100-200 bytes)
is remembered by its digest, so that what is kept stays small whatever the payloads.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import OrderedDict
from typing import Final, TypeAlias

#: How many recent messages are remembered (a redelivery window is far smaller).
CAPACITY: Final = 4096
#: How many a checkpoint keeps: what a crash can leave unacknowledged is a group commit or two.
IN_CHECKPOINT: Final = 256
#: The longest payload remembered as it is (a longer one by its digest): at most some 2.5 MiB
#: for :data:`CAPACITY` messages.
KEPT_BYTES: Final = 512

#: A message remembered: its topic and payload, or its :func:`digest` (a long payload, or one
#: a checkpoint named). A digest is bytes, never a tuple: the two kinds never compare equal.
Key: TypeAlias = tuple[str, bytes] | bytes


def digest(topic: str, payload: bytes) -> bytes:
    return hashlib.blake2b(topic.encode() + b"\0" + payload, digest_size=16).digest()


class RecentMessages:
    """The last ``capacity`` messages journaled, with their record numbers."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._seen: OrderedDict[Key, int] = OrderedDict()
        #: How many of the oldest keys are digests a checkpoint gave (:meth:`load`): while there
        #: are any, a message not found by itself is looked for by its digest too.
        self._loaded = 0

    def find(self, topic: str, payload: bytes) -> int | None:
        """The record number of an earlier message with this topic and payload, if it is recent."""
        if len(payload) > KEPT_BYTES:
            return self._seen.get(digest(topic, payload))
        found = self._seen.get((topic, payload))
        if found is None and self._loaded:
            found = self._seen.get(digest(topic, payload))
        return found

    def add(self, topic: str, payload: bytes, n: int) -> None:
        seen = self._seen
        seen[(topic, payload) if len(payload) <= KEPT_BYTES else digest(topic, payload)] = n
        if len(seen) > self.capacity:
            seen.popitem(last=False)
            if self._loaded:
                self._loaded -= 1  # (the checkpoint's keys are the oldest)

    def forget(self, lost: tuple[tuple[int, int], ...]) -> None:
        """Forget messages whose records were lost: delivered again, they must be journaled."""
        if lost:
            kept = OrderedDict((k, n) for k, n in self._seen.items() if not any(a <= n <= b for a, b in lost))
            loaded = itertools.islice(self._seen.items(), self._loaded)
            self._loaded -= sum(1 for _, n in loaded if any(a <= n <= b for a, b in lost))
            self._seen = kept

    def export(self, count: int = IN_CHECKPOINT) -> tuple[bytes, tuple[int, ...]]:
        """The :func:`digest` of the newest ``count`` messages (joined: a checkpoint stores two
        values, not thousands) and their record numbers, oldest first."""
        newest = list(itertools.islice(reversed(self._seen.items()), count))[::-1]
        digests = (key if isinstance(key, bytes) else digest(*key) for key, _ in newest)
        return b"".join(digests), tuple(n for _, n in newest)

    def load(self, exported: tuple[bytes, tuple[int, ...]]) -> None:
        digests, numbers = exported
        size = len(digests) // len(numbers) if numbers else 0
        self._seen = OrderedDict((digests[i * size : (i + 1) * size], n) for i, n in enumerate(numbers))
        self._loaded = len(self._seen)
