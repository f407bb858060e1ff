"""From input reports to contract events: one event per change, every key press exactly once.

Pure logic, no I/O. The tracker remembers the state it last *published* across sessions, so after
a replug it publishes only what changed while the board was away (plus the button, which every
session states once); key numbering restarts with every session because the board's does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contract.models import BlindEvent, ButtonEvent, EventBase, KeyEvent, SeatEvent
from drivers.sensors.protocol import MAX_SEATS, InputReport, KeyPress


@dataclass(frozen=True, slots=True)
class Change:
    """One event to publish: its contract type and fields (seq and ts are the driver's), and
    for a key press the board's number of it (to acknowledge)."""

    event: type[EventBase]
    fields: dict[str, Any] = field(hash=False)
    key_number: int | None = None


def key_after(number: int, reference: int) -> bool:
    """True when key number ``number`` was pressed after ``reference`` (numbers wrap at 256)."""
    return 0 < (number - reference) & 0xFF < 128


class ReportTracker:
    """Turns successive input reports into the changes to publish."""

    def __init__(self) -> None:
        self.button: int | None = None
        self.blinds: frozenset[int] = frozenset()
        self.occupied: frozenset[int] = frozenset()
        self._last_key: int | None = None
        self._button_stated = False

    def start_session(self) -> None:
        """A new session: the board's key numbers start afresh; the button is stated again."""
        self._last_key = None
        self._button_stated = False

    def update(self, report: InputReport) -> list[Change]:
        """The changes ``report`` brings, in order: button, seats, blinds, then key presses."""
        changes: list[Change] = []
        if report.button != self.button or not self._button_stated:
            changes.append(Change(ButtonEvent, {"seat": report.button}))
            self.button = report.button
            self._button_stated = True
        for seat in range(1, MAX_SEATS + 1):
            occupied = seat in report.occupied
            if occupied != (seat in self.occupied):
                changes.append(Change(SeatEvent, {"seat": seat, "occupied": occupied}))
        for seat in range(1, MAX_SEATS + 1):
            present = seat in report.blinds
            if present != (seat in self.blinds):
                changes.append(Change(BlindEvent, {"seat": seat, "present": present}))
        self.occupied = report.occupied
        self.blinds = report.blinds
        changes.extend(
            Change(KeyEvent, {"key": press.key, "seat": press.seat}, press.number)
            for press in self.new_keys(report)
        )
        return changes

    def new_keys(self, report: InputReport) -> list[KeyPress]:
        """The presses of ``report`` not seen before (the board resends until acknowledged)."""
        fresh = []
        for press in report.keys:
            if self._last_key is None or key_after(press.number, self._last_key):
                fresh.append(press)
                self._last_key = press.number
        return fresh

    @property
    def last_key(self) -> int | None:
        """The number of the last key press published in this session (to acknowledge)."""
        return self._last_key
