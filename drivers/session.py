"""The device session: one device's sessions and everything its driver said about them.

A :class:`DeviceSession` is the part of a driver that numbers and publishes; it starts no task
and touches no device. It holds:

- the session number: every successful device connection opens a new session (:meth:`begin`:
  number + 1, ``seq`` back to 0, no faults); the number continues across a process restart from
  the status the driver left retained on the broker (:meth:`continue_from_broker`) or from its
  own state file (:meth:`continue_from_state_file`);
- the events of the session (:meth:`emit` numbers, timestamps and names the session of each),
  the latest ``resend_buffer`` of them in a ring, and :meth:`resend`, which publishes again those
  a ``resend`` command names, unchanged;
- the faults: declared by the device (:meth:`raise_fault`, :meth:`clear_fault`: a jam, a door
  open) or made of a burst of errors (:meth:`report_error`: corrupt frames, reader errors), and
  the retained status they make (``online``, ``fault``, ``offline``), published only when it
  changes.

The device-specific part of a driver (:class:`drivers.driver.Device`) is given its session and
calls it; :class:`drivers.driver.Driver` opens and ends the sessions as the device comes and goes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from contract.models import EventBase, FaultEvent, ResendCommand, Status, StatusState
from contract.timestamps import utc_now
from drivers.faults import ErrorBurst, Faults
from drivers.state_file import load_session, save_session
from link.commands import CommandQueue

EventT = TypeVar("EventT", bound=EventBase)

#: Events a driver keeps for ``resend``. The engine takes a late event up to 1,024 seqs behind
#: a device's highest (``engine.seqtrack.SEQ_MEMORY``), so more could not fill a gap; a busy
#: table produces at most about 4,000 events an hour, so 1,024 is a quarter of an hour of them,
#: far more than the 2 s a broker crash can lose (docs/service.md, the table PC's broker), for
#: about 300 KiB per driver.
RESEND_BUFFER: Final = 1024


class DriverLink(Protocol):
    """What a driver needs of its link to the broker (:class:`link.device.DeviceLink`)."""

    commands: CommandQueue
    ready: asyncio.Event

    @property
    def contacted(self) -> bool: ...

    def publish_event(self, event: EventBase, on_published: Callable[[], None] | None = None) -> None: ...
    def set_status(self, status: Status) -> None: ...
    async def previous_status(self, wait_s: float) -> Status | None: ...
    async def run(self) -> None: ...


#: The commands a driver answers whatever its device's state (its status says so: the controller
#: waits for a ``status`` answer only from a driver that says it gives one).
ANSWERS: Final = ("resend", "status")


class DeviceSession:
    """The sessions of one device: numbers, events, the resend ring, faults, the status."""

    def __init__(
        self,
        device_id: str,
        link: DriverLink,
        log: logging.Logger,
        *,
        fault_errors: int = 10,
        fault_window_s: float = 5.0,
        resend_buffer: int = RESEND_BUFFER,
        state_file: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.device_id = device_id
        self.link = link
        self.log = log
        self.state_file = state_file
        #: The current (or, while offline, the last) session's number; 0 before the first.
        self.number = 0
        #: The ``seq`` of the last event of this session (0 before the first).
        self.seq = 0
        #: Events published so far, all sessions, and events published again on a ``resend``.
        self.emitted = 0
        self.resent = 0
        #: The latest events of this and earlier sessions, for ``resend``.
        self.recent: deque[EventBase] = deque(maxlen=max(1, resend_buffer))
        self._open = False
        self._faults = Faults(ErrorBurst(fault_errors, fault_window_s, clock))
        self._published: tuple[StatusState, int, str | None] | None = None
        #: The status said last (said again on a ``status`` command).
        self._said: Status | None = None

    @property
    def online(self) -> bool:
        """True while a session is open (the device is connected)."""
        return self._open

    @property
    def faults(self) -> dict[str, str]:
        """Active fault codes and their texts."""
        return dict(self._faults.active)

    # ------------------------------------------------------------------ numbering

    def continue_from_state_file(self) -> bool:
        """Continue from the number in the state file; True when it gave one."""
        path = self.state_file
        number = load_session(path, self.log, self.device_id) if path is not None else None
        if number is None:
            return False
        self.number = max(self.number, number)
        return self.number > 0

    async def continue_from_broker(self, wait_s: float) -> None:
        """Continue from the session this device's driver left retained on the broker (waits
        at most ``wait_s`` for it; without a broker the numbering goes on from here)."""
        previous = await self.link.previous_status(wait_s)
        if previous is not None and previous.session > self.number:
            self.number = previous.session
        if not self.link.contacted:
            self.log.warning(
                "%s: no status from the broker; numbering sessions from %d", self.device_id, self.number
            )
        else:
            self.log.info("%s: previous session %d", self.device_id, self.number)

    # ------------------------------------------------------------------ the session's life

    def begin(self) -> None:
        """Open the next session (the device answered); its status is published by
        :meth:`publish_status`, once the device has set up what the session starts with."""
        self.number += 1
        self.seq = 0
        self._faults.reset()
        self._open = True
        if self.state_file is not None:
            save_session(self.state_file, self.number, self.log, self.device_id)
        self.log.info("%s: online, session %d", self.device_id, self.number)

    def end(self) -> None:
        """The device is gone: the session is closed (say why with :meth:`publish_status`)."""
        self._open = False

    def publish_status(self, detail: str | None = None, *, asked: datetime | None = None) -> None:
        """Publish the status (``offline`` with ``detail``, ``fault`` naming the faults, or
        ``online``) unless it is the one published last and answers no ask (``asked``: the
        ``ts`` of the ``status`` command it answers)."""
        state: StatusState
        if not self._open:
            state = "offline"
        elif self._faults.active:
            state, detail = "fault", self._faults.describe()
        else:
            state = "online"
        key = (state, self.number, None if state == "offline" else detail)
        if key == self._published and asked is None:
            return
        self._published = key
        status = Status(state=state, ts=utc_now(), session=self.number, detail=detail, answers=ANSWERS)
        self._say(status if asked is None else status.model_copy(update={"asked": asked}))

    def _say(self, status: Status) -> None:
        self._said = status
        self.link.set_status(status)

    def say_status(self, asked: datetime) -> None:
        """Publish the status again (a ``status`` command of ``ts`` ``asked``), even if
        unchanged: it names the seq of the last event given to publish, and goes out after them,
        and the ask it answers. The controller asks after the broker was away, to learn how far
        this driver's events went (the retained status a restarted broker hands over may be
        older than events it dropped)."""
        said = self._said
        if said is None:
            self.publish_status(asked=asked)
        else:
            # (its seq filled again by the link: the last event's now)
            self._say(said.model_copy(update={"ts": utc_now(), "seq": None, "asked": asked}))

    # ------------------------------------------------------------------ what the device reports

    def emit(
        self,
        event_type: type[EventT],
        ts: datetime | None = None,
        *,
        on_published: Callable[[], None] | None = None,
        **fields: Any,
    ) -> EventT:
        """Publish one contract event of this session, numbering it; returns the event.

        ``on_published`` is called once the broker has acknowledged the event (PUBACK).
        """
        self.seq += 1
        event = event_type(seq=self.seq, ts=ts or utc_now(), session=self.number, **fields)
        self.recent.append(event)
        self.emitted += 1
        self.link.publish_event(event, on_published)
        return event

    def report_error(self, code: str, text: str) -> None:
        """Count one error (corrupt frame, bad reply); a burst raises a ``fault``.

        The error is logged with the device id. When ``fault_errors`` errors fall within
        ``fault_window_s`` the status turns ``fault`` and a FaultEvent with ``code`` is emitted
        once; the status returns to ``online`` after a quiet window (see :meth:`tick_faults`).
        """
        self.log.warning("%s: %s", self.device_id, text)
        burst = self._faults.error(code)
        if burst is not None:
            self.raise_fault(code, f"{burst}: {text}")

    def tick_faults(self) -> None:
        """Clear an error-burst fault once its window is quiet (the device calls it now and then)."""
        for code in self._faults.quiet_bursts():
            self.clear_fault(code)

    def raise_fault(self, code: str, text: str) -> None:
        """Enter the ``fault`` state for ``code`` (once) and emit a FaultEvent."""
        if not self._faults.raise_(code, text):
            return
        self.log.error("%s: fault %s: %s", self.device_id, code, text)
        if self._open:
            self.emit(FaultEvent, code=code, text=text)
        self.publish_status()

    def clear_fault(self, code: str) -> None:
        """Leave the fault state for ``code``; the status returns to online when none is left."""
        if self._faults.clear(code):
            self.log.info("%s: fault %s cleared", self.device_id, code)
            self.publish_status()

    # ------------------------------------------------------------------ events sent again

    def resend(self, topic: str, command: ResendCommand) -> None:
        """Publish again the events of ``command``'s range still in the ring, unchanged (same
        seq, ts and payload), whether or not the device is connected; what the ring no longer
        holds is logged at WARNING."""
        found = 0
        for event in self.recent:
            if event.session == command.session and command.from_seq <= event.seq <= command.to_seq:
                self.link.publish_event(event)
                found += 1
        self.resent += found
        wanted = command.to_seq - command.from_seq + 1
        if found < wanted:
            self.log.warning(
                "%s: %s: resend of session %d events %d to %d: %d no longer held (the ring keeps %d)",
                self.device_id,
                topic,
                command.session,
                command.from_seq,
                command.to_seq,
                wanted - found,
                self.recent.maxlen,
            )
        else:
            self.log.info(
                "%s: resent session %d events %d to %d",
                self.device_id,
                command.session,
                command.from_seq,
                command.to_seq,
            )
