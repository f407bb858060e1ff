"""The public state the engine builds (engine/state.py): its JSON is the contract's own, so the
same state read back — a checkpoint's, a subscriber's — says the same bytes."""

from __future__ import annotations

from contract.models import PublicState, parse_state
from engine.api import EngineSettings
from engine.step import Engine
from testing.script import Message, Table, setup_lines
from testing.sessions import dealer_session
from tests.engine.game import game_settings
from tests.engine.runner import settings, to_received
from tests.engine.scenario import registry
from tests.engine.test_session import STACKS, hand


def states(engine_settings: EngineSettings, messages: list[Message]) -> list[PublicState]:
    engine = Engine(engine_settings)
    return [out.state for m in messages if (out := engine.handle(to_received(m))).state is not None]


def assert_read_back_the_same(published: list[PublicState]) -> None:
    for state in published:
        wire = state.to_json()
        assert parse_state("holdem/t1/state", wire).to_json() == wire


def test_states_with_and_without_a_betting_view_read_back_to_the_same_bytes() -> None:
    """Chips and stakes: the betting view during each hand, none between hands (the kill test saw
    the retained state republished after a restart carry ``"to_act":null, ..."shows_first":null``
    where the live one had left them out)."""
    engine_settings = game_settings(seats=3)
    table = Table(registry(), table_seats=3, chips=engine_settings.chips)
    lines = [line for line in setup_lines([1, 2, 3], 1, ["A", "B"]) if line != "blinds"]
    messages = table.run_all([*lines, *STACKS, *hand(1, first=True), *hand(2)])
    published = states(engine_settings, messages)
    betting = [s for s in published if s.bets or s.pots or s.to_act is not None]
    assert betting
    assert len(betting) < len(published)
    assert_read_back_the_same(published)


def test_states_of_a_table_without_chips_read_back_to_the_same_bytes() -> None:
    messages, _ = dealer_session(registry(), seats=6, hands=5, seed=3)
    published = states(settings(), messages)
    assert len(published) > 50
    assert_read_back_the_same(published)
