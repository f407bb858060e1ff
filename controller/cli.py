"""``tablectl``: the command line.

Each long-running subcommand lives in its own module exposing ``add_arguments(parser)`` and
``main(args) -> int``; the table below wires them in. A module that is not part of this build yet
leaves its subcommand in place, saying so, instead of failing with an import error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from config.errors import ConfigError
from config.loader import load_table

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_UNAVAILABLE = 3


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    module: str


SUBCOMMANDS = (
    Subcommand("run", "run the table controller service (drivers, engine, alerts)", "controller.service"),
    Subcommand(
        "demo", "a whole simulated table with a virtual dealer and live alerts", "controller.demo.cli"
    ),
    Subcommand("simulate", "run the device simulators standalone", "simulators.cli"),
    Subcommand("journal", "verify the journal's hash chain, export records", "controller.journal.cli"),
)


def _load(module_name: str) -> ModuleType | None:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        # Only "this module is not in the build" means unavailable; any other missing import is a bug.
        if error.name is not None and module_name.startswith(error.name):
            return None
        raise


def _unavailable(name: str) -> Callable[[argparse.Namespace], int]:
    def run(_: argparse.Namespace) -> int:
        print(f"tablectl {name}: not yet available in this build", file=sys.stderr)
        return EXIT_UNAVAILABLE

    return run


def config_check(args: argparse.Namespace) -> int:
    """Validate a configuration file and its deck registry."""
    try:
        config, registry = load_table(Path(args.file))
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    decks = ", ".join(f"{deck} ({len(cards)} cards)" for deck, cards in sorted(registry.decks.items()))
    devices = ", ".join(f"{d.id} ({d.driver})" for d in config.devices) or "none (engine only)"
    print(
        f"{args.file}: ok: table {config.table.id}, {config.table.seats} seats, "
        f"profile {config.table.profile}; decks {decks}; devices {devices}"
    )
    return EXIT_OK


def asyncapi(args: argparse.Namespace) -> int:
    """Write the AsyncAPI document generated from the contract models."""
    from contract.asyncapi import render_asyncapi

    text = render_asyncapi()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    return EXIT_OK


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``chosen`` (the subcommand on the command line) only its module is loaded.

    Loading every subcommand's module (the simulators, the demo's views) would add about half a
    second to every start of ``tablectl run``, which a restarted table waits for.
    """
    parser = argparse.ArgumentParser(
        prog="tablectl",
        description="Texas Hold'em table controller: card-reading devices in, dealing "
        "irregularities and their remedies out, over MQTT.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    known = {sub.name for sub in SUBCOMMANDS}
    for sub in SUBCOMMANDS:
        if chosen in known and sub.name != chosen:
            commands.add_parser(sub.name, help=sub.help, description=sub.help)
            continue
        module = _load(sub.module)
        sub_parser = commands.add_parser(sub.name, help=sub.help, description=sub.help)
        if module is None:
            sub_parser.description = f"{sub.help} (not yet available in this build)"
            sub_parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            sub_parser.set_defaults(func=_unavailable(sub.name))
        else:
            module.add_arguments(sub_parser)
            sub_parser.set_defaults(func=module.main)

    config_parser = commands.add_parser("config", help="configuration tools")
    config_commands = config_parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    check = config_commands.add_parser(
        "check",
        help="validate a table configuration and its deck registry",
        description="Validate a table configuration and its deck registry; exit 1 on error.",
    )
    check.add_argument("file", help="the table configuration (TOML)")
    check.set_defaults(func=config_check)

    doc = commands.add_parser("asyncapi", help="print the AsyncAPI 3 document of the MQTT contract")
    doc.add_argument("-o", "--output", default="-", help="file to write (default: standard output)")
    doc.set_defaults(func=asyncapi)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(next((w for w in words if not w.startswith("-")), None))
    args = parser.parse_args(words)
    try:
        result: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    return result


if __name__ == "__main__":
    sys.exit(main())
