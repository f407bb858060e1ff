"""Property tests: random legal hands raise nothing; one injected mistake raises exactly its code."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from contract.models import Profile
from testing.script import Message, Table, setup_lines
from testing.sessions import continue_table, dealer_session
from tests.engine.flows import FLOWS
from tests.engine.mistakes import MISTAKES, Hand
from tests.engine.runner import run
from tests.engine.scenario import registry

PROFILES: list[Profile] = ["roberts", "tda"]


@settings(max_examples=500, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    table_seats=st.integers(min_value=2, max_value=10),
    hands=st.integers(min_value=1, max_value=3),
    profile=st.sampled_from(PROFILES),
)
def test_legal_hands_raise_no_warning(seed: int, table_seats: int, hands: int, profile: Profile) -> None:
    messages, _ = dealer_session(
        registry(), seats=table_seats, hands=hands, seed=seed, profile=profile, noise=True
    )
    engine, alerts = run(messages, profile, table_seats)
    serious = [f"{a.code} seat={a.seat}: {a.message}" for a in alerts if a.severity != "info"]
    assert serious == [], f"dealer seed {seed}, {table_seats} seats, {hands} hands"
    assert engine.state.hand == hands


def _next_occupied(players: list[int], seat: int, table_seats: int) -> int:
    return min(players, key=lambda s: (s - seat - 1) % table_seats)


def _start(
    rng: random.Random, seed: int, table_seats: int, profile: Profile, prefix: bool
) -> tuple[list[Message], Table, list[str], Hand]:
    """The table before the hand under test: set up by script, or after a dealer's legal hand."""
    if not prefix:
        count = rng.randint(2, table_seats)
        players = sorted(rng.sample(range(1, table_seats + 1), count))
        button = rng.choice(players)
        table = Table(registry(), table_seats=table_seats, seed=seed)
        lines = setup_lines(players, button, ["A", "B"])
        return [], table, lines, Hand(players, button, table_seats, "A", "B", profile)
    messages, dealer = dealer_session(registry(), seats=table_seats, hands=1, seed=seed, profile=profile)
    table = continue_table(registry(), dealer, messages, seed=seed)
    players = sorted(dealer.occupied)
    assert dealer.button is not None
    assert dealer.ready is not None
    assert dealer.collected is not None
    button = _next_occupied(players, dealer.button, table_seats)
    lines = ["next_button", "blinds", f"use {dealer.ready}"]
    return messages, table, lines, Hand(players, button, table_seats, dealer.ready, dealer.collected, profile)


@settings(max_examples=500, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    table_seats=st.integers(min_value=2, max_value=10),
    profile=st.sampled_from(PROFILES),
    mistake=st.sampled_from([*sorted(MISTAKES), "button_misplaced"]),
    prefix=st.booleans(),
)
def test_one_mistake_raises_exactly_its_code(
    seed: int, table_seats: int, profile: Profile, mistake: str, prefix: bool
) -> None:
    rng = random.Random(seed)
    prefixed, table, lines, hand = _start(
        rng, seed, table_seats, profile, prefix or mistake == "button_misplaced"
    )
    if mistake == "button_misplaced":
        wrong = rng.choice([p for p in hand.players if p != hand.button])
        lines += [f"button {wrong}", "new_hand"]
        expected = {"button_misplaced"}
    else:
        if rng.random() < 0.5:
            lines.append("new_hand")
        built = MISTAKES[mistake](rng, hand)
        if built is None:
            return  # this mistake cannot happen at this table (e.g. no empty seat)
        mistake_lines, expected = built
        lines += mistake_lines
    _, alerts = run(prefixed + table.run_all(lines), profile, table_seats)
    raised = {a.code for a in alerts if a.status == "raised" and a.severity != "info"}
    assert raised == expected, "\n".join(
        [*lines, *(f"{a.code} {a.status} seat={a.seat}: {a.message}" for a in alerts)]
    )


@settings(max_examples=500, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    table_seats=st.integers(min_value=2, max_value=10),
    profile=st.sampled_from(PROFILES),
    flow=st.sampled_from(sorted(FLOWS)),
    prefix=st.booleans(),
)
def test_remedy_followed_raises_nothing_more_and_resolves(
    seed: int, table_seats: int, profile: Profile, flow: str, prefix: bool
) -> None:
    rng = random.Random(seed)
    prefixed, table, lines, hand = _start(rng, seed, table_seats, profile, prefix)
    built = FLOWS[flow](rng, hand)
    if built is None:
        return  # no such remedy under this profile
    flow_lines, expected = built
    lines += flow_lines
    engine, alerts = run(prefixed + table.run_all(lines), profile, table_seats)
    report = "\n".join([*lines, *(f"{a.code} {a.status}: {a.message}" for a in alerts)])
    raised = {a.code for a in alerts if a.status == "raised" and a.severity != "info"}
    assert raised == expected, report
    assert not engine.public_state().alerts, report
