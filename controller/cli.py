"""``tablectl``: the command line.

Each long-running subcommand lives in its own module exposing ``add_arguments(parser)`` and
``main(args) -> int``; the table below names them. Only the module of the subcommand being run is
imported (``tablectl run`` never loads the demo's broker and live view, the simulators or pyusb):
``tablectl --help`` lists every subcommand from this table alone. A subcommand whose optional
dependencies are not installed says which extra to install instead of failing with a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Final

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_UNAVAILABLE = 3
EXIT_INTERRUPTED = 130

#: Optional dependencies (import name -> the extra that installs them).
OPTIONAL: Final = {"amqtt": "demo", "rich": "demo", "yaml": "test"}


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    module: str


SUBCOMMANDS: Final = (
    Subcommand("run", "run the table controller service (drivers, engine, alerts)", "controller.service.cli"),
    Subcommand(
        "demo", "a whole simulated table with a virtual dealer and live alerts", "controller.demo.cli"
    ),
    Subcommand("simulate", "run the device simulators standalone", "simulators.cli"),
    Subcommand(
        "floor", "the floor console: every table's status and alerts, in a browser", "controller.floor.cli"
    ),
    Subcommand(
        "deploy",
        "render the table PC's broker, service and udev files from the configuration",
        "controller.deploy.cli",
    ),
    Subcommand("journal", "verify the journal's hash chain, export records", "controller.journal.cli"),
    Subcommand(
        "history",
        "the last hands from the journal: list, show one street by street, export as PHH",
        "controller.history.cli",
    ),
)


class Unavailable(Exception):
    """A subcommand that cannot run in this installation; the message says why and what to do."""


def _load(sub: Subcommand) -> ModuleType:
    try:
        return importlib.import_module(sub.module)
    except ModuleNotFoundError as error:
        missing = (error.name or "").split(".")[0]
        if missing in OPTIONAL:
            raise Unavailable(
                f"tablectl {sub.name} needs {missing}: pip install 'tablectl[{OPTIONAL[missing]}]'"
            ) from None
        # Only "this module is not in the build" means unavailable; any other is a bug.
        if error.name is not None and sub.module.startswith(error.name):
            raise Unavailable(f"tablectl {sub.name}: not available in this build") from None
        raise


def _unavailable(reason: str) -> Callable[[argparse.Namespace], int]:
    def run(_: argparse.Namespace) -> int:
        print(reason, file=sys.stderr)
        return EXIT_UNAVAILABLE

    return run


def config_check(args: argparse.Namespace) -> int:
    """Validate a configuration and its registries: every error, warnings, exit 1 on an error
    (:mod:`config.check`)."""
    from config.check import check

    report = check(Path(args.file))
    for line in report.errors:
        print(f"error: {line}", file=sys.stderr)
    for line in report.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if not report.ok:
        return EXIT_ERROR
    print(report.summary)
    return EXIT_OK


def asyncapi(args: argparse.Namespace) -> int:
    """Write the AsyncAPI document generated from the contract models."""
    try:
        from contract.asyncapi import render_asyncapi
    except ModuleNotFoundError as error:
        if error.name != "yaml":
            raise
        print("tablectl asyncapi needs PyYAML: pip install 'tablectl[test]'", file=sys.stderr)
        return EXIT_UNAVAILABLE
    text = render_asyncapi()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    return EXIT_OK


def _selected(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), if any."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the subcommand ``argv`` selects gets its module imported (all: None)."""
    parser = argparse.ArgumentParser(
        prog="tablectl",
        description="Texas Hold'em table controller: card-reading devices in, dealing "
        "irregularities and their remedies out, over MQTT.",
    )
    selected = _selected(argv) if argv is not None else None
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for sub in SUBCOMMANDS:
        sub_parser = commands.add_parser(sub.name, help=sub.help, description=sub.help)
        if argv is not None and sub.name != selected:
            continue  # not run: its module is not imported
        try:
            module = _load(sub)
        except Unavailable as why:
            sub_parser.description = f"{sub.help} ({why})"
            sub_parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            sub_parser.set_defaults(func=_unavailable(str(why)))
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
    # A Ctrl-C at any moment, also while the subcommand's modules are still being imported (a
    # second on a busy machine), ends with status 130 and one line, never a traceback.
    try:
        arguments = list(sys.argv[1:] if argv is None else argv)
        parser = build_parser(arguments)
        args = parser.parse_args(arguments)
        result: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return result


if __name__ == "__main__":
    sys.exit(main())
