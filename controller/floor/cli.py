"""``tablectl floor``: the floor console, a process of its own on a supervisor's PC.

It needs only the broker: ``tablectl floor --broker mqtt://broker:1883`` finds every table under
the root by subscription and serves the console on ``--listen``. See ``docs/display.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from config.models import MqttSection, parse_listen

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
DEFAULT_LISTEN: Final = "127.0.0.1:8090"
DEFAULT_DATABASE: Final = "var/floor.sqlite"
PASSWORD_VARIABLE: Final = "TABLECTL_FLOOR_PASSWORD"  # noqa: S105 - the variable's name, not a password

log = logging.getLogger("controller.floor")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", required=True, metavar="URL",
                        help="the broker, mqtt://host:port or mqtts://host:port")
    parser.add_argument("--root", default="holdem", help="topic root of the tables (default holdem)")
    parser.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                        help=f"where to serve the console (default {DEFAULT_LISTEN}; port 0: any free port)")
    parser.add_argument("--db", default=DEFAULT_DATABASE, metavar="FILE",
                        help=f"SQLite file of the alert history (default {DEFAULT_DATABASE})")
    parser.add_argument("--retain-days", type=_days, default=0, metavar="DAYS",
                        help="remove alert changes and hand results received more than DAYS ago "
                             "(at start, then hourly; default 0: keep everything)")
    parser.add_argument("--username", help=f"broker user name (the password from ${PASSWORD_VARIABLE})")
    parser.add_argument("--client-id", help="MQTT client id (default: tablectl-floor-ROOT-RANDOM)")
    parser.add_argument("--log-level", choices=("DEBUG", "INFO", "WARNING", "ERROR"), default="INFO")


def _days(text: str) -> float:
    """``--retain-days``: a number of days, 0 or more."""
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not days >= 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: the days must be 0 (keep everything) or more")
    return days


def mqtt_section(args: argparse.Namespace) -> MqttSection:
    """The broker settings from the options (the URL checked like a table's ``[mqtt] url``)."""
    password = os.environ.get(PASSWORD_VARIABLE)
    try:
        return MqttSection.model_validate(
            {"url": args.broker, "root": args.root, "username": args.username, "password": password}
        )
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise ValueError(f"--broker/--root{': ' + where if where else ''}: {problem['msg']}") from None


def main(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("mqtt").setLevel(max(logging.INFO, logging.getLevelName(args.log_level)))
    try:
        mqtt = mqtt_section(args)
        if mqtt.embedded:
            raise ValueError("--broker: the floor console needs a broker URL, not 'embedded'")
        host, port = parse_listen(args.listen)
    except ValueError as error:
        message = str(error)
        if "host:port" in message:
            message = f"--listen {args.listen!r}: {message}"
        print(f"error: {message}", file=sys.stderr)
        return EXIT_ERROR
    return asyncio.run(_serve(mqtt, host, port, Path(args.db), args.client_id, args.retain_days))


async def _serve(mqtt: MqttSection, host: str, port: int, database: Path, client_id: str | None,
                 retain_days: float = 0) -> int:
    from controller.floor.console import FloorConsole
    from controller.floor.history import HistoryError
    from controller.web.server import WebServerError

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    console = FloorConsole(mqtt, database, client_id=client_id, retain_days=retain_days)
    try:
        url = await console.start(host, port)
    except (WebServerError, HistoryError) as error:
        log.error("floor console: %s", error)
        return EXIT_ERROR
    kept = f"{retain_days:g} days" if retain_days else "everything"
    log.info("floor console: %s (tables under %s/ on %s, history in %s, keeping %s)",
             url, mqtt.root, mqtt.url, database, kept)
    try:
        await stop.wait()
    finally:
        await console.stop()
    log.info("floor console: stopped")
    return EXIT_OK
