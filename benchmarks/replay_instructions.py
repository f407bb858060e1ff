"""Instructions per record of the audit's replay and per event of the engine core, by callgrind:
the figure of issue 20 point 5 (replay >= 1/2 of the engine core's rate) that a shared machine's
load does not move.

Usage: ``.venv/bin/python benchmarks/replay_instructions.py [--hands 100] [--stage replay|core|read]``
runs itself under ``valgrind --tool=callgrind`` once per stage (``PYTHONHASHSEED=0``) and prints
each stage's instructions per record and the ratio core / replay (the replay's rate over the core's,
as ``benchmarks/service.py`` prints it in time). Each stage runs once to warm up, then once inside
``functools.reduce``, the one C function callgrind is told to count within
(``--toggle-collect``): setup, imports and the journal's writing are not counted. The stages:

- ``core``: the engine alone on the hands' events, as ``benchmarks/service.py`` measures it;
- ``replay``: ``TableController.replay()`` (``tablectl run --replay-only``) of a journal of them;
- ``read``: only the journal's reading (``JournalReader.scan``, hash chain checked), for the
  reader's share of the replay.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


STAGES = ("core", "replay", "read")


def _counted(work: Callable[[], object]) -> None:
    """``work`` once to warm up, then once inside ``functools.reduce`` (what callgrind counts)."""
    work()

    def once(_: object, __: object) -> object:
        return work()

    functools.reduce(once, (0,), None)  # (once: the initial value and the one item)


def _load(corpus: Path) -> list[tuple[str, bytes]]:
    return [(t, base64.b64decode(p)) for t, p in json.loads(corpus.read_text(encoding="utf-8"))]


def run_stage(stage: str, corpus: Path) -> int:
    """Run one stage (inside callgrind); returns the records or events it handles."""
    from benchmarks.service import REGISTRY, TOPICS, config_file, engine_inputs
    from config.loader import load_table
    from config.registry import load_registry
    from controller.journal import JournalFiles, JournalOptions, open_journal
    from controller.journal.reader import JournalReader, JournalScan
    from controller.service.table import TableController
    from engine.api import EngineSettings
    from engine.step import Engine

    messages = _load(corpus)
    if stage == "core":
        received = engine_inputs(TOPICS, messages)
        settings = EngineSettings(seats=9, profile="roberts", registry=load_registry(REGISTRY))

        def core() -> None:
            engine = Engine(settings)
            for item in received:
                engine.handle(item)

        _counted(core)
        return len(messages)
    with tempfile.TemporaryDirectory(prefix="tablectl-replay-instr-") as name:
        directory = Path(name)
        config = config_file(directory, 1883, "replay", fsync=False)
        (directory / "replay").mkdir(mode=0o700)
        files = JournalFiles(directory / "replay" / "journal.jsonl")
        journal = open_journal(files, JournalOptions(fsync=False))
        at = datetime(2026, 11, 30, tzinfo=UTC)
        for topic, payload in messages:
            journal.received(topic, payload, at)
        journal.close()
        table_config, registry = load_table(config)
        if stage == "read":

            def read() -> None:
                scan = JournalScan()
                for _ in JournalReader(files).scan(scan, skip=("sample",)):
                    pass
                assert scan.records == len(messages)
                assert not scan.chain

            _counted(read)
        else:

            def replay() -> None:
                recovery = TableController(table_config, registry).replay()
                assert recovery.replayed == len(messages), recovery
                assert not recovery.chain, recovery

            _counted(replay)
    return len(messages)


def measure(stage: str, corpus: Path, keep: Path | None = None) -> tuple[int, int]:
    """(instructions, records) of one stage under callgrind (its output kept as ``keep``)."""
    with tempfile.TemporaryDirectory(prefix="tablectl-callgrind-") as name:
        out = keep or Path(name) / "callgrind.out"
        result = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--toggle-collect=functools_reduce",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--inside",
                stage,
                "--corpus",
                str(corpus),
            ],
            env={**os.environ, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
            check=True,
        )
        records = int(result.stdout.strip().splitlines()[-1])
        found = re.search(r"^summary: (\d+)", out.read_text(), re.MULTILINE)
        assert found is not None, "no summary in callgrind's output"
        return int(found.group(1)), records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--stage", choices=STAGES, action="append")
    parser.add_argument("--keep", type=Path, help="keep callgrind's output of each stage as KEEP.STAGE")
    parser.add_argument("--inside", choices=STAGES, help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        print(run_stage(args.inside, args.corpus))
        return
    from benchmarks.service_throughput import hands

    per: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="tablectl-replay-corpus-") as name:
        # (the hands are made here, not under callgrind, where making them took minutes)
        corpus = Path(name) / "corpus.json"
        messages = [(t, base64.b64encode(p).decode("ascii")) for t, p in hands(args.hands)]
        corpus.write_text(json.dumps(messages), encoding="utf-8")
        for stage in args.stage or ["core", "replay"]:
            keep = args.keep.with_name(f"{args.keep.name}.{stage}") if args.keep else None
            instructions, records = measure(stage, corpus, keep)
            per[stage] = instructions / records
            print(f"{stage:7} {instructions:,} instructions, {records} records: {per[stage]:,.0f} a record")
    if "core" in per and "replay" in per:
        print(f"replay / engine core in instructions: {per['core'] / per['replay']:.3f} x (target >= 0.5)")


if __name__ == "__main__":
    main()
