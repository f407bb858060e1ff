"""Malformed input through the controller: counted per topic, reported at most once a second,
sampled in the journal, kept out of the engine's way; a configured device's kind respected."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from config.models import TableConfig
from contract.models import TagEvent, parse_alert, parse_state
from controller.journal import RejectedRecord, SampleRecord, read_journal
from controller.service.malformed import MAX_TOPICS, SAMPLES_PER_REPORT
from controller.service.table import MAX_DEVICES, Outgoing, TableController
from tests.engine.scenario import REGISTRY_PATH, registry

T0 = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
UID = "E0040150654CC41C"


def _controller(tmp_path: Path, devices: list[dict[str, object]] | None = None) -> TableController:
    config = TableConfig.model_validate(
        {
            "table": {"id": "t1", "seats": 9},
            "decks": {"registry": str(REGISTRY_PATH)},
            "journal": {"path": str(tmp_path / "journal.jsonl"), "fsync": False},
            "devices": devices or [],
        }
    )
    controller = TableController(config, registry())
    controller.recover(T0)
    return controller


def _alerts(out: list) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    return [
        (a.code, a.status, a.message)
        for a in (parse_alert(o.topic, o.payload) for o in out if o.what == "alert")
    ]


def test_a_flood_is_one_alert_per_topic_updated_once_a_second(tmp_path: Path) -> None:
    controller = _controller(tmp_path)
    topic = "holdem/t1/dev/rfid-1/event"
    first = controller.receive(topic, b"not json", T0).outgoing
    assert [(c, s) for c, s, _ in _alerts(first)] == [("bad_payload", "raised")]
    quiet: list[Outgoing] = []
    for i in range(1, 1000):
        quiet += controller.receive(topic, b"not json %d" % i, T0 + timedelta(microseconds=500 * i)).outgoing
    assert quiet == []  # nothing published within the second
    due = controller.tick(T0 + timedelta(seconds=1))
    [(code, status, message)] = _alerts(due)
    assert (code, status) == ("bad_payload", "updated")
    assert message.startswith("1000 messages on holdem/t1/dev/rfid-1/event")
    assert controller.tick(T0 + timedelta(seconds=1.5)) == []  # nothing new
    controller.close()  # what is queued is written
    records = read_journal(tmp_path / "journal.jsonl").records
    assert [r.count for r in records if isinstance(r, RejectedRecord)] == [1, 1000]
    # a few samples per report (the first payload, then the budget of the report it opened)
    assert len([r for r in records if isinstance(r, SampleRecord)]) == SAMPLES_PER_REPORT + 1


def test_topics_beyond_the_limit_share_one_alert_and_the_state_stays_small(tmp_path: Path) -> None:
    controller = _controller(tmp_path)
    out: list[Outgoing] = []
    for n in range(100):
        out += controller.receive(f"holdem/t1/dev/d{n}/event", b"{}", T0).outgoing
        # devices beyond the limit are refused too, however valid their statuses
        status = b'{"state":"offline","ts":"2026-11-30T01:00:00Z","session":1}'
        out += controller.receive(f"holdem/t1/dev/s{n}/status", status, T0).outgoing
    raised = [a for a in _alerts(out) if a[0] == "bad_payload" and a[1] == "raised"]
    assert len(raised) == MAX_TOPICS + 1
    offline = [a for a in _alerts(out) if a[0] == "device_offline"]
    assert len(offline) == MAX_DEVICES
    state = controller.engine.public_state()
    assert len(state.to_json()) <= 16 * 1024
    assert parse_state("s", state.to_json()).alerts_omitted > 0


def test_a_sensor_board_cannot_get_a_tag_accepted(tmp_path: Path) -> None:
    board = {"id": "sensors", "driver": "sensors", "vendor_id": 1, "product_id": 2, "enabled": False}
    controller = _controller(tmp_path, [board])
    tag = TagEvent(seq=1, ts=T0, antenna=5, zone="seat:5", uid=UID, present=True, face="down")
    out = controller.receive("holdem/t1/dev/sensors/event", tag.to_json(), T0).outgoing
    [(code, _, message)] = _alerts(out)
    assert code == "bad_payload"
    assert "a sensors device does not send tag events" in message
    assert controller.engine.public_state().seats[4].cards == 0
    # the same event from a device the configuration does not name is taken
    controller.receive("holdem/t1/dev/reader/event", tag.to_json(), T0)
    assert controller.engine.public_state().seats[4].cards == 1


def test_reports_are_replayed_after_a_restart(tmp_path: Path) -> None:
    controller = _controller(tmp_path)
    controller.receive("holdem/t1/input", b"[]", T0)
    controller.receive("holdem/t1/input", b"[]", T0 + timedelta(seconds=2))
    before = controller.engine.public_state()
    controller.close()
    again = _controller(tmp_path)
    assert again.engine.public_state() == before
    again.close()


def test_a_report_after_a_checkpoint_is_replayed_from_the_tail_and_not_sent_twice(
    tmp_path: Path,
) -> None:
    controller = _controller(tmp_path)
    for out in controller.receive("holdem/t1/input", b"[]", T0).outgoing:
        controller.published(out, T0)
    controller.checkpoint(controller.last_record, T0)
    later = T0 + timedelta(seconds=2)
    updated = controller.receive("holdem/t1/input", b"[1]", later).outgoing
    assert [(c, s) for c, s, _ in _alerts(updated)] == [("bad_payload", "updated")]
    for out in updated:
        controller.published(out, later)
    before = controller.engine.public_state()
    controller.close()

    again = TableController(controller.config, registry())
    recovery = again.recover(later)
    again.close()
    assert recovery.checkpoint is not None
    assert recovery.replayed == 1  # the second report, from the tail
    assert recovery.pending == []  # its alert is journaled as published: not sent again
    assert recovery.divergences == []
    assert again.engine.public_state() == before


def test_reports_and_samples_say_what_was_wrong_with_the_latest_payload(tmp_path: Path) -> None:
    """Reasons are described only when read (a report, a sample): each still names the place
    of the payload it belongs to, and a report the latest payload's."""
    controller = _controller(tmp_path)
    topic = "holdem/t1/dev/pad/event"
    controller.receive(topic, b"not json", T0)
    bad_seq = b'{"v":1,"seq":-5,"ts":"2026-11-30T01:00:00Z","type":"key","key":"ack"}'
    for i in range(1, 10):
        controller.receive(topic, bad_seq, T0 + timedelta(milliseconds=i))
    [(code, status, message)] = _alerts(controller.tick(T0 + timedelta(seconds=1)))
    assert (code, status) == ("bad_payload", "updated")
    assert "key.seq" in message
    controller.close()
    records = read_journal(tmp_path / "journal.jsonl").records
    reports = [r.error for r in records if isinstance(r, RejectedRecord)]
    assert "Invalid JSON" in reports[0]
    assert "key.seq" in reports[1]
    samples = [(r.payload, r.error) for r in records if isinstance(r, SampleRecord)]
    assert samples[0][0] == b"not json"
    assert "Invalid JSON" in samples[0][1]
    assert [error for payload, error in samples[1:] if payload == bad_seq]
    assert all("key.seq" in error for payload, error in samples[1:] if payload == bad_seq)
