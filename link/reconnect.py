"""The one reconnect loop of every MQTT client of tablectl.

aiomqtt's pattern: a lost connection raises ``MqttError`` out of ``async with client``; the client
(or a new one) is entered again after a pause, and what a connection needs (subscriptions, the
retained status, the state) is done again in it, since a broker restarted without persistence
has forgotten it. Each client says what one connection does (``attempt``: connect, serve, until
done or lost) and what a lost one costs (``lost``: its log line and health, and the pause before
the next attempt: a backoff, or none when another node of a cluster is left to try). The loop
itself is the same for the controller service, the floor's live view and its recorder, the
demo's monitor and the drivers' link.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiomqtt

Result = TypeVar("Result")

#: What a lost connection raises; a client may count more (a driver: whatever broke).
LOST: tuple[type[Exception], ...] = (aiomqtt.MqttError,)


async def pause(stop: asyncio.Event | None, seconds: float) -> None:
    """Wait ``seconds``, or less if ``stop`` is set first."""
    if seconds <= 0:
        return
    if stop is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)


async def reconnecting(
    attempt: Callable[[], Awaitable[Result | None]],
    lost: Callable[[Exception], float],
    *,
    stop: asyncio.Event | None = None,
    errors: tuple[type[Exception], ...] = LOST,
) -> Result | None:
    """Run ``attempt`` (one connection, from connecting to its end) again and again.

    - It returns a result (not None): the client is done (stopped, refused); that is returned.
    - It returns None: it ended the connection on purpose (a will to renew, a store that failed);
      the next attempt follows at once.
    - It raises one of ``errors``: the connection was lost (or never made); ``lost(error)``
      reports it and says how long to pause before the next attempt (it may raise instead:
      a first connection that must succeed).

    None once ``stop`` is set (checked before every attempt and ends a pause early).
    """
    while stop is None or not stop.is_set():
        try:
            result = await attempt()
        except errors as error:
            await pause(stop, lost(error))
            continue
        if result is not None:
            return result
    return None
