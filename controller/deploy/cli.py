"""``tablectl deploy --config FILE --out DIR``: render the table PC's files into DIR.

Run it on the configuration at the place it has on the table PC (``/etc/tablectl/t1.toml``): the
unit, the secrets and the rendered copy of the configuration refer to that place. Nothing outside
DIR is written; DIR holds secrets (mode 0700, files 0600). Rendering again into the same DIR keeps
the secrets (``--rotate`` makes new ones). See ``docs/deploy.md``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from config.errors import ConfigError
from config.loader import load_table
from config.models import TableConfig
from controller.deploy.artefacts import DeployError, manifest
from controller.deploy.mosquitto import BrokerPaths
from controller.deploy.render import Options, Rendered, render, write

if TYPE_CHECKING:
    from controller.deploy.floor import FloorRendered

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1


def _default_executable() -> Path | None:
    """The ``tablectl`` script next to this Python (the installation being deployed)."""
    candidate = Path(sys.executable).parent / "tablectl"
    return candidate if candidate.exists() else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--config", "-c", help="the table configuration (TOML)")
    what.add_argument(
        "--floor",
        metavar="FLOOR.toml",
        help="the floor at scale instead: its NATS nodes, tables, consoles, database",
    )
    parser.add_argument("--out", "-o", required=True, help="directory to render into (created 0700)")
    parser.add_argument(
        "--executable",
        help="the tablectl the service runs (default: the one next to this Python, "
        f"{_default_executable() or 'none found'})",
    )
    parser.add_argument(
        "--mosquitto-dir",
        default="/etc/mosquitto",
        help="where mosquitto.conf, the password file and the ACL are installed (default %(default)s)",
    )
    parser.add_argument(
        "--broker-state-dir",
        default="/var/lib/mosquitto",
        help="mosquitto's persistence directory (default %(default)s)",
    )
    parser.add_argument(
        "--rotate", action="store_true", help="new secrets for every identity (default: keep them)"
    )


def main(args: argparse.Namespace) -> int:
    if args.floor is not None:
        return _floor(args)
    config_path = Path(args.config).absolute()
    try:
        config, _ = load_table(config_path)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    executable = Path(args.executable).absolute() if args.executable else _default_executable()
    if executable is None:
        print("error: --executable: no tablectl next to this Python; name it", file=sys.stderr)
        return EXIT_ERROR
    out = Path(args.out)
    options = Options(
        config_path=config_path,
        out=out,
        executable=executable,
        broker=BrokerPaths(Path(args.mosquitto_dir).absolute(), Path(args.broker_state_dir).absolute()),
        rotate=args.rotate,
    )
    return _written(out, lambda: _table(config, options, out), f"table {config.table.id}")


def _table(config: TableConfig, options: Options, out: Path) -> Rendered:
    rendered = render(config, options)
    write(rendered, out)
    return rendered


def _written(out: Path, produce: Callable[[], Rendered | FloorRendered], what: str) -> int:
    """Render and write (``produce``), then print the manifest and the notes; one line per error."""
    try:
        rendered = produce()
    except DeployError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as error:
        print(f"error: {out}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    print(f"{what}: rendered into {out} (file -> where it goes, owner, mode):")
    sys.stdout.write(manifest(rendered.artefacts))
    for note in rendered.notes:
        print(f"note: {note}")
    return EXIT_OK


def _floor(args: argparse.Namespace) -> int:
    """``--floor FLOOR.toml``: the cluster's node configurations, the tables' bridges, the
    database's roles and schema, the consoles' environment (``controller.deploy.floor``)."""
    from controller.deploy.artefacts import write_all
    from controller.deploy.floor import load_floor, render_floor

    out = Path(args.out)
    try:
        floor = load_floor(Path(args.floor))
    except DeployError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR

    def produce() -> FloorRendered:
        rendered = render_floor(floor, out, rotate=args.rotate)
        write_all(out, rendered.artefacts)
        return rendered

    return _written(out, produce, f"floor {floor.floor.cluster}")
