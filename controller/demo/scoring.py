"""Match the mistakes the dealer committed with the alerts the engine raised.

An expectation is registered when the step that completes a mistake's evidence has been carried
out (at that step's physical time); an alert counts when it is ``raised`` with a catalogue code.
They are paired by code, in order; the latency is from the physical act to the alert's arrival on
the broker. What is left unpaired when a hand is closed is a miss or a false alarm; a miss still
pairs with its alert arriving within ``LATE_S`` of the act (a late detection, its latency counted
as it is): a controller catching up after an outage (a broker restarted, the service held up)
raises the alert seconds after the act, when the dealer has moved on to the next hand, and that
alert is neither a miss nor a false alarm.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Final

from contract.models import Alert
from controller.demo.summary import Tally
from simulators.dealer import CATALOGUE_CODES

log = logging.getLogger(__name__)

#: Tolerance for clocks: an alert may not precede the act it reports by more than this.
_EARLY_S: Final = 0.005
#: How long after its act a mistake counted missed still pairs with its alert (a late detection):
#: a broker outage and the controller's hold for the drivers' answers take a few seconds, within
#: ``[table] gap_wait_s`` (10 s by default) of the act.
LATE_S: Final = 15.0


@dataclass
class _Expected:
    code: str
    acted: float
    matched: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class _Raised:
    code: str
    arrived: float


class Scorer:
    """Pairs expectations and alerts; fills a :class:`Tally`."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self._expected: list[_Expected] = []
        self._raised: list[_Raised] = []
        #: Mistakes of closed hands counted missed, still paired with an alert within LATE_S.
        self._late: list[_Expected] = []

    def alert(self, alert: Alert, arrived: float) -> None:
        """Every alert change seen on the broker (only ``raised`` ones are detections)."""
        if alert.status != "raised":
            return
        if alert.code not in CATALOGUE_CODES:
            self.tally.other_alerts[alert.code] += 1
            log.info("device alert %s (%s): %s", alert.code, alert.device or "-", alert.message)
            return
        self.tally.raised[alert.code] += 1
        for expected in self._expected:
            if expected.code == alert.code and expected.acted - _EARLY_S <= arrived:
                self._pair(expected, arrived)
                return
        self._late = [late for late in self._late if arrived - late.acted <= LATE_S]
        for late in self._late:
            if late.code == alert.code and late.acted - _EARLY_S <= arrived:
                # counted missed when its hand closed: a late detection after all
                self._late.remove(late)
                self.tally.missed[late.code] -= 1
                if not self.tally.missed[late.code]:
                    del self.tally.missed[late.code]
                self._record(late, arrived)
                return
        self._raised.append(_Raised(alert.code, arrived))

    def expect(self, code: str, acted: float) -> asyncio.Event:
        """The dealer just committed ``code`` (at monotonic time ``acted``)."""
        self.tally.injected[code] += 1
        expected = _Expected(code, acted)
        for raised in self._raised:
            if raised.code == code and acted - _EARLY_S <= raised.arrived:
                self._raised.remove(raised)
                self._record(expected, raised.arrived)
                return expected.matched
        self._expected.append(expected)
        return expected.matched

    def _pair(self, expected: _Expected, arrived: float) -> None:
        self._expected.remove(expected)
        self._record(expected, arrived)

    def _record(self, expected: _Expected, arrived: float) -> None:
        self.tally.detected[expected.code] += 1
        self.tally.latencies_ms.append(max(0.0, arrived - expected.acted) * 1000.0)
        expected.matched.set()

    def close_hand(self) -> None:
        """Whatever is still unpaired is a miss (expected) or a false alarm (raised)."""
        for expected in self._expected:
            self.tally.missed[expected.code] += 1
        self._late += self._expected
        for raised in self._raised:
            self.tally.unexpected[raised.code] += 1
        self._expected.clear()
        self._raised.clear()

    @property
    def pending(self) -> int:
        return len(self._expected)
