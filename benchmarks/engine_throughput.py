"""Throughput of the pure engine core, in events per second on one core.

Usage: ``.venv/bin/python benchmarks/engine_throughput.py [--hands N] [--repeat R] [--chips]
[--against REV] [--callgrind [--keep PREFIX]]``

Random legal hands of the virtual dealer (2 to 10 players joining and leaving, two decks, folds,
all-in run-outs, showdowns, reader noise) are rendered once into contract messages; the timed
part is only ``Engine.handle`` on each of them, including building every alert and public state
the step returns. The corpus is frozen out of the garbage collector's sight (``gc.freeze()``)
before the timing: a collection the engine's allocations trigger walks only what the engine made.

``--chips``: the betting followed from chips instead. Random PokerKit hands (no-limit, pot-limit,
fixed-limit; 2 to 10 players, all-ins, side pots; testing.oracle_hand) rendered as card reads and
chip movements (every chip read into a betting area, swept, pushed, collected; a busy hand has
hundreds of chip reads), each fed to an engine with the chip registry and the hand's stakes.

``--against REV``: the same benchmark on the code of git revision ``REV`` (a temporary git
worktree), side by side: two worker processes, one per tree, each with its own corpus built by
its own code, timed in turns (``--repeat`` times, each going first every other turn) so that the other load of
a shared machine falls on both alike; the best run of each and their ratio (this tree's rate
over REV's: above 1.0 is faster) are printed. The worktree is removed afterwards.

``--callgrind``: instructions instead of time, the figure a shared machine's load does not move.
Each tree (this one, and REV's with ``--against``) runs in a worker under ``valgrind
--tool=callgrind`` (``PYTHONHASHSEED=0``, the two at once): it builds its corpus, freezes it out
of the collector's sight (``gc.freeze()``, as the timed runs do: the collector's passes over the
corpus are noise, not the engine's cost), runs one pass to warm up and one inside
``functools.reduce``, the one C function callgrind is told to count within (``--toggle-collect``),
as ``benchmarks/replay_instructions.py`` does. Prints each tree's instructions per event and the
ratio (REV's instructions per event over this tree's: above 1.0 is faster). ``--keep PREFIX``
keeps callgrind's output of each tree as ``PREFIX.this`` and ``PREFIX.REV`` (for
``callgrind_annotate``). Slow: a few minutes for 100 hands with chips, most of it building the
corpus under valgrind.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = ROOT / "config" / "decks.example.csv"

if TYPE_CHECKING:
    from engine.api import EngineSettings, Received
    from engine.step import Engine


def engine_type() -> type[Engine]:
    """The imported tree's ``Engine``: in ``engine.step``, or ``engine.core`` in a tree from before
    that module was renamed (``--against`` an earlier revision)."""
    import importlib

    import engine

    step = Path(engine.__file__).parent / "step.py"
    found: type[Engine] = importlib.import_module("engine.step" if step.exists() else "engine.core").Engine
    return found


def build(hands: int, seed: int) -> tuple[int, list[list[Received]]]:
    """Tables of 2 to 10 players, 50 hands each, until ``hands`` hands: one message list each."""
    from config.registry import load_registry
    from engine.api import DeviceEventReceived, DeviceStatusReceived, InputReceived
    from testing.sessions import dealer_session

    registry = load_registry(REGISTRY)
    rng = random.Random(seed)
    at = datetime(2026, 11, 30, tzinfo=UTC)
    sessions: list[list[Received]] = []
    seats = 10
    done = 0
    while done < hands:
        count = min(50, hands - done)
        messages, _ = dealer_session(
            registry, seats=seats, hands=count, seed=rng.randrange(1 << 30), noise=True
        )
        received: list[Received] = []
        for message in messages:
            if message.kind == "event":
                received.append(DeviceEventReceived(message.device or "", message.payload, at))  # type: ignore[arg-type]
            elif message.kind == "status":
                received.append(DeviceStatusReceived(message.device or "", message.payload, at))  # type: ignore[arg-type]
            elif message.kind == "input":
                received.append(InputReceived(message.payload, at))  # type: ignore[arg-type]
        sessions.append(received)
        done += count
    return seats, sessions


def build_chips(hands: int) -> list[tuple[EngineSettings, list[Received]]]:
    """``hands`` PokerKit hands rendered as chip moves, each with the settings it is played under."""
    from engine.api import EngineSettings
    from testing.engine_oracle import CHIPS, registry, rendered
    from testing.oracle_hand import TABLE_SEATS, play_hand

    out = []
    for seed in range(hands):
        hand = play_hand(seed)
        settings = EngineSettings(
            seats=TABLE_SEATS, profile="roberts", registry=registry(), chips=CHIPS, stakes=hand.stakes
        )
        out.append((settings, rendered(hand, "chips")))
    return out


def _runs(args: argparse.Namespace) -> list[tuple[EngineSettings, list[Received]]]:
    from config.registry import load_registry
    from engine.api import EngineSettings

    if args.chips:
        return build_chips(args.hands)
    seats, sessions = build(args.hands, args.seed)
    settings = EngineSettings(seats=seats, profile="roberts", registry=load_registry(REGISTRY))
    return [(settings, received) for received in sessions]


def _frozen(
    runs: list[tuple[EngineSettings, list[Received]]],
) -> list[tuple[EngineSettings, list[Received]]]:
    """``runs``, frozen out of the collector's sight (``gc.freeze()``): the corpus is the
    benchmark's, not the engine's, and every collection the engine's allocations trigger would
    otherwise walk its hundreds of thousands of models, a cost that grows with the corpus and that
    a table's engine, with no corpus in memory, never pays."""
    gc.collect()
    gc.freeze()
    return runs


