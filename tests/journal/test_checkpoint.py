"""Checkpoints: the state after a checkpoint plus the records after it is the state after all records.

For random legal sessions (the virtual dealer's, ``testing.sessions.dealer_session``) and every
engine scenario (YAML, with irregularities), the engine is checkpointed at a random point (as plain
data, compressed JSON, loaded with the current settings as start-up does), then fed the rest: every later
output and the final state equal those of the uninterrupted run. A checkpoint of another version,
naming anything but the engine's data classes, or with wrong values is refused.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import re
import zlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from controller.journal import checkpoint
from controller.journal.checkpoint import CheckpointError, Snapshot
from controller.service.signals import DealerSignals
from engine.api import EngineSettings, Outputs, Received
from engine.dispatcher import Machine
from engine.state_data import STATE_VERSION
from engine.step import Engine
from testing.engine_oracle import CHIPS, rendered
from testing.engine_oracle import registry as oracle_registry
from testing.oracle_hand import TABLE_SEATS, play_hand
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
    return (
        type(value).__name__,
        [(n, _plain(getattr(value, n))) for n in sorted(names) if n not in _NOT_KNOWN],
    )


#: Not what the engine knows: bookkeeping of one step (whether the cards changed in the last
#: step depends on when the holder last froze a state, as a checkpoint does), the concern
#: objects, which hold the machine's parts (and the machine) rather than state of their own, and
#: the answers the machine remembers (found again from the state).
_NOT_KNOWN = frozenset({"cards_changed"}) | Machine.CONCERNS | Machine.REMEMBERED


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


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), cut=st.floats(0, 1))
def test_checkpoint_plus_tail_equals_all_records_for_random_hands_with_chips(seed: int, cut: float) -> None:
    """PokerKit hands read chip by chip: the betting core's money value is in the checkpoint."""
    hand = play_hand(seed)
    config = EngineSettings(
        seats=TABLE_SEATS, profile="roberts", registry=oracle_registry(), chips=CHIPS, stakes=hand.stakes
    )
    received = rendered(hand, "chips")
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


def _crafted(change: Callable[[dict[str, Any]], None]) -> bytes:
    """A checkpoint of a real session, its JSON changed by ``change`` (as an attacker could)."""
    engine = Engine(engine_settings())
    for item in _session(1, 1):
        engine.handle(item)
    document = json.loads(zlib.decompress(_snapshot(engine, 1)))
    change(document)
    return zlib.compress(json.dumps(document).encode())


def test_the_checkpoint_is_json_of_plain_data_with_its_versions() -> None:
    document = json.loads(zlib.decompress(_crafted(lambda d: None)))
    assert document["format"] == checkpoint.FORMAT == 2
    assert document["engine"]["version"] == STATE_VERSION
    assert document["engine"]["machine"]["hand"] == 1


def test_a_checkpoint_of_another_engine_version_is_refused() -> None:
    def older(document: dict[str, Any]) -> None:
        del document["engine"]["machine"]["hand_part"]  # an older engine, without a newer field

    with pytest.raises(CheckpointError, match=r"another engine version .fields missing: hand_part"):
        checkpoint.load(_crafted(older), engine_settings())

    def other_version(document: dict[str, Any]) -> None:
        document["engine"]["version"] = STATE_VERSION + 1

    with pytest.raises(
        CheckpointError, match=f"written by engine state version {STATE_VERSION + 1}; this engine reads"
    ):
        checkpoint.load(_crafted(other_version), engine_settings())


def test_a_pickled_checkpoint_of_format_1_is_refused_with_its_reason() -> None:
    old = zlib.compress(pickle.dumps({"format": 1, "covers": 1}, protocol=5))
    with pytest.raises(CheckpointError, match=r"format 1 .a pickle"):
        checkpoint.load(old, engine_settings())


