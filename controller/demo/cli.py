"""``tablectl demo``: a whole simulated table with a virtual dealer, live alerts and a summary."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Final

from rich.console import Console, RenderableType
from rich.live import Live
from rich.logging import RichHandler

from config.errors import ConfigError
from controller.broker.embedded import BrokerError
from controller.demo.pages import DEALER_PORT, FLOOR_PORT, Pages, PagesError, open_in_browser
from controller.demo.rig import RigError
from controller.demo.runner import CONFIG_NAME, ChildDied, DemoError, DemoOptions, DemoRun
from controller.demo.summary import Summary
from controller.demo.view import Header, render
from link.aiomqtt_adapter import tolerate_socket_race
from link.stop_signals import stop_on_signals

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_INTERRUPTED: Final = 130


def _players(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    try:
        first = int(low)
        last = int(high) if high else first
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected N or MIN-MAX, e.g. 2-9") from None
    return first, last


def _rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text}: a rate within 0..1")
    return value


def _codes(text: str) -> tuple[str, ...]:
    from simulators.dealer import CATALOGUE_CODES  # (the dealer's catalogue: loaded on use)

    codes = tuple(code.strip() for code in text.split(",") if code.strip())
    unknown = [code for code in codes if code not in CATALOGUE_CODES]
    if not codes or unknown:
        named = ", ".join(unknown) if unknown else "none given"
        raise argparse.ArgumentTypeError(f"{text!r}: not catalogue codes: {named}")
    return codes


def _speed(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: speed must be 0 (flat out) or positive")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--hands", type=int, default=0, help="hands to play, then print the summary (default 0: until Ctrl-C)"
    )
    parser.add_argument("--seed", type=int, help="seed of the virtual dealer (default: random)")
    parser.add_argument(
        "--speed",
        type=_speed,
        default=1.0,
        help="pace: 1 = a real dealer, 2 = twice as fast, 0 = as fast as the system keeps up (default 1)",
    )
    parser.add_argument(
        "--mistake-rate", type=_rate, default=0.2, help="share of hands with a dealer mistake (default 0.2)"
    )
    parser.add_argument(
        "--mistakes",
        type=_codes,
        default=None,
        metavar="CODE,...",
        help="draw only these mistakes (catalogue codes; default: every code the table can raise)",
    )
    parser.add_argument(
        "--seats",
        type=int,
        default=9,
        choices=range(2, 11),
        metavar="2..10",
        help="seats at the table (default 9)",
    )
    parser.add_argument(
        "--players",
        type=_players,
        default=None,
        metavar="MIN-MAX",
        help="how many players sit (they join and leave), default 2-SEATS",
    )
    parser.add_argument(
        "--profile",
        choices=("roberts", "tda"),
        default="roberts",
        help="irregularity rules profile (default roberts)",
    )
    parser.add_argument(
        "--broker", metavar="mqtt://HOST:PORT", help="use this broker instead of the embedded one"
    )
    parser.add_argument("--table", default="demo", help="table id in the topics (default demo)")
    parser.add_argument(
        "--structure",
        choices=("no_limit", "pot_limit", "fixed_limit"),
        help="betting structure (default: from the seed, see docs/demo.md)",
    )
    parser.add_argument(
        "--tournament",
        action="store_true",
        help="a tournament: the blinds and ante rise by levels on the clock "
        "(docs/demo.md; not with --no-chips)",
    )
    parser.add_argument(
        "--no-chips",
        action="store_true",
        help="a table without chip reading: betting shown by the keypad only",
    )
    parser.add_argument(
        "--noise", type=_rate, default=0.0, help="share of RFID reads the reader misses (default 0)"
    )
    parser.add_argument(
        "--journal",
        type=Path,
        metavar="DIR",
        help="keep the journal (and the table's table.toml) in DIR, a new or empty "
        "folder (default: a new folder under the temporary directory, printed)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the summary as one JSON object on the last line"
    )
    parser.add_argument("--no-view", action="store_true", help="no live terminal view")
    parser.add_argument(
        "--web",
        action="store_true",
        help=f"serve the dealer's display on port {DEALER_PORT} and the floor console on "
        f"port {FLOOR_PORT} (127.0.0.1) and open them in the browser (default: free "
        "ports, printed at start)",
    )
    parser.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        default="WARNING",
        help="log level of the components (default WARNING)",
    )


def options_from(args: argparse.Namespace) -> DemoOptions:
    seats: int = args.seats
    low, high = args.players if args.players is not None else (2, seats)
    if not 2 <= low <= high <= seats:
        raise ValueError(f"--players {low}-{high}: need 2 <= MIN <= MAX <= seats ({seats})")
    if args.tournament and args.no_chips:
        raise ValueError("--tournament needs chips: the blinds of each level are read as chips")
    broker: str | None = args.broker
    if broker is not None and not broker.startswith("mqtt://"):
        raise ValueError(f"--broker {broker}: expected mqtt://host:port")
    return DemoOptions(
        hands=max(0, args.hands),
        seed=args.seed,
        speed=args.speed,
        mistake_rate=args.mistake_rate,
        seats=seats,
        min_players=low,
        max_players=high,
        profile=args.profile,
        broker=broker,
        table_id=args.table,
        noise=args.noise,
        web=args.web,
        chips=not args.no_chips,
        structure=args.structure,
        tournament=args.tournament,
        journal=args.journal,
        codes=args.mistakes,
    )


def print_summary(summary: Summary, console: Console) -> None:
    """The human-readable summary."""
    data = summary.as_dict()
    console.print(
        f"[bold]Summary[/bold]: {summary.hands} hands, {summary.steps} dealer steps in "
        f"{summary.seconds:.1f} s (seed {summary.seed}, profile {summary.profile}, "
        f"broker {summary.broker})"
    )
    console.print(
        f"mistakes injected {data['mistakes_injected']}, alerts raised {data['alerts_raised']}; "
        f"precision {summary.precision}, recall {summary.recall}"
    )
    lat = summary.latency_ms
    console.print(
        f"alert latency from the physical act to the alert on the broker: p50 {lat['p50']} ms, "
        f"p99 {lat['p99']} ms, max {lat['max']} ms"
    )
    codes = sorted(set(summary.injected) | set(summary.raised))
    if codes:
        console.print(f"{'code':28} injected  raised  detected  missed  false")
        for code in codes:
            console.print(
                f"{code:28} {summary.injected.get(code, 0):8} {summary.raised.get(code, 0):7} "
                f"{summary.detected.get(code, 0):9} {summary.missed.get(code, 0):7} "
                f"{summary.unexpected.get(code, 0):5}",
                highlight=False,
            )
    if summary.other_alerts:
        others = ", ".join(f"{code} {n}" for code, n in summary.other_alerts.items())
        console.print(f"other alerts (devices): {others}")
    for note in summary.notes:
        console.print(f"note: {note}")
    if summary.journal is not None:
        config = Path(summary.journal) / CONFIG_NAME
        console.print(
            f"journal kept in {summary.journal}; its hands: tablectl history --config {config} "
            f"(history show N, history export --phh DIR, journal verify: the same --config)",
            highlight=False,
            soft_wrap=True,
        )


def main(args: argparse.Namespace) -> int:
    try:
        options = options_from(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    console = Console()
    show_view = not args.no_view and console.is_terminal
    handler: logging.Handler = (
        RichHandler(console=Console(stderr=True), show_path=False)
        if show_view
        else logging.StreamHandler(sys.stderr)
    )
    logging.basicConfig(
        level=args.log_level,
        handlers=[handler],
        format="%(name)s: %(message)s" if show_view else "%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        summary, interrupted = asyncio.run(_run(options, console, show_view))
    except (DemoError, BrokerError, ConfigError, RigError, PagesError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except (KeyboardInterrupt, _StoppedEarly):
        print("interrupted before the first hand", file=sys.stderr)
        return EXIT_INTERRUPTED
    print_summary(summary, console)
    if args.json:
        sys.stdout.flush()
        print(summary.as_json(), flush=True)
    return EXIT_INTERRUPTED if interrupted else EXIT_OK


class _StoppedEarly(Exception):
    """Ctrl-C during start-up: nothing to summarise."""


async def _run(options: DemoOptions, console: Console, show_view: bool) -> tuple[Summary, bool]:
    stop = asyncio.Event()
    try:
        return await _run_until(options, console, show_view, stop)
    except ChildDied:
        raise
    except DemoError:
        if stop.is_set():
            raise _StoppedEarly from None
        raise


async def _run_until(
    options: DemoOptions, console: Console, show_view: bool, stop: asyncio.Event
) -> tuple[Summary, bool]:
    tolerate_socket_race(asyncio.get_running_loop())  # the observer's and the floor console's clients
    # Ctrl-C, a kill, or the terminal closing: stop cleanly and still summarise.
    with stop_on_signals(stop, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
        return await _play(options, console, show_view, stop)


async def _play(
    options: DemoOptions, console: Console, show_view: bool, stop: asyncio.Event
) -> tuple[Summary, bool]:
    async def announce(pages: Pages) -> None:
        console.print(f"dealer display: {pages.dealer}", highlight=False, soft_wrap=True)
        console.print(
            f"floor console:  {pages.floor} (this table: {pages.table})", highlight=False, soft_wrap=True
        )
        if options.web and not await open_in_browser(pages):
            console.print("(no desktop browser here: open those addresses in a browser)")

    run = DemoRun(options, stop=stop, on_pages=announce, watch_state=show_view)
    if not show_view:
        summary = await run.run()
        return summary, run.interrupted
    header = Header(
        table=options.table_id,
        profile=options.profile,
        broker=options.broker or "embedded",
        speed=options.speed,
        hands=options.hands,
    )

    def frame() -> RenderableType:
        if run.monitor is None:
            return "starting the broker, the simulators, the drivers and the engine…"
        return render(run.monitor.view, run.tally, header, options.seats)

    with Live(console=console, refresh_per_second=4, get_renderable=frame, transient=False):
        summary = await run.run()
    return summary, run.interrupted
