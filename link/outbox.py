"""Messages waiting for the broker: a bounded queue of events and a last-value status slot.

Events are published in the order they were produced. While the broker is away they wait here;
when more than ``limit`` wait, the oldest event is dropped (and the drop reported: never
silently). The retained status is not an event: only its latest value matters, so it sits in a
slot of its own that a newer status replaces and an overflow never drops. It goes out after the
events produced before it was set and before those produced after.

A message leaves the outbox only once the broker acknowledged it (:meth:`Outbox.done`): a broker
lost mid-publish means a repeat (same ``seq``), never a loss.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One message to publish."""

    topic: str
    payload: bytes
    retain: bool = False


@dataclass(frozen=True, slots=True)
class _Numbered:
    number: int
    message: Outgoing


class Outbox:
    """See the module docstring; ``ready`` is set while something waits."""

    def __init__(self, limit: int, on_drop: Callable[[Outgoing], None] | None = None) -> None:
        if limit < 1:
            raise ValueError(f"outbox limit {limit}: at least 1")
        self.limit = limit
        self.on_drop = on_drop
        self.dropped = 0
        self.ready = asyncio.Event()
        self._events: deque[_Numbered] = deque()
        self._produced = 0
        #: The status to publish, and the number of events produced before it was set.
        self._status: tuple[int, Outgoing] | None = None

    def put(self, message: Outgoing) -> None:
        """Queue an event; beyond ``limit`` the oldest event is dropped (``on_drop`` is told)."""
        if len(self._events) >= self.limit:
            lost = self._events.popleft().message
            self.dropped += 1
            if self.on_drop is not None:
                self.on_drop(lost)
        self._produced += 1
        self._events.append(_Numbered(self._produced, message))
        self.ready.set()

    def set_status(self, message: Outgoing) -> None:
        """Replace the status waiting to be published (the latest value is what counts)."""
        self._status = (self._produced, message)
        self.ready.set()

    def peek(self) -> Outgoing | None:
        """The next message to publish, or None when nothing waits."""
        if self._status is not None:
            after, status = self._status
            if not self._events or self._events[0].number > after:
                return status
        return self._events[0].message if self._events else None

    def done(self, message: Outgoing) -> None:
        """The broker took ``message``: remove it (unless an overflow or a newer status did)."""
        if self._status is not None and self._status[1] is message:
            self._status = None
        elif self._events and self._events[0].message is message:
            self._events.popleft()
        if not self:
            self.ready.clear()

    @property
    def status_pending(self) -> bool:
        return self._status is not None

    def __len__(self) -> int:
        return len(self._events) + (self._status is not None)
