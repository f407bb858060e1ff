"""Alert bookkeeping: raise, update, acknowledge and resolve, with deterministic ids.

An :class:`AlertBook` is a small mutable working copy used inside one step; :meth:`copy` gives
the next step its own. Alerts are built with ``model_construct`` (our own output, correct by
construction) because validation would cost more than the rest of the step.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeAlias

from contract.models import Alert, AlertStatus, Profile, Severity
from engine.catalogue import CATALOGUE

Scope: TypeAlias = Literal["hand", "misdeal", "device", "deck", "money"]


@dataclass(frozen=True, slots=True)
class AlertMeta:
    """What the engine needs to know about an active alert beyond its wire form."""

    scope: Scope
    key: str | None = None  # the device or deck the alert is about


class AlertBook:
    """Active alerts (id -> latest wire form) plus the changes produced in the current step."""

    __slots__ = ("active", "changes", "counter", "meta", "profile")

    def __init__(self, profile: Profile) -> None:
        self.profile: Profile = profile
        self.active: dict[str, Alert] = {}
        self.meta: dict[str, AlertMeta] = {}
        self.counter = 0
        self.changes: list[Alert] = []

    def copy(self) -> AlertBook:
        """A copy of the active alerts, with no changes yet."""
        book = AlertBook(self.profile)
        book.active = self.active.copy()
        book.meta = self.meta.copy()
        book.counter = self.counter
        return book

    def raise_alert(
        self,
        *,
        code: str,
        ts: datetime,
        hand: int,
        message: str,
        seat: int | None = None,
        severity: Severity | None = None,
        remedy: tuple[str, ...] | list[str] | None = None,
        rule: str | None = None,
        scope: Scope = "hand",
        key: str | None = None,
        device: str | None = None,
    ) -> str:
        """Raise a new alert; the remedy, rule and severity default to the catalogue's."""
        entry = CATALOGUE[code]
        self.counter += 1
        alert_id = f"{hand}-{self.counter}"
        alert = Alert.model_construct(
            v=1,
            id=alert_id,
            ts=ts,
            hand=hand,
            code=code,
            severity=severity or entry.severity_for(self.profile),
            seat=seat,
            status="raised",
            message=message,
            remedy=list(remedy if remedy is not None else entry.remedy_for(self.profile)),
            rule=rule if rule is not None else entry.rule_for(self.profile),
            profile=self.profile,
            device=device,
        )
        self.active[alert_id] = alert
        self.meta[alert_id] = AlertMeta(scope=scope, key=key)
        self.changes.append(alert)
        return alert_id

    def _change(self, alert_id: str, ts: datetime, status: AlertStatus, **fields: object) -> None:
        alert = self.active.get(alert_id)
        if alert is None:
            return
        changed = alert.model_copy(update={"status": status, "ts": ts, **fields})
        self.changes.append(changed)
        if status == "resolved":
            del self.active[alert_id]
            del self.meta[alert_id]
        else:
            self.active[alert_id] = changed

    def update(self, alert_id: str, ts: datetime, **fields: object) -> None:
        """The alert changed (severity, message, remedy): publish it as ``updated``."""
        self._change(alert_id, ts, "updated", **fields)

    def resolve(self, alert_id: str | None, ts: datetime) -> None:
        if alert_id is not None:
            self._change(alert_id, ts, "resolved")

    def acknowledge(self, ts: datetime, seat: int | None, alert_id: str | None = None) -> None:
        """Keypad ``ack``: every active alert not yet acknowledged (only the seat's, if given).

        With ``alert_id`` (the display's per-alert Acknowledge) only that alert, if it is active
        and not yet acknowledged; an unknown or resolved id changes nothing.
        """
        if alert_id is not None:
            alert = self.active.get(alert_id)
            if alert is not None and alert.status != "acknowledged":
                self._change(alert_id, ts, "acknowledged")
            return
        for active_id, alert in list(self.active.items()):
            if alert.status == "acknowledged":
                continue
            if seat is not None and alert.seat not in (None, seat):
                continue
            self._change(active_id, ts, "acknowledged")

    def resolve_scope(self, scope: Scope, ts: datetime, key: str | None = None) -> None:
        """Resolve every active alert of a scope (and key, when given)."""
        for alert_id, meta in list(self.meta.items()):
            if meta.scope == scope and (key is None or meta.key == key):
                self._change(alert_id, ts, "resolved")

    def find(self, code: str, key: str | None = None) -> str | None:
        """The id of the active alert with this code (and key), if any."""
        for alert_id, alert in self.active.items():
            if alert.code == code and (key is None or self.meta[alert_id].key == key):
                return alert_id
        return None
