"""A driver: one device's part, its session and its link to the broker, run side by side.

A :class:`Driver` is composed, not subclassed. It holds three parts:

- the *device* (anything implementing :class:`Device`: the shuffler, the RFID reader, the sensor
  board, each in ``drivers/<kind>/driver.py``) that opens the hardware, turns what it says into
  events and carries out commands; it is made by the driver for its session (as asyncio makes a
  protocol from a factory) and knows nothing about MQTT;
- the :class:`~drivers.session.DeviceSession` that numbers, publishes and keeps events, faults and
  the status;
- the *link* (:class:`link.device.DeviceLink`, or :class:`testing.memory_link.MemoryLink` in tests).

:meth:`Driver.run` runs three things until cancelled: the *device loop* (connect with backoff;
every successful connection opens a new session, a lost device makes the status ``offline`` and
the loop reconnects), the *command worker* (commands from the link's ordered queue, one at a
time; ``resend`` from the session's ring, with or without the device) and the link. A device
that fails right after connecting is retried with growing delays: the backoff is reset only by a
session that lasted ``stable_session_s``. The registry (:mod:`drivers.registry`) opens the
driver a configuration names.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar

from config.models import DriverConfig, MqttSection, RfidReaderDevice
from contract.models import DeviceCommand, LampCommand, ResendCommand, StatusCommand
from contract.topics import Topics
from drivers.errors import CommandRejected, DeviceLost, DeviceUnavailable
from drivers.session import RESEND_BUFFER, DeviceSession, DriverLink
from link.backoff import Backoff
from link.client import client_id
from link.commands import ReceivedCommand
from link.device import DeviceLink

#: How long the device loop waits for the broker before numbering sessions without it.
SESSION_BASE_WAIT_S: Final = 5.0
FIRST_BACKOFF_S: Final = 0.1
#: A session that lasted this long was a good connection: the next reconnect starts from the
#: first delay again. A device that fails sooner (answers the handshake, then breaks at once)
#: is retried with growing delays instead of being reopened in a tight loop.
STABLE_SESSION_S: Final = 5.0


#: Commands that set something the device keeps (the alert lamp), not something it does once: the
#: latest is set again whenever the device (re)connects, so that one sent while it was away (the
#: controller sets the lamp at every start, maybe before the board answers) or undone by a replug
#: (the board starts dark) still shows. A buzz or a shuffle asked while it is away is refused.
LASTING: Final = (LampCommand,)


@dataclass(frozen=True)
class DriverOptions:
    """Tunables common to every driver (tests shorten them)."""

    reconnect_max_s: float = 10.0
    fault_errors: int = 10
    fault_window_s: float = 5.0
    outbox_limit: int = 10_000
    command_limit: int = 100
    state_file: Path | None = None
    client_id: str | None = None
    resend_buffer: int = RESEND_BUFFER
    stable_session_s: float = STABLE_SESSION_S

    @classmethod
    def of(cls, device: DriverConfig) -> DriverOptions:
        """The options a device's configuration sets (the reader also sets its error burst)."""
        if isinstance(device, RfidReaderDevice):
            return cls(
                reconnect_max_s=device.reconnect_max_s,
                fault_errors=device.fault_crc_errors,
                fault_window_s=device.fault_window_s,
                resend_buffer=device.resend_buffer,
            )
        return cls(reconnect_max_s=device.reconnect_max_s, resend_buffer=device.resend_buffer)


class Device(Protocol):
    """The device-specific part of a driver; it reports through the session it was made for.

    The driver calls, for every connection: :meth:`connect`; when it succeeded, the session
    begins and :meth:`session_started`; then :meth:`serve` until the device is lost; then
    :meth:`disconnect` (also after a failed :meth:`connect`). :meth:`execute` runs between, one
    command at a time, while a session is open.
    """

    async def connect(self) -> None:
        """Open the device and make sure it answers; raise OSError/DeviceUnavailable if not."""
        ...

    def session_started(self) -> None:
        """A new session began (reset per-session state; report what the device already had)."""
        ...

    async def serve(self) -> None:
        """Read the device until it is lost (raise OSError/DeviceLost); emit events meanwhile."""
        ...

    async def disconnect(self) -> None:
        """Release the device; never raises."""
        ...

    async def execute(self, command: DeviceCommand) -> None:
        """Carry out a command from the ``cmd`` topic; raise CommandRejected when it cannot."""
        ...


DeviceT_co = TypeVar("DeviceT_co", bound=Device, covariant=True)
DeviceT = TypeVar("DeviceT", bound=Device)


