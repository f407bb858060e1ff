"""``tablectl simulate --config FILE``: run the table's device simulators standalone.

It starts a simulator for every enabled device of the configuration and prints where each one is:
the pseudo-terminal path a serial driver opens, or the ``backend`` value through which a sensor
board driver in another process reaches the simulated board. ``--write-config OUT`` also writes
the configuration rewritten to point at the simulators, ready for ``tablectl run --config OUT``.
It runs until interrupted (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

from config.errors import ConfigError
from config.loader import load_config
from config.models import TableConfig
from config.writer import render_toml
from link.stop_signals import stop_on_signals
from simulators.table import SimulatedTable

#: The first line of the written configuration.
WRITTEN = "Written by tablectl simulate: the devices point at running simulators."
EXIT_OK = 0
EXIT_ERROR = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="the table configuration (TOML)")
    parser.add_argument(
        "--write-config",
        metavar="OUT",
        help="write the configuration pointed at the simulators to OUT (TOML)",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="shuffler time scale (2 = twice as fast)")
    parser.add_argument("--shuffle-s", type=float, default=4.0, help="seconds per shuffle at speed 1")
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulated noise")
    parser.add_argument("--miss-rate", type=float, default=0.0, help="reader: share of reads missed")
    parser.add_argument(
        "--crosstalk-rate", type=float, default=0.0, help="reader: neighbour antennas hearing a tag"
    )
    parser.add_argument(
        "--corrupt-rate", type=float, default=0.0, help="reader: share of frames damaged on the line"
    )


def main(args: argparse.Namespace) -> int:
    try:
        config = load_config(Path(args.config))
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_run(config, args))
    return EXIT_OK


async def _run(config: TableConfig, args: argparse.Namespace) -> int:
    if not any(d.enabled for d in config.devices):
        print(f"{args.config}: no enabled [[devices]] to simulate", file=sys.stderr)
        return EXIT_ERROR
    table = SimulatedTable(
        config,
        speed=args.speed,
        shuffle_s=args.shuffle_s,
        seed=args.seed,
        reader_options={
            "miss_rate": args.miss_rate,
            "crosstalk_rate": args.crosstalk_rate,
            "corrupt_rate": args.corrupt_rate,
        },
    )
    stop = asyncio.Event()
    with stop_on_signals(stop):
        return await _simulate(table, config, args, stop)


async def _simulate(
    table: SimulatedTable, config: TableConfig, args: argparse.Namespace, stop: asyncio.Event
) -> int:
    async with table:
        print(f"simulating table {config.table.id} ({args.config}):", flush=True)
        for line in table.describe():
            print(f"  {line}", flush=True)
        if args.write_config:
            await asyncio.to_thread(_write, Path(args.write_config), render_toml(table.config, WRITTEN))
            print(f"wrote {args.write_config}: tablectl run --config {args.write_config}", flush=True)
        print("running; Ctrl-C to stop", flush=True)
        await stop.wait()
    print("stopped", flush=True)
    return EXIT_OK


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
