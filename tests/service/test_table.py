"""The controller without the network: journal, replay, outputs a crash kept from the broker."""

from __future__ import annotations

import json
import logging
import os
import pickle
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from config.loader import load_table
from contract.models import parse_alert, parse_command, parse_state
from controller.journal import checkpoint, read_journal
from controller.journal.checkpoint import Snapshot
from controller.journal.recovery import Recovery
from controller.service.repeats import RecentMessages, digest
from controller.service.table import CHECKPOINT_COST_SHARE, Outgoing, TableController
from testing.script import Message
from testing.sessions import dealer_session
from tests.engine.scenario import initial_statuses, registry
from tests.service.support import new_table, script, write_config

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
HAND = ("sit 1 2 3 4", "shuffle A", "shuffle B", "button 1", "blinds", "new_hand", "deal 2 3:up 4")


def _controller(config: Path) -> TableController:
    table_config, registry = load_table(config)
    return TableController(table_config, registry)


def _feed(controller: TableController, messages: list[Message], at: datetime | None = None) -> list[Outgoing]:
    out: list[Outgoing] = []
    topics = controller.topics
    for message in messages:
        payload = message.payload
        data = payload.encode() if isinstance(payload, str) else payload.to_json()
        if message.kind == "input":
            topic = topics.input
        elif message.kind == "status":
            topic = topics.device_status(message.device or "")
        else:
            topic = topics.device_event(message.device or "")
        out += controller.receive(topic, data, at or T0).outgoing
    return out


def _hand() -> list[Message]:
    return initial_statuses() + script(new_table(), *HAND)


