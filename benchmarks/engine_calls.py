"""Python function calls per pass of the engine throughput corpus: a steadier figure than time.

Usage: ``.venv/bin/python benchmarks/engine_calls.py [--chips] [--hands N] [--tree PATH] [--top K]``

The corpus is :mod:`benchmarks.engine_throughput`'s (``--hands`` dealer hands, or with ``--chips``
PokerKit hands rendered as chip moves), each fed to a fresh ``Engine`` as there. One pass warms
up, the next runs under cProfile: the calls it made (every Python function and builtin called)
are printed, with the ``--top`` functions called most. On a shared machine the times vary with the
other load; the calls do not, so two trees compare by them (``--tree``: the engine of another
checkout, e.g. a ``git worktree add --detach`` of an earlier commit; its own corpus code is used).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import pstats
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chips", action="store_true", help="hands with chips (PokerKit's)")
    parser.add_argument(
        "--tree",
        default=str(Path(__file__).resolve().parents[1]),
        help="the checkout whose engine is profiled (default: this one)",
    )
    parser.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    sys.path.insert(0, str(tree))
    import engine as engine_package
    from benchmarks.engine_throughput import REGISTRY, build, build_chips
    from config.registry import load_registry
    from engine.api import EngineSettings, Received

    # (a tree from before engine/core.py was renamed engine/step.py has its Engine there)
    step = Path(engine_package.__file__).parent / "step.py"
    engine_class = importlib.import_module("engine.step" if step.exists() else "engine.core").Engine

    runs: list[tuple[EngineSettings, list[Received]]]
    if args.chips:
        runs = build_chips(args.hands)
    else:
        seats, sessions = build(args.hands, args.seed)
        settings = EngineSettings(seats=seats, profile="roberts", registry=load_registry(REGISTRY))
        runs = [(settings, received) for received in sessions]

    def one_pass() -> None:
        for settings, received in runs:
            engine = engine_class(settings)
            for item in received:
                engine.handle(item)

    one_pass()  # (warm: first-use costs are not counted)
    profile = cProfile.Profile()
    profile.enable()
    one_pass()
    profile.disable()
    stats = pstats.Stats(profile)
    events = sum(len(received) for _, received in runs)
    rows = sorted(
        (
            (calls, f"{Path(where).name}:{line}({name})")
            for (where, line, name), (_, calls, _, _, _) in stats.stats.items()
        ),  # type: ignore[attr-defined]
        reverse=True,
    )
    what = "hands with chips" if args.chips else "hands"
    print(f"tree:          {tree}")
    print(f"corpus:        {args.hands} {what}, {events} events")
    print(f"calls a pass:  {stats.total_calls:,} ({stats.total_calls / events:.1f} per event)")  # type: ignore[attr-defined]
    for calls, name in rows[: args.top]:
        print(f"{calls:>10,}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
