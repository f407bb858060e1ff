"""Device sequence numbers: repeats, late events, forged seqs (the gap fill is in
:mod:`engine.gapfill`).

The policy (docs/engine.md, "Sequence policy"):

- A device's events are followed per (device, session, seq). An event names its session (our
  drivers always do); one that does not belongs to the session of the device's last status.
  The engine follows the device's current session and remembers its previous one, so that a
  repeat of either is dropped and a late event of either fills its place.
- A seq up to ``SEQ_AHEAD`` above the highest taken is taken (the seqs between are asked for
  again: the gap fill); a repeat (remembered for the last ``SEQ_MEMORY`` seqs) is dropped; a seq
  further ahead is ignored and reported, and becomes the device's count only after ``SEQ_RUN``
  such seqs in a row (a forged seq never blinds the reader). A session up to ``SESSION_AHEAD``
  above the device's is its restart (1 expected); a session further away is treated like a far
  seq.
"""

from __future__ import annotations

from typing import Final

from contract.models import MAX_RESEND, DeviceEvent
from contract.text import bounded
from engine.gapfill import GapFillRules
from engine.seqtrack import (
    REPORT_EVERY,
    SEQ_AHEAD,
    SEQ_MASK,
    SEQ_MEMORY,
    SEQ_RUN,
    SESSION_AHEAD,
    SeqTrack,
)

#: A SeqTrack from all its fields, without the named tuple's keyword-handling ``__new__``
#: (once per event).
_track: Final = tuple.__new__


