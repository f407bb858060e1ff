"""The broker killed with SIGKILL five times mid-session while the drivers publish (issue 9).

A whole table: the three simulators on their real transports, the production drivers, the
table PC's mosquitto (``deploy/mosquitto/table-pc.conf``, persistence every 2 s), the
controller service with its journal, and the virtual dealer dealing legal hands on the
simulators. The dealer paces itself on what the drivers report (not on the broker, which keeps
dying), so the drivers go on publishing while the broker is down. Five times the broker is
killed (no goodbye, no final save) and started again on the same port; twice the controller is
away at that moment (stopped just before, started again after), so that the events queued for
it since the broker's last save are lost with the broker and must come from the drivers again.

What must hold at the end: every event each driver published was taken by the engine exactly
once (counted at the engine: repeats are dropped by (device, session, seq), what the broker lost
was sent again by the driver when the engine asked), nothing was reported lost, and the table
was followed to the end (every hand, no alert about play that was legal).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from config.models import MqttSection, TableConfig
from config.registry import DeckRegistry, load_registry
from contract.models import EventBase
from contract.topics import Topics
from controller.demo.hands import TableHands, batches
from controller.demo.monitor import Monitor
from controller.demo.setup import DEVICE_IDS, EXAMPLE_REGISTRY, demo_config
from controller.service.network import Service
from drivers.driver import Device, Driver, stop_task
from drivers.registry import open_driver
from link.client import client_id, make_client
from link.device import DeviceLink
from simulators.dealer import DealerSettings, VirtualDealer
from simulators.table import SimulatedTable
from testing.mosquitto import TABLE_PC_CONF, Mosquitto, running_mosquitto

pytestmark = pytest.mark.slow

KILLS = 5
#: The kills (counted from 0) for which the controller is away.
CONTROLLER_AWAY = (1, 3)
#: Hands dealt after the last restart, so that the end of the session is followed too.
HANDS_AFTER = 2
CATCH_UP_S = 60.0
#: The dealer's pace: ten times a real dealer's, no two acts within 100 ms.
PACE = 10.0
MIN_GAP_S = 0.1
log = logging.getLogger(__name__)


class TappedLink(DeviceLink):
    """A driver's real link to the broker that also tells the dealer's hands what the driver
    gave it to publish (the dealer waits for the driver, not for the broker, which dies)."""

    def __init__(self, *args: Any, tap: Callable[[str, bytes], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tap = tap

    def publish_event(self, event: EventBase, on_published: Callable[[], None] | None = None) -> None:
        super().publish_event(event, on_published)
        self.tap(self.event_topic, event.to_json())


@dataclass
class Controller:
    """The controller service, which the test stops and starts again."""

    config: TableConfig
    registry: DeckRegistry
    service: Service | None = None
    task: asyncio.Task[int] | None = None
    starts: int = 0
    stops: list[asyncio.Event] = field(default_factory=list)

    async def start(self) -> None:
        stop = asyncio.Event()
        self.stops.append(stop)
        self.service = Service(self.config, self.registry, stop=stop)
        self.task = asyncio.create_task(self.service.run(), name=f"service-{self.starts}")
        self.starts += 1
        await asyncio.wait_for(self.service.ready.wait(), 30)

    async def stop(self) -> None:
        if self.task is not None:
            self.stops[-1].set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.task, 10)

    @property
    def engine_machine(self) -> Any:
        assert self.service is not None
        return self.service.controller.engine.state.machine


async def killer(
    broker: Mosquitto,
    controller: Controller,
    drivers: list[Driver[Device]],
    rng: random.Random,
    kills: list[float],
    done: asyncio.Event,
) -> None:
    """Kill the broker ``KILLS`` times, 2 to 4 s apart, each time down for 0.2 to 1 s."""
    for number in range(KILLS):
        await asyncio.sleep(rng.uniform(2.0, 4.0))
        away = number in CONTROLLER_AWAY
        if away:
            await controller.stop()
            # events queue for it at the broker; the broker dies before it saves them
            published = sum(d.emitted for d in drivers)
            async with asyncio.timeout(10):
                while sum(d.emitted for d in drivers) < published + 3:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
        await asyncio.to_thread(broker.kill)
        kills.append(time.monotonic())
        await asyncio.sleep(rng.uniform(0.2, 1.0))
        await asyncio.to_thread(broker.start)
        if away:
            await controller.start()
    done.set()


async def deal(hands: TableHands, dealer: VirtualDealer, after: asyncio.Event) -> int:
    """Legal hands until ``after`` is set and ``HANDS_AFTER`` more were dealt; returns them.

    At ``PACE`` times a real dealer's pace, and never two acts within ``MIN_GAP_S``: a human
    hand is not faster, and the devices' events reach the controller over separate
    connections (a key pressed a millisecond before a card is turned may arrive after it)."""
    played = 0
    extra = 0
    while extra < HANDS_AFTER:
        script = dealer.next_hand(mistake=None)
        for run in batches(script.steps):
            await asyncio.sleep(max(MIN_GAP_S, run[0].pause_s / PACE))
            await hands.do_batch(run)
        played += 1
        if after.is_set():
            extra += 1
    return played


async def caught_up(controller: Controller, drivers: list[Driver[Device]]) -> bool:
    deadline = time.monotonic() + CATCH_UP_S
    while time.monotonic() < deadline:
        machine = controller.engine_machine
        seqs = machine.device_seqs
        if not seqs.held and all(seqs.taken.get(d.device_id, 0) >= d.emitted for d in drivers):
            return True
        await asyncio.sleep(0.2)
    return False


def describe(controller: Controller, drivers: list[Driver[Device]], alerts: list[str]) -> str:
    machine = controller.engine_machine
    return (
        f"taken {machine.device_seqs.taken}, emitted { ({d.device_id: d.emitted for d in drivers}) }, "
        f"resent { ({d.device_id: d.resent for d in drivers}) }, held {len(machine.device_seqs.held)}, "
        f"gaps {machine.device_seqs.gaps}, hand {machine.table.hand} phase {machine.hand_part.phase}; "
        f"alerts: {alerts}"
    )


async def test_broker_killed_five_times_every_event_once_table_followed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="controller.service.table")  # the alerts, for the failure text
    rng = random.Random(9)
    (tmp_path / "broker").mkdir()
    with running_mosquitto(tmp_path / "broker", config=TABLE_PC_CONF) as broker:
        config = demo_config(
            seats=6, profile="roberts", broker_url=broker.url, workdir=tmp_path, table_id="crash"
        )
        registry = load_registry(EXAMPLE_REGISTRY)
        topics = Topics(config.mqtt.root, config.table.id)
        monitor = Monitor(make_client(MqttSection(url=broker.url), "crash-tap-unused"), topics)

        def tap(topic: str, payload: bytes) -> None:
            monitor.dispatch(topic, payload, time.monotonic())

        async with SimulatedTable(config, speed=1000.0, shuffle_s=8.0, seed=3) as table:
            mqtt = table.config.mqtt
            drivers = [
                open_driver(
                    device,
                    mqtt,
                    topics,
                    link=TappedLink(
                        mqtt, topics, device.id, identifier=client_id(mqtt, topics.table, device.id), tap=tap
                    ),
                )
                for device in table.config.drivers()
            ]
            tasks = [asyncio.create_task(d.run(), name=f"driver-{d.device_id}") for d in drivers]
            controller = Controller(table.config, registry)
            try:
                await controller.start()
                for driver in drivers:
                    await asyncio.wait_for(driver.broker_ready.wait(), 20)
                hands = TableHands(
                    cards=table,
                    shuffler=table.shuffler,
                    board=table.sensors,
                    monitor=monitor,
                    decks=registry.decks,
                    ids=DEVICE_IDS,
                    event_timeout_s=5.0,
                )
                dealer = VirtualDealer(
                    registry.decks, DealerSettings(seats=6, min_players=3, max_players=6), seed=11
                )
                kills: list[float] = []
                killed = asyncio.Event()
                killing = asyncio.create_task(killer(broker, controller, drivers, rng, kills, killed))
                played = await deal(hands, dealer, killed)
                await killing
                assert len(kills) == KILLS
                assert hands.report.unseen == {}, "the drivers did not report every act"
                alerts = [r.getMessage() for r in caplog.records if r.getMessage().startswith("alert ")]
                assert await caught_up(controller, drivers), describe(controller, drivers, alerts)
                machine = controller.engine_machine
                # Exactly once, counted at the engine: the events taken equal the events the
                # drivers published (a repeat is dropped; a lost one would be missing, or
                # reported lost, which marks it taken without counting it).
                taken = {d.device_id: machine.device_seqs.taken.get(d.device_id, 0) for d in drivers}
                emitted = {d.device_id: d.emitted for d in drivers}
                assert taken == emitted, describe(controller, drivers, alerts)
                state = controller.service.controller.engine.public_state()  # type: ignore[union-attr]
                assert state.hand == played, describe(controller, drivers, alerts)
                assert state.tracking
                assert [a.code for a in state.alerts if a.severity != "info"] == []
                alerts = [r.getMessage() for r in caplog.records if r.getMessage().startswith("alert ")]
                legal = [a for a in alerts if " raised " in a and "device_offline" not in a]
                assert legal == [], "alerts about legal play"
                log.warning(
                    "broker killed %d times (controller away %d times): %d hands, events %s, resent %s",
                    len(kills),
                    len(CONTROLLER_AWAY),
                    played,
                    {d.device_id: d.emitted for d in drivers},
                    {d.device_id: d.resent for d in drivers},
                )
            finally:
                await controller.stop()
                for task in tasks:
                    await stop_task(task)
                table.shuffler.unplug()
                table.reader.unplug()
