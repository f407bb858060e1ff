"""The virtual dealer's scripts: legal hands obey the rules; each mistake is exactly that code."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config.registry import DeckRegistry, load_registry
from contract.models import EVENT_ADAPTER, Profile
from engine.catalogue import DEALING_CODES
from simulators.dealer import (
    CATALOGUE_CODES,
    DealerSettings,
    FailDeckCheck,
    InfeasibleMistake,
    Marker,
    Place,
    Press,
    Remove,
    SetBlind,
    SetOccupied,
    VirtualDealer,
    raisable_codes,
)
from simulators.dealer.mistakes import MISTAKES
from testing.events import to_events
from tests.conftest import EXAMPLE_REGISTRY
from tests.demo.table_rules import Referee, RuleBroken

REGISTRY: DeckRegistry = load_registry(EXAMPLE_REGISTRY)
DECKS: Mapping[str, Mapping[str, str]] = REGISTRY.decks


def _referee(seats: int) -> Referee:
    return Referee(seats=seats, decks=DECKS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.integers(2, 10),
    data=st.data(),
)
def test_legal_hands_obey_the_rules(seed: int, seats: int, data: st.DataObject) -> None:
    low = data.draw(st.integers(2, seats), label="min players")
    high = data.draw(st.integers(low, seats), label="max players")
    dealer = VirtualDealer(
        DECKS,
        DealerSettings(seats=seats, min_players=low, max_players=high, all_in_rate=0.2),
        seed=seed,
    )
    referee = _referee(seats)
    for _ in range(6):
        script = dealer.next_hand(mistake=None)
        assert low <= len(script.players) <= high
        referee.play(script)


def test_a_long_legal_session_covers_the_game() -> None:
    """Folds, all-ins, showdowns, declarations, joins and leaves, heads-up: all of it happens."""
    dealer = VirtualDealer(DECKS, DealerSettings(seats=9, all_in_rate=0.15), seed=7)
    referee = _referee(9)
    seen: Counter[str] = Counter()
    sizes: set[int] = set()
    for _ in range(300):
        script = dealer.next_hand(mistake=None)
        referee.play(script)
        sizes.add(len(script.players))
        for step in script.steps:
            if isinstance(step, Press):
                seen[step.key] += 1
            if isinstance(step, Place) and step.zone == "board":
                seen["board"] += 1
    assert {"all_in", "round_complete", "declare_board", "new_hand"} <= set(seen)
    assert referee.showdowns >= 10  # the river betting round is closed, then losers muck
    assert len(sizes) >= 5


def test_an_announced_game_deals_three_legal_hands_then_ends() -> None:
    """``last_hands`` before a hand, three legal hands, then the table empties and fills again
    before the next: the referee accepts all of it and nothing is tagged."""
    dealer = VirtualDealer(DECKS, DealerSettings(seats=6), seed=4)
    referee = _referee(6)
    referee.play(dealer.next_hand(mistake=None))
    dealer.announce_last_hands()
    scripts = [dealer.next_hand(mistake=None) for _ in range(4)]
    for script in scripts:
        referee.play(script)
        assert script.mistakes == ()
    keys = [[s.key for s in script.steps if isinstance(s, Press)] for script in scripts]
    assert keys[0].count("last_hands") == 1
    assert all("last_hands" not in k for k in keys[1:])
    stood_up = [s for s in scripts[3].steps if isinstance(s, SetOccupied) and not s.occupied]
    assert len(stood_up) >= len(scripts[2].players)  # every player of the game stood up
    assert dealer.hands_left is None


def test_heads_up_the_button_posts_the_small_blind_and_is_dealt_last() -> None:
    dealer = VirtualDealer(DECKS, DealerSettings(seats=6, min_players=2, max_players=2), seed=5)
    referee = _referee(6)
    for _ in range(20):
        script = dealer.next_hand(mistake=None)
        referee.play(script)
        assert script.players[-1] == script.button
        blinds = [s.seat for s in script.steps if isinstance(s, SetBlind) and s.present]
        assert script.button in blinds[:2]


def test_the_referee_catches_a_broken_script() -> None:
    """The referee can fail: a legal script with two hole cards swapped is rejected."""
    dealer = VirtualDealer(DECKS, DealerSettings(seats=6, min_players=4), seed=3)
    script = dealer.next_hand(mistake=None)
    steps = list(script.steps)
    holes = [i for i, s in enumerate(steps) if isinstance(s, Place) and s.zone.startswith("seat:")]
    steps[holes[0]], steps[holes[1]] = steps[holes[1]], steps[holes[0]]
    broken = type(script)(script.hand, script.deck, script.button, script.players, tuple(steps))
    with pytest.raises(RuleBroken, match="must go to seat"):
        _referee(6).play(broken)


def _mistake_codes(profile: Profile) -> list[str]:
    return list(raisable_codes(profile))


@pytest.mark.parametrize("profile", ["roberts", "tda"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_forced_mistake_is_tagged_then_acknowledged(profile: Profile, seed: int) -> None:
    dealer = VirtualDealer(DECKS, DealerSettings(seats=9, profile=profile), seed=seed)
    dealer.next_hand(mistake=None)
    for code in _mistake_codes(profile):
        if code == "hand_after_last":  # it spans hands: announced, then three hands dealt
            dealer.announce_last_hands()
            for _ in range(3):
                dealer.next_hand(mistake=None)
        script = dealer.next_hand(mistake=code)
        tagged = [(i, s) for i, s in enumerate(script.steps) if s.mistake is not None]
        assert tuple(s.mistake for _, s in tagged) == script.mistakes
        assert script.mistakes[-1] == code
        if code != "remedy_not_followed":
            # Only the multi-step mistakes pass through their warning first.
            assert script.mistakes in ((code,), ("exposed_card", code), ("extra_card", code))
        for index, _ in tagged:
            after = script.steps[index + 1 :]
            assert any(isinstance(s, Press) and s.key == "ack" for s in after), code
        assert isinstance(script.steps[-1], Marker)
        assert script.steps[-1].kind == "hand_end"
        # Whatever happened, the table is cleared: every tag placed is removed again.
        placed = {s.uid for s in script.steps if isinstance(s, Place)}
        removed = {s.uid for s in script.steps if isinstance(s, Remove)}
        assert placed == removed, code


def test_drawn_mistakes_cover_the_whole_catalogue() -> None:
    dealer = VirtualDealer(DECKS, DealerSettings(seats=9, mistake_rate=0.3), seed=1)
    seen: Counter[str] = Counter()
    for script in dealer.hands(200):
        seen.update(script.mistakes)
    assert set(seen) == set(raisable_codes("roberts"))
    assert set(seen) <= set(CATALOGUE_CODES)


def test_same_seed_same_session() -> None:
    def session(seed: int) -> list[object]:
        dealer = VirtualDealer(DECKS, DealerSettings(mistake_rate=0.5), seed=seed)
        return [script.steps for script in dealer.hands(20)]

    assert session(11) == session(11)
    assert session(11) != session(12)


def test_deck_check_failure_and_infeasible_codes() -> None:
    dealer = VirtualDealer(DECKS, DealerSettings(seats=2), seed=4)
    with pytest.raises(InfeasibleMistake, match="first hand"):
        dealer.next_hand(mistake="button_misplaced")
    dealer.next_hand(mistake=None)
    for code in ("misdeal_empty_seat", "misdeal_seat_skipped"):
        with pytest.raises(InfeasibleMistake):
            dealer.next_hand(mistake=code)
    script = dealer.next_hand(mistake="deck_check_failed")
    failed = [s for s in script.steps if isinstance(s, FailDeckCheck)]
    assert len(failed) == 1
    assert failed[0].count == 51
    assert len(failed[0].missing) == 1


def test_to_events_gives_valid_contract_events_in_sequence() -> None:
    dealer = VirtualDealer(DECKS, DealerSettings(seats=9, mistake_rate=0.5), seed=9)
    steps = [step for script in dealer.hands(30) for step in script.steps]
    events = to_events(steps)
    last: dict[str, int] = {}
    previous_ts = None
    for sourced in events:
        event = EVENT_ADAPTER.validate_json(sourced.event.to_json())
        assert event.seq == last.get(sourced.device, 0) + 1
        last[sourced.device] = event.seq
        if previous_ts is not None:
            assert event.ts > previous_ts
        previous_ts = event.ts
    kinds = Counter(s.event.type for s in events)
    assert {"tag", "key", "button", "seat", "blind", "shuffling", "shuffle_complete"} <= set(kinds)
    # A card placed is present once and absent once per stay on an antenna.
    tags = [s.event for s in events if s.event.type == "tag"]
    assert sum(1 for t in tags if t.present) == sum(1 for t in tags if not t.present)


def test_every_dealing_code_of_the_engine_catalogue_has_one_injector() -> None:
    """A code added to the engine's catalogue fails here until the dealer can commit it."""
    assert set(DEALING_CODES) <= set(MISTAKES)
    for code, injector in MISTAKES.items():
        assert injector.code == code
