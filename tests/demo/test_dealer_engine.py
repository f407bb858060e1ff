"""The dealer's scripts through the pure engine core: each hand raises exactly its mistakes.

The generator and the engine were written apart from the catalogue; this is where they must
agree (the demo's precision and recall of 1.0 depend on it), with no devices or broker between.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from config.chips import ChipRegistry
from config.registry import load_registry
from contract.models import Profile
from engine.api import DeviceEventReceived, EngineSettings
from engine.betting.terms import Stakes
from engine.core import Engine
from simulators.dealer import DealerSettings, InfeasibleMistake, VirtualDealer, raisable_codes
from simulators.dealer.chips import Structure, TableStakes, chip_registry
from testing.events import to_events
from tests.conftest import EXAMPLE_REGISTRY

REGISTRY = load_registry(EXAMPLE_REGISTRY)
START = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


CHIPS = chip_registry()


def _session(
    profile: Profile,
    seats: int,
    seed: int,
    hands: int,
    structure: Structure | None = None,
    mistake_rate: float = 0.4,
) -> tuple[Counter[str], list[str]]:
    """A session through the engine; ``structure``: a table that reads chips, in that game."""
    stakes = None if structure is None else TableStakes(
        structure=structure, ante=1 if seed % 2 else 0, rake_percent=5, rake_cap=3
    )
    engine = Engine(
        EngineSettings(
            seats=seats,
            profile=profile,
            registry=REGISTRY,
            chips=None if stakes is None else ChipRegistry(CHIPS),
            stakes=None if stakes is None else Stakes(
                structure=stakes.structure, small_blind=stakes.small_blind,
                big_blind=stakes.big_blind, ante=stakes.ante, rake_percent=stakes.rake_percent,
                rake_cap=stakes.rake_cap,
            ),
            hole_card_off_s=60.0,
        )
    )
    dealer = VirtualDealer(
        REGISTRY.decks,
        DealerSettings(seats=seats, profile=profile, mistake_rate=mistake_rate, all_in_rate=0.1,
                       stakes=stakes, chip_values=CHIPS, hole_card_off_s=60.0),
        seed=seed,
    )
    injected: Counter[str] = Counter()
    disagreements: list[str] = []
    for script in dealer.hands(hands):
        injected.update(script.mistakes)
        raised: list[str] = []
        start = START + timedelta(hours=script.hand)
        for sourced in to_events(script.steps, start=start):
            received = DeviceEventReceived(sourced.device, sourced.event, sourced.event.ts)
            for alert in engine.handle(received).alerts:
                if alert.status == "raised":
                    raised.append(alert.code)
        if sorted(raised) != sorted(script.mistakes):
            disagreements.append(f"hand {script.hand}: injected {script.mistakes}, raised {raised}")
    return injected, disagreements


@pytest.mark.parametrize("profile", ["roberts", "tda"])
@pytest.mark.parametrize(("seats", "seed"), [(9, 1), (6, 2), (10, 3), (3, 4)])
def test_every_hand_raises_exactly_the_injected_mistakes(
    profile: Profile, seats: int, seed: int
) -> None:
    injected, disagreements = _session(profile, seats, seed, hands=120)
    assert not disagreements, "\n".join(disagreements[:10])
    assert sum(injected.values()) > 30


@pytest.mark.parametrize("profile", ["roberts", "tda"])
@pytest.mark.parametrize(
    ("structure", "seats", "seed"),
    [("no_limit", 9, 1), ("pot_limit", 6, 2), ("fixed_limit", 10, 3), ("no_limit", 3, 4),
     ("pot_limit", 2, 5)],
)
def test_with_chips_every_hand_raises_exactly_the_injected_mistakes(
    profile: Profile, structure: Structure, seats: int, seed: int
) -> None:
    injected, disagreements = _session(profile, seats, seed, hands=120, structure=structure)
    assert not disagreements, "\n".join(disagreements[:10])
    assert sum(injected.values()) > 20


def test_legal_chip_hands_raise_nothing() -> None:
    games: tuple[tuple[Structure, int], ...] = (("no_limit", 7), ("pot_limit", 8), ("fixed_limit", 9))
    for structure, seed in games:
        _, disagreements = _session("roberts", 9, seed, hands=150, structure=structure,
                                    mistake_rate=0.0)
        assert not disagreements, "\n".join(disagreements[:10])


def test_a_long_chip_session_exercises_every_code() -> None:
    injected, disagreements = _session("roberts", 9, 12, hands=300, structure="pot_limit")
    assert not disagreements, "\n".join(disagreements[:10])
    assert set(injected) == set(raisable_codes("roberts", chips=True))


def test_a_long_session_exercises_every_code_the_profile_can_raise() -> None:
    injected, disagreements = _session("roberts", 9, 11, hands=250)
    assert not disagreements, "\n".join(disagreements[:10])
    assert set(injected) == set(raisable_codes("roberts"))


def test_the_hand_after_the_last_three_raises_hand_after_last_then_the_game_ends() -> None:
    """Announced, three hands dealt, a fourth: only that hand raises ``hand_after_last``; the
    dealer then ends the game (the table empties) and the next hand is a legal one again."""
    engine = Engine(EngineSettings(seats=6, profile="roberts", registry=REGISTRY,
                                   hole_card_off_s=60.0))
    dealer = VirtualDealer(REGISTRY.decks, DealerSettings(seats=6), seed=8)
    with pytest.raises(InfeasibleMistake, match="announce_last_hands"):
        dealer.next_hand(mistake="hand_after_last")
    raised_by_hand: list[list[str]] = []
    scripts = [dealer.next_hand(mistake=None)]  # the dealer's state did not change: deal on
    dealer.announce_last_hands()
    scripts += [dealer.next_hand(mistake=None) for _ in range(3)]
    scripts += [dealer.next_hand(mistake="hand_after_last"), dealer.next_hand(mistake=None)]
    for script in scripts:
        raised: list[str] = []
        for sourced in to_events(script.steps, start=START + timedelta(hours=script.hand)):
            received = DeviceEventReceived(sourced.device, sourced.event, sourced.event.ts)
            raised += [a.code for a in engine.handle(received).alerts if a.status == "raised"]
        raised_by_hand.append(raised)
    assert raised_by_hand == [[], [], [], [], ["hand_after_last"], []]
    assert [s.mistakes for s in scripts] == [(), (), (), (), ("hand_after_last",), ()]
