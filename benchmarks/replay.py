"""The audit replay alone beside the engine core, a few times in one process: the steadier figure
of issue 20 point 5's replay (the whole ``benchmarks/service.py`` also runs a broker and services).

Usage: ``.venv/bin/python benchmarks/replay.py [--hands 300] [--runs 3]``. Prints each run's
ratio of the replay's CPU rate to the engine core's, and the best rates and their ratio.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.service import engine_rate, replay_rate
from benchmarks.service_throughput import hands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    messages = hands(args.hands)
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2-core machine shared)")
    best_replay, best_core = 0.0, 0.0
    with tempfile.TemporaryDirectory(prefix="tablectl-replay-bench-") as name:
        directory = Path(name)
        os.chmod(directory, 0o700)
        for run in range(args.runs):
            core = engine_rate(messages)
            inside = directory / str(run)
            inside.mkdir(mode=0o700)
            replay = replay_rate(inside, messages)
            best_replay, best_core = max(best_replay, replay.cpu), max(best_core, core.cpu)
            print(f"run {run + 1}: replay {replay.cpu / core.cpu:.3f} x the engine core in CPU time")
    print(
        f"best: replay {best_replay:,.0f} records per CPU second, engine core {best_core:,.0f} "
        f"events per CPU second ({len(messages)} records, {args.hands} hands): "
        f"{best_replay / best_core:.3f} x (target >= 0.5)"
    )


if __name__ == "__main__":
    main()