class Driver(Generic[DeviceT_co]):
    """One device's driver: run it with ``await driver.run()`` until cancelled."""

    def __init__(
        self,
        device_id: str,
        kind: str,
        mqtt: MqttSection,
        topics: Topics,
        options: DriverOptions,
        device: Callable[[DeviceSession], DeviceT_co],
        *,
        link: DriverLink | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``kind`` is the configuration's ``driver`` string (the logger is ``drivers.{kind}``);
        ``device`` makes the device part for the driver's session."""
        self.device_id = device_id
        self.kind = kind
        self.topics = topics
        self.options = options
        self.log = logging.getLogger(f"drivers.{kind}")
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
        self.session = DeviceSession(
            device_id,
            self.link,
            self.log,
            fault_errors=options.fault_errors,
            fault_window_s=options.fault_window_s,
            resend_buffer=options.resend_buffer,
            state_file=options.state_file,
            clock=clock,
        )
        self._device = device(self.session)
        #: The latest of each lasting command (``LASTING``), set again at every connection.
        self._lasting: dict[str, ReceivedCommand] = {}
        #: Connections tried so far (diagnostics: a device that keeps failing shows here).
        self.connect_attempts = 0

    @staticmethod
    def for_device(
        config: DriverConfig,
        mqtt: MqttSection,
        topics: Topics,
        device: Callable[[DeviceSession], DeviceT],
        *,
        options: DriverOptions | None = None,
        link: DriverLink | None = None,
    ) -> Driver[DeviceT]:
        """The driver of a configured device: its id, its ``driver`` string as its kind, and the
        options its configuration sets (:meth:`DriverOptions.of`) unless ``options`` are given."""
        return Driver(
            config.id, config.driver, mqtt, topics, options or DriverOptions.of(config), device, link=link
        )

    @property
    def device(self) -> DeviceT_co:
        """The device-specific part."""
        return self._device

    @property
    def online(self) -> bool:
        """True while the device is connected (a session is open)."""
        return self.session.online

    @property
    def emitted(self) -> int:
        """Events published so far, all sessions."""
        return self.session.emitted

    @property
    def resent(self) -> int:
        """Events published again on a ``resend``."""
        return self.session.resent

    @property
    def broker_ready(self) -> asyncio.Event:
        """Set while the link is connected with a last will naming the current session."""
        return self.link.ready

    # ------------------------------------------------------------------ running

    async def run(self) -> None:
        """Run until cancelled: the link, the device loop and the command worker."""
        numbered_by_file = self.session.continue_from_state_file()
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

    async def _device_loop(self, numbered_by_file: bool) -> None:
        session, device = self.session, self._device
        if not numbered_by_file:
            await session.continue_from_broker(SESSION_BASE_WAIT_S)
        # Say where the driver stands before the device answers: offline, the last session.
        session.publish_status()
        backoff = Backoff(FIRST_BACKOFF_S, max(FIRST_BACKOFF_S, self.options.reconnect_max_s))
        while True:
            self.connect_attempts += 1
            try:
                await device.connect()
            except Exception as error:
                await device.disconnect()
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
                session.publish_status(detail=f"device not available: {error}")
                await asyncio.sleep(delay)
                continue
            except BaseException:
                await device.disconnect()
                raise
            detail = "device closed"
            started = time.monotonic()
            try:
                session.begin()
                device.session_started()
                session.publish_status()
                for setting in self._lasting.values():
                    self.link.commands.again(setting)  # (through the worker: one command at a time)
                await device.serve()
            except (OSError, DeviceLost) as error:
                self.log.warning("%s: device lost: %s", self.device_id, error)
                detail = f"device lost: {error}"
            except Exception as error:
                # A bug in a driver must not stop the table: say so loudly and reconnect.
                self.log.exception("%s: driver error, reconnecting: %s", self.device_id, error)
                detail = f"driver error: {error}"
            finally:
                session.end()
                await device.disconnect()
            session.publish_status(detail=detail)
            if time.monotonic() - started >= self.options.stable_session_s:
                backoff.reset()
            await asyncio.sleep(backoff.next())

    async def _command_worker(self) -> None:
        while True:
            received = await self.link.commands.get()
            topic, command = received.topic, received.command
            if isinstance(command, ResendCommand):
                self.session.resend(topic, command)  # from the ring buffer: the device is not needed
                continue
            if isinstance(command, StatusCommand):
                self.session.say_status(command.ts)  # how far its events went, device connected or not
                continue
            if isinstance(command, LASTING):
                self._lasting[command.cmd] = received
            if not self.session.online:
                if isinstance(command, LASTING):
                    kept = "%s: %s: %r kept until the device is back"
                    self.log.info(kept, self.device_id, topic, command.cmd)
                else:
                    self.log.error(
                        "%s: %s: cannot execute %r: device offline", self.device_id, topic, command.cmd
                    )
                continue
            try:
                await self._device.execute(command)
            except CommandRejected as error:
                self.log.error("%s: %s: rejected %r: %s", self.device_id, topic, command.cmd, error)
            except (OSError, DeviceLost) as error:
                self.log.error("%s: %s: %r failed: %s", self.device_id, topic, command.cmd, error)
            except Exception:
                self.log.exception("%s: %s: %r failed", self.device_id, topic, command.cmd)
            else:
                self.log.info("%s: executed %r", self.device_id, command.cmd)


async def stop_task(task: asyncio.Task[Any], attempts: int = 5, patience_s: float = 2.0) -> None:
    """Cancel ``task`` and wait until it has finished, cancelling again if needed.

    Python 3.11's ``asyncio.wait_for`` (used inside libraries) can swallow a cancellation that
    races with its result; a task that did so is cancelled again rather than waited for forever.
    A driver task stopped this way publishes ``offline`` itself before it ends.
    """
    for _ in range(attempts):
        if task.done():
            break
        task.cancel()
        await asyncio.wait({task}, timeout=patience_s)
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: a stopped loop's last error was already logged
