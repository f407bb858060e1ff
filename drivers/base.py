"""The base every device driver fills in: the MQTT side, sessions, status, faults, reconnects.

A driver subclass implements four hooks and nothing about MQTT:

- :meth:`Driver.connect` opens the device and confirms it answers (raise ``OSError`` or
  :class:`DeviceUnavailable` when it is not there);
- :meth:`Driver.serve` reads the device until it is lost (raise ``OSError`` or :class:`DeviceLost`),
  publishing what it observed with :meth:`Driver.emit`;
- :meth:`Driver.disconnect` releases the device (must not raise);
- :meth:`Driver.execute` carries out a contract command (raise :class:`CommandRejected`).

The base runs two loops side by side in :meth:`Driver.run`:

- the *device loop* connects with exponential backoff; every successful connection starts a new
  session (``session`` + 1, ``seq`` back to 1) and publishes ``online``; a lost device publishes
  ``offline`` and the loop reconnects;
- the *broker loop* keeps an aiomqtt client connected (re-entering it after the broker restarts,
  resubscribing to ``cmd``), publishes the retained status with last will ``offline``, flushes the
  outbox in order and dispatches commands.

Events produced while the broker is down wait in a bounded outbox; an overflow drops the oldest
event with an error in the log (never silently). Session numbers survive a process restart: the
broker loop reads the driver's own retained status once at start (and an optional state file), and
the device loop does not open a session before that is known.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, TypeVar

import aiomqtt

from config.models import MqttSection
from contract.models import (
    DeviceCommand,
    EventBase,
    FaultEvent,
    PayloadError,
    Status,
    StatusState,
    parse_command,
    parse_status,
)
from contract.topics import Topics

EventT = TypeVar("EventT", bound=EventBase)

#: How long the first broker connection waits for the driver's own retained status.
RETAINED_STATUS_WAIT_S: Final = 0.5
#: How long the device loop waits for the broker before numbering sessions without it.
SESSION_BASE_WAIT_S: Final = 5.0
FIRST_BACKOFF_S: Final = 0.1
BROKER_BACKOFF_MAX_S: Final = 5.0
OFFLINE_PUBLISH_TIMEOUT_S: Final = 1.0


class DeviceUnavailable(Exception):
    """The device cannot be opened or does not answer (unplugged, powered off)."""


class DeviceLost(Exception):
    """A connected device went away (end of file, heartbeat loss, hang-up)."""


class _WillOutdated(Exception):
    """A new session started: reconnect so that the last will names it."""


class CommandRejected(Exception):
    """A well-formed command this driver cannot carry out now (wrong device, offline, busy)."""


def utc_now() -> datetime:
    """Now, as an aware UTC datetime (the ``ts`` of every payload)."""
    return datetime.now(UTC)


def mqtt_client_kwargs(mqtt: MqttSection, identifier: str) -> dict[str, Any]:
    """Keyword arguments of :class:`aiomqtt.Client` for the configured broker."""
    kwargs: dict[str, Any] = {
        "hostname": mqtt.host,
        "port": mqtt.port,
        "identifier": identifier,
        "keepalive": mqtt.keepalive,
        "username": mqtt.username,
        "password": mqtt.password.get_secret_value() if mqtt.password is not None else None,
        "timeout": 5.0,
    }
    if mqtt.use_tls:
        tls = mqtt.tls
        kwargs["tls_params"] = aiomqtt.TLSParameters(
            ca_certs=str(tls.ca_file) if tls is not None and tls.ca_file else None,
            certfile=str(tls.cert_file) if tls is not None and tls.cert_file else None,
            keyfile=str(tls.key_file) if tls is not None and tls.key_file else None,
        )
        kwargs["tls_insecure"] = bool(tls is not None and tls.insecure)
    return kwargs


@dataclass(frozen=True)
class DriverOptions:
    """Tunables common to every driver (tests shorten them)."""

    reconnect_max_s: float = 10.0
    fault_errors: int = 10
    fault_window_s: float = 5.0
    outbox_limit: int = 10_000
    state_file: Path | None = None
    client_id: str | None = None


class ErrorBurst:
    """Counts errors in a sliding window; ``add`` says whether the burst threshold is reached."""

    def __init__(self, threshold: int, window_s: float, clock: Callable[[], float]) -> None:
        self.threshold = threshold
        self.window_s = window_s
        self._clock = clock
        self._times: deque[float] = deque()
        self.total = 0

    def _trim(self, now: float) -> None:
        while self._times and now - self._times[0] > self.window_s:
            self._times.popleft()

    def add(self) -> bool:
        now = self._clock()
        self.total += 1
        self._times.append(now)
        self._trim(now)
        return len(self._times) >= self.threshold

    def active(self) -> bool:
        """True while the window still holds a full burst."""
        self._trim(self._clock())
        return len(self._times) >= self.threshold

    def clear(self) -> None:
        self._times.clear()


@dataclass(frozen=True)
class _Outgoing:
    topic: str
    payload: bytes
    retain: bool


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
    ) -> None:
        self.device_id = device_id
        self.mqtt = mqtt
        self.topics = topics
        self.options = options or DriverOptions()
        self.log = logging.getLogger(f"drivers.{self.kind}")
        self._clock = clock
        self.event_topic = topics.device_event(device_id)
        self.status_topic = topics.device_status(device_id)
        self.cmd_topic = topics.device_cmd(device_id)

        self.session = 0
        self._seq = 0
        self._connected = False
        self._faults: dict[str, str] = {}
        self._burst_faults: set[str] = set()
        self._published_state: tuple[StatusState, int, str | None] | None = None
        self._errors = ErrorBurst(self.options.fault_errors, self.options.fault_window_s, clock)

        self._outbox: deque[_Outgoing] = deque()
        self._outbox_ready = asyncio.Event()
        self.dropped_events = 0
        self._session_base_known = asyncio.Event()
        self._retained_status: Status | None = None
        self._retained_seen = asyncio.Event()
        self._client: aiomqtt.Client | None = None
        self._command_tasks: set[asyncio.Task[None]] = set()
        #: Set while connected and subscribed with a last will naming the current session.
        self.broker_ready = asyncio.Event()

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

    # ------------------------------------------------------------------ publishing helpers

    @property
    def online(self) -> bool:
        """True while the device is connected (a session is open)."""
        return self._connected

    @property
    def seq(self) -> int:
        """The ``seq`` of the last event of this session (0 before the first)."""
        return self._seq

    def emit(self, event_type: type[EventT], ts: datetime | None = None, **fields: Any) -> EventT:
        """Publish one contract event of this session, numbering it; returns the event."""
        self._seq += 1
        event = event_type(seq=self._seq, ts=ts or utc_now(), **fields)
        self._enqueue(_Outgoing(self.event_topic, event.to_json(), retain=False))
        return event

    def report_error(self, code: str, text: str) -> None:
        """Count one error (corrupt frame, bad reply); a burst raises a ``fault``.

        The error is logged with the device id. When ``fault_errors`` errors fall within
        ``fault_window_s`` the status turns ``fault`` and a FaultEvent with ``code`` is emitted
        once; the status returns to ``online`` after a quiet window (see :meth:`tick_faults`).
        """
        self.log.warning("%s: %s", self.device_id, text)
        if self._errors.add() and code not in self._faults:
            self._burst_faults.add(code)
            self.raise_fault(
                code,
                f"{self._errors.threshold} errors within {self._errors.window_s:g} s: {text}",
            )

    def tick_faults(self) -> None:
        """Clear an error-burst fault once its window is quiet (call it now and then)."""
        if self._burst_faults and not self._errors.active():
            for code in list(self._burst_faults):
                self.clear_fault(code)

    def raise_fault(self, code: str, text: str) -> None:
        """Enter the ``fault`` state for ``code`` (once) and emit a FaultEvent."""
        if code in self._faults:
            return
        self._faults[code] = text
        self.log.error("%s: fault %s: %s", self.device_id, code, text)
        if self._connected:
            self.emit(FaultEvent, code=code, text=text)
        self._publish_status()

    def clear_fault(self, code: str) -> None:
        """Leave the fault state for ``code``; the status returns to online when none is left."""
        if self._faults.pop(code, None) is not None:
            self.log.info("%s: fault %s cleared", self.device_id, code)
            if code in self._burst_faults:
                self._burst_faults.discard(code)
                self._errors.clear()
            self._publish_status()

    @property
    def faults(self) -> dict[str, str]:
        """Active fault codes and their texts."""
        return dict(self._faults)

    # ------------------------------------------------------------------ running

    async def run(self) -> None:
        """Run until cancelled: the device loop and the broker loop side by side."""
        self._load_state_file()
        if self.options.state_file is not None and self.session > 0:
            self._session_base_known.set()
        broker = asyncio.create_task(self._broker_loop(), name=f"{self.device_id}-broker")
        device = asyncio.create_task(self._device_loop(), name=f"{self.device_id}-device")
        try:
            done, _ = await asyncio.wait({broker, device}, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # the loops never end on their own: this raises what broke one
        finally:
            # Shielded: a caller that cancels again must not cut the offline status short.
            cleanup = asyncio.ensure_future(self._stop_loops(device, broker))
            try:
                await asyncio.shield(cleanup)
            except asyncio.CancelledError:
                if not cleanup.done():
                    self.log.warning("%s: stopped before its clean shutdown ended", self.device_id)
                raise

    async def _stop_loops(self, device: asyncio.Task[None], broker: asyncio.Task[None]) -> None:
        # The device first: the broker loop then publishes `offline` on its way out.
        for task in (*self._command_tasks, device, broker):
            await stop_task(task)

    # ---- device side

    async def _device_loop(self) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SESSION_BASE_WAIT_S):
                await self._session_base_known.wait()
        if not self._session_base_known.is_set():
            self.log.warning(
                "%s: broker not reachable; numbering sessions from %d", self.device_id, self.session
            )
            self._session_base_known.set()
        backoff = FIRST_BACKOFF_S
        while True:
            try:
                await self.connect()
            except Exception as error:
                await self.disconnect()
                if isinstance(error, OSError | DeviceUnavailable | DeviceLost):
                    self.log.info(
                        "%s: device not available (%s); retrying in %.1f s",
                        self.device_id,
                        error,
                        backoff,
                    )
                else:
                    self.log.exception("%s: driver error while connecting: %s", self.device_id, error)
                self._publish_status(detail=f"device not available: {error}")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self.options.reconnect_max_s)
                continue
            except BaseException:
                await self.disconnect()
                raise
            backoff = FIRST_BACKOFF_S
            detail = "device closed"
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

    def _start_session(self) -> None:
        self.session += 1
        self._seq = 0
        self._faults.clear()
        self._burst_faults.clear()
        self._errors.clear()
        self._connected = True
        # The broker connection reconnects for this session's will (see _serve_broker).
        self.broker_ready.clear()
        self._save_state_file()
        self.on_session_start()
        self.log.info("%s: online, session %d", self.device_id, self.session)
        self._publish_status()

    # ---- status and outbox

    def _status(self, detail: str | None = None) -> Status:
        state: StatusState
        if not self._connected:
            state = "offline"
        elif self._faults:
            state = "fault"
            detail = "; ".join(f"{code}: {text}" for code, text in self._faults.items())
        else:
            state = "online"
        return Status(state=state, ts=utc_now(), session=self.session, detail=detail)

    def _publish_status(self, detail: str | None = None) -> None:
        status = self._status(detail)
        key = (status.state, status.session, None if status.state == "offline" else status.detail)
        if key == self._published_state:
            return
        self._published_state = key
        self._enqueue(_Outgoing(self.status_topic, status.to_json(), retain=True))

    def _enqueue(self, item: _Outgoing) -> None:
        if len(self._outbox) >= self.options.outbox_limit:
            lost = self._outbox.popleft()
            self.dropped_events += 1
            self.log.error(
                "%s: outbox full (%d messages while the broker is away): dropped the oldest, for %s",
                self.device_id,
                self.options.outbox_limit,
                lost.topic,
            )
        self._outbox.append(item)
        self._outbox_ready.set()

    @property
    def outbox_size(self) -> int:
        """Messages waiting for the broker."""
        return len(self._outbox)

    # ---- broker side

    def _will(self) -> aiomqtt.Will:
        status = Status(state="offline", ts=utc_now(), session=self.session, detail="driver gone")
        return aiomqtt.Will(self.status_topic, status.to_json(), qos=1, retain=True)

    def _client_id(self) -> str:
        prefix = self.options.client_id or self.mqtt.client_id or f"tablectl-{self.topics.table}"
        return f"{prefix}-{self.device_id}"

    async def _broker_loop(self) -> None:
        backoff = FIRST_BACKOFF_S
        while True:
            try:
                will_session = self.session
                client = aiomqtt.Client(
                    **mqtt_client_kwargs(self.mqtt, self._client_id()), will=self._will()
                )
                async with client:
                    self._client = client
                    backoff = FIRST_BACKOFF_S
                    try:
                        await self._serve_broker(client, will_session)
                    except asyncio.CancelledError:
                        await self._say_offline(client)
                        raise
            except _WillOutdated:
                # A clean disconnect (no will) and at once a connection whose will is current.
                self.log.debug("%s: reconnecting for session %d's will", self.device_id, self.session)
                continue
            except aiomqtt.MqttError as error:
                self.log.warning(
                    "%s: broker connection lost (%s); reconnecting in %.1f s",
                    self.device_id,
                    error,
                    backoff,
                )
            except Exception as error:
                # Whatever broke, the table keeps its driver: log it loudly and reconnect.
                self.log.exception("%s: broker connection failed: %s", self.device_id, error)
            finally:
                self._client = None
                self.broker_ready.clear()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BROKER_BACKOFF_MAX_S)

    async def _serve_broker(self, client: aiomqtt.Client, will_session: int) -> None:
        """Serve one broker connection until it fails (MqttError) or its will is outdated.

        The last will names a session; after a device reconnect the outbox is not flushed on
        this connection any more: the loop reconnects first, so that if the process dies the
        retained ``offline`` carries the latest session and a restart numbers on from it.
        """
        tasks = {asyncio.create_task(self._receive(client))}
        try:
            if not self._session_base_known.is_set():
                await self._read_retained_session(client)
            await client.subscribe(self.cmd_topic, qos=1)
            # The broker may have lost the retained status (restart without persistence).
            self._published_state = None
            self._publish_status()
            if self.session == will_session:
                self.broker_ready.set()
            self.log.info("%s: connected to the broker %s", self.device_id, self.mqtt.url)
            tasks.add(asyncio.create_task(self._flush(client, will_session)))
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
            if self.session != will_session:
                raise _WillOutdated
            raise aiomqtt.MqttError("message stream ended")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=1.0)
            for task in tasks:
                if task.done() and not task.cancelled():
                    task.exception()  # retrieved: the connection error is reported by the caller

    async def _read_retained_session(self, client: aiomqtt.Client) -> None:
        await client.subscribe(self.status_topic, qos=1)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RETAINED_STATUS_WAIT_S):
                await self._retained_seen.wait()
        await client.unsubscribe(self.status_topic)
        if self._retained_status is not None and self._retained_status.session > self.session:
            self.session = self._retained_status.session
        self.log.info("%s: previous session %d", self.device_id, self.session)
        self._session_base_known.set()

    async def _flush(self, client: aiomqtt.Client, will_session: int) -> None:
        me = asyncio.current_task()
        while True:
            await self._outbox_ready.wait()
            while self._outbox:
                if self.session != will_session:
                    return  # reconnect first: see _serve_broker
                item = self._outbox[0]
                await client.publish(item.topic, item.payload, qos=1, retain=item.retain)
                # Only dropped once the broker took it: a broker lost mid-publish resends it.
                if self._outbox and self._outbox[0] is item:
                    self._outbox.popleft()
                # asyncio.wait_for in Python 3.11 (inside aiomqtt's publish) can swallow a
                # cancellation that races with the PUBACK: honour it here.
                if me is not None and me.cancelling():
                    raise asyncio.CancelledError
            self._outbox_ready.clear()

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            topic = message.topic.value
            payload = message.payload
            if not isinstance(payload, bytes | str):
                self.log.error("%s: %s: payload is not text", self.device_id, topic)
                continue
            if topic == self.status_topic:
                self._on_own_status(topic, payload)
            elif topic == self.cmd_topic:
                self._on_command(topic, payload)
            # Anything else is another session's retained message (amqtt): not ours.

    def _on_own_status(self, topic: str, payload: bytes | str) -> None:
        if self._session_base_known.is_set():
            return
        try:
            self._retained_status = parse_status(topic, payload)
        except PayloadError as error:
            self.log.error("%s: ignoring unreadable retained status: %s", self.device_id, error)
        self._retained_seen.set()

    def _on_command(self, topic: str, payload: bytes | str) -> None:
        try:
            command = parse_command(topic, payload)
        except PayloadError as error:
            self.log.error("%s: rejected malformed command: %s", self.device_id, error)
            return
        task = asyncio.create_task(self._execute_logged(topic, command))
        self._command_tasks.add(task)
        task.add_done_callback(self._command_tasks.discard)

    async def _execute_logged(self, topic: str, command: DeviceCommand) -> None:
        if not self._connected:
            self.log.error(
                "%s: %s: cannot execute %r: device offline", self.device_id, topic, command.cmd
            )
            return
        try:
            await self.execute(command)
        except CommandRejected as error:
            self.log.error("%s: %s: rejected %r: %s", self.device_id, topic, command.cmd, error)
        except (OSError, DeviceLost) as error:
            self.log.error("%s: %s: %r failed: %s", self.device_id, topic, command.cmd, error)
        else:
            self.log.info("%s: executed %r", self.device_id, command.cmd)

    async def _say_offline(self, client: aiomqtt.Client) -> None:
        """Before a clean disconnect: publish ``offline`` ourselves (the will would not fire)."""
        status = Status(state="offline", ts=utc_now(), session=self.session, detail="driver stopped")
        with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
            async with asyncio.timeout(OFFLINE_PUBLISH_TIMEOUT_S):
                await client.publish(self.status_topic, status.to_json(), qos=1, retain=True)

    # ---- session numbers across process restarts

    def _load_state_file(self) -> None:
        path = self.options.state_file
        if path is None:
            return
        try:
            text = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return
        except OSError as error:
            self.log.error("%s: cannot read state file %s: %s", self.device_id, path, error)
            return
        try:
            self.session = max(self.session, int(text))
        except ValueError:
            self.log.error("%s: state file %s does not hold a session number", self.device_id, path)

    def _save_state_file(self) -> None:
        path = self.options.state_file
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(f"{self.session}\n", encoding="utf-8")
            tmp.replace(path)
        except OSError as error:
            self.log.error("%s: cannot write state file %s: %s", self.device_id, path, error)


async def stop_task(task: asyncio.Task[Any], attempts: int = 5, patience_s: float = 2.0) -> None:
    """Cancel ``task`` and wait until it has finished, cancelling again if needed.

    Python 3.11's ``asyncio.wait_for`` (used inside libraries) can swallow a cancellation that
    races with its result; a task that did so is cancelled again rather than waited for forever.
    """
    for _ in range(attempts):
        if task.done():
            break
        task.cancel()
        await asyncio.wait({task}, timeout=patience_s)
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: a stopped loop's last error was already logged


async def cancel_and_wait(task: asyncio.Task[Any]) -> None:
    """Cancel a driver task and wait for its clean shutdown (it publishes ``offline``)."""
    await stop_task(task)
