"""``tablectl floor``: the floor console, its recorder, and what its history holds.

- ``tablectl floor --broker URL[,URL...] [--store URL]``: the console (a process of its own on a
  supervisor's PC). Several URLs are the nodes of one cluster: the console fails over between
  them. ``--store`` is a SQLite file (the default, ``var/floor.sqlite``) or ``postgresql://...``
  (the floor's shared history; the console then also records, unless ``--no-record``).
- ``tablectl floor record --broker URL[,URL...] --store URL``: a recorder alone, no pages.
- ``tablectl floor hands|alerts --store URL [filters] --json``: what the store holds, one JSON
  object a line (the published payload plus ``table``), oldest first.
- ``tablectl floor report --store URL [--since T] [--until T] --json``: per table and hour, per
  dealer and per area: hands dealt, alerts per 100 hands, rake.

See ``docs/floor.md`` (and ``docs/display.md`` for the pages).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Final

from pydantic import ValidationError

from config.models import MqttSection, parse_listen
from controller.floor.times import time_ms
from link.stop_signals import stop_on_signals

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
DEFAULT_LISTEN: Final = "127.0.0.1:8090"
DEFAULT_STORE: Final = "var/floor.sqlite"
PASSWORD_VARIABLE: Final = "TABLECTL_FLOOR_PASSWORD"  # noqa: S105 - the variable's name, not a password
#: The store's URL may also come from the environment (it may hold a password).
STORE_VARIABLE: Final = "TABLECTL_FLOOR_STORE"

log = logging.getLogger("controller.floor")


def _add_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        "--db",
        dest="store",
        default=None,
        metavar="URL",
        help=f"the history: a SQLite file (default ${STORE_VARIABLE} or {DEFAULT_STORE}) or "
        "postgresql://user@host:port/database (the password from the URL, $PGPASSWORD or "
        "~/.pgpass)",
    )


def _add_brokers(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--broker",
        required=required,
        metavar="URL[,URL...]",
        help="the broker, mqtt://host:port or mqtts://host:port; several, comma "
        "separated: the nodes of one cluster, taken in turn when one is lost",
    )
    parser.add_argument("--root", default="holdem", help="topic root of the tables (default holdem)")
    parser.add_argument("--username", help=f"broker user name (the password from ${PASSWORD_VARIABLE})")
    parser.add_argument(
        "--ca-file",
        metavar="FILE",
        help="the CA that signed the brokers' certificates (mqtts://; default: the system's)",
    )
    parser.add_argument("--log-level", choices=("DEBUG", "INFO", "WARNING", "ERROR"), default="INFO")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _add_brokers(parser, required=False)
    parser.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help=f"where to serve the console (default {DEFAULT_LISTEN}; port 0: any free port)",
    )
    _add_store(parser)
    parser.add_argument(
        "--retain-days",
        type=_days,
        default=0,
        metavar="DAYS",
        help="remove alert changes, hand results and statuses received more than DAYS "
        "ago (at start, then hourly; default 0: keep everything)",
    )
    parser.add_argument(
        "--client-id", help="MQTT client id of the live view (default: tablectl-floor-ROOT-RANDOM)"
    )
    parser.add_argument(
        "--no-record",
        action="store_true",
        help="record nothing: only read the store (a console beside the floor's recorders)",
    )
    parser.add_argument(
        "--recorder-id",
        metavar="ID",
        help="MQTT client id of the recorder's persistent session (default: "
        "tablectl-floor-recorder-ROOT-SLOT, SLOT the store's lowest free slot)",
    )
    commands = parser.add_subparsers(dest="floor_command", metavar="ACTION")

    record = commands.add_parser(
        "record",
        help="record the tables' hands, alerts and statuses (no pages)",
        description="Record every table's hands, alerts and controller "
        "statuses from a persistent session into the store.",
    )
    _add_brokers(record, required=True)
    _add_store(record)
    record.add_argument("--recorder-id", metavar="ID", help="MQTT client id (default: by slot)")
    record.add_argument("--retain-days", type=_days, default=0, metavar="DAYS")

    hands = commands.add_parser(
        "hands",
        help="hand results in the store, one JSON object a line",
        description="Hand results in the store (oldest first).",
    )
    _add_store(hands)
    _add_filters(hands)
    hands.add_argument("--seat", type=int, help="hands this seat was dealt in")
    hands.add_argument("--dealer", help="hands this dealer (badge) dealt")
    hands.add_argument("--code", help="hands during which an alert of this code changed")
    hands.add_argument("--limit", type=int, default=100_000)

    alerts = commands.add_parser(
        "alerts",
        help="alert changes in the store, one JSON object a line",
        description="Alert changes in the store (oldest first).",
    )
    _add_store(alerts)
    _add_filters(alerts)
    alerts.add_argument("--code")
    alerts.add_argument("--severity", choices=("info", "warning", "critical"))
    alerts.add_argument("--status", choices=("raised", "updated", "acknowledged", "resolved"))
    alerts.add_argument("--seat", type=int)
    alerts.add_argument("--limit", type=int, default=100_000)

    report = commands.add_parser(
        "report",
        help="hands, alerts per 100 hands and rake per table and hour, per dealer, per area",
        description="The floor's figures from the store.",
    )
    _add_store(report)
    report.add_argument("--since", metavar="TIME", help="ISO 8601 (default: 24 hours ago)")
    report.add_argument("--until", metavar="TIME", help="ISO 8601 (default: now)")
    report.add_argument("--json", action="store_true", help="one JSON document")


def _add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", help="one table")
    parser.add_argument("--since", metavar="TIME", help="from this time on (ISO 8601)")
    parser.add_argument("--until", metavar="TIME", help="up to this time (ISO 8601)")
    parser.add_argument(
        "--json", action="store_true", help="one JSON object a line (the published payload plus table)"
    )


def _days(text: str) -> float:
    """``--retain-days``: a number of days, 0 or more."""
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not days >= 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: the days must be 0 (keep everything) or more")
    return days


def mqtt_sections(args: argparse.Namespace) -> list[MqttSection]:
    """The broker settings of each ``--broker`` URL (each checked like a table's ``[mqtt] url``)."""
    password = os.environ.get(PASSWORD_VARIABLE)
    urls = [url.strip() for url in (args.broker or "").split(",") if url.strip()]
    if not urls:
        raise ValueError("--broker: give the broker's URL (several, comma separated, for a cluster)")
    found = []
    for url in urls:
        try:
            mqtt = MqttSection.model_validate(
                {
                    "url": url,
                    "root": args.root,
                    "username": args.username,
                    "password": password,
                    "tls": {"ca_file": args.ca_file} if getattr(args, "ca_file", None) else None,
                }
            )
        except ValidationError as error:
            problem = error.errors(include_url=False)[0]
            place = ".".join(str(p) for p in problem["loc"])
            raise ValueError(f"--broker/--root{': ' + place if place else ''}: {problem['msg']}") from None
        if mqtt.embedded:
            raise ValueError("--broker: the floor console needs a broker URL, not 'embedded'")
        found.append(mqtt)
    return found


def store_url(args: argparse.Namespace) -> str:
    return str(args.store or os.environ.get(STORE_VARIABLE) or DEFAULT_STORE)


def _logging(level: str) -> None:
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("mqtt").setLevel(max(logging.INFO, logging.getLevelName(level)))


def main(args: argparse.Namespace) -> int:
    command = getattr(args, "floor_command", None)
    _logging(getattr(args, "log_level", "WARNING"))
    try:
        if command in ("hands", "alerts", "report"):
            return asyncio.run(_ask(args))
        brokers = mqtt_sections(args)
        if command == "record":
            return asyncio.run(_record(args, brokers))
        host, port = parse_listen(args.listen)
    except ValueError as error:
        message = str(error)
        if "host:port" in message:
            message = f"--listen {args.listen!r}: {message}"
        print(f"error: {message}", file=sys.stderr)
        return EXIT_ERROR
    return asyncio.run(_serve(args, brokers, host, port))


async def _serve(args: argparse.Namespace, brokers: list[MqttSection], host: str, port: int) -> int:
    from controller.floor.console import FloorConsole
    from controller.floor.store import StoreError
    from controller.floor.stores import store_for
    from controller.web.server import WebServerError

    stop = asyncio.Event()
    with stop_on_signals(stop):
        try:
            store = store_for(store_url(args), retain_days=args.retain_days)
            console = FloorConsole(
                brokers,
                store,
                client_id=args.client_id,
                record="none" if args.no_record else None,
                recorder_id=args.recorder_id,
            )
            url = await console.start(host, port)
        except (WebServerError, StoreError) as error:
            log.error("floor console: %s", error)
            return EXIT_ERROR
        kept = f"{args.retain_days:g} days" if args.retain_days else "everything"
        log.info(
            "floor console: %s (tables under %s/ on %s, history in %s, keeping %s, recording: %s)",
            url,
            console.root,
            ", ".join(b.url for b in brokers),
            store.name,
            kept,
            console.recording,
        )
        try:
            await stop.wait()
        finally:
            await console.stop()
        log.info("floor console: stopped")
        return EXIT_OK


async def _record(args: argparse.Namespace, brokers: list[MqttSection]) -> int:
    from controller.floor.recorder import Recorder
    from controller.floor.store import StoreError
    from controller.floor.stores import store_for

    stop = asyncio.Event()
    with stop_on_signals(stop):
        try:
            store = store_for(store_url(args), retain_days=args.retain_days)
            await store.open()
        except StoreError as error:
            log.error("floor recorder: %s", error)
            return EXIT_ERROR
        # Alone, it keeps the tables' latest states too (in a console, the live view does).
        recorder = Recorder(brokers, store, client_id=args.recorder_id, states=True)
        log.info(
            "floor recorder: tables under %s/ on %s into %s",
            recorder.root,
            ", ".join(b.url for b in brokers),
            store.name,
        )
        try:
            await recorder.run(stop)
        except StoreError as error:
            log.error("floor recorder: %s", error)
            return EXIT_ERROR
        finally:
            await store.close()
        health = recorder.health
        log.info(
            "floor recorder: stopped (%d messages received, %d rows stored, %d rejected)",
            health.received,
            health.stored,
            health.rejected,
        )
        return EXIT_OK


async def _ask(args: argparse.Namespace) -> int:
    """``hands``, ``alerts``, ``report``: read the store, print, exit."""
    from controller.floor.store import StoreError
    from controller.floor.stores import store_for

    try:
        store = store_for(store_url(args))
        await store.open()
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        answer: Callable[[Any, argparse.Namespace], Awaitable[int]] = {
            "hands": _hands,
            "alerts": _alerts,
            "report": _report,
        }[args.floor_command]
        return await answer(store, args)
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        await store.close()


def _line(item: dict[str, Any], as_json: bool, text: Callable[[dict[str, Any]], str]) -> None:
    sys.stdout.write((json.dumps(item, separators=(",", ":")) if as_json else text(item)) + "\n")


async def _hands(store: Any, args: argparse.Namespace) -> int:
    from controller.floor.store import HandQuery

    query = HandQuery(
        table=args.table,
        since_ms=time_ms("--since", args.since),
        until_ms=time_ms("--until", args.until),
        code=args.code,
        seat=args.seat,
        dealer=args.dealer,
        limit=args.limit,
    )

    def text(h: dict[str, Any]) -> str:
        awarded = ", ".join(f"seat {a['seat']} {a['amount']}" for a in h.get("awarded", [])) or "-"
        dealer = f"  dealer {h['dealer']}" if h.get("dealer") else ""
        return f"{h['ts']}  {h['table']}  hand {h['hand']}  {h['result']}{dealer}  awarded {awarded}"

    for hand in await store.find_hands(query):
        _line(hand, args.json, text)
    return EXIT_OK


async def _alerts(store: Any, args: argparse.Namespace) -> int:
    from controller.floor.store import AlertQuery

    query = AlertQuery(
        table=args.table,
        since_ms=time_ms("--since", args.since),
        until_ms=time_ms("--until", args.until),
        code=args.code,
        severity=args.severity,
        seat=args.seat,
        status=args.status,
        limit=args.limit,
    )
    for change in await store.find_alerts(query):
        _line(
            change,
            args.json,
            lambda a: (
                f"{a['ts']}  {a['table']}  hand {a['hand']}  {a['severity']} {a['code']} {a['status']}"
                + (f"  seat {a['seat']}" if a.get("seat") else "")
                + f"  {a['message']}"
            ),
        )
    return EXIT_OK


async def _report(store: Any, args: argparse.Namespace) -> int:
    from controller.floor.report import report, report_text

    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    until_ms = time_ms("--until", args.until) or now_ms
    since_ms = time_ms("--since", args.since)
    found = await report(store, until_ms - 24 * 3_600_000 if since_ms is None else since_ms, until_ms)
    sys.stdout.write(json.dumps(found, indent=1) + "\n" if args.json else report_text(found))
    return EXIT_OK
