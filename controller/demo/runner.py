"""Run the demo: broker, simulators, drivers, engine service and the virtual dealer, then score.

Three processes share the work: this one runs the device simulators on their real transports,
the virtual dealer and an observer on the broker; a child runs the table controller exactly as
``tablectl run`` does (the engine service and the production drivers attached to the
simulators: :mod:`controller.demo.service_process`); another the embedded broker (or an external
one is used). The dealer acts only on the simulators' physical side.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import shutil
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import aiomqtt

from config.models import MqttSection, TableConfig, parse_listen
from config.registry import load_registry
from config.writer import render_toml
from contract.models import Alert, Profile
from contract.topics import Topics
from controller.demo.broker_process import BrokerProcess
from controller.demo.child_process import ChildProcess
from controller.demo.hands import TableHands, batches, same_motion
from controller.demo.monitor import Monitor
from controller.demo.pages import Pages, listen_addresses, start_floor
from controller.demo.rig import Rig, start_controller, start_rig
from controller.demo.scoring import Scorer
from controller.demo.service_process import ServiceProcess
from controller.demo.setup import (
    DEVICE_IDS,
    EXAMPLE_REGISTRY,
    HOLD_MS,
    HOLE_CARD_OFF_S,
    LEVEL_GUARD_S,
    MAX_ABSENCE_S,
    MAX_REBUY,
    REACTION_S,
    demo_config,
    demo_stakes,
    write_chip_registry,
)
from controller.demo.summary import Summary, Tally
from controller.demo.terminal import InputTerminal
from link.client import make_client
from simulators.dealer import DealerSettings, HandScript, InfeasibleMistake, Marker, Step, VirtualDealer
from simulators.dealer.chips import Structure, TableStakes

log = logging.getLogger(__name__)

#: How long the system may take to report one physical act (driver, broker) before it is noted.
EVENT_TIMEOUT_S: Final = 3.0
#: How long an alert may take after the act that completes its evidence.
ALERT_TIMEOUT_S: Final = 3.0
#: How long the demo's observer gets to connect to the broker and subscribe.
MONITOR_READY_S: Final = 5.0
#: How long every device and the controller get to come online.
STARTUP_TIMEOUT_S: Final = 20.0
#: Quiet time on the broker that means the engine has caught up at the end.
SETTLE_S: Final = 0.3
#: The first hand's mistake at a dealer's pace, in order of preference: made while dealing the
#: hole cards, seen within seconds of the first card.
FIRST_MISTAKES: Final = ("exposed_card", "misdeal_exposed_early", "extra_card")
#: How often the child processes are looked at while the dealer plays.
SUPERVISE_S: Final = 0.2
#: The table's configuration, written beside the journal it kept.
CONFIG_NAME: Final = "table.toml"
KEPT_CONFIG: Final = (
    "Written by tablectl demo: its table, for tablectl history / journal verify --config THIS FILE "
    "(the devices were simulators)."
)


class DemoError(RuntimeError):
    """The demo could not start (broker unreachable, a device never online, ...)."""


class ChildDied(DemoError):
    """One of the demo's child processes (broker, drivers, engine service) died."""


@dataclass(frozen=True)
class DemoOptions:
    """What ``tablectl demo`` was asked for."""

    hands: int = 0  # 0: until stopped
    seed: int | None = None
    speed: float = 1.0  # 0: as fast as the system keeps up
    mistake_rate: float = 0.2
    seats: int = 9
    min_players: int = 2
    max_players: int | None = None
    profile: Profile = "roberts"
    broker: str | None = None  # mqtt://host:port of an external broker; None: embedded
    table_id: str = "demo"
    noise: float = 0.0  # reader miss rate (the driver's hold time must absorb it)
    web: bool = False  # the pages on fixed ports (controller.demo.pages), opened in a browser
    chips: bool = True  # the table reads chips and the dealer bets with them
    structure: Structure | None = None  # None: from the seed (controller.demo.setup)
    tournament: bool = False  # blinds by levels on the clock (with chips)
    journal: Path | None = None  # where the journal is kept (None: a new folder, printed)
    codes: tuple[str, ...] | None = None  # only these mistakes (None: every code the table can raise)


