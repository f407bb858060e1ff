"""``tablectl journal``: verify and export the table's journal (read only, no broker).

``tablectl journal verify --config FILE`` checks the hash chain, the record numbers and the
checkpoint files, naming the first broken or missing record (exit 0 intact, 2 intact with records
declared lost, 1 broken). ``tablectl journal export --config FILE [--from A] [--to B] [-o FILE]``
writes the records of a span as JSON lines (see :mod:`controller.journal.export`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from config.errors import ConfigError
from config.loader import load_config
from controller.journal.export import Span, export, parse_bound
from controller.journal.files import JournalFiles
from controller.journal.verify import EXIT_BROKEN, verify

EXIT_ERROR = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="journal_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "verify",
        help="check the hash chain, record numbers and checkpoints; name the first break",
        description="Check the journal: exit 0 intact, 2 intact but records were lost (declared "
        "by outage records), 1 broken (a record changed, missing or inserted).",
    )
    check.add_argument("--config", "-c", required=True, help="the table configuration (TOML)")
    check.set_defaults(journal_func=_verify)
    out = actions.add_parser(
        "export",
        help="write the records of a span as JSON lines",
        description="Write records as JSON lines, exactly as journaled. --from/--to (inclusive) "
        "are record numbers or ISO 8601 times (UTC unless an offset is given).",
    )
    out.add_argument("--config", "-c", required=True, help="the table configuration (TOML)")
    out.add_argument("--from", dest="start", metavar="N|TIME", help="first record number or time")
    out.add_argument("--to", dest="end", metavar="N|TIME", help="last record number or time")
    out.add_argument("-o", "--output", default="-", help="file to write (default: standard output)")
    out.set_defaults(journal_func=_export)


def main(args: argparse.Namespace) -> int:
    try:
        config = load_config(Path(args.config))
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    result: int = args.journal_func(JournalFiles(config.journal.path), args)
    return result


def _verify(files: JournalFiles, args: argparse.Namespace) -> int:
    del args
    try:
        result = verify(files)
    except OSError as error:
        print(f"error: journal {files.active}: {error.strerror or error}", file=sys.stderr)
        return EXIT_BROKEN
    for line in result.lines(str(files.active)):
        print(line)
    return result.exit_status


def _export(files: JournalFiles, args: argparse.Namespace) -> int:
    try:
        span = Span(
            parse_bound(args.start) if args.start else None,
            parse_bound(args.end) if args.end else None,
        )
    except ValueError as error:
        print(f"error: --from/--to: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        if args.output == "-":
            count = export(files, sys.stdout.buffer, span)
            sys.stdout.flush()
        else:
            with Path(args.output).open("wb") as file:
                count = export(files, file, span)
    except OSError as error:
        print(f"error: {error.filename or files.active}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    print(f"{count} records exported", file=sys.stderr)
    return 0
