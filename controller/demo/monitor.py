"""The demo's observer on the broker: device events, statuses, alerts and the public state.

It only listens (the virtual dealer acts through the simulators, never by publishing). The runner
uses it to wait until the drivers have reported what the dealer just did, and to time alerts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import aiomqtt

from contract.models import (
    Alert,
    DeviceEvent,
    PayloadError,
    PublicState,
    Status,
    parse_alert,
    parse_event,
    parse_state,
    parse_status,
)
from contract.timestamps import utc_now
from contract.topics import Topics
from link.backoff import Backoff
from link.reconnect import reconnecting

log = logging.getLogger(__name__)

#: The longest wait between two attempts to reach a broker that went away: the drivers and the
#: engine come back within a second or so, and every step the monitor misses meanwhile holds
#: the virtual dealer up (it waits for each step to be reported).
RECONNECT_MAX_S = 1.0
#: Raised alerts remembered by id (an alert seen live is not taken again from a state).
SEEN_ALERTS = 1_000

EventPredicate = Callable[[str, DeviceEvent], bool]


@dataclass(frozen=True)
class Seen:
    """A device event the monitor saw: when it arrived (monotonic) and what it was."""

    arrived: float
    device: str
    event: DeviceEvent

    def observed(self) -> float:
        """The monotonic time at which the device observed it (from the event's ``ts``)."""
        lag = (utc_now() - self.event.ts).total_seconds()
        return min(self.arrived, time.monotonic() - max(lag, 0.0))


@dataclass
class _Waiter:
    predicate: EventPredicate
    future: asyncio.Future[Seen]


@dataclass
class TableView:
    """What the monitor has seen, for the live view (no hole cards: counts and public data)."""

    state: PublicState | None = None
    devices: dict[str, Status] = field(default_factory=dict)
    controller: Status | None = None
    alerts: deque[Alert] = field(default_factory=lambda: deque(maxlen=200))
    events: int = 0
    bad_payloads: int = 0


class Monitor:
    """Subscribes to one table's topics and dispatches what arrives.

    ``expect(predicate)`` returns a future resolved with the first device event matching it
    (:class:`Seen`); register it *before* acting so that a fast event is not missed.
    ``on_alert`` is called with every alert and its arrival time.
    """

    def __init__(
        self,
        client: aiomqtt.Client,
        topics: Topics,
        on_alert: Callable[[Alert, float], None] | None = None,
        *,
        watch_state: bool = True,
    ) -> None:
        self.client = client
        self.topics = topics
        self.on_alert = on_alert
        # The table's state is for the live view only: without one, the broker need not send
        # it here too (flat out, a state follows nearly every chip).
        self.watch_state = watch_state
        self.view = TableView()
        self._waiters: list[_Waiter] = []
        #: Set once the first connection is subscribed (and stays set across reconnections).
        self.ready = asyncio.Event()
        #: Connections made and subscribed so far (more than one: the broker went away).
        self.connections = 0
        self.last_message = time.monotonic()
        #: The ids of the alerts seen raised (the last ``SEEN_ALERTS``), and whether the next
        #: state is to be read for the alerts raised while the monitor was away.
        self._raised: deque[str] = deque(maxlen=SEEN_ALERTS)
        self._catching_up = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Connect, subscribe and dispatch until cancelled.

        The first connection must succeed (its :class:`aiomqtt.MqttError` is raised: a broker
        that is not there is the user's to fix). After that a lost connection is the broker's
        doing: the client is entered again, with the shared backoff, and subscribes again each
        time, as the production clients do (a broker restarted has forgotten every
        subscription).
        """
        backoff = Backoff(ceiling=RECONNECT_MAX_S)

        async def attempt() -> None:
            async with self.client:
                if self.connections:
                    self.reconnected()
                await self._subscribe()
                backoff.reset()
                self.connections += 1
                if self.connections > 1:
                    # the pair of the warning below: the gap in what it saw is over
                    log.warning(
                        "demo monitor: connected again and subscribed (connection %d)", self.connections
                    )
                self.ready.set()
                await self._dispatch_all()

        def lost(error: Exception) -> float:
            if not self.ready.is_set():
                raise error
            log.warning("demo monitor: broker connection lost (%s); reconnecting", error)
            return backoff.next()

        await reconnecting(attempt, lost)

    def reconnected(self) -> None:
        """The broker went away: an alert raised meanwhile reached no one here (a broker that
        restarted keeps no session). The next state lists the active alerts: those not seen
        raised are taken from it (:meth:`dispatch`), arrived then."""
        self._catching_up = True

    async def _subscribe(self) -> None:
        await self.client.subscribe(
            [
                # At most once: the broker is on this machine and TCP loses nothing while the
                # connection lasts, and flat out the acknowledgements would double the
                # observer's traffic through the broker.
                (self.topics.all_device_events, 0),
                (self.topics.all_device_status, 1),
                (self.topics.alerts, 1),
                # (the state also once after a reconnection: its active alerts, see above)
                *([(self.topics.state, 1)] if self.watch_state or self._catching_up else []),
                (self.topics.controller_status, 1),
            ]
        )

    async def _dispatch_all(self) -> None:
        """Dispatch what arrives until the connection is lost (:class:`aiomqtt.MqttError`)."""
        async for message in self.client.messages:
            payload = message.payload
            data = payload if isinstance(payload, bytes | str) else b""
            self.dispatch(str(message.topic), data, time.monotonic())

    def expect(self, predicate: EventPredicate) -> asyncio.Future[Seen]:
        future: asyncio.Future[Seen] = asyncio.get_running_loop().create_future()
        self._waiters.append(_Waiter(predicate, future))
        return future

    def dispatch(self, topic: str, payload: bytes | str, now: float) -> None:
        """Handle one message (topics are checked: amqtt may deliver other sessions' topics)."""
        self.last_message = now
        try:
            device_topic = self.topics.parse_device_topic(topic)
            if device_topic is not None and device_topic.kind == "event":
                self._event(device_topic.device, parse_event(topic, payload), now)
            elif device_topic is not None and device_topic.kind == "status":
                self.view.devices[device_topic.device] = parse_status(topic, payload)
            elif topic == self.topics.alerts:
                alert = parse_alert(topic, payload)
                if alert.status == "raised":
                    if alert.id in self._raised:
                        return  # (already taken from a state after a reconnection)
                    self._raised.append(alert.id)
                self.view.alerts.append(alert)
                if self.on_alert is not None:
                    self.on_alert(alert, now)
            elif topic == self.topics.state:
                state = parse_state(topic, payload)
                if self.watch_state:
                    self.view.state = state
                if self._catching_up:
                    self._catch_up(state, now)
            elif topic == self.topics.controller_status:
                self.view.controller = parse_status(topic, payload)
        except PayloadError as error:
            self.view.bad_payloads += 1
            log.warning("demo monitor: %s", error)

    def _catch_up(self, state: PublicState, now: float) -> None:
        """The first state after a reconnection: its active alerts not seen raised were raised
        while the monitor was away; they count as arrived ``now``."""
        self._catching_up = False
        for alert in state.alerts:
            if alert.id not in self._raised:
                log.info("demo monitor: %s raised while away (from the state)", alert.code)
                self._raised.append(alert.id)
                self.view.alerts.append(alert)
                if self.on_alert is not None:
                    self.on_alert(alert.model_copy(update={"status": "raised"}), now)
        if not self.watch_state:
            task = asyncio.get_running_loop().create_task(self._unsubscribe_state())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _unsubscribe_state(self) -> None:
        with contextlib.suppress(aiomqtt.MqttError):  # (gone again: subscribed anew next time)
            await self.client.unsubscribe(self.topics.state)

    def _event(self, device: str, event: DeviceEvent, now: float) -> None:
        self.view.events += 1
        remaining = []
        for waiter in self._waiters:
            if waiter.future.done():
                continue
            if waiter.predicate(device, event):
                waiter.future.set_result(Seen(now, device, event))
            else:
                remaining.append(waiter)
        self._waiters = remaining
