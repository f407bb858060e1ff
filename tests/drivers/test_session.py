"""The device session on its own: numbering, events and their ring, faults, the status.

No device and no task: the session is driven call by call, its link is a
:class:`testing.memory_link.MemoryLink` and its clock a counter the test moves.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from contract.models import FaultEvent, KeyEvent, ResendCommand, Status
from contract.timestamps import utc_now
from drivers.session import DeviceSession
from testing.memory_link import MemoryLink

LOG = logging.getLogger("drivers.testdev")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(
    *, previous: Status | None = None, clock: Clock | None = None, **settings: object
) -> tuple[DeviceSession, MemoryLink]:
    link = MemoryLink("dev", previous=previous, log=LOG)
    session = DeviceSession("dev", link, LOG, clock=clock or Clock(), **settings)  # type: ignore[arg-type]
    return session, link


def test_each_session_numbers_its_events_from_one() -> None:
    session, link = make()
    session.publish_status(detail="device not available: unplugged")
    session.begin()
    session.publish_status()
    first = [session.emit(KeyEvent, key="new_hand"), session.emit(KeyEvent, key="ack")]
    session.end()
    session.publish_status(detail="device lost: unplugged")
    session.begin()
    session.publish_status()
    again = session.emit(KeyEvent, key="misdeal")
    assert [(e.session, e.seq) for e in first] == [(1, 1), (1, 2)]
    assert (again.session, again.seq) == (2, 1)
    assert [(e.session, e.seq) for e in link.events] == [(1, 1), (1, 2), (2, 1)]
    assert [(s.state, s.session, s.detail) for s in link.statuses] == [
        ("offline", 0, "device not available: unplugged"),
        ("online", 1, None),
        ("offline", 1, "device lost: unplugged"),
        ("online", 2, None),
    ]
    assert (session.emitted, session.seq, session.online) == (3, 1, True)


def test_a_status_is_published_only_when_it_changes() -> None:
    session, link = make()
    # Every failed reconnect says why; the retained status says it once per session.
    session.publish_status(detail="device not available: no such port")
    session.publish_status(detail="device not available: no such port")
    session.publish_status(detail="device not available: permission denied")
    session.begin()
    session.publish_status()
    session.publish_status()
    session.raise_fault("jam", "jammed")
    session.publish_status()
    assert [(s.state, s.session, s.detail) for s in link.statuses] == [
        ("offline", 0, "device not available: no such port"),
        ("online", 1, None),
        ("fault", 1, "jam: jammed"),
    ]


def test_an_error_burst_is_one_fault_until_its_window_is_quiet() -> None:
    clock = Clock()
    session, link = make(clock=clock, fault_errors=3, fault_window_s=1.0)
    session.begin()
    session.publish_status()
    session.report_error("crc_errors", "corrupt frame: CRC mismatch")
    clock.now += 2.0  # this one falls out of the window
    session.report_error("crc_errors", "corrupt frame: CRC mismatch")
    session.report_error("crc_errors", "corrupt frame: CRC mismatch")
    assert link.state() == "online"
    session.report_error("crc_errors", "corrupt frame: CRC mismatch")
    session.report_error("crc_errors", "corrupt frame: CRC mismatch")
    assert link.state() == "fault"
    assert session.faults == {"crc_errors": "3 errors within 1 s: corrupt frame: CRC mismatch"}
    faults = [e for e in link.events if isinstance(e, FaultEvent)]
    assert [(f.code, f.seq) for f in faults] == [("crc_errors", 1)]
    session.tick_faults()  # the window still holds the burst
    assert link.state() == "fault"
    clock.now += 1.5
    session.tick_faults()
    assert link.state() == "online"
    assert session.faults == {}


def test_a_declared_fault_is_raised_once_and_cleared_by_its_code() -> None:
    session, link = make()
    session.begin()
    session.publish_status()
    session.raise_fault("jam", "the shuffler is jammed")
    session.raise_fault("jam", "the shuffler is jammed")
    session.raise_fault("door_open", "the door is open")
    assert [getattr(e, "code", None) for e in link.events] == ["jam", "door_open"]
    assert link.statuses[-1].detail == "jam: the shuffler is jammed; door_open: the door is open"
    session.clear_fault("jam")
    assert (link.state(), link.statuses[-1].detail) == ("fault", "door_open: the door is open")
    session.clear_fault("door_open")
    assert link.state() == "online"
    # A fault raised while no session is open is no event; the next session starts without it.
    session.end()
    session.raise_fault("jam", "the shuffler is jammed")
    assert len(link.events) == 2
    session.begin()
    session.publish_status()
    assert (link.state(), session.faults) == ("online", {})


def test_a_resend_publishes_what_the_ring_holds_unchanged_and_names_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session, link = make(resend_buffer=4)
    session.begin()
    sent = [session.emit(KeyEvent, key="ack") for _ in range(5)]
    session.end()  # no device needed
    session.resend("test/cmd", ResendCommand(ts=utc_now(), session=1, from_seq=3, to_seq=4))
    assert link.events[5:] == [link.events[2], link.events[3]]
    assert [e.seq for e in link.events[5:]] == [3, 4]
    with caplog.at_level(logging.WARNING, logger="drivers.testdev"):
        session.resend("test/cmd", ResendCommand(ts=utc_now(), session=1, from_seq=1, to_seq=2))
    assert [e.seq for e in link.events[7:]] == [2]  # seq 1 has left the ring
    assert "test/cmd: resend of session 1 events 1 to 2: 1 no longer held (the ring keeps 4)" in caplog.text
    # Another session's numbers are not this one's.
    session.resend("test/cmd", ResendCommand(ts=utc_now(), session=2, from_seq=1, to_seq=5))
    assert len(link.events) == 8
    assert (session.emitted, session.resent) == (5, 3)
    assert sent[4].ts == link.events[4].ts


async def test_sessions_continue_from_the_status_left_on_the_broker() -> None:
    previous = Status(state="offline", ts=utc_now(), session=41, detail="driver gone")
    session, _ = make(previous=previous)
    await session.continue_from_broker(0.1)
    session.begin()
    assert session.number == 42
    # A status older than what the session already counted does not turn it back.
    older, _ = make(previous=Status(state="offline", ts=utc_now(), session=3))
    older.number = 7
    await older.continue_from_broker(0.1)
    assert older.number == 7


def test_the_state_file_numbers_sessions_without_a_broker(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "dev.session"
    session, _ = make(state_file=state)
    assert not session.continue_from_state_file()  # no file yet
    state.write_text("41\n")
    assert session.continue_from_state_file()
    session.begin()
    assert (session.number, state.read_text()) == (42, "42\n")
    state.write_text("forty-two\n")
    broken, _ = make(state_file=state)
    with caplog.at_level(logging.ERROR, logger="drivers.testdev"):
        assert not broken.continue_from_state_file()
    assert f"dev: state file {state} does not hold a session number" in caplog.text
