"""``tablectl run``: the command line of the table controller service.

``tablectl run --config FILE`` recovers from the journal, serves the table over MQTT
(:class:`controller.service.network.Service`) and runs the ``[[devices]]`` drivers, until SIGINT/SIGTERM.
See ``docs/service.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import logging
import sys
from pathlib import Path
from typing import Final

from config.errors import ConfigError
from config.exposure import refusal
from config.loader import load_table
from config.models import TableConfig
from config.registry import DeckRegistry
from controller.service.drivers import DeviceRunner
from controller.service.log_lines import LogLines
from controller.service.network import EXIT_ERROR, EXIT_OK, Service
from controller.service.systemd import Notifier
from controller.service.table import TableController
from link.aiomqtt_adapter import tolerate_socket_race
from link.stop_signals import stop_on_signals

__all__ = ["Service", "add_arguments", "main", "serve", "setup_logging"]

log = logging.getLogger(__name__)

#: The loopback port of the embedded broker: the standard one, where local drivers look first.
EMBEDDED_PORT: Final = 1883


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
    parser.add_argument(
        "--take-over",
        action="store_true",
        help="start even when the broker holds another controller's 'online' status for this "
        "table (one that is gone for good without saying so); never with one still running",
    )
    parser.add_argument(
        "--embedded-port",
        type=int,
        default=EMBEDDED_PORT,
        metavar="PORT",
        help="with [mqtt] url = 'embedded': the loopback port of the broker started in this "
        f"process (default {EMBEDDED_PORT}; 0: any free port)",
    )


def setup_logging(level: str) -> None:
    """Log lines to stderr, written by a thread of their own in batches
    (:mod:`controller.service.log_lines`: the event loop neither writes a line nor wakes the thread
    at each line). The lines keep their order and their time (taken when logged); the thread writes what
    is waiting at exit (``atexit``).
    """
    lines = LogLines(sys.stderr, logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    lines.start()
    atexit.register(lines.stop)
    logging.basicConfig(level=level, handlers=[lines.handler])
    # paho's own chatter is DEBUG noise even on a DEBUG bench.
    logging.getLogger("mqtt").setLevel(max(logging.INFO, logging.getLevelName(level)))


def replay_only(config: TableConfig, registry: DeckRegistry) -> int:
    """Replay the whole journal and print what it holds, without touching the broker or the journal.

    Every retained record goes through a fresh engine; each checkpoint on the way is compared with
    the replayed state, each published alert and hand result with the replayed one. Exit 1 when
    they diverge.
    """
    controller = TableController(config, registry)
    try:
        recovery = controller.replay()
    except OSError as error:
        print(f"error: journal {config.journal.path}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    state = controller.state or controller.engine.public_state()
    print(
        f"{config.journal.path}: {recovery.received} received records, {recovery.replayed} "
        f"replayed; last session {recovery.session - 1}; hand {state.hand}, phase {state.phase}, "
        f"{len(state.alerts)} active alerts; {len(recovery.problems)} unreadable lines; "
        f"{len(recovery.divergences)} divergences; {len(recovery.pending)} unpublished outputs"
    )
    print(
        f"  {len(recovery.outages)} outages; {len(recovery.chain)} breaks of the hash chain; "
        f"replay from {recovery.checkpoint or 'the first record'}"
    )
    for line in recovery.problems + recovery.outages + recovery.chain + recovery.divergences:
        print(f"  {line}")
    return EXIT_OK if not (recovery.divergences or recovery.chain) else EXIT_ERROR


def main(args: argparse.Namespace) -> int:
    try:
        config, registry = load_table(args.config)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    setup_logging(args.log_level or config.logging.level)
    if args.replay_only:
        return replay_only(config, registry)
    refused = refusal(Path(args.config), config)
    if refused is not None:
        print(f"error: {refused}", file=sys.stderr)
        return EXIT_ERROR
    if config.mqtt.embedded:
        return asyncio.run(_run_embedded(config, registry, args.embedded_port))
    return asyncio.run(serve(config, registry, take_over=args.take_over))


async def _run_embedded(config: TableConfig, registry: DeckRegistry, port: int) -> int:
    """``[mqtt] url = "embedded"``: an MQTT 3.1.1 broker in this process, on loopback only."""
    try:
        from controller.broker.embedded import BrokerError, EmbeddedBroker
    except ModuleNotFoundError as error:
        if error.name != "amqtt":
            raise
        log.error("[mqtt] url = 'embedded' needs amqtt: pip install 'tablectl[demo]'")
        return EXIT_ERROR

    broker = EmbeddedBroker(port)
    try:
        await broker.start()
    except BrokerError as error:
        log.error("%s", error)
        return EXIT_ERROR
    try:
        log.info("embedded broker: drivers on this machine publish to %s", broker.url)
        mqtt = config.mqtt.model_copy(update={"url": broker.url})
        return await serve(config.model_copy(update={"mqtt": mqtt}), registry)
    finally:
        await broker.stop()


async def serve(
    config: TableConfig, registry: DeckRegistry, *, drivers: bool = True, take_over: bool = False
) -> int:
    """The service, and the ``[[devices]]`` drivers once it is subscribed; until a signal.

    ``drivers=False``: the drivers run elsewhere (the demo runs them beside its simulators, so
    that the two processes share the work; :mod:`controller.demo.service_process`).
    """
    stop = asyncio.Event()
    tolerate_socket_race(asyncio.get_running_loop())
    signals = stop_on_signals(stop)
    devices = DeviceRunner(config if drivers else config.model_copy(update={"devices": []}))
    service = Service(config, registry, stop=stop, take_over=take_over)
    serving = asyncio.create_task(service.run(), name="service")
    systemd = Notifier.from_environment()
    watchdog: asyncio.Task[None] | None = None
    try:
        ready = asyncio.create_task(service.ready.wait())
        await asyncio.wait({serving, ready}, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        if service.ready.is_set():
            # The retained ``online`` is out: systemd may now start what comes after us.
            systemd.ready(f"table {config.table.id} online")
            watchdog = systemd.start_watchdog()
            await devices.start()
        return await serving
    finally:
        systemd.stopping()
        # The service goes first: the engine must not see the drivers leave.
        if not serving.done():
            stop.set()
            await serving
        await devices.stop()
        if watchdog is not None:
            watchdog.cancel()
        signals.close()


if __name__ == "__main__":
    # ``python -m controller.service.cli --config FILE``: the same as ``tablectl run``.
    _parser = argparse.ArgumentParser(prog="python -m controller.service.cli", description=__doc__)
    add_arguments(_parser)
    sys.exit(main(_parser.parse_args()))
