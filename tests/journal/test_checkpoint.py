"""Checkpoints: the state after a checkpoint plus the records after it is the state after all records.

For random legal sessions (the virtual dealer's, ``testing.sessions.dealer_session``) and every
engine scenario (YAML, with irregularities), the engine is checkpointed at a random point (pickled,
compressed, loaded with the current settings as start-up does), then fed the rest: every later
output and the final state equal those of the uninterrupted run. A checkpoint of another shape or
with foreign classes is refused.
"""

from __future__ import annotations

import dataclasses
import io
import pickle
import zlib
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from controller import checkpoint
from controller.alerts_out import DealerSignals
from controller.checkpoint import CheckpointError, Snapshot
from engine.api import EngineSettings, Outputs, Received
from engine.core import Engine
from testing.sessions import dealer_session
from tests.engine.runner import settings as engine_settings
from tests.engine.runner import to_received
from tests.engine.scenario import load_scenarios, messages, registry

SCENARIOS = load_scenarios()


def _plain(value: object) -> object:
    """``value`` as comparable plain data (containers, models and objects by their contents)."""
    if isinstance(value, str | bytes | int | float | bool | datetime | type(None)):
        return value
    if isinstance(value, dict):
        return [(_plain(k), _plain(v)) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(repr(_plain(v)) for v in value)
    if isinstance(value, BaseModel):
        return (type(value).__name__, value.model_dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, [_plain(getattr(value, f.name)) for f in dataclasses.fields(value)])
    if isinstance(value, EngineSettings):
        return "settings"
    names = list(getattr(value, "__dict__", {})) or list(getattr(type(value), "__slots__", ()))
    return (type(value).__name__,
            [(n, _plain(getattr(value, n))) for n in sorted(names) if n not in _COPY_FLAGS])


#: Copy-on-write bookkeeping, not what the engine knows: whether a container is still shared
#: with a frozen state depends on when the holder last froze one (a checkpoint does).
_COPY_FLAGS = frozenset({"cards_shared", "cards_changed", "chips_shared", "owned"})


def _outputs(outputs: Outputs) -> object:
    return _plain((outputs.alerts, outputs.state, outputs.commands, outputs.hands))


def _snapshot(engine: Engine, covers: int, *, public: bool = True) -> bytes:
    return checkpoint.dump(
        Snapshot(
            covers=covers,
            session=1,
            engine=engine.state,
            state=engine.public_state() if public else None,
            signals=DealerSignals(buzzer_ms=300),
        )
    )


def _check(received: list[Received], split: int, engine_config: EngineSettings) -> None:
    whole = Engine(engine_config)
    expected = [_outputs(whole.handle(item)) for item in received]

    first = Engine(engine_config)
    for item in received[:split]:
        first.handle(item)
    data = _snapshot(first, split)
    # Start-up: new settings objects from the configuration, the state from the checkpoint.
    fresh = dataclasses.replace(engine_config)
    restored = checkpoint.load(data, fresh)
    assert restored.engine.settings is fresh
    resumed = Engine(fresh)
    resumed.restore(restored.engine)
    assert [_outputs(resumed.handle(item)) for item in received[split:]] == expected[split:]
    assert _plain(resumed.state.machine) == _plain(whole.state.machine)
    assert resumed.public_state().to_json() == whole.public_state().to_json()


def _session(seed: int, hands: int) -> list[Received]:
    messages, _ = dealer_session(registry(), seats=9, hands=hands, seed=seed, noise=True)
    return [to_received(m) for m in messages]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), hands=st.integers(1, 6), cut=st.floats(0, 1))
def test_checkpoint_plus_tail_equals_all_records_for_random_sessions(
    seed: int, hands: int, cut: float
) -> None:
    received = _session(seed, hands)
    _check(received, int(cut * len(received)), engine_settings())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(SCENARIOS) - 1), cut=st.floats(0, 1))
def test_checkpoint_plus_tail_equals_all_records_for_the_scenarios(index: int, cut: float) -> None:
    scenario = SCENARIOS[index]
    received = [to_received(m) for m in messages(scenario)]
    config = engine_settings(scenario.profile, scenario.table_seats, scenario.action_feed)
    _check(received, int(cut * len(received)), config)


def test_a_checkpoint_mid_irregularity_keeps_its_alerts_and_remedies() -> None:
    for scenario in SCENARIOS:
        if len(scenario.expect) >= 3:
            received = [to_received(m) for m in messages(scenario)]
            config = engine_settings(scenario.profile, scenario.table_seats, scenario.action_feed)
            for split in range(len(received) + 1):
                _check(received, split, config)
            return
    pytest.fail("no scenario with three alert changes")


def test_a_checkpoint_of_another_engine_shape_is_refused() -> None:
    engine = Engine(engine_settings())
    for item in _session(1, 1):
        engine.handle(item)
    machine = engine.state.machine
    del machine.__dict__["hand_deck"]  # as an older engine, without a field a newer one added
    with pytest.raises(CheckpointError, match="fields missing: hand_deck"):
        checkpoint.load(_snapshot(engine, 1, public=False), engine_settings())


def test_a_checkpoint_naming_foreign_code_is_refused_before_it_runs() -> None:
    class Evil:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            import os

            return (os.system, ("echo owned",))

    buffer = io.BytesIO()
    pickle.dump(Evil(), buffer)
    with pytest.raises(CheckpointError, match=r"posix\.system, which a checkpoint may not hold"):
        checkpoint.load(zlib.compress(buffer.getvalue()), engine_settings())
    with pytest.raises(CheckpointError, match="unreadable"):
        checkpoint.load(b"not a checkpoint", engine_settings())


def test_a_checkpoint_keeps_the_session_around_the_hands() -> None:
    # The dealer, the last hands, the level clock, a rebuy during a hand, a seat away: cut at
    # every tenth message, the rest resumed from the checkpoint gives the same outputs.
    from testing.script import Table, setup_lines
    from tests.engine.test_session import LEVELS, STACKS, hand
    from tests.engine.test_session import settings as session_settings

    config = session_settings("roberts", levels=LEVELS, max_absence_s=60, max_rebuy=200)
    table = Table(registry(), table_seats=config.seats, chips=config.chips)
    lines = [
        *(line for line in setup_lines([1, 2, 3], 1, ["A", "B"]) if line != "blinds"),
        *STACKS, "dealer B-1", "last_hands", "level_start",
        *hand(1, first=True, mid=("dealer B-2", "chips - stack:1 500")),
        "chips - stack:2 300", *hand(2, blinds=(1, 2)), "leave 3", "wait 61", "dealer B-2",
    ]
    received = [to_received(m) for line in lines for m in table.run(line)]
    for split in range(1, len(received), 10):
        _check(received, split, config)
