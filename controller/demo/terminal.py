"""The demo table's input terminal: the badge reader beside the table and the floor's clock.

Not every fact reaches the engine through a device: the dealer's badge (the ``dealer`` input) and
the start of a tournament's clock (``level_start``) are inputs on ``{root}/{table}/input``
(docs/contract.md), sent by a terminal at the table. The virtual dealer's ``DealerBadge`` and
``LevelStart`` steps are carried out here, as that terminal would: each input is published with
QoS 1 on a connection of its own (they are rare: a badge per relief, one clock start), numbered
from 1 under its own ``source``, and sent again after a lost connection (a broker restarted).
Each is published once the controller says it is there (its retained status ``online`` or
``fault``, said once it is subscribed): a broker restarted without its sessions drops what is
published before the controller is subscribed again, and an input, unlike a device's event,
cannot be asked for again (its loss is only told, as ``device_fault``).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from typing import Final

import aiomqtt

from config.models import MqttSection
from contract.models import DealerBadgeInput, DealerInput, LevelStartInput, PayloadError, parse_status
from contract.timestamps import utc_now
from contract.topics import Topics
from link.backoff import Backoff
from link.client import make_client

#: The ``source`` of the terminal's inputs (their ``seq`` is counted per source).
SOURCE: Final = "demo-terminal"
#: How long an input is tried again while the broker is away.
SEND_FOR_S: Final = 10.0
#: How long an input waits for the controller to say it is there (then it is sent anyway).
CONTROLLER_WAIT_S: Final = 5.0


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
                    await self._controller_there(client)
                    await client.publish(self.topics.input, item.to_json(), qos=1)
                return
            except aiomqtt.MqttError:
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(backoff.next())

    async def _controller_there(self, client: aiomqtt.Client) -> None:
        """Until the controller's retained status says ``online`` or ``fault`` (at most
        :data:`CONTROLLER_WAIT_S`: a controller that says nothing is not waited for longer)."""
        topic = self.topics.controller_status
        await client.subscribe(topic, qos=1)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CONTROLLER_WAIT_S):
                async for message in client.messages:
                    payload = message.payload
                    if str(message.topic) != topic or not isinstance(payload, bytes | str):
                        continue
                    with contextlib.suppress(PayloadError):
                        if parse_status(topic, payload).state in ("online", "fault"):
                            return
