"""engine/state_data.py: the engine state as plain data and back (checkpoints use it: the
whole-session property tests are in tests/journal/test_checkpoint.py)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from contract.models import Alert
from engine.remedies import BoardRedeal
from engine.seqtrack import Gap, SeqTrack
from engine.sequences import SequenceState
from engine.state_data import STATE_VERSION, Codec, StateDataError, state_from_data, state_to_data
from engine.step import Engine
from testing.script import Table, setup_lines
from testing.sessions import dealer_session
from tests.engine.game import game_settings
from tests.engine.game_codes import BOARD, ON_FLOP, POT_LIMIT
from tests.engine.runner import settings, to_received
from tests.engine.scenario import registry

T = datetime(2026, 11, 30, 1, 2, 3, 456789, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -7,
        2**80,
        1.5,
        "text",
        (),
        (1, "a", (None,)),
        [1, [2]],
        frozenset({"a", "b"}),
        {3, 4},
        {1: "a", (2, "b"): frozenset({1})},
        T,
        timedelta(seconds=1.25),
        b"\x00\xff",
        SeqTrack(5, 0b1011, session=2),
        Gap("rfid-1", 1, 3, 9, T, T, frozenset({4})),
        BoardRedeal(alert="1-2", code="premature_board", street=1, taken=frozenset({"u1"})),
        SequenceState(tracks={"rfid-1": SeqTrack(1, 1)}, held=()),
        Alert.model_construct(
            v=1,
            id="1-1",
            ts=T,
            hand=1,
            code="device_offline",
            severity="warning",
            seat=None,
            status="raised",
            message="m",
            remedy=["r"],
            rule="x",
            profile="roberts",
            device="d",
        ),
    ],
)
def test_a_value_comes_back_equal_and_of_its_type(value: object) -> None:
    codec = Codec()
    data = json.loads(json.dumps(codec.dump(value)))  # through JSON text, as a checkpoint is
    back = codec.load(data)
    assert back == value
    assert type(back) is type(value)


def test_a_value_of_no_allowed_class_is_not_written() -> None:
    class Foreign:
        pass

    with pytest.raises(TypeError, match="not a data class the state may hold"):
        Codec().dump(Foreign())


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"O": "system", "f": {}}, "'system' is not a data class"),
        ({"O": "EngineSettings", "f": {}}, "'EngineSettings' is not a data class"),
        ({"O": "SeqTrack", "f": {"high": 1}}, "missing: far, run, run_last, run_session, seen, session"),
        (
            {
                "O": "SeqTrack",
                "f": {
                    "high": 1,
                    "seen": 1,
                    "run": 0,
                    "run_last": 0,
                    "far": 0,
                    "session": None,
                    "run_session": None,
                    "extra": 1,
                },
            },
            "unknown: extra",
        ),
        ({"X": 1}, "'X' is not a kind of state data"),
        ({"T": "2026-11-30T01:00:00"}, "a time without its zone"),
        ({"B": "***"}, "bad 'B' value"),
        ({"D": [[1]]}, "a dict item is a [key, value] pair"),
        ({"F": [{"L": []}]}, "bad 'F' value"),
        ({"L": [], "F": []}, "is not state data"),
        ({}, "dict is not state data"),
    ],
)
def test_data_that_is_not_state_data_is_refused_naming_the_place(data: Any, reason: str) -> None:
    with pytest.raises(StateDataError, match=r"^here\S*: .*" + re.escape(reason)):
        Codec().load(data, "here")


def _engine_after(hands: int) -> Engine:
    engine = Engine(settings())
    messages, _ = dealer_session(registry(), seats=9, hands=hands, seed=5, noise=True)
    for message in messages:
        engine.handle(to_received(message))
    return engine


def test_a_state_comes_back_with_the_same_public_state_and_data() -> None:
    engine = _engine_after(2)
    data = json.loads(json.dumps(state_to_data(engine.state)))
    assert data["version"] == STATE_VERSION
    restored = state_from_data(data, settings())
    assert state_to_data(restored) == data
    resumed = Engine(settings())
    resumed.restore(restored)
    assert resumed.public_state() == engine.public_state()


def test_the_answers_the_machine_remembers_are_not_state() -> None:
    engine = _engine_after(2)
    machine = engine.state.machine
    assert "answers" in vars(machine)
    assert "answers" not in state_to_data(engine.state)["machine"]
    restored = state_from_data(json.loads(json.dumps(state_to_data(engine.state))), settings())
    assert restored.machine.answers is not machine.answers  # (a restored machine starts its own)


def test_a_state_of_another_version_or_shape_is_refused() -> None:
    data = state_to_data(_engine_after(1).state)
    with pytest.raises(StateDataError, match="engine state version 99"):
        state_from_data({**data, "version": 99}, settings())
    machine = {**data["machine"], "renamed": 1}
    with pytest.raises(StateDataError, match="unknown: renamed"):
        state_from_data({**data, "machine": machine}, settings())
    with pytest.raises(StateDataError, match="alerts need exactly"):
        state_from_data({**data, "alerts": {}}, settings())


def test_a_state_of_version_4_with_the_hand_on_the_machine_is_refused_with_its_reason() -> None:
    """Version 4 kept the hand's course on the machine itself; version 5 holds it in its part
    (engine.hands): such data is refused, naming the version, and the caller replays instead."""
    data = state_to_data(_engine_after(1).state)
    machine = dict(data["machine"])
    hand_fields = machine.pop("hand_part")["f"]
    older = {**data, "version": 4, "machine": {**machine, **hand_fields}}
    reason = f"engine state version 4; this engine reads version {STATE_VERSION}"
    with pytest.raises(StateDataError, match=reason):
        state_from_data(older, settings())
    with pytest.raises(StateDataError, match="fields missing: hand_part"):
        state_from_data({**older, "version": STATE_VERSION}, settings())


#: Data written by the engine of state version 6 (commit 87d653b, before the foreign tags
#: reported this hand moved from the shared table to the cards' part) after the lines of
#: ``V6_HEAD``: seats 1 to 3 dealt, then a tag of no registry read at seat 2 (``fouled_deck``).
V6_DATA = Path(__file__).parent / "data" / "state_v6_fouled.json"
V6_FOREIGN = "E0FFFF0000000007"
V6_HEAD = (*setup_lines([1, 2, 3], 1, ["A", "B"]), "new_hand", "deal all", f"tag seat:2 {V6_FOREIGN} on")
#: The foreign tag read again at the seat: reported once a hand, so nothing new (the migrated
#: state must know it was reported); then the redeal from the other deck.
V6_TAIL: tuple[str, ...] = (f"tag seat:2 {V6_FOREIGN} off", f"tag seat:2 {V6_FOREIGN} on", "clear")
V6_TAIL += ("shuffle B", "use B", "new_hand", "deal all")


def _v6_messages() -> tuple[list[Any], list[Any]]:
    table = Table(registry())
    head = [to_received(m) for line in V6_HEAD for m in table.run(line)]
    tail = [to_received(m) for line in V6_TAIL for m in table.run(line)]
    return head, tail


def test_a_state_of_version_6_is_migrated_and_goes_on_as_the_uninterrupted_run() -> None:
    """Version 6 kept the foreign tags reported this hand on the shared table; version 7 in the
    cards' part: the data is migrated, and the restored engine gives the same outputs for the
    rest of the session as one that never stopped (the tag read again is not reported twice)."""
    head, tail = _v6_messages()
    whole = Engine(settings())
    for received in head:
        whole.handle(received)
    expected_data = state_to_data(whole.state)
    older = json.loads(V6_DATA.read_text())
    assert older["version"] == 6
    assert "fouled_seen" in older["machine"]
    restored = state_from_data(older, settings())
    assert state_to_data(restored) == expected_data
    assert restored.machine.card_state.fouled_seen == frozenset({V6_FOREIGN})
    resumed = Engine(settings())
    resumed.restore(restored)
    outputs = [whole.handle(received) for received in tail]
    assert [resumed.handle(received) for received in tail] == outputs
    raised = [a.code for o in outputs for a in o.alerts if a.status == "raised"]
    assert "fouled_deck" not in raised


def test_version_6_data_without_the_tables_foreign_tags_is_refused() -> None:
    older = json.loads(V6_DATA.read_text())
    machine = {k: v for k, v in older["machine"].items() if k != "fouled_seen"}
    with pytest.raises(StateDataError, match="version 6 data without the table's fouled_seen"):
        state_from_data({**older, "machine": machine}, settings())
    cards = older["machine"]["card_state"]
    twice = {**older["machine"], "card_state": {**cards, "f": {**cards["f"], "fouled_seen": {"F": []}}}}
    with pytest.raises(StateDataError, match=r"machine.card_state: not version 6 .* fouled_seen already"):
        state_from_data({**older, "machine": twice}, settings())


def test_a_state_of_version_7_is_migrated_asking_no_device() -> None:
    """Version 8 added the devices asked to say their status after the broker was away
    (engine.sequences); version 7 asked none: its data comes back as a fresh ask would find it."""
    data = state_to_data(_engine_after(1).state)
    seqs = data["machine"]["device_seqs"]
    added = ("asking", "heard", "asked", "answering", "echoing")  # (echoing: version 9)
    fields = {k: v for k, v in seqs["f"].items() if k not in added}
    older = {**data, "version": 7, "machine": {**data["machine"], "device_seqs": {**seqs, "f": fields}}}
    assert state_to_data(state_from_data(older, settings())) == data
    with pytest.raises(StateDataError, match="not version 7 data"):
        state_from_data({**data, "version": 7}, settings())


def test_a_state_of_version_8_is_migrated_knowing_no_device_that_names_the_ask() -> None:
    """Version 9 added the devices whose answers name the engine's ask (``Status.asked``);
    version 8 knew none: its data comes back as a fresh engine would know them."""
    data = state_to_data(_engine_after(1).state)
    seqs = data["machine"]["device_seqs"]
    assert seqs["f"]["echoing"] == {"F": []}
    fields = {k: v for k, v in seqs["f"].items() if k != "echoing"}
    older = {**data, "version": 8, "machine": {**data["machine"], "device_seqs": {**seqs, "f": fields}}}
    assert state_to_data(state_from_data(older, settings())) == data
    with pytest.raises(StateDataError, match="not version 8 data"):
        state_from_data({**data, "version": 8}, settings())


def test_a_state_with_a_chip_correction_awaiting_its_evidence_comes_back_exactly() -> None:
    """Saved between a street and the time its chip corrections are judged (engine.results,
    ``Awaiting``, the betting core as it was before the street inside): the restored engine
    judges them as the one that never stopped."""
    game = game_settings(POT_LIMIT)
    table = Table(registry(), table_seats=game.seats, chips=game.chips)
    setup = [line for line in setup_lines([1, 2, 3], 1, ["A", "B"]) if line != "blinds"]
    head_lines = (*setup, *ON_FLOP, "bet 2 11", "fold 3", "return 2 5 late", "bet 1 6", "sweep", *BOARD[2:4])
    head = [to_received(m) for line in head_lines for m in table.run(line)]
    tail = [to_received(m) for line in ("wait 1", "absences", "wait 6", "bet 2 2") for m in table.run(line)]
    whole = Engine(game)
    for received in head:
        whole.handle(received)
    assert whole.state.machine.result_state.awaiting
    data = json.loads(json.dumps(state_to_data(whole.state)))
    resumed = Engine(game)
    resumed.restore(state_from_data(data, game))
    outputs = [whole.handle(received) for received in tail]
    assert [resumed.handle(received) for received in tail] == outputs
    assert "bet_over_limit" in [a.code for o in outputs for a in o.alerts if a.status == "resolved"]
