"""Lamp and buzzer follow the active alerts."""

from __future__ import annotations

from datetime import UTC, datetime

from contract.models import Alert, AlertStatus, BuzzerCommand, LampCommand, Severity
from controller.service.signals import DealerSignals

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)


def _alert(alert_id: str, severity: Severity, status: AlertStatus) -> Alert:
    return Alert(
        id=alert_id,
        ts=T0,
        hand=1,
        code="x",
        severity=severity,
        status=status,
        message="m",
        profile="roberts",
    )


def test_lamp_colour_follows_the_most_severe_active_alert() -> None:
    signals = DealerSignals(buzzer_ms=300)
    assert signals.lamp().colour == "green"
    assert signals.commands((_alert("1", "info", "raised"),), T0) == [LampCommand(ts=T0, colour="green")]
    assert signals.commands((_alert("2", "warning", "raised"),), T0) == [
        LampCommand(ts=T0, colour="amber", blink=True)
    ]
    out = signals.commands((_alert("3", "critical", "raised"),), T0)
    assert out == [BuzzerCommand(ts=T0, duration_ms=300), LampCommand(ts=T0, colour="red", blink=True)]
    # Acknowledged: steady red, no new buzz.
    assert signals.commands((_alert("3", "critical", "acknowledged"),), T0) == [
        LampCommand(ts=T0, colour="red", blink=False)
    ]
    assert signals.commands((_alert("3", "critical", "resolved"),), T0) == [
        LampCommand(ts=T0, colour="amber", blink=True)
    ]
    assert signals.commands((_alert("2", "warning", "resolved"),), T0) == [LampCommand(ts=T0, colour="green")]
    # Nothing changed: nothing sent.
    assert signals.commands((_alert("1", "info", "resolved"),), T0) == []
    assert signals.active == ()


def test_no_buzzer_when_disabled_and_lamp_resent_on_demand() -> None:
    signals = DealerSignals(buzzer_ms=0)
    out = signals.commands((_alert("9", "critical", "raised"),), T0)
    assert out == [LampCommand(ts=T0, colour="red", blink=True)]
    assert signals.resend_lamp(T0) == LampCommand(ts=T0, colour="red", blink=True)
