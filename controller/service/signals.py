"""Alerts to the dealer at the table: the sensor board's lamp and buzzer follow the active alerts.

Lamp: green when no warning or critical alert is active, amber for a warning, red for a critical
one; it blinks while the most severe active alert is not yet acknowledged. The buzzer sounds when a
critical alert is raised. Info alerts leave the lamp green.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from contract.models import Alert, BuzzerCommand, DeviceCommand, LampColour, LampCommand

_RANK: Final = {"info": 0, "warning": 1, "critical": 2}
_COLOUR: Final[dict[int, LampColour]] = {0: "green", 1: "amber", 2: "red"}


@dataclass(frozen=True, slots=True)
class LampSetting:
    colour: LampColour
    blink: bool


class DealerSignals:
    """Tracks the active alerts and says which lamp and buzzer commands to send."""

    def __init__(self, *, buzzer_ms: int) -> None:
        self.buzzer_ms = buzzer_ms
        self._active: dict[str, Alert] = {}
        self._lamp_sent: LampSetting | None = None

    @property
    def active(self) -> tuple[Alert, ...]:
        return tuple(self._active.values())

    @property
    def lamp_sent(self) -> LampSetting | None:
        """The lamp setting last sent (None: none yet)."""
        return self._lamp_sent

    @classmethod
    def restored(
        cls, *, buzzer_ms: int, active: tuple[Alert, ...], lamp_sent: LampSetting | None
    ) -> DealerSignals:
        """Signals as :attr:`active` and :attr:`lamp_sent` showed them (a checkpoint's)."""
        signals = cls(buzzer_ms=buzzer_ms)
        signals._active = {alert.id: alert for alert in active}
        signals._lamp_sent = lamp_sent
        return signals

    def lamp(self) -> LampSetting:
        """The lamp setting the active alerts call for."""
        top = max((_RANK[a.severity] for a in self._active.values()), default=0)
        if top == 0:
            return LampSetting("green", blink=False)
        unacknowledged = any(
            _RANK[a.severity] == top and a.status != "acknowledged" for a in self._active.values()
        )
        return LampSetting(_COLOUR[top], blink=unacknowledged)

    def observe(self, alert: Alert) -> bool:
        """Take one alert change into account; True when it should sound the buzzer."""
        if alert.status == "resolved":
            self._active.pop(alert.id, None)
            return False
        self._active[alert.id] = alert
        return alert.status == "raised" and alert.severity == "critical"

    def commands(self, alerts: tuple[Alert, ...], now: datetime) -> list[DeviceCommand]:
        """The commands for a batch of alert changes: the buzzer, then the lamp if it changes."""
        buzz = False
        for alert in alerts:
            buzz = self.observe(alert) or buzz
        out: list[DeviceCommand] = []
        if buzz and self.buzzer_ms > 0:
            out.append(BuzzerCommand(ts=now, duration_ms=self.buzzer_ms))
        lamp = self.lamp()
        if lamp != self._lamp_sent:
            out.append(LampCommand(ts=now, colour=lamp.colour, blink=lamp.blink))
            self._lamp_sent = lamp
        return out

    def resend_lamp(self, now: datetime) -> LampCommand:
        """The lamp command for a fresh connection (the board may have restarted meanwhile)."""
        lamp = self.lamp()
        self._lamp_sent = lamp
        return LampCommand(ts=now, colour=lamp.colour, blink=lamp.blink)
