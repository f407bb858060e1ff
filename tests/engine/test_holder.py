"""The shell's holder (:class:`engine.step.Engine`): in place, yet the outputs of :func:`step`,
states handed out never change, and a message that fails leaves the state as it was; and the
shortcut of the hot path that changes what the betting core is told (a collection in one total)."""

from __future__ import annotations

import pytest

from contract.models import TagEvent
from engine.api import DeviceEventReceived, EngineSettings, Outputs, Received
from engine.dispatcher import Machine
from engine.step import REBASE_EVERY, Engine, initial_state, public_state, step
from testing.engine_oracle import CHIPS, registry, rendered
from testing.oracle_hand import TABLE_SEATS, play_hand
from testing.sessions import continue_table, dealer_session
from tests.engine.runner import settings, to_received
from tests.engine.scenario import registry as deck_registry


def _chip_hands(seeds: range) -> list[tuple[EngineSettings, list[Received]]]:
    """PokerKit's hands rendered as card reads and chip moves, with their settings."""
    runs = []
    for seed in seeds:
        hand = play_hand(seed)
        runs.append(
            (
                EngineSettings(
                    seats=TABLE_SEATS, profile="roberts", registry=registry(), chips=CHIPS, stakes=hand.stakes
                ),
                rendered(hand, "chips"),
            )
        )
    return runs


def _dealt() -> tuple[EngineSettings, list[Received]]:
    """Twelve hands of the virtual dealer with a noisy reader (repeats, gaps, crosstalk)."""
    messages, _ = dealer_session(deck_registry(), seats=9, hands=12, seed=3, noise=True)
    return settings(), [to_received(m) for m in messages]


def _dump(outputs: Outputs) -> list[str]:
    out = [a.model_dump_json() for a in outputs.alerts]
    out.append(outputs.state.model_dump_json() if outputs.state is not None else "-")
    out += [f"{device} {command.model_dump_json()}" for device, command in outputs.commands]
    out += [h.model_dump_json() for h in outputs.hands]
    return out


def _by_step(engine_settings: EngineSettings, received: list[Received]) -> list[list[str]]:
    state = initial_state(engine_settings)
    out = []
    for item in received:
        state, outputs = step(state, item)
        out.append(_dump(outputs))
    return out


@pytest.mark.parametrize("source", ["chips", "dealt"])
def test_the_holder_gives_the_outputs_of_step(source: str) -> None:
    runs = _chip_hands(range(3)) if source == "chips" else [_dealt()]
    assert sum(len(r) for _, r in runs) > 2 * REBASE_EVERY  # it starts new working copies
    for engine_settings, received in runs:
        engine = Engine(engine_settings)
        held = []
        for n, item in enumerate(received):
            if n % 97 == 5:
                _ = engine.state  # handed out: the next message starts a new working copy
            held.append(_dump(engine.handle(item)))
        assert held == _by_step(engine_settings, received)


def test_a_state_handed_out_never_changes() -> None:
    engine_settings, received = _chip_hands(range(1))[0]
    engine = Engine(engine_settings)
    half = len(received) // 2
    for item in received[:half]:
        engine.handle(item)
    handed = engine.state
    machine = handed.machine

    def seen() -> tuple[object, ...]:
        return (
            public_state(handed).model_dump_json(),
            dict(machine.chip_state.at),
            dict(machine.card_state.seat_cards),
            {device: track.copy() for device, track in machine.device_seqs.tracks.items()},  # (by value)
            machine.result_state.money,
            dict(machine.table.book.active),
        )

    before = seen()
    for item in received[half:]:
        engine.handle(item)
    after = seen()
    assert engine.state.machine is not machine
    assert after == before
    assert public_state(engine.state).model_dump_json() != before[0]


