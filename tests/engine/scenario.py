"""Engine scenarios: YAML files of table script steps and the alerts they must produce.

Independent of the engine core, so that the service tests can replay the same scenarios through
``tablectl run`` and a real broker. A scenario file holds a list of::

    - name: exposed card during the deal
      profile: roberts            # or tda (default roberts)
      players: [1, 2, 3, 4]       # occupied seats; setup also shuffles decks A and B,
      button: 1                   # puts the button here and posts the blinds
      setup: true                 # false: no automatic setup lines
      steps: |
        deal 2 3 4 1 2
        deal 3:up
      expect:                     # every alert change, in order: code [seat=N] severity status
        - exposed_card seat=3 warning raised
      phase: dealing              # optional: the phase at the end

See :mod:`testing.script` for the step language.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any, Final

import yaml

from config.registry import DeckRegistry, load_registry
from contract.models import Profile, PublicState, Status, WireModel
from testing.script import Message, Table, setup_lines

SCENARIO_DIR: Final = Path(__file__).parent / "scenarios"
REGISTRY_PATH: Final = Path(__file__).parents[2] / "config" / "decks.example.csv"


@dataclass(frozen=True)
class ExpectedAlert:
    """One expected alert change, judged on code, seat, severity and status."""

    code: str
    seat: int | None
    severity: str
    status: str

    @classmethod
    def parse(cls, text: str) -> ExpectedAlert:
        words = text.split()
        seat = None
        rest = []
        for word in words[1:]:
            if word.startswith("seat="):
                seat = int(word[5:])
            else:
                rest.append(word)
        if len(rest) != 2:
            raise ValueError(f"expected 'code [seat=N] severity status', got {text!r}")
        return cls(words[0], seat, rest[0], rest[1])

    def __str__(self) -> str:
        seat = f" seat={self.seat}" if self.seat is not None else ""
        return f"{self.code}{seat} {self.severity} {self.status}"


@dataclass(frozen=True)
class Scenario:
    name: str
    file: str
    profile: Profile
    table_seats: int
    action_feed: bool
    lines: tuple[str, ...]
    expect: tuple[ExpectedAlert, ...]
    phase: str | None

    @property
    def id(self) -> str:
        return f"{self.file}:{self.name}"


@cache
def registry() -> DeckRegistry:
    """Decks A and B of the example registry (the same file the example config uses)."""
    return load_registry(REGISTRY_PATH)


def _scenario(raw: dict[str, Any], file: str) -> Scenario:
    players = [int(p) for p in raw.get("players", [])]
    lines: list[str] = []
    if raw.get("setup", True) and players:
        lines += setup_lines(players, int(raw.get("button", players[0])), ["A", "B"])
    lines += [line for line in str(raw.get("steps", "")).splitlines() if line.strip()]
    return Scenario(
        name=str(raw["name"]),
        file=file,
        profile=raw.get("profile", "roberts"),
        table_seats=int(raw.get("seats", 9)),
        action_feed=bool(raw.get("action_feed", False)),
        lines=tuple(lines),
        expect=tuple(ExpectedAlert.parse(e) for e in raw.get("expect", []) or []),
        phase=raw.get("phase"),
    )


def load_scenarios(directory: Path = SCENARIO_DIR) -> list[Scenario]:
    """Every scenario of every ``*.yaml`` file in ``directory``, in file then list order."""
    scenarios = []
    for path in sorted(directory.glob("*.yaml")):
        for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            scenarios.append(_scenario(raw, path.stem))
    return scenarios


def messages(scenario: Scenario) -> list[Message]:
    """The scenario as the messages devices and the console would publish, in order.

    Device ids: ``rfid-1`` (tags), ``shuffler``, ``sensors`` (seats, button, blinds, keypad);
    actions go on the ``input`` topic (device None); ``raw`` messages are malformed payloads.
    """
    table = Table(registry(), table_seats=scenario.table_seats)
    out: list[Message] = []
    for line in scenario.lines:
        out += table.run(line)
    return out


def initial_statuses(ts: datetime | None = None) -> list[Message]:
    """``online`` statuses of the three scenario devices (session 1), to publish first."""
    when = ts or datetime(2026, 11, 29, 19, 59, tzinfo=UTC)
    return [
        Message("status", device, Status(state="online", ts=when + timedelta(milliseconds=i), session=1))
        for i, device in enumerate(("rfid-1", "shuffler", "sensors"))
    ]


def describe(payload: WireModel | str | PublicState) -> str:
    return payload if isinstance(payload, str) else payload.model_dump_json()
