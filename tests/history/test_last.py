"""The table's last hand at start-up (``controller.history.last``): the newest result of the
journal's newest segments, or a newer one still owed to the broker; what cannot be read is logged
with its place, never raised."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest

from contract.models import Alert, HandResult, PublicState
from controller.history.last import alerts_from, last_hand, read_recent
from controller.history.query import latest_segments, read_history
from controller.journal import JournalFiles
from controller.service.outgoing import Outgoing
from tests.history.support import (
    T0,
    TOPICS,
    alert,
    misdeal_hand,
    sample_journal,
    showdown_hand,
    state,
    uncontested_hand,
    write_journal,
)

S = timedelta(seconds=1)


def test_the_last_hand_is_the_newest_result_with_its_alert_changes(tmp_path: Path) -> None:
    history = read_recent(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    entry = last_hand(history, [])
    assert entry is not None
    assert entry.result is not None
    assert (entry.hand, entry.result.result, entry.record > 0) == (9, "misdeal", True)
    assert [(a.code, a.status) for a in entry.alerts] == [("misdeal_extra_cards", "raised")]


def test_only_the_newest_segments_are_read_and_they_hold_the_hands_first_alerts(
    tmp_path: Path,
) -> None:
    # Small segments: hand 7 in the oldest ones, hand 8's alert a segment before its result.
    items: list[HandResult | Alert | PublicState] = [
        state(7, "dealing", T0),
        showdown_hand(7, T0 + 30 * S),
        *(state(8, "preflop", T0 + 60 * S) for _ in range(6)),
        alert(8, "exposed_card", T0 + 61 * S, seat=2),
        state(8, "flop", T0 + 62 * S),
        state(8, "turn", T0 + 63 * S),
        uncontested_hand(8, T0 + 70 * S),
        state(9, "idle", T0 + 71 * S),
    ]
    files = JournalFiles(write_journal(tmp_path / "journal.jsonl", items, segment_bytes=2_000))
    segments = files.segments()
    assert len(segments) > 4
    chosen = latest_segments(files)
    assert 0 < len(chosen) < len(segments)
    assert chosen == segments[-len(chosen) :]
    assert 7 not in read_history(files, chosen).hands
    entry = last_hand(read_recent(files), [])
    assert entry is not None
    assert entry.hand == 8
    assert [a.code for a in entry.alerts] == ["exposed_card"]


def test_a_newest_segment_with_two_results_is_read_alone(tmp_path: Path) -> None:
    """The last hand began after the result before it: the segments before are not needed."""
    items: list[HandResult | Alert | PublicState] = [
        showdown_hand(7, T0),
        alert(8, "exposed_card", T0 + 61 * S, seat=2),
        state(8, "flop", T0 + 62 * S),
        misdeal_hand(8, T0 + 70 * S),
        alert(9, "exposed_card", T0 + 71 * S, seat=2),
        misdeal_hand(9, T0 + 80 * S),
        misdeal_hand(10, T0 + 90 * S),
    ]
    files = JournalFiles(write_journal(tmp_path / "journal.jsonl", items, segment_bytes=1_500))
    assert len(files.segments()) > 2
    assert files.active.read_bytes().count(b'"what":"hand"') == 2  # results 9 and 10
    assert latest_segments(files) == files.segments()[-1:]
    entry = last_hand(read_recent(files), [])
    assert entry is not None
    assert (entry.hand, entry.alerts) == (10, [])


def test_a_result_still_owed_to_the_broker_is_the_last_hand(tmp_path: Path) -> None:
    """A crash after the replayed record, before the result was published: the replay's one."""
    history = read_recent(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    raised = alert(10, "exposed_card", T0 + 200 * S, seat=1)
    owed = [
        Outgoing("alert", 50, TOPICS.alerts, raised.to_json(), retain=False),
        Outgoing("state", 51, TOPICS.state, state(10, "idle", T0 + 210 * S).to_json(), retain=True),
        Outgoing("hand", 51, TOPICS.hands, misdeal_hand(10, T0 + 210 * S).to_json(), retain=False),
    ]
    entry = last_hand(history, owed)
    assert entry is not None
    assert entry.result is not None
    assert (entry.hand, entry.record) == (10, 0)
    assert entry.alerts == [raised]


def test_no_hand_yet(tmp_path: Path) -> None:
    files = JournalFiles(write_journal(tmp_path / "journal.jsonl", [state(1, "idle", T0)]))
    assert last_hand(read_recent(files), []) is None
    assert last_hand(read_recent(JournalFiles(tmp_path / "none" / "journal.jsonl")), []) is None


def test_a_corrupt_record_is_logged_with_its_place_and_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = sample_journal(tmp_path / "journal.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    number = max(i for i, line in enumerate(lines, start=1) if b'"what":"alert"' in line)
    lines[number - 1] = lines[number - 1][:80] + b"\x00garbage\n"
    path.write_bytes(b"".join(lines))
    with caplog.at_level(logging.WARNING, logger="controller.history.last"):
        entry = last_hand(read_recent(JournalFiles(path)), [])
    assert entry is not None
    assert entry.hand == 9
    assert entry.alerts == []  # its one alert was that record
    (warning,) = caplog.messages
    assert warning.startswith(f"last hand: journal {path}:{number}: unreadable record")


def test_a_journal_that_cannot_be_read_gives_no_last_hand(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    active = tmp_path / "journal.jsonl"
    active.mkdir()  # a directory where the active segment should be
    with caplog.at_level(logging.WARNING, logger="controller.history.last"):
        assert last_hand(read_recent(JournalFiles(active)), []) is None
    assert caplog.messages == [
        f"last hand: journal {active} cannot be read (Is a directory): no last hand until the next one ends"
    ]


def test_the_alert_changes_of_the_last_hand_and_of_the_hand_in_progress(tmp_path: Path) -> None:
    history = read_recent(JournalFiles(sample_journal(tmp_path / "journal.jsonl")))
    in_progress = alert(10, "exposed_card", T0 + 200 * S, seat=1)
    owed = [Outgoing("alert", 50, TOPICS.alerts, in_progress.to_json(), retain=False)]
    entry = last_hand(history, owed)
    assert entry is not None
    assert entry.hand == 9
    assert [(a.hand, a.code) for a in alerts_from(history, entry.hand)] == [
        (9, "misdeal_extra_cards"),
        (10, "exposed_card"),
    ]