@pytest.mark.parametrize("bad_at", [3, REBASE_EVERY + 40])
def test_a_failing_message_leaves_the_state_as_it_was(monkeypatch: pytest.MonkeyPatch, bad_at: int) -> None:
    """The message fails after it changed the working copy: the holder goes back, and what
    follows gives the outputs of an engine that never saw it."""
    engine_settings, received = _chip_hands(range(3, 4))[0]  # 916 messages
    assert len(received) > bad_at + 50
    bad = received[bad_at]
    original = Machine.handle

    def fails_after_applying(self: Machine, item: Received) -> None:
        original(self, item)
        if item is bad:
            raise RuntimeError("an engine bug")

    monkeypatch.setattr(Machine, "handle", fails_after_applying)
    engine = Engine(engine_settings)
    held = []
    for item in received:
        if item is bad:
            # (public_state, not state: reading that would freeze the working copy)
            before = engine.public_state().model_dump_json()
            with pytest.raises(RuntimeError):
                engine.handle(item)
            assert engine.public_state().model_dump_json() == before
            continue
        held.append(_dump(engine.handle(item)))
    monkeypatch.undo()
    assert held == _by_step(engine_settings, [r for r in received if r is not bad])


def _card_read(item: Received, chips: EngineSettings) -> bool:
    return (
        isinstance(item, DeviceEventReceived)
        and isinstance(item.event, TagEvent)
        and chips.chips is not None
        and chips.chips.value(item.event.uid) is None
    )


def test_a_collection_told_in_one_total_gives_the_results_of_one_chip_at_a_time() -> None:
    """Chips collected off the table after the betting are told to the betting core as one
    total per betting area (engine.chips): the same hand results as one move per chip, which a
    card read repeated after each chip's lift forces (it settles every chip lifted before it)."""
    for engine_settings, received in _chip_hands(range(12)):
        forced: list[Received] = []
        last_card: Received | None = None
        for item in received:
            forced.append(item)
            if _card_read(item, engine_settings):
                last_card = item
            elif (
                isinstance(item, DeviceEventReceived)
                and isinstance(item.event, TagEvent)
                and not item.event.present
                and last_card is not None
            ):
                forced.append(last_card)  # a repeat: dropped, after settling the lifted chips
        results = []
        for feed in (received, forced):
            engine = Engine(engine_settings)
            hands, codes = [], []
            for item in feed:
                outputs = engine.handle(item)
                hands += [h.model_dump(exclude={"ts"}) for h in outputs.hands]
                codes += [a.code for a in outputs.alerts]
            results.append((hands, codes))
        assert len(forced) > len(received)
        assert results[0][0], "a hand result"
        assert results[0] == results[1]


def test_two_engines_interleaved_give_the_outputs_of_each_alone() -> None:
    """The public state's caches (engine.state) are shared by every engine of the process: two
    tables fed message by message in turn (one with alerts: a noisy reader) still get their own
    states and alerts."""
    first, second = _with_alerts(), _chip_hands(range(3, 4))[0]
    alone = [[_dump(o) for o in _outputs_of(*run)] for run in (first, second)]
    engines = (Engine(first[0]), Engine(second[0]))
    together: tuple[list[list[str]], list[list[str]]] = ([], [])
    for n in range(max(len(first[1]), len(second[1]))):
        for which, (_, received) in enumerate((first, second)):
            if n < len(received):
                together[which].append(_dump(engines[which].handle(received[n])))
    assert any('"status":"raised"' in line for out in alone[0] for line in out)
    assert list(together) == alone


def _outputs_of(engine_settings: EngineSettings, received: list[Received]) -> list[Outputs]:
    engine = Engine(engine_settings)
    return [engine.handle(item) for item in received]


def _with_alerts() -> tuple[EngineSettings, list[Received]]:
    """Three hands of the virtual dealer, then a hand with a reader going offline and a
    malformed payload (alerts raised, updated and listed in the states)."""
    messages, dealer = dealer_session(deck_registry(), seats=9, hands=3, seed=7, noise=True)
    table = continue_table(deck_registry(), dealer, messages, seed=7)
    messages += table.run_all(
        [
            "next_button",
            "blinds",
            f"use {dealer.ready}",
            "new_hand",
            "deal all",
            "status rfid-1 offline 1",
            "bad rfid-1 {}",
            "deal 3",
        ]
    )
    return settings(), [to_received(m) for m in messages]
