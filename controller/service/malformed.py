"""Malformed input, counted per topic and reported at most once a second.

A flood of bad payloads must not delay valid events, grow the journal or fill the retained
state. So a malformed message costs a counter here, not an engine step: the first one of a
topic is reported at once, later ones are folded into one report per topic and second (the
engine turns each report into the topic's single ``bad_payload`` alert, with the count). Only a
few payloads per report go to the journal as samples. The number of topics followed is bounded:
beyond ``MAX_TOPICS``, the rest share one entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from controller.service.inbox import Malformed

#: How often one topic's count may be reported.
REPORT_EVERY: Final = timedelta(seconds=1)
#: Topics counted apart; the others are counted together under ``OTHER_TOPICS``.
MAX_TOPICS: Final = 8
OTHER_TOPICS: Final = "(other topics)"
#: Payloads of a topic kept as journal samples per report, and the bytes kept of each.
SAMPLES_PER_REPORT: Final = 2
SAMPLE_BYTES: Final = 512


@dataclass(frozen=True, slots=True)
class Report:
    """What the engine is told about a topic's malformed input: how many so far, the latest
    reason."""

    topic: str
    device: str | None
    count: int
    reason: str


@dataclass
class _Entry:
    device: str | None
    #: The latest malformed message: its reason is described only when a report reads it.
    latest: Malformed
    count: int = 0
    pending: int = 0
    reported: datetime | None = None
    samples: int = SAMPLES_PER_REPORT


class MalformedTally:
    """Counts malformed messages per topic; says when to report and which to sample."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def note(self, item: Malformed, now: datetime) -> tuple[Report | None, bool]:
        """Count ``item``: the report to make now (the first of a topic, or a second after the
        last), and whether to keep this payload as a sample."""
        key = item.topic
        entry = self._entries.get(key)
        if entry is None:
            if len(self._entries) >= MAX_TOPICS:
                key, device = OTHER_TOPICS, None
                entry = self._entries.get(key)
            else:
                device = item.device
            if entry is None:
                entry = self._entries[key] = _Entry(device, item)
        entry.count += 1
        entry.pending += 1
        entry.latest = item
        sample = entry.samples > 0
        if sample:
            entry.samples -= 1
        if entry.reported is None or now - entry.reported >= REPORT_EVERY:
            return self._report(key, entry, now), sample
        return None, sample

    def due(self, now: datetime) -> list[Report]:
        """Reports of topics with new malformed input whose last report is a second old."""
        return [
            self._report(key, entry, now)
            for key, entry in self._entries.items()
            if entry.pending and (entry.reported is None or now - entry.reported >= REPORT_EVERY)
        ]

    @staticmethod
    def _report(key: str, entry: _Entry, now: datetime) -> Report:
        entry.pending = 0
        entry.reported = now
        entry.samples = SAMPLES_PER_REPORT
        return Report(key, entry.device, entry.count, entry.latest.reason)
