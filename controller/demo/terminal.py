"""The demo table's input terminal: the badge reader beside the table and the floor's clock.

Not every fact reaches the engine through a device: the dealer's badge (the ``dealer`` input) and
the start of a tournament's clock (``level_start``) are inputs on ``{root}/{table}/input``
(docs/contract.md), sent by a terminal at the table. The virtual dealer's ``DealerBadge`` and
``LevelStart`` steps are carried out here, as that terminal would: each input is published with
QoS 1 on a connection of its own (they are rare: a badge per relief, one clock start), numbered
from 1 under its own ``source``, and sent again after a lost connection (a broker restarted).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Final

import aiomqtt

from config.models import MqttSection
from contract.models import DealerBadgeInput, DealerInput, LevelStartInput
from contract.timestamps import utc_now
from contract.topics import Topics
from link.backoff import Backoff
from link.client import make_client

#: The ``source`` of the terminal's inputs (their ``seq`` is counted per source).
SOURCE: Final = "demo-terminal"
#: How long an input is tried again while the broker is away.
SEND_FOR_S: Final = 10.0


class InputTerminal:
    """Publishes the dealer inputs of the demo table (see the module docstring)."""

    def __init__(self, mqtt: MqttSection, topics: Topics) -> None:
        self.mqtt = mqtt
        self.topics = topics
        self.seq = 0
        #: When the tournament clock was started (monotonic), None: not started.
        self.clock_started: float | None = None

    def clock_s(self) -> float | None:
        """Seconds on the tournament clock (None: not started)."""
        return None if self.clock_started is None else time.monotonic() - self.clock_started

    async def dealer(self, badge: str) -> None:
        """The dealer at the table holds up his badge."""
        self.seq += 1
        await self._send(DealerBadgeInput(ts=utc_now(), dealer=badge, seq=self.seq, source=SOURCE))

    async def level_start(self) -> None:
        """The floor starts the tournament clock at level 1 (the input's time is the start)."""
        self.seq += 1
        started = time.monotonic()
        await self._send(LevelStartInput(ts=utc_now(), seq=self.seq, source=SOURCE))
        self.clock_started = started

    async def _send(self, item: DealerInput) -> None:
        backoff = Backoff(ceiling=1.0)
        deadline = time.monotonic() + SEND_FOR_S
        identifier = f"tablectl-demo-terminal-{secrets.token_hex(4)}"
        while True:
            try:
                async with make_client(self.mqtt, identifier) as client:
                    await client.publish(self.topics.input, item.to_json(), qos=1)
                return
            except aiomqtt.MqttError:
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(backoff.next())
