"""Waiting for a condition that no event announces (a simulator's counter), by polling it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(predicate: Callable[[], bool], within: float = 20.0) -> None:
    """Wait until ``predicate`` holds, checking every 10 ms; TimeoutError after ``within`` s."""
    async with asyncio.timeout(within):
        while not predicate():  # noqa: ASYNC110 - counters of simulators have no event to wait on
            await asyncio.sleep(0.01)
