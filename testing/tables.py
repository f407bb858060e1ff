"""Many tables' public messages, as their controllers publish them, for the floor console's tests
and benchmark: retained ``controller/status`` and ``state``, alert changes, hand results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from contract.models import Alert, AlertStatus, Phase, PublicState, SeatState, Severity, Status
from contract.topics import Topics

ROOT: Final = "holdem"
CODES: Final[dict[Severity, tuple[str, str]]] = {
    "critical": ("misdeal_wrong_first_seat", "The first card went to the wrong seat: misdeal."),
    "warning": ("exposed_card", "A hole card of seat 4 was exposed: it may not be kept."),
    "info": ("board_claim_forfeited", "Seat 2 mucked without declaring the board."),
}
PHASES: Final[tuple[Phase, ...]] = ("dealing", "preflop", "flop", "turn", "river", "showdown")


def now() -> datetime:
    return datetime.now(UTC)


@dataclass
class FakeTable:
    """One table's public side: its hand, phase and active alerts, as payloads to publish."""

    id: str
    root: str = ROOT
    hand: int = 1
    step: int = 0
    alerts: dict[str, Alert] = field(default_factory=dict)
    counter: int = 0

    @property
    def topics(self) -> Topics:
        return Topics(self.root, self.id)

    def status(self, state: str = "online", session: int = 1) -> tuple[str, bytes]:
        status = Status.model_validate({"state": state, "ts": now(), "session": session})
        return self.topics.controller_status, status.to_json()

    def state(self, ts: datetime | None = None) -> tuple[str, bytes]:
        """The next public state (the phase moves on; a new hand after the showdown)."""
        self.step += 1
        if self.step % len(PHASES) == 0:
            self.hand += 1
        state = PublicState(
            ts=ts or now(),
            hand=self.hand,
            phase=PHASES[self.step % len(PHASES)],
            button=1 + self.hand % 9,
            seats=[
                SeatState(seat=s, occupied=True, in_hand=s <= 6, cards=2 if s <= 6 else 0)
                for s in range(1, 10)
            ],
            board=[],
            deck="A" if self.hand % 2 else "B",
            alerts=list(self.alerts.values()),
            profile="roberts",
        )
        return self.topics.state, state.to_json()

    def alert(
        self, severity: Severity, status: AlertStatus = "raised", alert_id: str | None = None, seat: int = 4
    ) -> tuple[str, bytes]:
        """An alert change (a new alert unless ``alert_id`` names an active one)."""
        if alert_id is None:
            self.counter += 1
            alert_id = f"{self.hand}-{self.counter}"
        code, message = CODES[severity]
        alert = Alert(
            id=alert_id,
            ts=now(),
            hand=self.hand,
            code=code,
            severity=severity,
            seat=seat,
            status=status,
            message=f"{message} (table {self.id})",
            remedy=["First step.", "Second step."],
            rule="RR",
            profile="roberts",
        )
        if status == "resolved":
            self.alerts.pop(alert_id, None)
        else:
            self.alerts[alert_id] = alert
        return self.topics.alerts, alert.to_json()
