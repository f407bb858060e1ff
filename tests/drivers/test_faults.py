"""The fault bookkeeping on its own: an error burst's sliding window, faults by code."""

from __future__ import annotations

from drivers.faults import ErrorBurst, Faults


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_is_that_many_errors_within_the_window() -> None:
    clock = Clock()
    burst = ErrorBurst(3, 1.0, clock)
    assert [burst.add(), burst.add()] == [False, False]
    clock.now = 1.5  # both have left the window
    assert [burst.add(), burst.add(), burst.add()] == [False, False, True]
    assert burst.active()
    clock.now = 2.6
    assert not burst.active()
    assert burst.total == 5


def test_a_burst_fault_is_named_once_and_quiet_once_its_window_is() -> None:
    clock = Clock()
    faults = Faults(ErrorBurst(2, 1.0, clock))
    assert faults.error("crc_errors") is None
    assert faults.error("crc_errors") == "2 errors within 1 s"
    assert faults.raise_("crc_errors", "2 errors within 1 s: corrupt frame")
    assert faults.error("crc_errors") is None  # already active: not named again
    assert faults.quiet_bursts() == []
    clock.now = 5.0
    assert faults.quiet_bursts() == ["crc_errors"]
    assert faults.clear("crc_errors")
    assert not faults.clear("crc_errors")
    assert faults.quiet_bursts() == []


def test_declared_faults_by_code_and_a_new_session_without_any() -> None:
    faults = Faults(ErrorBurst(2, 1.0, Clock()))
    assert faults.raise_("jam", "jammed")
    assert not faults.raise_("jam", "jammed again")
    assert faults.raise_("door_open", "open")
    assert faults.describe() == "jam: jammed; door_open: open"
    assert faults.quiet_bursts() == []  # declared faults are cleared by the device, not by time
    faults.error("crc_errors")
    faults.reset()
    assert (faults.active, faults.describe()) == ({}, "")
    assert faults.error("crc_errors") is None  # the burst started again from nothing
