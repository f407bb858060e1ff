"""The pure core: determinism, immutability, secrecy, public state, settings, showdown order."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from config.loader import load_table
from contract.models import TagEvent
from engine.api import EngineSettings
from engine.showdown import board_is_best, odd_chip_seat, showdown_order
from engine.state import showdown_order_of
from engine.step import Engine, initial_state, public_state, step
from testing.script import Message, Table, setup_lines
from testing.sessions import continue_table, dealer_session
from tests.engine.runner import run, settings, to_received
from tests.engine.scenario import load_scenarios, messages, registry

REPO = Path(__file__).parents[2]
CARD_RE = re.compile(r"\b[AKQJT2-9][shdc]\b")


def _session(seed: int, extra: list[str] | None = None) -> list[Message]:
    """Three legal hands by the virtual dealer, then ``extra`` script lines on the next hand."""
    messages, dealer = dealer_session(registry(), seats=9, hands=3, seed=seed, noise=True)
    table = continue_table(registry(), dealer, messages, seed=seed)
    next_hand = ["next_button", "blinds", f"use {dealer.ready}", "new_hand"]
    return messages + table.run_all([*next_hand, *(extra or [])])


def _outputs(messages: list[Message]) -> list[str]:
    engine = Engine(settings())
    out = []
    for message in messages:
        outputs = engine.handle(to_received(message))
        out += [a.model_dump_json() for a in outputs.alerts]
        out.append(outputs.state.model_dump_json() if outputs.state else "-")
    return out


def test_replay_gives_identical_outputs() -> None:
    msgs = _session(7, ["deal all", "status rfid-1 offline 1", "bad rfid-1 {}"])
    first, second = _outputs(msgs), _outputs(msgs)
    assert first == second
    assert any('"status":"raised"' in line for line in first)


def test_every_scenario_replays_identically() -> None:
    for scenario in load_scenarios():
        msgs = messages(scenario)
        _, first = run(msgs, scenario.profile, scenario.table_seats, scenario.action_feed)
        _, second = run(msgs, scenario.profile, scenario.table_seats, scenario.action_feed)
        assert [a.model_dump_json() for a in first] == [a.model_dump_json() for a in second]


def test_step_does_not_change_the_state_it_is_given() -> None:
    msgs = Table(registry()).run_all([*setup_lines([1, 2, 3], 1, ["A"]), "deal 2 3 1 2 3"])
    state = initial_state(settings())
    for message in msgs:
        state, _ = step(state, to_received(message))
    before = public_state(state).model_dump_json()
    extra = Table(registry()).run_all(["deal 9"])[0]  # the same seq restarts nothing: seq 1
    extra_event = to_received(extra)
    new_state, outputs_a = step(state, extra_event)
    _, outputs_b = step(state, extra_event)
    assert public_state(state).model_dump_json() == before
    assert outputs_a == outputs_b
    assert new_state is not state


def test_alerts_take_their_time_from_the_event_and_ids_are_deterministic() -> None:
    msgs = Table(registry()).run_all([*setup_lines([1, 2, 3, 4], 1, ["A"]), "deal 3"])
    _engine, alerts = run(msgs)
    last = msgs[-1].payload
    assert isinstance(last, TagEvent)
    assert [a.id for a in alerts] == ["1-1"]
    assert alerts[0].ts == last.ts
    assert alerts[0].hand == 1
    assert alerts[0].profile == "roberts"
    assert alerts[0].rule
    assert alerts[0].remedy
    assert alerts[0].message.endswith(".")


def test_misdeal_message_without_action_feed_states_the_window() -> None:
    lines = [*setup_lines([1, 2, 3, 4], 1, ["A"]), "deal 3"]
    _, alerts = run(Table(registry()).run_all(lines))
    assert "stands only if no action has taken place" in alerts[0].message
    _, alerts = run(Table(registry()).run_all(lines), action_feed=True)
    assert "stands only if" not in alerts[0].message


def test_reader_offline_means_the_hand_is_not_tracked() -> None:
    lines = [*setup_lines([1, 2, 3], 1, ["A"]), "deal 2 3 1", "status rfid-1 offline 1"]
    engine, alerts = run(Table(registry()).run_all(lines))
    assert alerts[-1].code == "device_offline"
    assert "not being tracked" in alerts[-1].message
    assert alerts[-1].device == "rfid-1"
    assert engine.public_state().tracking is False
    table = Table(registry())
    table.run_all(lines)
    for message in table.run_all(["status rfid-1 online 2", "deal 2"]):
        engine.handle(to_received(message))
    assert engine.public_state().tracking is True


def test_public_state_counts_cards_and_never_names_hole_cards() -> None:
    table = Table(registry())
    lines = [*setup_lines([1, 2, 3], 1, ["A"]), "deal all", "round", "burn", "flop"]
    engine, _ = run(table.run_all(lines))
    state = engine.public_state()
    assert state.phase == "flop"
    assert [s.cards for s in state.seats[:3]] == [2, 2, 2]
    assert [s.in_hand for s in state.seats[:4]] == [True, True, True, False]
    assert state.button == 1
    assert state.deck == "A"
    assert state.burns == 1
    hole = {registry().by_uid[u].card for s in (1, 2, 3) for u in table.seats[s]}
    assert len(state.board) == 3
    assert not hole & set(state.board)
    assert not hole & set(CARD_RE.findall(state.model_dump_json()))


def test_no_output_names_an_unexposed_hole_card() -> None:
    for seed in range(30):
        msgs = _session(seed, ["deal all", "round", "burn", "burn", "bad rfid-1 {}"])
        engine = Engine(settings())
        texts = []
        for message in msgs:
            outputs = engine.handle(to_received(message))
            texts += [a.model_dump_json() for a in outputs.alerts]
            if outputs.state:
                texts.append(outputs.state.model_dump_json(exclude={"board"}))
        dealt = {
            uid
            for m in msgs
            if isinstance(m.payload, TagEvent)
            and m.payload.zone.startswith("seat:")
            and m.payload.face != "up"
            for uid in [m.payload.uid]
        }
        exposed = {m.payload.uid for m in msgs if isinstance(m.payload, TagEvent) and m.payload.face == "up"}
        secret = dealt - exposed
        cards = {registry().by_uid[u].card for u in secret}
        joined = "\n".join(texts)
        assert not any(uid in joined for uid in secret)
        named = set(CARD_RE.findall("\n".join(t for t in texts if '"board"' not in t)))
        assert not cards & named


def test_unchanged_state_is_not_republished() -> None:
    table = Table(registry())
    msgs = table.run_all([*setup_lines([1, 2], 1, ["A"]), "deal 2", "dup"])
    engine = Engine(settings())
    outputs = [engine.handle(to_received(m)) for m in msgs]
    assert outputs[-2].state is not None
    assert outputs[-1].state is None
    assert outputs[-1].alerts == ()


def test_settings_from_the_example_config() -> None:
    config, deck_registry = load_table(REPO / "config" / "table.example.toml")
    engine_settings = EngineSettings.from_config(config, deck_registry)
    assert engine_settings.seats == 9
    assert engine_settings.profile == "roberts"
    assert engine_settings.odd_chip == "first_shown"
    assert not engine_settings.action_feed
    assert Engine(engine_settings).public_state().phase == "idle"


def test_showdown_order_and_board_claim() -> None:
    assert showdown_order([2, 5, 7], button=5, table_seats=9, last_aggressor=None) == (7, 2, 5)
    assert showdown_order([2, 5, 7], button=5, table_seats=9, last_aggressor=2) == (2, 5, 7)
    assert board_is_best(["As", "Ks", "Qs", "Js", "Ts"], ["2c", "3d"])
    assert not board_is_best(["2s", "7h", "9c", "Js", "Kc"], ["Ah", "Ad"])
    lines = [
        *setup_lines([1, 3, 6], 1, ["A"]),
        "deal all",
        "round",
        "burn",
        "flop",
        "round",
        "burn",
        "turn",
        "round",
        "burn",
        "river",
        "action 6 bet 20",
        "action 1 call 20",
        "action 3 call 20",
        "round",
    ]
    engine, _ = run(Table(registry()).run_all(lines), action_feed=True)
    assert showdown_order_of(engine.state) == (6, 1, 3)


def test_odd_chip_goes_by_the_house_rule() -> None:
    assert odd_chip_seat([3, 7], [7, 3], button=5, table_seats=9, rule="first_shown") == 7
    assert odd_chip_seat([3, 7], [7, 3], button=5, table_seats=9, rule="left_of_button") == 7
    assert odd_chip_seat([3, 7], [3, 7], button=8, table_seats=9, rule="left_of_button") == 3
    assert odd_chip_seat([2, 4], [4, 2], button=3, table_seats=9, rule="first_shown") == 4


_REPLAY = """
import hashlib, random
from engine.step import Engine
from testing.sessions import continue_table, dealer_session
from tests.engine.runner import settings, to_received
from tests.engine.scenario import registry
messages, dealer = dealer_session(registry(), seats=9, hands=4, seed=11, profile="tda", noise=True)
table = continue_table(registry(), dealer, messages, seed=11)
messages += table.run_all(["next_button", "blinds", f"use {dealer.ready}", "deal all", "deal 5",
                           "clear", "shuffle A", "deal all", "burn", "burn", "flop"])
