"""From input reports to contract events: changes once each, keys once each, across sessions."""

from __future__ import annotations

from typing import Any

from contract.models import BlindEvent, ButtonEvent, KeyEvent, SeatEvent
from drivers.sensors.protocol import InputReport, KeyPress
from drivers.sensors.tracker import ReportTracker, key_after


def report(
    button: int | None = None,
    blinds: set[int] | None = None,
    occupied: set[int] | None = None,
    keys: tuple[KeyPress, ...] = (),
) -> InputReport:
    return InputReport(
        button=button,
        blinds=frozenset(blinds or ()),
        occupied=frozenset(occupied or ()),
        keys=keys,
    )


def described(tracker: ReportTracker, rep: InputReport) -> list[tuple[str, dict[str, Any]]]:
    return [(change.event.__name__, change.fields) for change in tracker.update(rep)]


def test_first_report_states_the_button_and_what_is_set() -> None:
    tracker = ReportTracker()
    tracker.start_session()
    assert described(tracker, report(button=None, occupied={2, 3}, blinds={3})) == [
        ("ButtonEvent", {"seat": None}),
        ("SeatEvent", {"seat": 2, "occupied": True}),
        ("SeatEvent", {"seat": 3, "occupied": True}),
        ("BlindEvent", {"seat": 3, "present": True}),
    ]
    # The same state again: nothing to publish.
    assert described(tracker, report(button=None, occupied={2, 3}, blinds={3})) == []


def test_each_change_is_one_event() -> None:
    tracker = ReportTracker()
    tracker.start_session()
    tracker.update(report(button=1, occupied={1, 2}))
    assert described(tracker, report(button=2, occupied={1}, blinds={9})) == [
        ("ButtonEvent", {"seat": 2}),
        ("SeatEvent", {"seat": 2, "occupied": False}),
        ("BlindEvent", {"seat": 9, "present": True}),
    ]


def test_resent_keys_are_published_once_and_numbers_wrap() -> None:
    tracker = ReportTracker()
    tracker.start_session()
    first = (KeyPress(254, "new_hand"), KeyPress(255, "exposed", 4))
    assert [c.fields for c in tracker.update(report(keys=first))][1:] == [
        {"key": "new_hand", "seat": None},
        {"key": "exposed", "seat": 4},
    ]
    resent = (*first, KeyPress(0, "ack"), KeyPress(1, "misdeal"))
    changes = tracker.update(report(keys=resent))
    assert [(c.event, c.fields["key"]) for c in changes] == [(KeyEvent, "ack"), (KeyEvent, "misdeal")]
    assert tracker.last_key == 1


def test_a_new_session_restates_the_button_and_accepts_restarted_key_numbers() -> None:
    tracker = ReportTracker()
    tracker.start_session()
    tracker.update(report(button=4, occupied={1}, keys=(KeyPress(1, "ack"), KeyPress(2, "ack"))))
    tracker.start_session()
    changes = tracker.update(report(button=4, occupied={1, 6}, keys=(KeyPress(1, "misdeal"),)))
    assert [(c.event, c.fields) for c in changes] == [
        (ButtonEvent, {"seat": 4}),
        (SeatEvent, {"seat": 6, "occupied": True}),
        (KeyEvent, {"key": "misdeal", "seat": None}),
    ]
    assert BlindEvent not in {c.event for c in changes}


def test_key_after_is_modulo_256() -> None:
    assert key_after(1, 0)
    assert key_after(0, 255)
    assert key_after(100, 1)
    assert not key_after(5, 5)
    assert not key_after(4, 5)
    assert not key_after(200, 10)  # 190 ahead is taken as behind: an old resend
