"""``tablectl history``: the table's last hands from its journal (read only, no broker).

``tablectl history --config FILE [--last N] [--seat S] [--code C] [--since T] [--until T]
[--json]`` lists hands; ``tablectl history show HAND --config FILE`` prints one street by street;
``tablectl history export --phh DIR [--from HAND|TIME] [--to HAND|TIME] --config FILE`` writes one
PHH file per played hand and a note per voided one (see :mod:`controller.history.phh`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from config.errors import ConfigError
from config.loader import load_config
from config.models import TableConfig
from controller.history.phh import NO_STAKES, Stakes, file_name, to_phh, unwritable, voided_note
from controller.history.query import Filters, HandEntry, History, read_history
from controller.history.render import detail, entry_json, listing
from controller.journal.export import Bound, parse_bound
from controller.journal.files import JournalFiles

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_NOT_FOUND = 2
ACTIONS = ("list", "show", "export")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "The table's hands from its journal. No action: list the last hands; "
        "'show HAND': one hand street by street; 'export --phh DIR': PHH files."
    )
    parser.add_argument(
        "action", nargs="?", choices=ACTIONS, default="list", help="list (default), show, export"
    )
    parser.add_argument("hand", nargs="?", type=int, help="show: the hand number")
    parser.add_argument("--config", "-c", required=True, help="the table configuration (TOML)")
    parser.add_argument(
        "--last", type=int, default=20, metavar="N", help="list: the last N hands (0: all; default 20)"
    )
    parser.add_argument("--seat", type=int, metavar="S", help="list: hands seat S was dealt into")
    parser.add_argument("--code", metavar="C", help="list: hands that raised alert code C")
    parser.add_argument("--since", metavar="TIME", help="list: hands that ended at or after TIME (ISO 8601)")
    parser.add_argument("--until", metavar="TIME", help="list: hands that ended at or before TIME")
    parser.add_argument("--json", action="store_true", help="list, show: JSON instead of text")
    parser.add_argument("--phh", metavar="DIR", help="export: the directory to write to")
    parser.add_argument("--from", dest="start", metavar="HAND|TIME", help="export: the first hand")
    parser.add_argument("--to", dest="end", metavar="HAND|TIME", help="export: the last hand")


def main(args: argparse.Namespace) -> int:
    try:
        config = load_config(Path(args.config))
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        history = read_history(JournalFiles(config.journal.path))
    except OSError as error:
        print(f"error: journal {config.journal.path}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    for problem in history.problems[:10]:
        print(f"warning: journal: {problem}", file=sys.stderr)
    try:
        if args.action == "show":
            return _show(history, args)
        if args.action == "export":
            return _export(history, config, args)
        return _list(history, args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR


def _time(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    bound = parse_bound(text)
    if not isinstance(bound, datetime):
        raise ValueError(f"{option}: {text!r} is not an ISO 8601 time")
    return bound


def _list(history: History, args: argparse.Namespace) -> int:
    filters = Filters(
        last=args.last,
        seat=args.seat,
        code=args.code,
        since=_time(args.since, "--since"),
        until=_time(args.until, "--until"),
    )
    entries = filters.select(history.played())
    if args.json:
        print(json.dumps([entry_json(e) for e in entries], separators=(",", ":")))
    else:
        print(listing(entries))
    return EXIT_OK


def _show(history: History, args: argparse.Namespace) -> int:
    if args.hand is None:
        raise ValueError("history show needs a hand number")
    entry = history.hands.get(args.hand)
    if entry is None or entry.result is None:
        print(f"error: no result of hand {args.hand} in the journal", file=sys.stderr)
        return EXIT_NOT_FOUND
    if args.json:
        print(json.dumps(entry_json(entry, full=True), separators=(",", ":")))
    else:
        print(detail(entry))
    return EXIT_OK


def stakes_of(config: TableConfig) -> Stakes:
    """The stakes of the configuration (``[stakes]``), or the defaults without one."""
    section: Any = getattr(config, "stakes", None)
    if section is None:
        return Stakes()
    return Stakes(
        ante=int(getattr(section, "ante", 0)),
        small_blind=int(getattr(section, "small_blind", 1)),
        big_blind=int(getattr(section, "big_blind", 2)),
        structure=str(getattr(section, "structure", "no_limit")),
    )


@dataclass
class Exported:
    played: int = 0
    voided: int = 0
    #: Played hands PHH cannot carry (why, one line each): not written.
    skipped: list[str] = field(default_factory=list)


def _inside(entry: HandEntry, start: Bound | None, end: Bound | None) -> bool:
    """The hand is within ``start`` and ``end`` (inclusive): hand numbers, or its end time."""
    result = entry.result
    assert result is not None

    def after(bound: Bound) -> bool:
        return result.hand >= bound if isinstance(bound, int) else result.ts >= bound

    def before(bound: Bound) -> bool:
        return result.hand <= bound if isinstance(bound, int) else result.ts <= bound

    return (start is None or after(start)) and (end is None or before(end))


def export_phh(
    history: History,
    directory: Path,
    stakes: Stakes,
    *,
    table: str | None = None,
    start: Bound | None = None,
    end: Bound | None = None,
) -> Exported:
    """Write the hands between ``start`` and ``end`` (hand numbers or times, inclusive)."""
    directory.mkdir(parents=True, exist_ok=True)
    counts = Exported()
    for entry in history.played():
        result = entry.result
        assert result is not None
        if not _inside(entry, start, end):
            continue
        if entry.voided:
            text = voided_note(result, entry.alerts)
            counts.voided += 1
        elif (why := unwritable(result)) is not None:
            counts.skipped.append(why)
            continue
        else:
            text = to_phh(result, stakes, table=table)
            counts.played += 1
        (directory / file_name(result)).write_text(text, encoding="utf-8")
    return counts


def _export(history: History, config: TableConfig, args: argparse.Namespace) -> int:
    if not args.phh:
        raise ValueError("history export needs --phh DIR")
    if config.stakes is None:
        print(f"error: {NO_STAKES.format(table=config.table.id)}", file=sys.stderr)
        return EXIT_ERROR
    start = parse_bound(args.start) if args.start else None
    end = parse_bound(args.end) if args.end else None
    try:
        counts = export_phh(
            history, Path(args.phh), stakes_of(config), table=config.table.id, start=start, end=end
        )
    except OSError as error:
        print(f"error: {error.filename or args.phh}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    for why in counts.skipped:
        print(f"warning: {why}: not written", file=sys.stderr)
    print(
        f"{counts.played} hands written as PHH, {counts.voided} voided hands as notes, to {args.phh}"
        + (f"; {len(counts.skipped)} not written (above)" if counts.skipped else ""),
        file=sys.stderr,
    )
    return EXIT_OK
