"""The floor's picture of every table (pure: no I/O, no clock; times are given).

Each table is known from its retained ``controller/status`` and ``state`` and from its alert
changes. A table's *attention rank* orders the floor so that a supervisor sees first the tables
that need him: a critical alert (unacknowledged first), then an unacknowledged warning, then a
controller that is not online, a hand not tracked or a device in trouble, acknowledged warnings,
information, quiet. The ranks fall into the *groups* the overview shows under their headings
(:data:`GROUPS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from contract.models import Alert, HandResult, PublicState, Status
from controller.display.view import alert_json, hand_brief, sorted_alerts

#: Attention levels, most urgent first: (rank, label).
CRITICAL: Final = (0, "critical")
CRITICAL_ACKNOWLEDGED: Final = (1, "critical acknowledged")
WARNING: Final = (2, "warning")
OFFLINE: Final = (3, "offline")
DEVICES: Final = (4, "devices")
WARNING_ACKNOWLEDGED: Final = (5, "warning acknowledged")
INFO: Final = (6, "info")
QUIET: Final = (7, "ok")
#: The overview's groups, in order, by attention rank: (group, the ranks in it).
GROUPS: Final = (
    ("critical", (0, 1)),
    ("warning", (2,)),
    ("offline", (3,)),
    ("devices", (4,)),
    ("handled", (5, 6)),
    ("quiet", (7,)),
)
_GROUP_OF_RANK: Final = {rank: group for group, ranks in GROUPS for rank in ranks}
DEVICE_CODES: Final = ("device_offline", "device_fault", "bad_payload")
#: How many resolved alerts a table remembers (see ``TableSummary.resolved``).
RESOLVED_KEPT: Final = 64


def iso(ms: float | None) -> str | None:
    """Milliseconds since the epoch as RFC 3339 UTC (``...Z``)."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class TableSummary:
    """What the floor knows about one table."""

    id: str
    controller: Status | None = None
    state: PublicState | None = None
    alerts: dict[str, Alert] = field(default_factory=dict)
    last_hand: HandResult | None = None
    #: When the console last heard from the table (ms since the epoch, the console's clock).
    heard_ms: float = 0.0
    changes: int = 0
    #: The alerts resolved lately (id -> when), so that an older change of one, come late by a
    #: slower path, does not bring it back (the newest ``RESOLVED_KEPT``).
    resolved: dict[str, datetime] = field(default_factory=dict)

    def attention(self) -> tuple[int, str]:
        active = list(self.alerts.values())

        def having(severity: str, acknowledged: bool) -> bool:
            return any(
                a.severity == severity and (a.status == "acknowledged") == acknowledged for a in active
            )

        if having("critical", acknowledged=False):
            return CRITICAL
        if having("critical", acknowledged=True):
            return CRITICAL_ACKNOWLEDGED
        if having("warning", acknowledged=False):
            return WARNING
        if self.controller is None or self.controller.state != "online":
            return OFFLINE
        if (self.state is not None and not self.state.tracking) or any(
            a.code in DEVICE_CODES for a in active
        ):
            return DEVICES
        if having("warning", acknowledged=True):
            return WARNING_ACKNOWLEDGED
        if active:
            return INFO
        return QUIET

    def to_json(self) -> dict[str, Any]:
        active = sorted_alerts(list(self.alerts.values()))
        rank, label = self.attention()
        counts = {"critical": 0, "warning": 0, "info": 0}
        for alert in active:
            counts[alert.severity] += 1
        state = self.state
        controller = self.controller
        return {
            "kind": "table",
            "id": self.id,
            "attention": label,
            "group": _GROUP_OF_RANK[rank],
            "rank": [rank, -len(active)],
            "controller": None
            if controller is None
            else {
                "state": controller.state,
                "detail": controller.detail,
                "session": controller.session,
                "ts": controller.ts.isoformat().replace("+00:00", "Z"),
            },
            # The pit the table's controller says it is in ([table] area), or None.
            "area": controller.area if controller is not None else None,
            "hand": state.hand if state is not None else None,
            "phase": state.phase if state is not None else None,
            "deck": state.deck if state is not None else None,
            "profile": state.profile if state is not None else None,
            "tracking": state.tracking if state is not None else None,
            # The session (docs/rules.md): the dealer, the last hands, a tournament's level and
            # when it ends (the page counts the time left), the seats away.
            "dealer": state.dealer if state is not None else None,
            "hands_left": state.hands_left if state is not None else None,
            "level": state.level.model_dump(mode="json")
            if state is not None and state.level is not None
            else None,
            "away": [a.seat for a in state.away] if state is not None and state.away else [],
            "state_ts": state.ts.isoformat().replace("+00:00", "Z") if state is not None else None,
            "heard": iso(self.heard_ms),
            "counts": counts,
            "unacknowledged": sum(1 for a in active if a.status != "acknowledged"),
            "worst": alert_json(active[0]) if active else None,
            "alerts": [alert_json(a) for a in active],
            "devices": [
                {"device": a.device, "code": a.code, "message": a.message, "status": a.status}
                for a in active
                if a.code in DEVICE_CODES
            ],
            # One line's worth: a table's page asks for the hands in full (the console's SQLite).
            "last_hand": hand_brief(self.last_hand) if self.last_hand is not None else None,
        }


