"""A checkpoint holds exactly the outputs owed when it is taken: the controller keeps each owed
output's plain data for the next checkpoints, and drops it once the output is journaled as
published (``TableController._output_data``): no more is kept than is owed."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from controller.journal import checkpoint
from controller.journal.state import CHECKPOINT_MAGIC
from controller.service.table import Outgoing, TableController
from testing.sessions import dealer_session
from tests.engine.scenario import registry
from tests.service.test_batched_state import T0, TOPICS
from tests.service.test_batched_state import _controller as journaled_controller


def _newest_checkpoint(controller: TableController) -> list[Outgoing]:
    """The outputs owed in the newest checkpoint file, as recovery would load them."""
    assert controller.journal is not None
    assert controller.files is not None
    assert controller.journal.flush()
    checkpoints = controller.files.checkpoints()
    data = checkpoints[max(checkpoints)].read_bytes()
    assert data.startswith(CHECKPOINT_MAGIC)
    snapshot = checkpoint.load(data[len(CHECKPOINT_MAGIC) :], controller.settings)
    return list(snapshot.unpublished)


def test_each_checkpoint_holds_the_outputs_owed_then(tmp_path: Path) -> None:
    messages, _ = dealer_session(registry(), seats=9, hands=6, seed=5, noise=True)
    controller = journaled_controller(tmp_path)
    owed: list[Outgoing] = []
    checked = 0
    for i, message in enumerate(messages):
        topic, payload = message.wire(TOPICS)
        when = T0 + timedelta(milliseconds=10 * i)
        handled = controller.receive(topic, payload, when)
        owed += [o for o in handled.outgoing if o.what != "state"]
        if i % 40 == 39:
            # Every other time, the older half of what is owed is published meanwhile: a
            # checkpoint after it must hold neither those nor stale data in their place.
            if checked % 2:
                for out in owed[: len(owed) // 2]:
                    controller.published(out, when)
                owed = owed[len(owed) // 2 :]
            controller.checkpoint(controller.last_record, when)
            assert _newest_checkpoint(controller) == owed
            # (what it keeps for the next checkpoints is no more than what is owed)
            assert len(controller._unpublished_data) <= len(owed)
            checked += 1
    controller.close()
    assert checked >= 6
    assert owed  # (the session produced outputs, some still owed at the end)