def test_replay_skips_what_was_published_and_rebuilds_the_state(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    assert first.recover(T0).session == 1
    outgoing = _feed(first, _hand())
    for out in outgoing:
        first.published(out, T0)
    first.close()
    alerts = [parse_alert("a", o.payload) for o in outgoing if o.what == "alert"]
    assert [(a.code, a.seat, a.status) for a in alerts] == [("exposed_card", 3, "raised")]

    second = _controller(config)
    recovery = second.recover(T0)
    second.close()
    assert recovery.session == 2
    assert recovery.pending == []
    assert recovery.divergences == []
    # (No hand has ended yet, so no checkpoint: every record is replayed.)
    assert recovery.replayed == len(_hand())
    assert second.state is not None
    assert second.state.phase == "dealing"
    assert [a.id for a in second.state.alerts] == [alerts[0].id]


def test_outputs_a_crash_kept_from_the_broker_are_published_after_recovery(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    first.recover(T0)
    outgoing = _feed(first, _hand())
    # The crash: everything before the exposed card reached the broker, nothing after it did.
    exposed = next(i for i, o in enumerate(outgoing) if o.what == "alert")
    for out in outgoing[:exposed]:
        first.published(out, T0)
    first.close()

    second = _controller(config)
    recovery = second.recover(T0)
    second.close()
    assert [(o.what, o.cause) for o in recovery.pending] == [("alert", outgoing[exposed].cause)]
    assert recovery.pending[0].payload == outgoing[exposed].payload  # the same id, ts and all


def test_a_replay_that_differs_from_what_was_published_is_reported(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    first.recover(T0)
    outgoing = _feed(first, _hand())
    for out in outgoing:
        sent = out
        if out.what == "alert":
            sent = Outgoing(out.what, out.cause, out.topic, out.payload.replace(b"3", b"5"), False)
        first.published(sent, T0)
    first.close()

    second = _controller(config)
    recovery = second.replay()
    assert len(recovery.divergences) == 1
    assert "replays differently" in recovery.divergences[0]


def test_lamp_and_buzzer_follow_the_alerts_on_the_board_cmd_topic(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", sensors_board=True, fsync=False)
    controller = _controller(config)
    controller.recover(T0)
    table = new_table()
    outgoing = _feed(controller, initial_statuses() + script(table, *HAND, "deal 1 2 3 4:up"))
    controller.close()
    commands = [parse_command(o.topic, o.payload) for o in outgoing if o.topic == "holdem/t1/dev/sensors/cmd"]
    kinds = [(c.cmd, getattr(c, "colour", None), getattr(c, "duration_ms", None)) for c in commands]
    # Amber for the exposed card (a warning), then the misdeal: buzzer and red.
    assert ("lamp", "amber", None) in kinds
    assert kinds[-2:] == [("buzzer", None, 250), ("lamp", "red", None)]
    assert kinds.index(("lamp", "amber", None)) < kinds.index(("buzzer", None, 250))


def test_journal_holds_every_received_message_and_published_output(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=True)
    controller = _controller(config)
    controller.recover(T0)
    messages = _hand()
    outgoing = _feed(controller, messages)
    for out in outgoing:
        controller.published(out, T0)
    controller.close()
    contents = read_journal(tmp_path / "journal.jsonl")
    assert len(list(contents.received)) == len(messages)
    assert [(p.what, p.payload) for p in contents.published] == [(o.what, o.payload) for o in outgoing]


def _checkpoints(config: Path) -> list[Path]:
    return sorted(config.parent.glob("journal.*.ckpt"))


def _checkpointed_then_dealt(tmp_path: Path) -> tuple[Path, TableController]:
    """A controller that checkpointed after a hand, then saw a card dealt (no checkpoint yet)."""
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    first.recover(T0)
    table = new_table()
    assert first.journal is not None
    _feed(first, initial_statuses() + script(table, *HAND))
    first.checkpoint(first.last_record, T0)
    assert first.journal.flush()
    _feed(first, script(table, "deal 1"))
    return config, first


def test_a_tampered_checkpoint_is_refused_and_an_older_one_used(tmp_path: Path) -> None:
    config, first = _checkpointed_then_dealt(tmp_path)
    first.checkpoint(first.last_record, T0)
    first.close()
    expected = first.state
    newest = _checkpoints(config)[-1]
    newest.chmod(0o640)
    newest.write_bytes(newest.read_bytes()[:-1] + b"!")  # no longer what its record says

    second = _controller(config)
    recovery = second.recover(T0)
    second.close()
    assert any("SHA-256 differs" in r and newest.name in r for r in recovery.refused)
    assert recovery.checkpoint is not None
    assert newest.name not in recovery.checkpoint
    assert second.state == expected  # an older checkpoint and a longer tail: the same state


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        # a checkpoint naming code: refused, nothing of it used or run
        (
            lambda d: d["engine"]["machine"]["result_state"]["f"].update(
                money={"O": "system", "f": {"command": "id"}}
            ),
            "'system' is not a data class the state may hold",
        ),
        # written by another engine version (a field it did not have)
        (lambda d: d["engine"]["machine"].pop("hand_part"), "fields missing: hand_part"),
        # a pickle of format 1, as versions before format 2 wrote
        (None, "format 1 (a pickle"),
    ],
)
def test_a_crafted_or_older_checkpoint_in_the_journal_is_refused_and_an_older_one_used(
    tmp_path: Path, change: Callable[[dict[str, Any]], object] | None, reason: str
) -> None:
    """Written through the journal (its SHA-256 in the chain, as a version that wrote it, or
    someone who can rewrite the journal, would have): refused with its reason, the state
    comes from the checkpoint before it and the records after."""
    config, first = _checkpointed_then_dealt(tmp_path)
    snapshot = Snapshot(
        covers=first.last_record,
        session=first.session,
        engine=first.engine.state,
        state=first.state,
        signals=first.signals,
    )
    if change is None:
        crafted = zlib.compress(pickle.dumps({"format": 1}, protocol=5))
    else:
        document = json.loads(zlib.decompress(checkpoint.dump(snapshot)))
        change(document)
        crafted = zlib.compress(json.dumps(document).encode())
    assert first.journal is not None
    first.journal.checkpoint(first.last_record, crafted, first.session, T0)
    assert first.journal.flush()
    first.close()
    expected = first.state
    newest = _checkpoints(config)[-1]

    second = _controller(config)
    recovery = second.recover(T0)
    second.close()
    assert any(reason in r and newest.name in r for r in recovery.refused), recovery.refused
    assert recovery.checkpoint is not None
    assert newest.name not in recovery.checkpoint
    assert second.state == expected  # an older checkpoint and a longer tail: the same state


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x00not a checkpoint at all", "not compressed data"),
        (zlib.compress(b"[" * 100_000 + b"]" * 100_000), "nested too deeply"),
    ],
    ids=["garbage", "nested"],
)
def test_an_unreadable_checkpoint_is_skipped_with_a_warning_and_the_one_before_used(
    tmp_path: Path, data: bytes, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The newest checkpoint's file matches its record but cannot be read: start-up warns,
    takes the checkpoint before it and replays the records after that one."""
    config, first = _checkpointed_then_dealt(tmp_path)
    assert first.journal is not None
    older = _checkpoints(config)
    first.journal.checkpoint(first.last_record, data, first.session, T0)
    assert first.journal.flush()
    first.close()
    expected = first.state
    newest = _checkpoints(config)[-1]
    assert newest not in older

    second = _controller(config)
    with caplog.at_level(logging.WARNING, logger="controller.journal.recovery"):
        recovery = second.recover(T0)
    second.close()
    assert any(reason in r and newest.name in r for r in recovery.refused), recovery.refused
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(newest.name in line and reason in line for line in warned), warned
    assert recovery.checkpoint is not None
    assert older[-1].name in recovery.checkpoint
    assert recovery.replayed > 0  # the tail after the older checkpoint
    assert second.state == expected


def _recovered_without_checkpoints(config: Path) -> tuple[TableController, Recovery]:
    """A controller started on the journal of ``config`` with every checkpoint removed: the
    whole journal replayed."""
    for path in _checkpoints(config):
        path.unlink()
    controller = _controller(config)
    recovery = controller.recover(T0)
    controller.close()
    assert recovery.checkpoint is None
    return controller, recovery


def test_without_any_usable_checkpoint_the_whole_journal_is_replayed(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    first.recover(T0)
    _feed(first, _hand())
    first.close()
    second, recovery = _recovered_without_checkpoints(config)
    assert recovery.replayed == len(_hand())
    assert second.state == first.state


@pytest.mark.parametrize("seed", [1, 4, 9])
def test_a_whole_replay_publishes_the_state_the_live_table_published_last(tmp_path: Path, seed: int) -> None:
    """A replay builds no public state per change, only the last one at its end: it is the
    state the live table published last, its time included (the messages after the last change,
    noise among them, changed nothing shown and published nothing)."""
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    first.recover(T0)
    messages, _ = dealer_session(registry(), seats=9, hands=3, seed=seed, noise=True)
    published: list[bytes] = []
    for message in messages:
        published += [o.payload for o in _feed(first, [message]) if o.what == "state"]
    first.close()
    assert first.state is not None
    assert parse_state("s", published[-1]) == first.state
    second, _ = _recovered_without_checkpoints(config)
    assert second.state == first.state
    audit = _controller(config)
    audit.replay()
    assert audit.state == first.state


def test_a_message_delivered_again_is_not_applied_twice(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    controller = _controller(config)
    controller.recover(T0)
    topic = controller.topics.input
    payload = b'{"v":1,"ts":"2026-11-30T01:00:00Z","type":"action","seat":2,"action":"fold"}'
    first = controller.receive(topic, payload, T0)
    again = controller.receive(topic, payload, T0)
    controller.close()
    assert first.record > 0
    assert not first.repeat
    assert (again.record, again.outgoing, again.repeat) == (first.record, [], True)
    assert read_journal(tmp_path / "journal.jsonl").received_count == 1


def test_a_message_delivered_again_after_a_restart_from_a_checkpoint_is_not_applied_twice(
    tmp_path: Path,
) -> None:
    """The checkpoint keeps the digests of the newest messages: a message journaled before it,
    delivered again to the restarted controller (its acknowledgement lost in the crash), is
    recognised, short or long; a message after the checkpoint (replayed from the tail) too."""
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    first = _controller(config)
    first.recover(T0)
    topic = first.topics.input
    short = b'{"v":1,"ts":"2026-11-30T01:00:00Z","type":"action","seat":2,"action":"fold"}'
    long = b'{"v":1,"ts":"2026-11-30T01:00:01Z","type":"action","seat":3,"action":"fold"}' + b" " * 600
    tail = b'{"v":1,"ts":"2026-11-30T01:00:02Z","type":"action","seat":4,"action":"fold"}'
    records = [first.receive(topic, payload, T0).record for payload in (short, long)]
    first.checkpoint(first.last_record, T0)
    records.append(first.receive(topic, tail, T0).record)
    assert first.journal is not None
    first.journal.flush()
    first.close()
    second = _controller(config)
    recovery = second.recover(T0)
    assert recovery.checkpoint is not None
    assert recovery.replayed == 1
    again = [second.receive(topic, payload, T0) for payload in (short, long, tail)]
    new = second.receive(topic, short.replace(b"01:00:00", b"01:00:03"), T0)
    second.close()
    assert [(h.record, h.repeat) for h in again] == [(n, True) for n in records]
    assert not new.repeat
    assert new.record > records[-1]


def test_recent_messages_keep_their_capacity_and_the_checkpoints_digests() -> None:
    recent = RecentMessages(capacity=3)
    for n in range(1, 5):
        recent.add("t", b"m%d" % n, n)
    assert [recent.find("t", b"m%d" % n) for n in range(1, 5)] == [None, 2, 3, 4]
    digests, numbers = recent.export(2)
    assert (digests, numbers) == (digest("t", b"m3") + digest("t", b"m4"), (3, 4))
    loaded = RecentMessages(capacity=3)
    loaded.load((digests, numbers))
    assert (loaded.find("t", b"m3"), loaded.find("t", b"m4"), loaded.find("u", b"m4")) == (3, 4, None)
    loaded.add("t", b"m5", 5)
    loaded.add("t", b"m6", 6)  # the oldest, a checkpoint's digest, goes first
    assert [loaded.find("t", b"m%d" % n) for n in range(3, 7)] == [None, 4, 5, 6]
    assert loaded.export() == (digest("t", b"m4") + digest("t", b"m5") + digest("t", b"m6"), (4, 5, 6))
    loaded.forget(((4, 5),))
    assert [loaded.find("t", b"m%d" % n) for n in range(3, 7)] == [None, None, None, 6]


def test_a_journal_fault_is_an_alert_in_the_state_and_on_the_lamp(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", sensors_board=True, fsync=False)
    (tmp_path / "journal.jsonl").mkdir()  # the journal cannot be opened
    controller = _controller(config)
    controller.recover(T0)
    assert controller.journal_error == f"journal {tmp_path / 'journal.jsonl'}: cannot open: Is a directory"
    outgoing = controller.journal_changed(T0)
    alert = parse_alert("a", next(o.payload for o in outgoing if o.what == "alert"))
    assert (alert.id, alert.code, alert.status) == ("journal", "journal_fault", "raised")
    assert alert.severity == "warning"
    state = parse_state("s", next(o.payload for o in outgoing if o.what == "state"))
    assert [a.code for a in state.alerts] == ["journal_fault"]
    lamp = [parse_command(o.topic, o.payload) for o in outgoing if o.what == "command"]
    assert [(c.cmd, getattr(c, "colour", None)) for c in lamp] == [("lamp", "amber")]
    assert controller.journal_changed(T0) == []  # once per change
    controller.close()


def test_the_audit_after_retention_replays_from_the_oldest_segment_left(tmp_path: Path) -> None:
    small = "segment_mb = 0.01\ncheckpoint_every = 25\n"
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False, journal=small)
    first = _controller(config)
    first.recover(T0)
    messages, _ = dealer_session(registry(), seats=9, hands=6, seed=3, noise=True)
    assert first.journal is not None
    for message in messages:
        for out in _feed(first, [message]):
            first.published(out, T0)
        first.journal.flush()  # every checkpoint written, none superseded
    first.close()
    closed = sorted(tmp_path.glob("journal.0*.jsonl"))
    assert len(closed) >= 6
    for path in closed[:3]:
        old = time.time() - 10 * 86_400
        os.utime(path, (old, old))

    aged = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False, journal=small + "retain_days = 5\n")
    second = _controller(aged)
    second.recover(T0)  # retention runs when the journal opens
    second.close()
    assert not closed[0].exists()
    assert closed[3].exists()

    audit = _controller(aged)
    recovery = audit.replay()
    assert recovery.checkpoint is not None  # older records are gone: from a checkpoint
    assert recovery.divergences == []
    assert recovery.chain == []
    assert audit.state == first.state


def test_a_checkpoint_at_every_hands_end(tmp_path: Path) -> None:
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    controller = _controller(config)
    controller.recover(T0)
    assert controller.journal is not None
    messages, _ = dealer_session(registry(), seats=9, hands=5, seed=5)
    hands_ended = 0
    for index, message in enumerate(messages):
        before = controller.engine.state.phase
        _feed(controller, [message], T0 + timedelta(seconds=index))  # live: hands far apart
        hands_ended += before not in ("idle", "shuffled") and controller.engine.state.phase == "idle"
        controller.journal.flush()  # every checkpoint written, none superseded
    controller.close()
    assert hands_ended == 5
    covers = [c.covers for c in read_journal(tmp_path / "journal.jsonl").checkpoints]
    assert len(covers) == hands_ended  # and none in between (checkpoint_every is 1000)


def test_hand_ends_within_a_second_share_a_checkpoint(tmp_path: Path) -> None:
    """A backlog drained at full speed ends hands every few milliseconds: one checkpoint a
    second, not one per hand (each costs many engine steps)."""
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False)
    controller = _controller(config)
    controller.recover(T0)
    assert controller.journal is not None
    messages, _ = dealer_session(registry(), seats=9, hands=5, seed=5)
    _feed(controller, messages, T0)  # all within the same second
    controller.journal.flush()
    controller.close()
    assert len(list(read_journal(tmp_path / "journal.jsonl").checkpoints)) == 1


def test_a_costly_checkpoint_spaces_out_the_next(tmp_path: Path) -> None:
    """The next checkpoint waits CHECKPOINT_COST_SHARE times as long as the last took to build
    (behind a million queued messages each one was large: two thirds of the drain). The cost is
    set here as if the last checkpoint had taken 1.5 s (a real one takes milliseconds)."""
    config = write_config(tmp_path, "mqtt://127.0.0.1:1", fsync=False, journal="checkpoint_every = 10\n")
    controller = _controller(config)
    controller.recover(T0)
    assert controller.journal is not None
    messages, _ = dealer_session(registry(), seats=9, hands=3, seed=5)
    _feed(controller, messages[:10], T0)  # the first checkpoint, by the record count
    controller.journal.flush()
    assert len(list(read_journal(tmp_path / "journal.jsonl").checkpoints)) == 1
    controller._checkpoint_gap = timedelta(seconds=1.5 * CHECKPOINT_COST_SHARE)
    # 30 s of records and hand ends: none checkpointed
    for index, message in enumerate(messages[10:60]):
        _feed(controller, [message], T0 + timedelta(seconds=0.5 * index))
    controller.journal.flush()
    assert len(list(read_journal(tmp_path / "journal.jsonl").checkpoints)) == 1
    _feed(controller, messages[60:61], T0 + timedelta(seconds=31))
    controller.journal.flush()
    controller.close()
    assert len(list(read_journal(tmp_path / "journal.jsonl").checkpoints)) == 2