engine = Engine(settings("tda"))
digest = hashlib.sha256()
for message in messages:
    outputs = engine.handle(to_received(message))
    for alert in outputs.alerts:
        digest.update(alert.to_json())
    if outputs.state is not None:
        digest.update(outputs.state.to_json())
print(digest.hexdigest())
"""


def test_replay_is_identical_in_another_process_with_other_hash_seeds() -> None:
    digests = set()
    for seed in ("1", "2"):
        result = subprocess.run(
            [sys.executable, "-c", _REPLAY],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=60,
        )
        digests.add(result.stdout.strip())
    assert len(digests) == 1


def test_an_offline_device_of_unknown_kind_may_be_a_reader() -> None:
    engine, alerts = run(Table(registry()).run_all(["status rfid-9 online 1", "status rfid-9 offline 1"]))
    assert engine.public_state().tracking is False
    assert "not being tracked" in alerts[-1].message
    lines = [*setup_lines([1, 2], 1, ["A"]), "status shuffler offline 1"]
    engine, alerts = run(Table(registry()).run_all(lines))
    assert engine.public_state().tracking is True
    assert alerts[-1].code == "device_offline"
    assert "not being tracked" not in alerts[-1].message


def test_fouled_deck_alerts_name_no_tag_uid() -> None:
    """An unknown tag or another deck's card: the alert says so without the UID (a card identity)."""
    for last in ("3=uid0BADC0DE01", "3=B:7c"):
        msgs = Table(registry()).run_all([*setup_lines([1, 2, 3], 1, ["A"]), f"deal 2 3 1 2 {last}"])
        _, alerts = run(msgs)
        fouled = [a for a in alerts if a.code == "fouled_deck"]
        assert fouled, last
        uids = {m.payload.uid for m in msgs if isinstance(m.payload, TagEvent)}
        for alert in alerts:
            text = alert.model_dump_json()
            assert not any(uid in text for uid in uids), text
