"""The dealer's scripts through the pure engine core: each hand raises exactly its mistakes.

The generator and the engine were written apart from the catalogue; this is where they must
agree (the demo's precision and recall of 1.0 depend on it), with no devices or broker between.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from config.registry import load_registry
from contract.models import Profile
from engine.api import DeviceEventReceived, EngineSettings
from engine.core import Engine
from simulators.dealer import DealerSettings, VirtualDealer, raisable_codes
from testing.events import to_events
from tests.conftest import EXAMPLE_REGISTRY

REGISTRY = load_registry(EXAMPLE_REGISTRY)
START = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def _session(profile: Profile, seats: int, seed: int, hands: int) -> tuple[Counter[str], list[str]]:
    engine = Engine(EngineSettings(seats=seats, profile=profile, registry=REGISTRY))
    dealer = VirtualDealer(
        REGISTRY.decks,
        DealerSettings(seats=seats, profile=profile, mistake_rate=0.4, all_in_rate=0.1),
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


def test_a_long_session_exercises_every_code_the_profile_can_raise() -> None:
    injected, disagreements = _session("roberts", 9, 11, hands=250)
    assert not disagreements, "\n".join(disagreements[:10])
    assert set(injected) == set(raisable_codes("roberts"))
