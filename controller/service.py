"""``tablectl run``: the table controller service.

It connects to the broker, subscribes to the table's device events, device statuses and dealer
inputs, feeds them through the engine and publishes alerts (QoS 1), the retained public state and
device commands (lamp, buzzer). ``controller/status`` goes ``online`` only once the subscriptions
are in place; the last will says ``offline``, and so does the service itself before a clean
disconnect. After a lost connection it reconnects with backoff, resubscribes and republishes its
status and the state. Every message is journaled; a restart replays the journal (see
``controller.table``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections import deque
from datetime import UTC, datetime
from typing import Final

import aiomqtt

from config.errors import ConfigError
from config.loader import load_table
from config.models import TableConfig
from config.registry import DeckRegistry
from contract.models import Status, StatusState
from controller.devices import DeviceRunner
from controller.mqtt import Backoff, client_id, make_client
from controller.table import Outgoing, TableController

log = logging.getLogger("controller.service")

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
#: Flush the outbox at least this often while messages keep arriving.
FLUSH_EVERY: Final = 100
OFFLINE_TIMEOUT_S: Final = 2.0


def utc_now() -> datetime:
    return datetime.now(UTC)


class Service:
    """The running service of one table; ``run()`` returns when ``stop`` is set."""

    def __init__(
        self,
        config: TableConfig,
        registry: DeckRegistry,
        *,
        stop: asyncio.Event | None = None,
    ) -> None:
        self.config = config
        self.registry = registry
        self.stop = stop or asyncio.Event()
        self.controller = TableController(config, registry)
        self.topics = self.controller.topics
        self.outbox: deque[Outgoing] = deque()
        self.connections = 0

    def _status(self, state: StatusState, detail: str | None = None) -> bytes:
        return Status(
            state=state, ts=utc_now(), session=self.controller.session, detail=detail
        ).to_json()

    async def run(self) -> int:
        """Recover from the journal, then serve until ``stop`` is set."""
        recovery = self.controller.recover(utc_now())
        log.info(
            "table %s: session %d; journal %s: %d received records replayed%s%s",
            self.config.table.id,
            recovery.session,
            self.config.journal.path,
            recovery.replayed,
            f", {len(recovery.problems)} unreadable lines" if recovery.problems else "",
            f", {len(recovery.pending)} outputs still to publish" if recovery.pending else "",
        )
        self.outbox.extend(recovery.pending)
        devices = DeviceRunner(self.config)
        try:
            await devices.start()
            await self._broker_loop()
        finally:
            await devices.stop()
            self.controller.close()
        log.info("table %s: stopped", self.config.table.id)
        return EXIT_OK

    # ----------------------------------------------------------------------------------------

    async def _broker_loop(self) -> None:
        mqtt = self.config.mqtt
        will = aiomqtt.Will(
            self.topics.controller_status, self._status("offline", "lost"), qos=1, retain=True
        )
        client = make_client(mqtt, client_id(mqtt, self.config.table.id), will)
        backoff = Backoff()
        while not self.stop.is_set():
            try:
                async with client:
                    self.connections += 1
                    log.info("connected to %s:%d", mqtt.host, mqtt.port)
                    backoff.reset()
                    await self._serve(client)
                    await self._say_offline(client)
                return
            except aiomqtt.MqttError as error:
                log.warning("broker %s:%d: %s", mqtt.host, mqtt.port, error)
            delay = backoff.next()
            log.info("reconnecting in %.1f s", delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), delay)

    async def _serve(self, client: aiomqtt.Client) -> None:
        """Subscribe, announce, then process messages until ``stop`` (or a lost connection)."""
        await client.subscribe(
            [
                (self.topics.all_device_events, 1),
                (self.topics.all_device_status, 1),
                (self.topics.input, 1),
            ]
        )
        self.outbox.extend(self.controller.on_connect(utc_now()))
        await self._flush(client)
        await client.publish(
            self.topics.controller_status, self._status("online"), qos=1, retain=True
        )
        log.info("online: subscribed to %s/dev/+/event, dev/+/status, input", self.topics.base)
        receiver = asyncio.create_task(self._receive(client))
        stopper = asyncio.create_task(self.stop.wait())
        try:
            await asyncio.wait({receiver, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
            receiver.cancel()
            await asyncio.gather(stopper, receiver, return_exceptions=True)
        if not receiver.cancelled():
            receiver.result()  # re-raises the MqttError of a lost connection

    async def _receive(self, client: aiomqtt.Client) -> None:
        since_flush = 0
        async for message in client.messages:
            payload = message.payload
            if isinstance(payload, str):
                payload = payload.encode()
            elif not isinstance(payload, bytes | bytearray):
                payload = b"" if payload is None else str(payload).encode()
            self.outbox.extend(self.controller.receive(str(message.topic), bytes(payload), utc_now()))
            since_flush += 1
            # Catch up first when messages queue up (the state is then published once).
            if len(client.messages) == 0 or since_flush >= FLUSH_EVERY:
                await self._flush(client)
                since_flush = 0

    async def _flush(self, client: aiomqtt.Client) -> None:
        """Publish the outbox in order; a state followed by a newer one is skipped.

        An item leaves the outbox only once the broker has accepted it; after a lost connection
        the rest waits for the next one.
        """
        last_state = max((i for i, o in enumerate(self.outbox) if o.what == "state"), default=-1)
        index = 0
        while self.outbox:
            out = self.outbox[0]
            if not (out.what == "state" and index < last_state):
                await client.publish(out.topic, out.payload, qos=1, retain=out.retain)
                self.controller.published(out, utc_now())
            self.outbox.popleft()
            index += 1

    async def _say_offline(self, client: aiomqtt.Client) -> None:
        """Publish ``offline`` before a clean disconnect (which suppresses the last will)."""
        try:
            await client.publish(
                self.topics.controller_status,
                self._status("offline", "stopped"),
                qos=1,
                retain=True,
                timeout=OFFLINE_TIMEOUT_S,
            )
        except aiomqtt.MqttError as error:
            log.warning("could not publish offline: %s", error)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", "-c", required=True, help="the table configuration (TOML)")
    parser.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="override [logging] level (DEBUG shows tag UIDs: bench use only)",
    )
    parser.add_argument(
        "--replay-only",
        action="store_true",
        help="replay the journal through the engine, print a summary and exit (no broker)",
    )


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # paho's own chatter is DEBUG noise even on a DEBUG bench.
    logging.getLogger("mqtt").setLevel(max(logging.INFO, logging.getLevelName(level)))


def replay_only(config: TableConfig, registry: DeckRegistry) -> int:
    """Replay the journal and print what it holds, without touching the broker or the journal."""
    controller = TableController(config, registry)
    recovery = controller.replay()
    state = controller.state or controller.engine.public_state()
    print(
        f"{config.journal.path}: {recovery.received} received records, {recovery.replayed} "
        f"replayed; last session {recovery.session - 1}; hand {state.hand}, phase {state.phase}, "
        f"{len(state.alerts)} active alerts; {len(recovery.problems)} unreadable lines; "
        f"{len(recovery.divergences)} divergences; {len(recovery.pending)} unpublished outputs"
    )
    for line in recovery.problems + recovery.divergences:
        print(f"  {line}")
    return EXIT_OK if not recovery.divergences else EXIT_ERROR


def main(args: argparse.Namespace) -> int:
    try:
        config, registry = load_table(args.config)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    _setup_logging(args.log_level or config.logging.level)
    if args.replay_only:
        return replay_only(config, registry)
    if config.mqtt.embedded:
        print(
            f"error: {args.config}: [mqtt] url = 'embedded' is for tablectl demo; "
            "tablectl run needs a broker URL (mqtt://host:port)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    return asyncio.run(_run(config, registry))


async def _run(config: TableConfig, registry: DeckRegistry) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return await Service(config, registry, stop=stop).run()


if __name__ == "__main__":
    # ``python -m controller.service --config FILE``: the same as ``tablectl run``.
    _parser = argparse.ArgumentParser(prog="python -m controller.service", description=__doc__)
    add_arguments(_parser)
    sys.exit(main(_parser.parse_args()))
