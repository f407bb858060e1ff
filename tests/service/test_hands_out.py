"""Hand results: published on ``{root}/{table}/hands`` (QoS 1, not retained), journaled as
``published`` records of kind ``hand``, owed to the broker after a crash and compared by the
audit replay like alerts.

Until the engine ends hands with a result (the game work), these tests give the real engine one
more output: a fixed result when the dealer presses ``new_hand`` (the previous hand's end).
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from config.loader import load_table
from contract.models import KeyEvent, parse_hand
from controller.journal import read_journal
from controller.service.table import Outgoing, TableController
from engine.api import DeviceEventReceived, Outputs, Received
from engine.step import Engine
from tests.history.support import HIDDEN, showdown_hand
from tests.service.support import write_config
from tests.service.test_table import _feed, _hand

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
RESULT = showdown_hand(hand=1)


class EngineEndingHands(Engine):
    """The real engine, plus a hand result when ``new_hand`` is pressed."""

    def handle(self, received: Received, *, build_state: bool = True) -> Outputs:
        outputs = super().handle(received, build_state=build_state)
        if (
            isinstance(received, DeviceEventReceived)
            and isinstance(received.event, KeyEvent)
            and received.event.key == "new_hand"
        ):
            return outputs._replace(hands=(RESULT,))
        return outputs


def _controller(config: Path) -> TableController:
    table_config, registry = load_table(config)
    controller = TableController(table_config, registry)
    controller.engine = EngineEndingHands(controller.settings)
    return controller


def _hands(outgoing: list[Outgoing]) -> list[Outgoing]:
    return [o for o in outgoing if o.what == "hand"]


def test_a_hand_result_is_published_on_the_hands_topic_and_journaled(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    controller = _controller(config)
    controller.recover(T0)
    with caplog.at_level(logging.INFO):
        outgoing = _feed(controller, _hand())
    (hand,) = _hands(outgoing)
    assert (hand.topic, hand.retain) == ("holdem/t1/hands", False)
    assert parse_hand(hand.topic, hand.payload) == RESULT
    for out in outgoing:
        controller.published(out, T0)
    controller.close()
    published = [p for p in read_journal(tmp_path / "journal.jsonl").published if p.what == "hand"]
    assert [(p.cause, p.topic, p.payload, p.retain) for p in published] == [
        (hand.cause, hand.topic, hand.payload, False)
    ]
    # The INFO log names the hand and the chips, never a card (not even one tabled face up).
    logged = [r.getMessage() for r in caplog.records if "hand 1 ended" in r.getMessage()]
    assert logged == ["hand 1 ended (showdown): 13 action(s), 1 pot(s), rake 0, awarded seat 3 78"]
    for card in ("As", "Ac", *HIDDEN, *RESULT.board):
        assert not re.search(rf"\b{card}\b", caplog.text), card


def test_a_hand_result_a_crash_kept_from_the_broker_is_published_after_recovery(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    first.recover(T0)
    outgoing = _feed(first, _hand())
    for out in outgoing:
        if out.what != "hand":
            first.published(out, T0)
    first.close()

    second = _controller(config)
    recovery = second.recover(T0)
    second.close()
    (hand,) = _hands(outgoing)
    assert [(o.what, o.cause, o.payload) for o in recovery.pending] == [("hand", hand.cause, hand.payload)]


def test_the_audit_replay_compares_hand_results_with_what_was_published(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    first.recover(T0)
    outgoing = _feed(first, _hand())
    for out in outgoing:
        sent = out
        if out.what == "hand":
            changed = out.payload.replace(b'"amount":78', b'"amount":87')
            sent = Outgoing("hand", out.cause, out.topic, changed, retain=False)
        first.published(sent, T0)
    first.close()

    audit = _controller(config).replay()
    (hand,) = _hands(outgoing)
    (divergence,) = audit.divergences
    assert divergence.endswith(
        f"a hand result caused by received record {hand.cause} replays differently from what was published"
    )
