"""The device session every driver fills in: connect, serve, disconnect, sessions, faults, backoff.

A driver subclass implements four hooks and nothing about MQTT:

- :meth:`Driver.connect` opens the device and confirms it answers (raise ``OSError`` or
  :class:`~drivers.errors.DeviceUnavailable` when it is not there);
- :meth:`Driver.serve` reads the device until it is lost (raise ``OSError`` or
  :class:`~drivers.errors.DeviceLost`), publishing what it observed with :meth:`Driver.emit`;
- :meth:`Driver.disconnect` releases the device (must not raise);
- :meth:`Driver.execute` carries out a contract command (raise
  :class:`~drivers.errors.CommandRejected`).

:meth:`Driver.run` runs three things side by side until cancelled: the *device loop* (connect with
backoff; every successful connection starts a new session: ``session`` + 1, ``seq`` back to 1,
status ``online``; a lost device makes the status ``offline`` and the loop reconnects), the
*command worker* (commands from the link's ordered queue, one at a time) and the *link* to the
broker (:class:`link.device.DeviceLink`: will, outbox, status slot, reconnects). Session numbers
survive a process restart: the device loop opens no session before it knows the last one, from
the status the driver left retained on the broker (or an optional state file).

Every event names its session and is kept in a ring buffer of the latest ``resend_buffer``
events: a ``resend`` command (the controller saw a gap, e.g. after a broker crash) publishes the
events it names again, unchanged. A device that fails right after connecting is retried with
growing delays: the backoff is reset only by a session that lasted ``stable_session_s``.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final, Protocol, TypeVar

from config.models import MqttSection
from contract.models import (
    DeviceCommand,
    EventBase,
    FaultEvent,
    ResendCommand,
    Status,
    StatusState,
)
from contract.timestamps import utc_now
from contract.topics import Topics
from drivers.driver import DriverOptions, stop_task
from drivers.errors import CommandRejected, DeviceLost, DeviceUnavailable
from drivers.faults import ErrorBurst, Faults
from drivers.state_file import load_session, save_session
from link.backoff import Backoff
from link.client import client_id
from link.commands import CommandQueue
from link.device import DeviceLink

EventT = TypeVar("EventT", bound=EventBase)

#: How long the device loop waits for the broker before numbering sessions without it.
SESSION_BASE_WAIT_S: Final = 5.0
FIRST_BACKOFF_S: Final = 0.1
#: A session that lasted this long was a good connection: the next reconnect starts from the
#: first delay again. A device that fails sooner (answers the handshake, then breaks at once)
#: is retried with growing delays instead of being reopened in a tight loop.
STABLE_SESSION_S: Final = 5.0
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

    def publish_event(
        self, event: EventBase, on_published: Callable[[], None] | None = None
    ) -> None: ...
    def set_status(self, status: Status) -> None: ...
    async def previous_status(self, wait_s: float) -> Status | None: ...
    async def run(self) -> None: ...


class Driver(abc.ABC):
    """Base of every device driver: run it with ``await driver.run()`` until cancelled."""

    #: The ``driver`` string of the configuration (for logs).
    kind: str = "device"

    def __init__(
        self,
        device_id: str,
        mqtt: MqttSection,
        topics: Topics,
        options: DriverOptions | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        link: DriverLink | None = None,
    ) -> None:
        self.device_id = device_id
        self.mqtt = mqtt
        self.topics = topics
        self.options = options = options or DriverOptions()
        self.log = logging.getLogger(f"drivers.{self.kind}")
        self.link: DriverLink = link or DeviceLink(
            mqtt,
            topics,
            device_id,
            identifier=f"{options.client_id}-{device_id}"
            if options.client_id
            else client_id(mqtt, topics.table, device_id),
            outbox_limit=options.outbox_limit,
            command_limit=options.command_limit,
            log=self.log,
        )
        self.session = 0
        #: Connections tried so far (diagnostics: a device that keeps failing shows here).
        self.connect_attempts = 0
        self._seq = 0
        #: Events published so far, all sessions, and events published again on a ``resend``
        #: (diagnostics and tests).
        self.emitted = 0
        self.resent = 0
        #: The latest events of this and earlier sessions, for ``resend``.
        self.recent: deque[EventBase] = deque(maxlen=max(1, options.resend_buffer))
        self._connected = False
        self._faults = Faults(ErrorBurst(options.fault_errors, options.fault_window_s, clock))
        self._published: tuple[StatusState, int, str | None] | None = None

    # ------------------------------------------------------------------ hooks for subclasses

    @abc.abstractmethod
    async def connect(self) -> None:
        """Open the device and make sure it answers; raise OSError/DeviceUnavailable if not."""

    @abc.abstractmethod
    async def serve(self) -> None:
        """Read the device until it is lost (raise OSError/DeviceLost); emit events meanwhile."""

    @abc.abstractmethod
    async def disconnect(self) -> None:
        """Release the device; never raises."""

    async def execute(self, command: DeviceCommand) -> None:
        """Carry out a command from the ``cmd`` topic; the default supports none."""
        raise CommandRejected(f"{self.kind} driver does not support command {command.cmd!r}")

    def on_session_start(self) -> None:  # noqa: B027 - optional hook, empty by design
        """Called when a new session starts (reset per-session state here)."""

    # ------------------------------------------------------------------ what subclasses call

    @property
    def online(self) -> bool:
        """True while the device is connected (a session is open)."""
        return self._connected

    @property
    def seq(self) -> int:
        """The ``seq`` of the last event of this session (0 before the first)."""
        return self._seq

    @property
    def broker_ready(self) -> asyncio.Event:
        """Set while the link is connected with a last will naming the current session."""
        return self.link.ready

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
        self._seq += 1
        event = event_type(seq=self._seq, ts=ts or utc_now(), session=self.session, **fields)
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
        """Clear an error-burst fault once its window is quiet (call it now and then)."""
        for code in self._faults.quiet_bursts():
            self.clear_fault(code)

    def raise_fault(self, code: str, text: str) -> None:
        """Enter the ``fault`` state for ``code`` (once) and emit a FaultEvent."""
        if not self._faults.raise_(code, text):
            return
        self.log.error("%s: fault %s: %s", self.device_id, code, text)
        if self._connected:
            self.emit(FaultEvent, code=code, text=text)
        self._publish_status()

    def clear_fault(self, code: str) -> None:
        """Leave the fault state for ``code``; the status returns to online when none is left."""
        if self._faults.clear(code):
            self.log.info("%s: fault %s cleared", self.device_id, code)
            self._publish_status()

    @property
    def faults(self) -> dict[str, str]:
        """Active fault codes and their texts."""
        return dict(self._faults.active)

    # ------------------------------------------------------------------ running

    async def run(self) -> None:
        """Run until cancelled: the link, the device loop and the command worker."""
        numbered_by_file = self._load_state_file()
        tasks = [
            asyncio.create_task(self.link.run(), name=f"{self.device_id}-link"),
            asyncio.create_task(self._device_loop(numbered_by_file), name=f"{self.device_id}-device"),
            asyncio.create_task(self._command_worker(), name=f"{self.device_id}-commands"),
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # the loops never end on their own: this raises what broke one
        finally:
            # Shielded: a caller that cancels again must not cut the offline status short.
            # The device first, the link last: it publishes `offline` on its way out.
            link, device, worker = tasks
            cleanup = asyncio.ensure_future(self._stop(worker, device, link))
            try:
                await asyncio.shield(cleanup)
            except asyncio.CancelledError:
                if not cleanup.done():
                    self.log.warning("%s: stopped before its clean shutdown ended", self.device_id)
                raise

    @staticmethod
    async def _stop(*tasks: asyncio.Task[None]) -> None:
        for task in tasks:
            await stop_task(task)

    # ---- the device loop

    async def _device_loop(self, numbered_by_file: bool) -> None:
        if not numbered_by_file:
            await self._number_from_broker()
        # Say where the driver stands before the device answers: offline, the last session.
        self._publish_status()
        backoff = Backoff(FIRST_BACKOFF_S, max(FIRST_BACKOFF_S, self.options.reconnect_max_s))
        while True:
            self.connect_attempts += 1
            try:
                await self.connect()
            except Exception as error:
                await self.disconnect()
                delay = backoff.next()
                if isinstance(error, OSError | DeviceUnavailable | DeviceLost):
                    self.log.info(
                        "%s: device not available (%s); retrying in %.1f s",
                        self.device_id,
                        error,
                        delay,
                    )
                else:
                    self.log.exception("%s: driver error while connecting: %s", self.device_id, error)
                self._publish_status(detail=f"device not available: {error}")
                await asyncio.sleep(delay)
                continue
            except BaseException:
                await self.disconnect()
                raise
            detail = "device closed"
            started = time.monotonic()
            try:
                self._start_session()
                await self.serve()
            except (OSError, DeviceLost) as error:
                self.log.warning("%s: device lost: %s", self.device_id, error)
                detail = f"device lost: {error}"
            except Exception as error:
                # A bug in a driver must not stop the table: say so loudly and reconnect.
                self.log.exception("%s: driver error, reconnecting: %s", self.device_id, error)
                detail = f"driver error: {error}"
            finally:
                self._connected = False
                await self.disconnect()
            self._publish_status(detail=detail)
            if time.monotonic() - started >= self.options.stable_session_s:
                backoff.reset()
            await asyncio.sleep(backoff.next())

    async def _number_from_broker(self) -> None:
        """Continue from the session this device's driver left retained on the broker."""
        previous = await self.link.previous_status(SESSION_BASE_WAIT_S)
        if previous is not None and previous.session > self.session:
            self.session = previous.session
        if not self.link.contacted:
            self.log.warning(
                "%s: no status from the broker; numbering sessions from %d", self.device_id, self.session
            )
        else:
            self.log.info("%s: previous session %d", self.device_id, self.session)

    def _start_session(self) -> None:
        self.session += 1
        self._seq = 0
        self._faults.reset()
        self._connected = True
        self._save_state_file()
        self.on_session_start()
        self.log.info("%s: online, session %d", self.device_id, self.session)
        self._publish_status()

    def _publish_status(self, detail: str | None = None) -> None:
        state: StatusState
        if not self._connected:
            state = "offline"
        elif self._faults.active:
            state, detail = "fault", self._faults.describe()
        else:
            state = "online"
        key = (state, self.session, None if state == "offline" else detail)
        if key == self._published:
            return
        self._published = key
        self.link.set_status(Status(state=state, ts=utc_now(), session=self.session, detail=detail))

    # ---- commands, one at a time in the order they came

    async def _command_worker(self) -> None:
        while True:
            received = await self.link.commands.get()
            topic, command = received.topic, received.command
            if isinstance(command, ResendCommand):
                self._resend(topic, command)  # from the ring buffer: the device is not needed
                continue
            if not self._connected:
                self.log.error(
                    "%s: %s: cannot execute %r: device offline", self.device_id, topic, command.cmd
                )
                continue
            try:
                await self.execute(command)
            except CommandRejected as error:
                self.log.error("%s: %s: rejected %r: %s", self.device_id, topic, command.cmd, error)
            except (OSError, DeviceLost) as error:
                self.log.error("%s: %s: %r failed: %s", self.device_id, topic, command.cmd, error)
            except Exception:
                self.log.exception("%s: %s: %r failed", self.device_id, topic, command.cmd)
            else:
                self.log.info("%s: executed %r", self.device_id, command.cmd)

    def _resend(self, topic: str, command: ResendCommand) -> None:
        """Publish again the events of ``command``'s range still in the ring, unchanged."""
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

    # ---- session numbers across process restarts, without a broker

    def _load_state_file(self) -> bool:
        """Read the state file's session number; True when it gave one."""
        path = self.options.state_file
        session = load_session(path, self.log, self.device_id) if path is not None else None
        if session is None:
            return False
        self.session = max(self.session, session)
        return self.session > 0

    def _save_state_file(self) -> None:
        if self.options.state_file is not None:
            save_session(self.options.state_file, self.session, self.log, self.device_id)


