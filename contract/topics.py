"""The one place that builds and parses topic names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

DEFAULT_ROOT: Final = "holdem"
_SEGMENT_RE: Final = re.compile(r"^[A-Za-z0-9_.-]+$")

DeviceTopicKind: TypeAlias = Literal["event", "status", "cmd"]
#: The public topics of a table, as the floor console reads them for every table under a root.
FloorTopicKind: TypeAlias = Literal["controller/status", "state", "alerts", "hands"]
FLOOR_KINDS: Final[tuple[FloorTopicKind, ...]] = ("controller/status", "state", "alerts", "hands")


def check_segment(what: str, value: str) -> str:
    """Reject a topic segment that would break the topic tree (``/``, ``+``, ``#``, empty)."""
    if not _SEGMENT_RE.match(value):
        raise ValueError(f"{what} {value!r} must be letters, digits, '_', '.' or '-'")
    return value


@dataclass(frozen=True, slots=True)
class DeviceTopic:
    """A parsed ``{root}/{table}/dev/{device}/{kind}`` topic."""

    device: str
    kind: DeviceTopicKind


@dataclass(frozen=True, slots=True)
class Topics:
    """Topic names of one table: ``Topics("holdem", "t1").alerts == "holdem/t1/alerts"``."""

    root: str
    table: str
    #: ``{root}/{table}`` and ``{root}/{table}/dev/``, made once: every received message is
    #: checked against them.
    _base: str = field(init=False, repr=False, compare=False)
    _device_prefix: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for part in self.root.split("/"):
            check_segment("topic root", part)
        check_segment("table id", self.table)
        object.__setattr__(self, "_base", f"{self.root}/{self.table}")
        object.__setattr__(self, "_device_prefix", f"{self._base}/dev/")

    @property
    def base(self) -> str:
        return self._base

    def device_event(self, device: str) -> str:
        return f"{self.base}/dev/{check_segment('device id', device)}/event"

    def device_status(self, device: str) -> str:
        return f"{self.base}/dev/{check_segment('device id', device)}/status"

    def device_cmd(self, device: str) -> str:
        return f"{self.base}/dev/{check_segment('device id', device)}/cmd"

    @property
    def alerts(self) -> str:
        return f"{self.base}/alerts"

    @property
    def state(self) -> str:
        return f"{self.base}/state"

    @property
    def hands(self) -> str:
        return f"{self.base}/hands"

    @property
    def controller_status(self) -> str:
        return f"{self.base}/controller/status"

    @property
    def input(self) -> str:
        return f"{self.base}/input"

    # Subscription filters of the engine service.
    @property
    def all_device_events(self) -> str:
        return f"{self.base}/dev/+/event"

    @property
    def all_device_status(self) -> str:
        return f"{self.base}/dev/+/status"

    def parse_device_topic(self, topic: str) -> DeviceTopic | None:
        """The device and kind of a device topic of this table, or None for any other topic.

        Brokers may deliver messages for filters of other sessions (amqtt does on connect), so
        every receiver checks the topic it got rather than trusting its subscription.
        """
        prefix = self._device_prefix
        if not topic.startswith(prefix):
            return None
        device, _, kind = topic[len(prefix) :].partition("/")
        if not _SEGMENT_RE.match(device):
            return None
        if kind == "event":
            return DeviceTopic(device=device, kind="event")
        if kind == "status":
            return DeviceTopic(device=device, kind="status")
        if kind == "cmd":
            return DeviceTopic(device=device, kind="cmd")
        return None


def floor_filters(root: str) -> tuple[str, ...]:
    """The subscriptions of a reader of every table under ``root`` (the floor console): public
    topics only, never ``dev/``, where card identities travel."""
    for part in root.split("/"):
        check_segment("topic root", part)
    return tuple(f"{root}/+/{kind}" for kind in FLOOR_KINDS)


def parse_floor_topic(root: str, topic: str) -> tuple[str, FloorTopicKind] | None:
    """``{root}/{table}/{kind}`` -> (table, kind) for the public kinds; None for anything else."""
    prefix = f"{root}/"
    if not topic.startswith(prefix):
        return None
    table, _, rest = topic[len(prefix) :].partition("/")
    if not _SEGMENT_RE.match(table):
        return None
    for kind in FLOOR_KINDS:
        if rest == kind:
            return table, kind
    return None