def test_a_checkpoint_naming_code_is_refused_without_effect(tmp_path: Path) -> None:
    target = tmp_path / "owned"
    attempts: list[Any] = [
        {"O": "system", "f": {"command": f"touch {target}"}},
        {"O": "posix.system", "f": {}},
        {"O": "Path", "f": {"args": [str(target)]}},
        {"O": "EngineSettings", "f": {}},
        {"__reduce__": ["os.system", f"touch {target}"]},
    ]
    for attempt in attempts:

        def plant(document: dict[str, Any], attempt: Any = attempt) -> None:
            document["engine"]["machine"]["result_state"]["f"]["money"] = attempt

        with pytest.raises(CheckpointError, match=r"machine.result_state.ResultState.money: .*not"):
            checkpoint.load(_crafted(plant), engine_settings())
    assert not target.exists()


@pytest.mark.parametrize(
    "data",
    [
        # deeper than the JSON decoder goes
        lambda: zlib.compress(b"[" * 100_000 + b"]" * 100_000),
        # a valid JSON document, deeper than the loader goes
        lambda: _crafted(
            lambda d: d["engine"]["machine"]["result_state"]["f"].update(
                money=json.loads("[" * 900 + "]" * 900)
            )
        ),
    ],
    ids=["json", "value"],
)
def test_a_checkpoint_nested_too_deeply_is_refused(data: Callable[[], bytes]) -> None:
    """Refused like any other unusable checkpoint (before, the recursion error escaped the
    loader and stopped the start-up)."""
    with pytest.raises(CheckpointError, match="nested too deeply"):
        checkpoint.load(data(), engine_settings())


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("hand", "seven", "machine.hand: str where this engine keeps a int"),
        ("hand", True, "machine.hand: bool where this engine keeps a int"),
        ("hand_part.occupied", [], "machine.hand_part.occupied: tuple where this engine keeps a dict"),
        ("hand_part.blinds", {"D": [[{"L": []}, 1]]}, "machine.hand_part.HandPart.blinds: bad 'D' value"),
        (
            "card_state",
            {
                "O": "CardState",
                "f": {
                    "zone": [],
                    "present": {"D": []},
                    "seat_cards": {"D": []},
                    "changed": False,
                    "fouled_seen": {"F": []},
                },
            },
            "machine.card_state.zone: tuple where this engine keeps a dict",
        ),
        ("hand_part.phase", {"T": "yesterday"}, "machine.hand_part.HandPart.phase: bad 'T' value"),
        ("hand_part.button_r", {"O": "ButtonRemedy", "f": {"alert": "1-1"}}, "missing: expected"),
        (
            "hand_part.button_r",
            {"O": "ButtonRemedy", "f": {"alert": "1-1", "expected": 2, "x": 1}},
            "unknown: x",
        ),
    ],
)
def test_a_checkpoint_with_wrong_values_is_refused_naming_the_place(
    field: str, value: object, reason: str
) -> None:
    def wrong(document: dict[str, Any]) -> None:
        part, _, name = field.rpartition(".")  # a field of the machine, or of one of its parts
        fields = document["engine"]["machine"][part]["f"] if part else document["engine"]["machine"]
        fields[name] = value

    with pytest.raises(CheckpointError, match=re.escape(reason)):
        checkpoint.load(_crafted(wrong), engine_settings())


def test_a_checkpoint_with_an_invalid_wire_model_is_refused() -> None:
    def bad_alert(document: dict[str, Any]) -> None:
        document["journal_alert"] = {"O": "Alert", "f": {"id": "1-1", "severity": "apocalyptic"}}

    with pytest.raises(CheckpointError, match=r"journal_alert.Alert: .*invalid fields"):
        checkpoint.load(_crafted(bad_alert), engine_settings())


def test_unreadable_bytes_are_refused() -> None:
    with pytest.raises(CheckpointError, match="unreadable"):
        checkpoint.load(b"not a checkpoint", engine_settings())
    with pytest.raises(CheckpointError, match="unreadable: not JSON"):
        checkpoint.load(zlib.compress(b"{half"), engine_settings())


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
        *STACKS,
        "dealer B-1",
        "last_hands",
        "level_start",
        *hand(1, first=True, mid=("dealer B-2", "chips - stack:1 500")),
        "chips - stack:2 300",
        *hand(2, blinds=(1, 2)),
        "leave 3",
        "wait 61",
        "dealer B-2",
    ]
    received = [to_received(m) for line in lines for m in table.run(line)]
    for split in range(1, len(received), 10):
        _check(received, split, config)