class FloorBoard:
    """Every table seen under the root. Each ``on_*`` returns the alerts to add to the history."""

    def __init__(self) -> None:
        self.tables: dict[str, TableSummary] = {}
        #: Each table's last hand from the console's history, until the table is first heard of.
        self.recalled: dict[str, HandResult] = {}

    def table(self, table_id: str) -> TableSummary:
        found = self.tables.get(table_id)
        if found is None:
            recalled = self.recalled.pop(table_id, None)
            found = self.tables[table_id] = TableSummary(table_id, last_hand=recalled)
        return found

    def on_status(self, table_id: str, status: Status, now_ms: float) -> None:
        table = self.table(table_id)
        table.controller = status
        table.heard_ms = now_ms

    def on_state(self, table_id: str, state: PublicState, now_ms: float) -> list[Alert]:
        """The state's alerts are the table's active alerts; those the console had not seen (it
        was away when they changed) go to the history from here."""
        table = self.table(table_id)
        unseen = [
            alert
            for alert in state.alerts
            if (known := table.alerts.get(alert.id)) is None or known.status != alert.status
        ]
        table.state = state
        table.alerts = {alert.id: alert for alert in state.alerts}
        table.heard_ms = now_ms
        return unseen

    def on_alert(self, table_id: str, alert: Alert, now_ms: float) -> list[Alert]:
        """An alert change. The alerts and hand results come by two paths (a fast copy, and the
        session's seconds later when a node died), so a change may come after a newer one of
        the same alert: it goes to the history, but the board keeps the newer."""
        table = self.table(table_id)
        known = table.alerts.get(alert.id)
        ended = table.resolved.get(alert.id)
        stale = (known is not None and known.ts > alert.ts) or (ended is not None and ended >= alert.ts)
        if not stale and alert.status == "resolved":
            table.alerts.pop(alert.id, None)
            table.resolved[alert.id] = alert.ts
            if len(table.resolved) > RESOLVED_KEPT:
                del table.resolved[next(iter(table.resolved))]
        elif not stale:
            table.alerts[alert.id] = alert
        table.heard_ms = now_ms
        table.changes += 1
        return [alert]

    def on_hand(self, table_id: str, result: HandResult, now_ms: float) -> None:
        """A hand result; the last hand stays the newest (an older one may come late, above)."""
        table = self.table(table_id)
        if table.last_hand is None or result.ts >= table.last_hand.ts:
            table.last_hand = result
        table.heard_ms = now_ms

    def ordered(self) -> list[TableSummary]:
        """The whole floor, what needs attention first (then by table id)."""
        return sorted(self.tables.values(), key=lambda t: (t.attention()[0], -len(t.alerts), t.id))
