"""Run table scripts with chips (or action inputs) through the pure core: alerts, hand results and
the last public state, for the game tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from contract.models import Alert, HandResult, Profile, PublicState
from engine.api import EngineSettings
from engine.betting.terms import Stakes
from engine.step import Engine
from testing.chipset import chip_registry
from testing.script import Table, setup_lines
from tests.engine.runner import to_received
from tests.engine.scenario import registry

CHIPS = chip_registry(per_value=60)


@dataclass
class Played:
    """What the engine published while a script ran."""

    alerts: list[Alert] = field(default_factory=list)
    hands: list[HandResult] = field(default_factory=list)
    state: PublicState | None = None

    def codes(self, status: str = "raised") -> list[str]:
        return [a.code for a in self.alerts if a.status == status]

    def active(self) -> list[str]:
        return [a.code for a in (self.state.alerts if self.state else [])]


def game_settings(
    stakes: Stakes | None = None,
    *,
    chips: bool = True,
    profile: Profile = "roberts",
    seats: int = 9,
    odd_chip: str = "first_shown",
) -> EngineSettings:
    return EngineSettings(
        seats=seats,
        profile=profile,
        registry=registry(),
        chips=CHIPS if chips else None,
        stakes=stakes or Stakes(small_blind=1, big_blind=2),
        odd_chip=odd_chip,  # type: ignore[arg-type]
    )


def play(
    players: list[int],
    button: int,
    steps: str,
    *,
    settings: EngineSettings | None = None,
    engine: Engine | None = None,
    table: Table | None = None,
) -> Played:
    """Seat ``players``, shuffle, place the button, then run ``steps`` (blind sensors are not
    used: blinds are chips here)."""
    settings = settings or game_settings()
    engine = engine or Engine(settings)
    if table is None:
        table = Table(registry(), table_seats=settings.seats, chips=settings.chips)
        lines = [line for line in setup_lines(players, button, ["A", "B"]) if line != "blinds"]
    else:
        lines = []
    lines += [line for line in steps.splitlines() if line.strip()]
    played = Played()
    for line in lines:
        for message in table.run(line):
            outputs = engine.handle(to_received(message))
            played.alerts += outputs.alerts
            played.hands += outputs.hands
            if outputs.state is not None:
                played.state = outputs.state
    return played
