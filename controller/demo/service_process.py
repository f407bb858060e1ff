"""The demo's table controller in child processes: ``tablectl run``'s parts on the other core.

Flat out, every chip a dealer moves is a message through the driver, the broker, the engine
service (journal, engine, state) and back to the demo's observer. With the simulators, the dealer
and the observer in the demo's process, the drivers in one child and the engine service in
another (the broker in a third: :mod:`controller.demo.broker_process`), both cores work on that
pipeline (measured: ``docs/demo.md``, "Pace"). Each child runs production code as ``tablectl
run`` does: the service (:func:`controller.service.cli.serve` without drivers), or the drivers
(:class:`controller.service.drivers.DeviceRunner`), given the demo's configuration as JSON on its
standard input (the demo generates it; no file to parse):

- it runs in a session of its own (:mod:`controller.demo.child_process`), so a Ctrl-C at the
  terminal reaches only the demo, which then stops its dealer first, the service after (it
  publishes ``offline``), then the drivers (each publishes its own);
- it stops as on SIGTERM when its standard input closes: the demo stopped it, or died.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Final, Literal, TypeAlias

from config.models import TableConfig
from config.registry import DeckRegistry
from controller.demo.child_process import ChildProcess, sigterm_at_eof

log = logging.getLogger(__name__)

#: How long the child gets to publish ``offline``, close its journal or stop its drivers.
STOP_TIMEOUT_S: Final = 8.0

#: What a child runs: the engine service, or the drivers.
Role: TypeAlias = Literal["service", "drivers"]
_ROLES: Final[dict[str, str]] = {"service": "engine service", "drivers": "drivers"}


class ServiceProcess(ChildProcess):
    """``tablectl run``'s service or drivers for ``config`` in a child process (see the module
    docstring)."""

    stop_timeout_s = STOP_TIMEOUT_S

    def __init__(self, config: TableConfig, *, role: Role = "service", log_level: str = "WARNING") -> None:
        super().__init__()
        self.config = config
        self.role = role
        self.what = _ROLES[role]
        self.log_level = log_level

    async def start(self) -> None:
        child = await self.spawn(
            "controller.demo.service_process", "--role", self.role, "--log-level", self.log_level
        )
        await self.say(self.config.model_dump_json())
        log.info("%s: process %d", self.what, child.pid)


async def _serve_until_eof(config: TableConfig, registry: DeckRegistry) -> int:
    """``tablectl run``'s service (the demo runs the drivers) until standard input closes."""
    from controller.service.cli import serve

    watcher = sigterm_at_eof()
    try:
        return await serve(config, registry, drivers=False)
    finally:
        watcher.cancel()


async def _drive_until_eof(config: TableConfig) -> int:
    """``tablectl run``'s drivers alone, until SIGTERM or until standard input closes."""
    from controller.service.drivers import DeviceRunner
    from link.aiomqtt_adapter import tolerate_socket_race
    from link.stop_signals import stop_on_signals

    stop = asyncio.Event()
    tolerate_socket_race(asyncio.get_running_loop())
    with stop_on_signals(stop):
        watcher = sigterm_at_eof()
        devices = DeviceRunner(config)
        await devices.start()
        try:
            await stop.wait()
        finally:
            watcher.cancel()
            await devices.stop()  # each driver publishes its own ``offline``
    return 0


def main() -> int:
    from config.errors import ConfigError
    from config.loader import table_chips
    from config.registry import load_registry
    from controller.service.cli import setup_logging
    from controller.service.network import EXIT_ERROR

    parser = argparse.ArgumentParser(description="the demo's service or drivers (config on stdin)")
    parser.add_argument("--role", choices=tuple(_ROLES), default="service")
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args()
    setup_logging(args.log_level)
    line = sys.stdin.buffer.readline()
    try:
        config = TableConfig.model_validate_json(line)
        registry = load_registry(config.decks.registry)
        table_chips(config, registry)
    except (ValueError, ConfigError) as error:
        log.error("the demo's configuration: %s", error)
        return EXIT_ERROR
    if args.role == "drivers":
        return asyncio.run(_drive_until_eof(config))
    return asyncio.run(_serve_until_eof(config, registry))


if __name__ == "__main__":
    sys.exit(main())
