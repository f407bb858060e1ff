"""The engine's public API: settings, what the shell feeds in, and what comes back out.

The shell (``controller.service.network``) parses MQTT messages into contract models, stamps each with its
own clock as ``received`` and feeds them one at a time to :func:`engine.step.step` (or to the
:class:`engine.step.Engine` holder). The core never reads a clock, never does I/O and never logs a
hole card; the same sequence of :data:`Received` always yields the same :class:`Outputs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple, TypeAlias

from config.chips import ChipRegistry
from config.models import TableConfig
from config.registry import DeckRegistry
from contract.cards import zone_stack_seat
from contract.models import (
    Alert,
    DealerInput,
    DeviceCommand,
    DeviceEvent,
    HandResult,
    Profile,
    PublicState,
    Status,
)
from engine.betting.terms import NoBetShowsFirst, OddChip, Stakes
from engine.session import Level, SessionRules


@dataclass(frozen=True)
class EngineSettings:
    """What the engine needs to know about the table; fixed for the life of an engine."""

    seats: int  # seats 1..seats, clockwise
    profile: Profile  # "roberts" | "tda"
    registry: DeckRegistry
    action_feed: bool = False
    odd_chip: OddChip = "first_shown"
    #: The dealer's reaction time (seconds of event time): cards dealt this soon after a critical
    #: alert belong to the same mistake, not to a failure to follow its remedy.
    reaction_s: float = 2.0
    #: The table's chips (None: no chip reading) and stakes (None: the betting is not followed).
    chips: ChipRegistry | None = None
    stakes: Stakes | None = None
    no_bet_shows_first: NoBetShowsFirst = "first_to_act"
    #: A live hole card read by no antenna this long (seconds of event time) is off the table.
    hole_card_off_s: float = 10.0
    #: Who may say what: the kind (``rfid``, ``sensors``, ``shuffler``) of each device the
    #: configuration declares; with ``declared_only`` no other device is listened to.
    device_kinds: Mapping[str, str] = field(default_factory=dict)
    declared_only: bool = False
    #: Events shown missing and not come again this long (seconds of event time) are lost.
    gap_wait_s: float = 10.0
    #: The session's rules: buy-in limits, the longest absence, a tournament's levels.
    session: SessionRules = field(default_factory=SessionRules)

    @classmethod
    def from_config(
        cls, config: TableConfig, registry: DeckRegistry, chips: ChipRegistry | None = None
    ) -> EngineSettings:
        """Settings from a loaded table configuration, its deck registry and chip registry."""
        stakes = None
        if config.stakes is not None:
            s = config.stakes
            stakes = Stakes(
                structure=s.structure,
                small_blind=s.small_blind,
                big_blind=s.big_blind,
                ante=s.ante,
                rake_percent=s.rake_percent,
                rake_cap=s.rake_cap,
                straddle=s.straddle,
            )
        return cls(
            session=_session_rules(config),
            seats=config.table.seats,
            profile=config.table.profile,
            registry=registry,
            action_feed=config.table.action_feed,
            odd_chip=config.table.odd_chip,
            reaction_s=config.table.reaction_s,
            chips=chips,
            stakes=stakes,
            no_bet_shows_first=config.table.no_bet_shows_first,
            hole_card_off_s=config.table.hole_card_off_s,
            device_kinds=config.device_kinds(),
            declared_only=config.table.declared_devices_only,
            gap_wait_s=config.table.gap_wait_s,
        )


def _session_rules(config: TableConfig) -> SessionRules:
    """The session's rules from ``[stakes]``, ``[table] max_absence_s`` and the antennas that
    cover ``stack:N`` zones."""
    stack_seats: set[int] = set()
    for device in config.devices:
        for zone in getattr(device, "antennas", {}).values():
            seat = zone_stack_seat(zone)
            if seat is not None:
                stack_seats.add(seat)
    stakes = config.stakes
    return SessionRules(
        min_buy_in=stakes.min_buy_in if stakes is not None else 0,
        max_rebuy=stakes.max_rebuy if stakes is not None else 0,
        max_absence_s=config.table.max_absence_s,
        levels=tuple(
            Level(lv.small_blind, lv.big_blind, lv.ante, lv.minutes)
            for lv in (stakes.levels if stakes is not None else ())
        ),
        stack_seats=frozenset(stack_seats),
    )


# The three messages the shell makes for every record it ingests or replays are named tuples, not
# frozen dataclasses: a frozen dataclass is set up field by field through object.__setattr__,
# 6,100 instructions against 2,000 (the audit's replay 1.8 % fewer a record by callgrind,
# benchmarks/replay_instructions.py; the engine core reads their fields 0.6 % slower).
class DeviceEventReceived(NamedTuple):
    """A device event parsed from ``{root}/{table}/dev/{device}/event``."""

    device: str
    event: DeviceEvent
    received: datetime


class DeviceStatusReceived(NamedTuple):
    """A device status parsed from ``{root}/{table}/dev/{device}/status``."""

    device: str
    status: Status
    received: datetime


class InputReceived(NamedTuple):
    """A dealer input (key or betting action) parsed from ``{root}/{table}/input``."""

    input: DealerInput
    received: datetime


@dataclass(frozen=True)
class PayloadRejected:
    """Payloads the shell could not take on one topic; the engine raises (then updates) one
    ``bad_payload`` warning per topic.

    The shell reports a topic's rejected payloads at most once a second, not one by one:
    ``count`` is how many it has rejected on that topic so far, ``error`` why the latest was
    (already bounded and escaped, never the payload's own text).
    """

    topic: str
    device: str | None
    error: str
    received: datetime
    count: int = 1


@dataclass(frozen=True)
class TimeReached:
    """No message came, and event time ``now`` has come by the shell's clock (docs/engine.md,
    "Time on a quiet table"): what falls due by then (:func:`engine.step.next_due`) is done as if
    a message of that time had arrived. The shell journals it like a message, so a replay gives
    the same outputs; a time the engine's clock has passed already changes nothing."""

    now: datetime


Received: TypeAlias = (
    DeviceEventReceived | DeviceStatusReceived | InputReceived | PayloadRejected | TimeReached
)


class Outputs(NamedTuple):
    """What one step produced: alert changes in order, the new public state if it changed,
    commands to devices, and the result of a hand that ended.

    (Immutable; a named tuple because one is built per message and that is the hot path.)
    """

    alerts: tuple[Alert, ...]
    state: PublicState | None
    commands: tuple[tuple[str, DeviceCommand], ...] = ()
    hands: tuple[HandResult, ...] = ()
