"""Live updates to browsers as server-sent events, coalesced per key.

A publisher says ``publish(key, json_text)``; each subscriber keeps, per key, only the latest text
not yet sent (a page that falls behind gets the newest picture, never a backlog), and receives
what is pending as one ``update`` event: a JSON array of the texts. ``EventSource`` in the browser
reconnects by itself; the ``retry`` field makes it try again after one second.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Final

from starlette.responses import StreamingResponse

RETRY_MS: Final = 1000
#: A comment line this often keeps proxies and the browser from closing an idle stream.
HEARTBEAT_S: Final = 15.0
#: Keys a subscriber may have pending before it is dropped (it reconnects and starts afresh).
MAX_PENDING: Final = 20_000


class Subscription:
    """One browser's stream: the pending texts by key, in first-changed order."""

    def __init__(self, channel: Channel, accepts: Callable[[str], bool] | None) -> None:
        self._channel = channel
        self.accepts = accepts
        self.pending: dict[str, str] = {}
        self.closed = False
        self._ready = asyncio.Event()

    def offer(self, key: str, text: str) -> None:
        if self.closed or (self.accepts is not None and not self.accepts(key)):
            return
        self.pending.pop(key, None)  # a newer text of the key goes to the end
        self.pending[key] = text
        if len(self.pending) > MAX_PENDING:
            self.close()
        self._ready.set()

    async def next(self, wait_s: float) -> list[str] | None:
        """The pending texts (``[]`` after ``wait_s`` with none); None once closed."""
        if not self.pending and not self.closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), wait_s)
        if self.closed:
            return None
        self._ready.clear()
        batch = list(self.pending.values())
        self.pending.clear()
        return batch

    def close(self) -> None:
        self.closed = True
        self._ready.set()
        self._channel.discard(self)


class Channel:
    """Fan-out of keyed JSON texts to every subscriber."""

    def __init__(self) -> None:
        self._subscribers: set[Subscription] = set()
        self.closed = False

    def __len__(self) -> int:
        return len(self._subscribers)

    def subscribe(
        self,
        first: Iterable[tuple[str, str]] = (),
        accepts: Callable[[str], bool] | None = None,
    ) -> Subscription:
        """A new subscriber that gets ``first`` (the full current picture) before any update."""
        subscription = Subscription(self, accepts)
        for key, text in first:
            subscription.offer(key, text)
        if self.closed:
            subscription.close()
        else:
            self._subscribers.add(subscription)
        return subscription

    def publish(self, key: str, text: str) -> None:
        for subscription in list(self._subscribers):
            subscription.offer(key, text)

    def discard(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        self.closed = True
        for subscription in list(self._subscribers):
            subscription.close()


async def _frames(subscription: Subscription) -> AsyncIterator[str]:
    yield f"retry: {RETRY_MS}\n\n"
    try:
        while True:
            batch = await subscription.next(HEARTBEAT_S)
            if batch is None:
                return
            if not batch:
                yield ": keep-alive\n\n"
                continue
            # JSON texts never hold a raw newline, so each batch is one ``data`` line.
            yield "event: update\ndata: [" + ",".join(batch) + "]\n\n"
    finally:
        subscription.close()


def event_stream(subscription: Subscription) -> StreamingResponse:
    """The ``text/event-stream`` response that feeds ``subscription`` to one browser."""
    return StreamingResponse(
        _frames(subscription),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
