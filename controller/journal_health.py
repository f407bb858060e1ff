"""The controller's own alert while the journal cannot be written: ``journal_fault``.

The engine raises the table's irregularities; this one is about the controller itself, so it is
not counted among the engine's alerts (whose ids follow the hand): its id is always
``journal``. It is raised when the journal goes into a fault and resolved when the journal is
written again; the retained state lists it among the active alerts meanwhile, and the lamp
follows it like any warning.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from contract.models import Alert, AlertStatus, Profile

CODE: Final = "journal_fault"
ALERT_ID: Final = "journal"
REMEDY: Final = (
    "Play goes on and alerts still work, but this part of the session is not being recorded.",
    "Call a technician: the journal's disk is full, read-only or failing.",
)
RULE: Final = "Audit record"


class JournalHealth:
    """Turns the journal's fault state into alert changes, once per change."""

    def __init__(self, profile: Profile) -> None:
        self.profile: Profile = profile
        #: The active alert (None: the journal is fine).
        self.alert: Alert | None = None

    def change(self, fault: str | None, *, hand: int, now: datetime) -> Alert | None:
        """The alert change ``fault`` (None: writable) calls for, if any."""
        if fault is not None and (self.alert is None or fault not in self.alert.message):
            status: AlertStatus = "raised" if self.alert is None else "updated"
            message = (
                f"The table's journal cannot be written ({fault}). The table goes on and alerts "
                "still work; received messages are held in memory and not acknowledged until "
                "the journal takes them."
            )
            self.alert = self._alert(status, message, hand, now)
            return self.alert
        if fault is None and self.alert is not None:
            resolved = self._alert(
                "resolved", "The table's journal is written again.", self.alert.hand, now
            )
            self.alert = None
            return resolved
        return None

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