class SequenceRules(GapFillRules):
    """The sequence policy (see the module docstring)."""

    # ------------------------------------------------------------------ taking events

    def _sequence(self, device: str, event: DeviceEvent) -> bool | None:
        """Whether to apply a device's event: True, False (a repeat, a far seq), or None: it
        shows a gap that is being filled, the event is held (the caller holds it)."""
        seq, session = event.seq, event.session
        track = self.dev_seq.get(device)
        if track is not None and seq == track[0] + 1 and session == track[5] and not track[2]:
            # the next one of the session followed (the hot path: one tuple, no lookups)
            self.dev_seq[device] = _track(
                SeqTrack, (seq, ((track[1] << 1) | 1) & SEQ_MASK, 0, 0, track[4], session, None)
            )
            return True
        if session is None:
            return self._legacy(device, track, seq)
        current = track.session if track is not None and track.session is not None else None
        if current is None:
            current = self.dev_session.get(device)
        if track is None or current is None:
            if current is not None and session > current:
                track = SeqTrack(0, 0, session=session)  # a new session: 1 expected
            else:
                self.dev_seq[device] = SeqTrack(seq, 1, session=session)  # the baseline
                return True
        elif session > current:
            if session - current > SESSION_AHEAD:
                return self._far(device, track, seq, session)
            self.dev_prev = {**self.dev_prev, device: track}
            track = SeqTrack(0, 0, session=session)  # restarted without a status first
        elif session < current:
            return self._previous_session(device, seq, session)
        elif track.session is None:
            track = track._replace(session=session)
        return self._window(device, track, seq, session)

    def _window(self, device: str, track: SeqTrack, seq: int, session: int) -> bool | None:
        high = track.high
        if seq > high:
            if seq - high > SEQ_AHEAD:
                return self._far(device, track, seq, session)
            if seq > high + 1:
                if seq - high - 1 <= MAX_RESEND:
                    self.dev_seq[device] = track  # the session is followed, the seq not yet
                    self._open_gap(device, session, high + 1, seq - 1, seq)
                    return None
                self._lost(device, f"skipped events {high + 1} to {seq - 1}")
            self.dev_seq[device] = track._replace(
                high=seq, seen=((track.seen << (seq - high)) | 1) & SEQ_MASK, run=0
            )
            return True
        return self._behind(device, track, seq, session, current=True)

    def _behind(
        self, device: str, track: SeqTrack, seq: int, session: int | None, *, current: bool
    ) -> bool:
        age = track.high - seq
        if age == 0:
            return False  # a repeat (QoS 1 redelivery)
        if age >= SEQ_MEMORY:
            if session is not None:
                # Within a session a device only counts up: an event this far behind is a late
                # repeat (a resend asked for twice), not a restart (that is a new session).
                return False
            if current:
                return self._far(device, track, seq, session)
            self._far_ignored(device)
            return False
        bit = 1 << age
        if track.seen & bit:
            return False  # a repeat
        updated = track._replace(seen=track.seen | bit)
        if current:
            self.dev_seq[device] = updated
        else:
            self.dev_prev = {**self.dev_prev, device: updated}
        return True  # a late event filling its place

    def _previous_session(self, device: str, seq: int, session: int) -> bool:
        """An event of an earlier session: taken once if it is the previous session's and new."""
        prev = self.dev_prev.get(device)
        if prev is None or prev.session != session:
            self._far_ignored(device)
            return False
        if seq > prev.high:
            if seq - prev.high > SEQ_AHEAD:
                self._far_ignored(device)
                return False
            if seq > prev.high + 1:
                self._lost(device, f"skipped events {prev.high + 1} to {seq - 1} of session {session}")
            seen = ((prev.seen << (seq - prev.high)) | 1) & SEQ_MASK
            self.dev_prev = {**self.dev_prev, device: prev._replace(high=seq, seen=seen)}
            return True
        return self._behind(device, prev, seq, session, current=False)

    def _legacy(self, device: str, track: SeqTrack | None, seq: int) -> bool:
        """Events that name no session: followed in the session of the device's status."""
        if track is None:
            self.dev_seq[device] = SeqTrack(seq, 1)
            return True
        high = track.high
        if seq > high:
            if seq - high > SEQ_AHEAD:
                return self._far(device, track, seq, None)
            if seq > high + 1:
                self._lost(device, f"skipped events {high + 1} to {seq - 1}")
            self.dev_seq[device] = track._replace(
                high=seq, seen=((track.seen << (seq - high)) | 1) & SEQ_MASK, run=0
            )
            return True
        if seq == 1 and high > 1:
            self.dev_seq[device] = SeqTrack(1, 1)  # restarted without a new status session
            return True
        return self._behind(device, track, seq, None, current=True)

    def _far(self, device: str, track: SeqTrack, seq: int, session: int | None) -> bool:
        """A seq far from the device's: ignored, unless it continues a run of such seqs."""
        continues = track.run and seq == track.run_last + 1 and session == track.run_session
        run = track.run + 1 if continues else 1
        far = track.far + 1
        if run >= SEQ_RUN:
            # the device itself jumped (a restart without status, a long loss): follow it
            where = f"event {seq}" if session is None else f"event {seq} of session {session}"
            self._lost(device, f"jumped from event {track.high} to {where}")
            if session is not None and session != track.session:
                self.dev_prev = {**self.dev_prev, device: track}
            self.dev_seq[device] = SeqTrack(seq, 1, far=far, session=session)
            return True
        self.dev_seq[device] = track._replace(
            run=run, run_last=seq, far=far, run_session=session
        )
        self._far_report(device, track, far)
        return False

    def _far_ignored(self, device: str) -> None:
        """An event of an old session, or far behind the previous one: ignored, reported."""
        track = self.dev_seq[device]
        self.dev_seq[device] = track._replace(far=track.far + 1)
        self._far_report(device, track, track.far + 1)

    def _far_report(self, device: str, track: SeqTrack, far: int) -> None:
        key = f"{device}#far"
        message = (
            f"Device {bounded(device, 64)} sent {far} event(s) with a sequence number far from "
            f"its last one ({track.high}): they were ignored."
        )
        existing = self.book.find("bad_payload", key)
        if existing is None:
            self._raise("bad_payload", message, scope="device", key=key, device=device)
        elif self.ts - self.book.active[existing].ts >= REPORT_EVERY:
            self.book.update(existing, self.ts, message=message)

    def _lost(self, device: str, what: str) -> None:
        """Events of ``device`` are lost for good: say so; this hand is not tracked."""
        message = (
            f"Device {bounded(device, 64)} {what}: they were lost, so this hand is not tracked; "
            "tracking resumes with the next shuffle or new hand."
        )
        key = f"{device}#seq"
        existing = self.book.find("device_fault", key)
        if existing is None:
            self._raise("device_fault", message, scope="hand", key=key, device=device)
        else:
            self.book.update(existing, self.ts, message=message)
        self.untracked = True
        self.evidence_missing = True
        self._update_tracking()
