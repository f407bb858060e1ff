"""The state the service publishes for a batch of messages (``defer_state``, built once at the
batch's end) is the one the batch's last change would have published, with that change's cause;
a checkpoint or an alert of the controller's own within a batch sees the state as it is then."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from config.models import TableConfig
from contract.topics import Topics
from controller.service.table import Outgoing, TableController
from testing.sessions import dealer_session
from tests.engine.scenario import REGISTRY_PATH, registry

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
TOPICS = Topics("holdem", "t1")


def _controller(directory: Path) -> TableController:
    config = TableConfig.model_validate(
        {
            "table": {"id": "t1", "seats": 9},
            "decks": {"registry": str(REGISTRY_PATH)},
            "journal": {"path": str(directory / "journal.jsonl"), "fsync": False},
        }
    )
    controller = TableController(config, registry())
    controller.recover(T0)
    return controller


def _items(out: list[Outgoing], message: dict[int, int]) -> list[tuple[str, int, bytes]]:
    """What, the index of the message that caused it (records are numbered apart in each
    journal: the checkpoints take numbers too), and the payload."""
    return [(o.what, message[o.cause], o.payload) for o in out]


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_a_batch_publishes_the_state_its_last_change_would_have(tmp_path: Path, seed: int) -> None:
    messages, _ = dealer_session(registry(), seats=9, hands=4, seed=seed, noise=True)
    wired = [m.wire(TOPICS) for m in messages]
    (tmp_path / "each").mkdir(mode=0o700)
    (tmp_path / "batched").mkdir(mode=0o700)
    each, batched = _controller(tmp_path / "each"), _controller(tmp_path / "batched")
    rng = random.Random(seed)
    at = 0
    deferred_batches = 0
    # record number -> message index, in each journal
    of_each: dict[int, int] = {}
    of_batched: dict[int, int] = {}
    while at < len(wired):
        size = rng.randint(1, 60)
        published: list[tuple[str, int, bytes]] = []
        for i in range(at, min(at + size, len(wired))):
            topic, payload = wired[i]
            when = T0 + timedelta(milliseconds=10 * i)
            one = each.receive(topic, payload, when)
            of_each[one.record] = i
            states = _items([o for o in one.outgoing if o.what == "state"], of_each)
            published += states
            other = batched.receive(topic, payload, when, defer_state=True)
            of_batched[other.record] = i
            assert _items(other.outgoing, of_batched) == [
                item for item in _items(one.outgoing, of_each) if item[0] != "state"
            ]
            if rng.random() < 0.05:
                # (what a checkpoint within the batch stores)
                batched.checkpoint(batched.last_record, when)
                assert batched.state == each.state
        taken = _items(batched.take_state(), of_batched)
        # Built once: the payload and the cause of the batch's last change.
        assert taken == published[-1:]
        deferred_batches += len(published) > 1
        assert batched.state == each.state
        at += size
    assert deferred_batches > 5  # batches with several changes (one state built for them)
    each.close()
    batched.close()