class DemoRun:
    """One demo session; ``await run()`` returns the summary (also after ``stop`` is set)."""

    def __init__(
        self,
        options: DemoOptions,
        *,
        stop: asyncio.Event | None = None,
        on_change: Callable[[], None] | None = None,
        on_pages: Callable[[Pages], Awaitable[None]] | None = None,
        watch_state: bool = True,
    ) -> None:
        self.options = options
        self.stop = stop or asyncio.Event()
        self.on_change = on_change
        self.on_pages = on_pages
        self.watch_state = watch_state  # the live view shows the table's state
        self.pages: Pages | None = None
        self.tally = Tally()
        self.scorer = Scorer(self.tally)
        self.monitor: Monitor | None = None
        self.broker_url = options.broker or "embedded"
        self.seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
        self.interrupted = False
        self.stakes: TableStakes | None = (
            demo_stakes(self.seed, options.structure, tournament=options.tournament, fast=options.speed == 0)
            if options.chips
            else None
        )
        self.chip_values: dict[str, int] | None = None
        #: Where the journal and the table's configuration are kept (once :meth:`run` made it).
        self.journal_dir: Path | None = None
        #: Why the demo stopped when a child process died (None: it did not).
        self.died: str | None = None
        self._children: list[ChildProcess] = []

    async def run(self) -> Summary:
        """Play, then the summary; a :class:`DemoError` when the demo cannot start or one of
        its child processes dies. A journal folder the demo made for nothing (no hand played)
        is removed again."""
        made = self.options.journal is None
        self.journal_dir = journal_folder(self.options.journal)
        try:
            summary = await self._run(self.journal_dir)
        except BaseException:
            if made and self.tally.hands == 0:
                shutil.rmtree(self.journal_dir, ignore_errors=True)
            raise
        if self.died is not None:
            raise ChildDied(self.died)
        return summary

    async def _run(self, journal_dir: Path) -> Summary:
        started = time.monotonic()
        async with AsyncExitStack() as stack:
            url = await self._broker(stack)
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tablectl-demo-")))
            dealer_listen, floor_listen = listen_addresses(self.options.web)
            chips_path = None
            if self.stakes is not None:
                chips_path, self.chip_values = write_chip_registry(journal_dir)
            config = demo_config(
                seats=self.options.seats,
                profile=self.options.profile,
                broker_url=url,
                workdir=workdir,
                table_id=self.options.table_id,
                fast=self.options.speed == 0,
                display_listen=dealer_listen,
                stakes=self.stakes,
                chips_registry=chips_path,
                journal_dir=journal_dir,
            )
            # The table's configuration beside its journal: tablectl history, journal verify
            # and export work on it after the demo (docs/demo.md).
            (journal_dir / CONFIG_NAME).write_text(render_toml(config, KEPT_CONFIG), encoding="utf-8")
            registry = load_registry(EXAMPLE_REGISTRY)
            topics = Topics(config.mqtt.root, config.table.id)
            monitor = await self._monitor(stack, url, topics)
            log_level = logging.getLevelName(logging.getLogger().level)
            rig: Rig = await start_rig(
                stack,
                config,
                speed=self.options.speed,
                seed=self.seed,
                noise=self.options.noise,
                log_level=log_level,
            )
            self._children.append(rig.drivers)
            # Drivers first: the engine then starts from their retained ``online`` statuses.
            await self._wait_online(monitor, rig.device_ids, controller=False)
            controller = await start_controller(stack, rig.config, log_level=log_level)
            self._children.append(controller)
            await self._wait_online(monitor, (), controller=True, service=controller)
            # From here on a child that dies stops the demo (the supervisor goes first when
            # the stack unwinds: the children's own stops are no deaths).
            supervisor = asyncio.create_task(self._supervise(), name="demo-supervisor")
            stack.push_async_callback(_cancel, supervisor)
            dealer_page = _dealer_page(rig.config)
            self.pages = await start_floor(stack, dealer_page, url, workdir, floor_listen, config.table.id)
            if self.on_pages is not None:
                await self.on_pages(self.pages)
            hands = TableHands(
                cards=rig.cards,
                shuffler=rig.shuffler,
                board=rig.board,
                monitor=monitor,
                decks=registry.decks,
                ids=DEVICE_IDS,
                event_timeout_s=EVENT_TIMEOUT_S,
                inputs=InputTerminal(config.mqtt, topics),
            )
            try:
                await self._deal(hands, registry.decks)
            finally:
                log.info("dealer done; settling and shutting down")
                await self._settle(monitor)
                self.scorer.close_hand()
                for kind, count in sorted(hands.report.unseen.items()):
                    self.tally.notes.append(f"{count} {kind} steps never reported by a driver")
                for kind, spent in sorted(hands.report.spent_s.items()):
                    count = hands.report.counts[kind]
                    log.info("%s: %d steps, %.1f ms each until reported", kind, count, 1000 * spent / count)
                self.tally.seconds = time.monotonic() - started
        return Summary.from_tally(
            self.tally,
            seed=self.seed,
            profile=self.options.profile,
            broker=self.broker_url,
            game=_game(self.stakes),
            journal=str(journal_dir),
        )

    # ------------------------------------------------------------------ set-up

    async def _broker(self, stack: AsyncExitStack) -> str:
        if self.options.broker is not None:
            return self.options.broker
        broker = await stack.enter_async_context(BrokerProcess())
        self._children.append(broker)
        self.broker_url = broker.url
        return broker.url

    def _dead_child(self) -> str | None:
        """Why the demo must stop: a child process that exited while it should run."""
        for child in self._children:
            status = child.exited
            if status is None:
                continue
            how = f"exit status {status}" if status >= 0 else f"killed by {signal.Signals(-status).name}"
            return (
                f"the {child.what} (process {child.pid}) stopped unexpectedly ({how}); the demo "
                "stopped too (its log is above)"
            )
        return None

    async def _supervise(self) -> None:
        """Watch the children while the dealer plays; a death stops the dealer at once."""
        while self.died is None:
            self.died = self._dead_child()
            if self.died is not None:
                self.stop.set()  # the demo's exit line says why
                return
            await asyncio.sleep(SUPERVISE_S)

    async def _monitor(self, stack: AsyncExitStack, url: str, topics: Topics) -> Monitor:
        client = make_client(MqttSection(url=url), f"tablectl-demo-monitor-{secrets.token_hex(4)}")
        monitor = Monitor(client, topics, on_alert=self._on_alert, watch_state=self.watch_state)
        self.monitor = monitor
        # The monitor connects (and, after a lost connection, connects and subscribes again)
        # in its own task; the first connection's failure is the demo's error.
        task = asyncio.create_task(monitor.run(), name="demo-monitor")
        stack.push_async_callback(_cancel, task)
        ready = asyncio.create_task(monitor.ready.wait())
        try:
            await asyncio.wait({task, ready}, timeout=MONITOR_READY_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if task.done():
            error = task.exception()
            if isinstance(error, aiomqtt.MqttError):
                raise DemoError(f"broker {url}: {error}") from None
            raise DemoError(f"broker {url}: the observer stopped ({error})") from error
        if not monitor.ready.is_set():
            raise DemoError(f"broker {url}: not subscribed within {MONITOR_READY_S:g} s")
        return monitor

    async def _wait_online(
        self,
        monitor: Monitor,
        devices: tuple[str, ...],
        *,
        controller: bool,
        service: ServiceProcess | None = None,
    ) -> None:
        """Until what was just started is online. A Ctrl-C meanwhile does not cut it short: a
        child stopped while its MQTT clients connect or subscribe leaves aiomqtt's tasks and
        sockets behind (tracebacks at its exit), so the demo stops once they are online, a
        second or two later, with :class:`DemoError` ("stopped during start-up")."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if service is not None and service.exited is not None:
                # It logged why (a display port taken, a journal that cannot be opened, ...).
                raise DemoError("the engine service stopped during start-up (see the log above)")
            dead = self._dead_child()
            if dead is not None:
                raise ChildDied(dead.replace("stopped unexpectedly", "stopped during start-up"))
            view = monitor.view
            waiting = [d for d in devices if (s := view.devices.get(d)) is None or s.state != "online"]
            if controller and (view.controller is None or view.controller.state != "online"):
                waiting.append("controller")
            if not waiting:
                if self.stop.is_set():
                    raise DemoError("stopped during start-up")
                return
            if time.monotonic() > deadline:
                if self.stop.is_set():
                    raise DemoError("stopped during start-up")
                raise DemoError(f"not online after {STARTUP_TIMEOUT_S:g} s: {', '.join(waiting)}")
            await asyncio.sleep(0.05)

    def _on_alert(self, alert: Alert, arrived: float) -> None:
        self.scorer.alert(alert, arrived)
        if self.on_change is not None:
            self.on_change()

    # ------------------------------------------------------------------ the dealer

    async def _deal(self, hands: TableHands, decks: Mapping[str, Mapping[str, str]]) -> None:
        options = self.options
        pace = "fast" if options.speed == 0 else "paced"
        chips = self.stakes is not None
        try:
            settings = self._dealer_settings(pace, chips)
        except ValueError as error:
            raise DemoError(f"--mistakes: {error}") from None
        dealer = VirtualDealer(decks, settings, seed=self.seed)
        terminal = hands.inputs
        played = 0
        while not self.stop.is_set() and (options.hands == 0 or played < options.hands):
            if isinstance(terminal, InputTerminal):
                dealer.clock_s = terminal.clock_s()  # the tournament clock, as the floor's shows
            script = first_hand(dealer) if played == 0 and options.speed > 0 else dealer.next_hand()
            # What the engine takes in any order is done at once, as a dealer does it (a whole
            # table swept off, a folded hand pushed to the muck, a flop turned).
            # A mistake's alert is awaited before the next act, unless that act finishes the same
            # motion (the other card of a fold pushed to the muck): a dealer's hands do not stop
            # mid-motion for the controller (one behind after an outage made a real half-done
            # fold of a mistaken muck: fold_incomplete, a false alarm of the demo's own making).
            awaiting: tuple[Step, asyncio.Event] | None = None
            for run in batches(script.steps):
                step = run[-1]  # a step that commits a mistake is always alone in its run
                if awaiting is not None and not same_motion(awaiting[0], run[0]):
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(awaiting[1].wait(), ALERT_TIMEOUT_S)
                    awaiting = None
                if self.stop.is_set():
                    self.interrupted = True
                    return
                pause = run[0].pause_s
                if options.speed > 0 and pause > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.stop.wait(), pause / options.speed)
                    if self.stop.is_set():
                        self.interrupted = True
                        return
                acted = await hands.do_batch(run)
                self.tally.steps += len(run)
                if step.mistake is not None:
                    awaiting = (step, self.scorer.expect(step.mistake, acted))
                if isinstance(step, Marker) and step.kind == "hand_end":
                    played += 1
                    self.tally.hands = played
                    self.scorer.close_hand()
                if self.on_change is not None:
                    self.on_change()
            if awaiting is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(awaiting[1].wait(), ALERT_TIMEOUT_S)
        if self.stop.is_set() and (options.hands == 0 or played < options.hands):
            # (stopped between two hands: the loop's test saw it, not the steps' own checks; a
            # Ctrl-C during a hand's last step made the demo exit 0 as if it had played them all)
            self.interrupted = True

    def _dealer_settings(self, pace: str, chips: bool) -> DealerSettings:
        options = self.options
        return DealerSettings(
            seats=options.seats,
            min_players=options.min_players,
            max_players=options.max_players,
            profile=options.profile,
            mistake_rate=options.mistake_rate,
            stakes=self.stakes,
            chip_values=self.chip_values,
            hole_card_off_s=HOLE_CARD_OFF_S[pace],
            reaction_s=REACTION_S[pace],
            hold_s=HOLD_MS[pace] / 1000,
            # the house's session rules of the demo table's configuration (with chips: its
            # stacks are read)
            max_rebuy=MAX_REBUY if chips else 0,
            max_absence_s=MAX_ABSENCE_S[pace] if chips else None,
            level_guard_s=LEVEL_GUARD_S[pace] / (options.speed or 1.0),
            codes=options.codes,
        )

    async def _settle(self, monitor: Monitor) -> None:
        """Give the engine the time to catch up: wait for a quiet broker (bounded)."""
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            if time.monotonic() - monitor.last_message >= SETTLE_S:
                return
            await asyncio.sleep(0.05)


def first_hand(dealer: VirtualDealer) -> HandScript:
    """The first hand at a dealer's pace: with mistakes on, one early in the deal (the first
    that can be made at this table of :data:`FIRST_MISTAKES`), so that a person watching for the
    first time sees an alert and its remedy within the first minute, not after several hands of
    half a minute each. Flat out (``--speed 0``) every hand is drawn, so seeded runs and their
    figures stay as they were."""
    if dealer.settings.mistake_rate > 0:
        for code in FIRST_MISTAKES:
            if code not in dealer.allowed_codes():
                continue
            with contextlib.suppress(InfeasibleMistake):
                return dealer.next_hand(code)
    return dealer.next_hand()


def journal_folder(asked: Path | None) -> Path:
    """The folder the demo keeps its journal in: ``asked`` (made if missing; one that already
    holds a journal is refused, since the engine would recover that table, not start a new one),
    or a new folder under the system's temporary directory."""
    if asked is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return Path(tempfile.mkdtemp(prefix=f"tablectl-demo-{stamp}-"))
    try:
        asked.mkdir(parents=True, exist_ok=True)
        taken = sorted(p.name for p in asked.iterdir() if p.name.startswith("journal"))
    except OSError as error:
        raise DemoError(f"--journal {asked}: {error.strerror or error}") from None
    if taken:
        raise DemoError(
            f"--journal {asked}: already holds a journal ({taken[0]}): give a new or empty folder"
        )
    return asked


def _dealer_page(config: TableConfig) -> str:
    """The address of the dealer's display the controller serves (none: "")."""
    from controller.web.server import url_of  # the web stack is loaded where a page is served

    listen = config.display.listen
    if not listen:
        return ""
    host, port = parse_listen(listen)
    return url_of(host, port)


def _game(stakes: TableStakes | None) -> str:
    """The game played, in a few words."""
    if stakes is None:
        return "no chips"
    if stakes.levels:
        first, last = stakes.levels[0], stakes.levels[-1]
        return (
            f"{stakes.structure} tournament, {len(stakes.levels)} levels of "
            f"{first.minutes:g} min, {first.small_blind}/{first.big_blind} to "
            f"{last.small_blind}/{last.big_blind}"
        )
    game = f"{stakes.structure} {stakes.small_blind}/{stakes.big_blind}"
    if stakes.ante:
        game += f" ante {stakes.ante}"
    if stakes.rake_percent:
        game += f", rake {stakes.rake_percent:g} %" + (f" cap {stakes.rake_cap}" if stakes.rake_cap else "")
    return game


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
