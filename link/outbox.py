"""Messages waiting for the broker: a bounded queue of events and a last-value status slot.

Events are published in the order they were produced. While the broker is away they wait here;
when more than ``limit`` wait, the oldest event is dropped (and the drop reported: never
silently). The retained status is not an event: only its latest value matters, so it sits in a
slot of its own that a newer status replaces and an overflow never drops. It goes out after the
events produced before it was set and before those produced after (or, said again after a
reconnection, before every event waiting).

A message leaves the outbox only once the broker acknowledged it (:meth:`Outbox.done`): a broker
lost mid-publish means a repeat (same ``seq``), never a loss.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class OutboxMessage:
    """One message to publish; ``on_published`` is called once the broker acknowledged it."""

    topic: str
    payload: bytes
    retain: bool = False
    on_published: Callable[[], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class _Numbered:
    number: int
    message: OutboxMessage


class Outbox:
    """See the module docstring; ``ready`` is set while something waits."""

    def __init__(self, limit: int, on_drop: Callable[[OutboxMessage], None] | None = None) -> None:
        if limit < 1:
            raise ValueError(f"outbox limit {limit}: at least 1")
        self.limit = limit
        self.on_drop = on_drop
        self.dropped = 0
        self.ready = asyncio.Event()
        self._events: deque[_Numbered] = deque()
        self._produced = 0
        #: The status to publish, and the number of events produced before it was set.
        self._status: tuple[int, OutboxMessage] | None = None

    def put(self, message: OutboxMessage) -> None:
        """Queue an event; beyond ``limit`` the oldest event is dropped (``on_drop`` is told)."""
        if len(self._events) >= self.limit:
            lost = self._events.popleft().message
            self.dropped += 1
            if self.on_drop is not None:
                self.on_drop(lost)
        self._produced += 1
        self._events.append(_Numbered(self._produced, message))
        self.ready.set()

    def set_status(self, message: OutboxMessage, *, first: bool = False) -> None:
        """Replace the status waiting to be published (the latest value is what counts); with
        ``first`` it goes out before every event waiting (a reconnection's announcement)."""
        self._status = (-1 if first else self._produced, message)
        self.ready.set()

    def peek(self) -> OutboxMessage | None:
        """The next message to publish, or None when nothing waits."""
        if self._status is not None:
            after, status = self._status
            if not self._events or self._events[0].number > after:
                return status
        return self._events[0].message if self._events else None

    def peek_run(self, limit: int) -> list[OutboxMessage]:
        """The next messages to publish, in order: the status alone when it is due, else up to
        ``limit`` events that go out before it (they may be published together: the broker
        keeps their order)."""
        first = self.peek()
        if first is None or (self._status is not None and first is self._status[1]):
            return [] if first is None else [first]
        due = self._status[0] if self._status is not None else None
        run: list[OutboxMessage] = []
        for numbered in self._events:
            if len(run) >= limit or (due is not None and numbered.number > due):
                break
            run.append(numbered.message)
        return run

    def done(self, message: OutboxMessage) -> None:
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
