"""The controller's own alert while the journal cannot be written: ``journal_fault``.

The engine raises the table's irregularities; this one is about the controller itself, so it is
not counted among the engine's alerts (whose ids follow the hand): its id is always
``journal``. It is raised when the journal goes into a fault and resolved when the journal is
written again; the retained state lists it among the active alerts meanwhile, and the lamp
follows it like any warning. It says how many records are not yet on disk (held in memory,
their messages acknowledged), and is updated with that count at most every
:data:`UPDATE_EVERY` while it changes.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from contract.models import Alert, AlertStatus, Profile

CODE: Final = "journal_fault"
ALERT_ID: Final = "journal"
REMEDY: Final = (
    "Play goes on and alerts still work, but this part of the session is not being recorded.",
    "Call a technician: the journal's disk is full, read-only or failing.",
)
RULE: Final = "Audit record"
#: How often the alert may be updated with a new count of records not yet on disk.
UPDATE_EVERY: Final = timedelta(seconds=10)


class JournalHealth:
    """Turns the journal's fault state into alert changes, once per change."""

    def __init__(self, profile: Profile) -> None:
        self.profile: Profile = profile
        #: The active alert (None: the journal is fine).
        self.alert: Alert | None = None
        self._fault: str | None = None
        self._held = 0

    def change(self, fault: str | None, *, hand: int, now: datetime, held: int = 0) -> Alert | None:
        """The alert change ``fault`` (None: writable) calls for, if any; ``held``: records not
        yet on disk."""
        if fault is not None and (self.alert is None or fault != self._fault):
            status: AlertStatus = "raised" if self.alert is None else "updated"
            self._fault = fault
            self.alert = self._alert(status, self._message(fault, held), hand, now)
            return self.alert
        if fault is None and self.alert is not None:
            resolved = self._alert("resolved", "The table's journal is written again.", self.alert.hand, now)
            self.alert = None
            self._fault = None
            return resolved
        return None

    def count(self, held: int, *, now: datetime) -> Alert | None:
        """The active alert updated with a new count of records not yet on disk, at most every
        :data:`UPDATE_EVERY`."""
        alert, fault = self.alert, self._fault
        if alert is None or fault is None or held == self._held or now - alert.ts < UPDATE_EVERY:
            return None
        self.alert = self._alert("updated", self._message(fault, held), alert.hand, now)
        return self.alert

    def _message(self, fault: str, held: int) -> str:
        self._held = held
        return (
            f"The table's journal cannot be written ({fault}). The table goes on and alerts "
            f"still work; {held} records are not yet on disk: they are held in memory and "
            "written once the disk has room."
        )

    def _alert(self, status: AlertStatus, message: str, hand: int, now: datetime) -> Alert:
        return Alert(
            id=ALERT_ID,
            ts=now,
            hand=hand,
            code=CODE,
            severity="warning",
            status=status,
            message=message,
            remedy=list(REMEDY),
            rule=RULE,
            profile=self.profile,
        )