def _timed(runs: list[tuple[EngineSettings, list[Received]]]) -> tuple[float, float, int, int]:
    """One pass over every run: (wall s, CPU s, public states, alert changes)."""
    engine_class = engine_type()
    alerts = states = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    for settings, received in runs:
        engine = engine_class(settings)
        for item in received:
            outputs = engine.handle(item)
            alerts += len(outputs.alerts)
            states += outputs.state is not None
    return time.perf_counter() - start, time.process_time() - cpu_start, states, alerts


def _counted(runs: list[tuple[EngineSettings, list[Received]]]) -> tuple[int, int]:
    """One pass to warm up, then one inside ``functools.reduce`` (what callgrind counts):
    (public states, alert changes) of the counted pass."""
    _timed(runs)
    found: list[tuple[float, float, int, int]] = []

    def once(_: object, __: object) -> object:
        found.append(_timed(runs))
        return None

    functools.reduce(once, (0,), None)  # (once: the initial value and the one item)
    return found[0][2], found[0][3]


def _worker(args: argparse.Namespace) -> int:
    """Serve timed passes of the tree at ``--worker`` over stdin/stdout (for ``--against``); with
    ``--callgrind``, one counted pass (run under callgrind by ``_instructions``)."""
    import engine

    if not Path(engine.__file__).resolve().is_relative_to(Path(args.worker).resolve()):
        raise SystemExit(f"worker: engine imported from {engine.__file__}, not {args.worker}")
    runs = _frozen(_runs(args))
    if args.callgrind:
        states, alerts = _counted(runs)
        print(f"{sum(len(r) for _, r in runs)} {states} {alerts}", flush=True)
        return 0
    print(f"ready {sum(len(r) for _, r in runs)}", flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        wall, cpu, states, alerts = _timed(runs)
        print(f"{wall!r} {cpu!r} {states} {alerts}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000, help="hands to replay (default 2000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best is reported")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chips", action="store_true", help="hands with chips (PokerKit's)")
    parser.add_argument("--against", metavar="REV", help="compare with git revision REV")
    parser.add_argument("--callgrind", action="store_true", help="count instructions (valgrind)")
    parser.add_argument("--keep", metavar="PREFIX", help="with --callgrind: keep callgrind's outputs")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # (a tree's side of --against)
    args = parser.parse_args()
    sys.path.insert(0, args.worker or str(ROOT))
    if args.worker:
        return _worker(args)
    if args.callgrind:
        return _instructions(args)
    if args.against:
        return _against(args)
    runs = _frozen(_runs(args))
    events = sum(len(received) for _, received in runs)
    best = cpu_best = float("inf")
    alerts = states = 0
    for _ in range(args.repeat):
        wall, cpu, states, alerts = _timed(runs)
        best = min(best, wall)
        cpu_best = min(cpu_best, cpu)
    rate = events / best
    what = "hands with chips" if args.chips else "hands"
    print(f"events:        {events} ({args.hands} {what}, 10-seat table)")
    print(f"best of {args.repeat}:     {best:.3f} s")
    print(f"throughput:    {rate:,.0f} events/s on one core")
    # CPU time: what a shared machine's other load does not change (the wall clock is above).
    print(f"CPU time:      {events / cpu_best:,.0f} events/s ({cpu_best:.3f} s of CPU)")
    print(f"per event:     {best / events * 1e6:.2f} µs")
    print(f"outputs:       {states} public states, {alerts} alert changes")
    return 0


class _Side:
    """One tree's worker process: its corpus built, timed passes on request."""

    def __init__(self, name: str, tree: Path, args: argparse.Namespace) -> None:
        self.name = name
        self.process = subprocess.Popen(
            _worker_command(tree, args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tree
        )
        self.events = int(self._read().removeprefix("ready "))
        self.wall = self.cpu = float("inf")
        self.outputs = ""

    def _read(self) -> str:
        stdout: IO[str] | None = self.process.stdout
        line = stdout.readline() if stdout is not None else ""
        if not line:
            raise SystemExit(f"{self.name}: the worker ended ({self.process.wait()})")
        return line.strip()

    def run(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("run\n")
        self.process.stdin.flush()
        wall, cpu, states, alerts = self._read().split()
        self.wall, self.cpu = min(self.wall, float(wall)), min(self.cpu, float(cpu))
        self.outputs = f"{states} public states, {alerts} alert changes"

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def _worker_command(tree: Path, args: argparse.Namespace) -> list[str]:
    """The command line of a worker for ``tree``."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        str(tree),
        "--hands",
        str(args.hands),
        "--seed",
        str(args.seed),
    ]
    if args.chips:
        command.append("--chips")
    if args.callgrind:
        command.append("--callgrind")
    return command


def _revision(name: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{name}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _worktree(holder: Path, revision: str) -> Path:
    """A detached worktree of ``revision`` under ``holder`` (removed by ``_remove``)."""
    other = holder / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(other), revision], check=True
    )
    return other


def _remove(holder: Path, other: Path | None) -> None:
    if other is not None:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=False)
    shutil.rmtree(holder, ignore_errors=True)


def _instructions(args: argparse.Namespace) -> int:
    """``--callgrind``: each tree's counted pass under callgrind (see the module docstring)."""
    holder = Path(tempfile.mkdtemp(prefix="engine-throughput-"))
    trees: list[tuple[str, Path]] = [("this tree", ROOT)]
    other = None
    processes: list[tuple[str, Path, subprocess.Popen[str]]] = []
    try:
        if args.against:
            revision = _revision(args.against)
            other = _worktree(holder, revision)
            trees.append((revision[:12], other))
        for index, (name, tree) in enumerate(trees):
            keep = f"{args.keep}.{'this' if index == 0 else name}" if args.keep else None
            out = Path(keep).resolve() if keep else holder / f"callgrind.{index}"
            command = [
                "valgrind",
                "--tool=callgrind",
                "--toggle-collect=functools_reduce",
                f"--callgrind-out-file={out}",
                *_worker_command(tree, args),
            ]
            process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=tree,
                env={**os.environ, "PYTHONHASHSEED": "0"},
            )
            processes.append((name, out, process))
        rows: list[tuple[str, int, int, str]] = []
        for name, out, process in processes:
            stdout, stderr = process.communicate()
            if process.returncode != 0:
                raise SystemExit(
                    f"{name}: the worker ended under callgrind ({process.returncode}):\n{stderr}"
                )
            counted, states, alerts = stdout.split()[-3:]
            found = re.search(r"^summary: (\d+)", out.read_text(), re.MULTILINE)
            assert found is not None, "no summary in callgrind's output"
            outputs = f"{states} public states, {alerts} alert changes"
            rows.append((name, int(found.group(1)), int(counted), outputs))
    finally:
        for _, _, process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        _remove(holder, other)
    what = "hands with chips" if args.chips else "hands"
    print(f"corpus:        {args.hands} {what}; one warm pass counted by callgrind")
    for name, instructions, events, outputs in rows:
        print(
            f"{name:<14} {instructions:>14,} instructions, {instructions / events:>9,.0f} an event "
            f"({events} events; {outputs})"
        )
    if len(rows) == 2:
        (_, mine, my_events, my_outputs), (_, theirs, their_events, their_outputs) = rows
        if my_events != their_events or my_outputs != their_outputs:
            print("note:          the two trees did not do the same work (see events and outputs)")
        ratio = theirs / their_events / (mine / my_events)
        print(f"ratio:         {ratio:.3f} (instructions an event: theirs / this tree's)")
    return 0


def _against(args: argparse.Namespace) -> int:
    """This tree and ``args.against`` side by side (see the module docstring)."""
    revision = _revision(args.against)
    holder = Path(tempfile.mkdtemp(prefix="engine-throughput-"))
    other = _worktree(holder, revision)
    sides: list[_Side] = []
    try:
        sides = [_Side("this tree", ROOT, args), _Side(revision[:12], other, args)]
        for turn in range(args.repeat):
            for side in sides if turn % 2 == 0 else sides[::-1]:  # (neither always goes first)
                side.run()
    finally:
        for side in sides:
            side.close()
        _remove(holder, other)
    what = "hands with chips" if args.chips else "hands"
    print(f"corpus:        {args.hands} {what}; best of {args.repeat}, taken in turns")
    for side in sides:
        print(
            f"{side.name:<14} {side.events / side.wall:>10,.0f} events/s "
            f"({side.events / side.cpu:,.0f} per CPU s; {side.events} events; {side.outputs})"
        )
    mine, theirs = sides
    if mine.events != theirs.events or mine.outputs != theirs.outputs:
        print("note:          the two trees did not do the same work (see events and outputs)")
    print(
        f"ratio:         {mine.events / mine.wall / (theirs.events / theirs.wall):.3f} "
        f"(CPU: {mine.events / mine.cpu / (theirs.events / theirs.cpu):.3f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
