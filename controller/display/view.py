"""What the dealer's page shows, as one JSON picture (pure: no I/O, no clock).

Only public data goes in: the public state (card *counts*, the board), the alerts (which name
no hidden hole card), device and controller statuses, and the last hand result with its alerts
(for a dispute at the table: the board, the actions, the pots and the award; hole cards only of
the hands tabled face up at showdown, which the result alone carries).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from contract.models import Alert, HandResult, PublicState, Status

#: Most severe first; within a severity the unacknowledged ones, then the newest.
SEVERITY_ORDER: Final = {"critical": 0, "warning": 1, "info": 2}
#: Hands whose alert changes are kept for the "last hand" view.
KEPT_HANDS: Final = 4
#: Codes that follow up another alert (its remedy was not followed): shown under that alert.
FOLLOW_UP_CODES: Final = frozenset({"remedy_not_followed"})


def alert_json(alert: Alert) -> dict[str, Any]:
    return {
        "id": alert.id,
        "hand": alert.hand,
        "code": alert.code,
        "severity": alert.severity,
        "status": alert.status,
        "seat": alert.seat,
        "message": alert.message,
        "remedy": list(alert.remedy),
        "rule": alert.rule,
        "device": alert.device,
        "ts": alert.ts.isoformat().replace("+00:00", "Z"),
    }


def sorted_alerts(alerts: list[Alert]) -> list[Alert]:
    """Most severe on top; unacknowledged before acknowledged; newer before older (``alerts`` is
    in the order they were raised)."""
    order = {alert.id: index for index, alert in enumerate(alerts)}
    return sorted(
        alerts,
        key=lambda a: (SEVERITY_ORDER.get(a.severity, 3), a.status == "acknowledged", -order[a.id]),
    )


def _lead_of(follow_up: Alert, earlier: list[Alert]) -> Alert | None:
    """The alert a follow-up belongs to (the contract links them by no field): among the active
    alerts of its hand raised before it, the newest about its seat, else the newest critical,
    else the newest."""
    same_hand = [a for a in earlier if a.hand == follow_up.hand and a.code not in FOLLOW_UP_CODES]
    for fits in (
        lambda a: follow_up.seat is not None and a.seat == follow_up.seat,
        lambda a: a.severity == "critical",
        lambda a: True,
    ):
        found = [a for a in same_hand if fits(a)]
        if found:
            return found[-1]
    return None


def alert_groups(alerts: list[Alert]) -> list[dict[str, Any]]:
    """The active alerts as groups, the headline first: each alert with the follow-ups that
    belong to it (``remedy_not_followed`` under the misdeal it follows up), so that a dealer who
    did not follow a remedy sees what happened first and the follow-ups under it, not above it.

    ``alerts`` in the order they were raised. Groups are ordered as single alerts are (most
    severe, then any unacknowledged, then newest), a group counting as its most severe and
    newest member: ``{"lead": id, "follow_ups": [ids, oldest first]}``."""
    follow_ups: dict[str, list[Alert]] = {}
    leads: list[Alert] = []
    for index, alert in enumerate(alerts):
        lead = _lead_of(alert, alerts[:index]) if alert.code in FOLLOW_UP_CODES else None
        if lead is None:
            leads.append(alert)
            follow_ups.setdefault(alert.id, [])
        else:
            follow_ups.setdefault(lead.id, []).append(alert)
    order = {alert.id: index for index, alert in enumerate(alerts)}

    def key(lead: Alert) -> tuple[int, bool, int]:
        members = [lead, *follow_ups[lead.id]]
        return (
            min(SEVERITY_ORDER.get(a.severity, 3) for a in members),
            all(a.status == "acknowledged" for a in members),
            -max(order[a.id] for a in members),
        )

    return [
        {"lead": lead.id, "follow_ups": [a.id for a in follow_ups[lead.id]]}
        for lead in sorted(leads, key=key)
    ]


def state_json(state: PublicState) -> dict[str, Any]:
    """The public state without its alerts (they are sent sorted, on their own)."""
    data: dict[str, Any] = state.model_dump(mode="json", exclude={"alerts"})
    return data


def hand_json(result: HandResult, alerts: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """A hand result for the pages (a dispute at the table, the floor's hand list): the result as
    published (board, actions, pots, award, and only the hands tabled face up at showdown), its
    winners, whether it was voided, and the alert changes of that hand (oldest first)."""
    data: dict[str, Any] = result.model_dump(mode="json")
    data["voided"] = result.result in ("misdeal", "fouled")
    data["winners"] = sorted({seat for pot in result.pots for seat in pot.winners})
    data["alerts"] = list(alerts)
    return data


def hand_brief(result: HandResult) -> dict[str, Any]:
    """A hand result in one line's worth (the floor's summaries; the detail is asked for)."""
    return {
        "hand": result.hand,
        "ts": result.ts.isoformat().replace("+00:00", "Z"),
        "result": result.result,
        "voided": result.result in ("misdeal", "fouled"),
        "board": list(result.board),
        "winners": sorted({seat for pot in result.pots for seat in pot.winners}),
        "awarded": [{"seat": a.seat, "amount": a.amount} for a in result.awarded],
        "rake": result.rake,
    }


class HandAlerts:
    """The alert changes of the last few hands, by hand (for the "last hand" views)."""

    def __init__(self, hands: int = KEPT_HANDS) -> None:
        self.hands = hands
        self._by_hand: dict[int, list[Alert]] = {}

    def add(self, alert: Alert) -> None:
        self._by_hand.setdefault(alert.hand, []).append(alert)
        while len(self._by_hand) > self.hands:
            del self._by_hand[min(self._by_hand)]

    def of(self, hand: int) -> list[dict[str, Any]]:
        return [alert_json(a) for a in self._by_hand.get(hand, [])]


def status_json(status: Status | None) -> dict[str, Any] | None:
    if status is None:
        return None
    return {"state": status.state, "detail": status.detail, "session": status.session}


@dataclass
class DealerView:
    """The current picture of one table for its dealer."""

    table: str
    seats: int
    name: str | None = None
    profile: str | None = None
    #: Devices of the configuration: listed (as unknown) before their first status arrives.
    configured: tuple[str, ...] = ()
    state: PublicState | None = None
    alerts: dict[str, Alert] = field(default_factory=dict)
    devices: dict[str, Status] = field(default_factory=dict)
    controller: Status | None = None
    last_hand: HandResult | None = None
    hand_alerts: HandAlerts = field(default_factory=HandAlerts)

    def on_state(self, state: PublicState) -> None:
        """A new public state; its ``alerts`` are the engine's active alerts, the authority."""
        self.state = state
        self.alerts = {alert.id: alert for alert in state.alerts}

    def on_alert(self, alert: Alert) -> None:
        self.hand_alerts.add(alert)
        if alert.status == "resolved":
            self.alerts.pop(alert.id, None)
        else:
            self.alerts[alert.id] = alert  # an existing id keeps its place

    def on_device(self, device: str, status: Status) -> None:
        self.devices[device] = status

    def on_controller(self, status: Status) -> None:
        self.controller = status

    def on_hand(self, result: HandResult) -> None:
        self.last_hand = result

    def recall(self, result: HandResult | None, alerts: Sequence[Alert]) -> None:
        """The last hand and the alert changes of the recent hands (that one, the one in
        progress), as the journal holds them at start-up: a restart forgets nothing the dealer may
        need for a dispute. The changes go to the hands only: the state says which are active."""
        for alert in alerts:
            self.hand_alerts.add(alert)
        if result is not None:
            self.last_hand = result

    def active(self) -> list[Alert]:
        return sorted_alerts(list(self.alerts.values()))

    def to_json(self) -> dict[str, Any]:
        devices = [
            {"id": device, **(status_json(self.devices.get(device)) or {"state": "unknown"})}
            for device in sorted(set(self.configured) | set(self.devices))
        ]
        return {
            "kind": "view",
            "table": {
                "id": self.table,
                "name": self.name,
                "seats": self.seats,
                "profile": self.profile,
            },
            "controller": status_json(self.controller),
            "devices": devices,
            "state": state_json(self.state) if self.state is not None else None,
            "alerts": [alert_json(a) for a in self.active()],
            "groups": alert_groups(list(self.alerts.values())),
            "last_hand": hand_json(self.last_hand, self.hand_alerts.of(self.last_hand.hand))
            if self.last_hand is not None
            else None,
        }
