"""Time on a quiet table (docs/engine.md, "Time on a quiet table"): ``next_due`` names the event
time at which time alone changes something, and ``TimeReached`` of it does what a message of that
time would do — the gap fill's asks, give-up and release, the session's clock — with nothing
else on the table moving."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from contract.models import Alert, Profile, ResendCommand, Status
from engine.api import DeviceEventReceived, DeviceStatusReceived, Outputs, Received, TimeReached
from engine.seqtrack import RESEND_EVERY, SETTLE
from engine.state_data import state_from_data, state_to_data
from engine.step import NOTHING, Engine, next_due
from testing.script import Table
from tests.engine.game import game_settings, play
from tests.engine.runner import RECEIVED_AT, settings, to_received
from tests.engine.scenario import registry
from tests.engine.test_devices import SETUP, now
from tests.engine.test_remedy_chips import OFF_TABLE
from tests.engine.test_session import LEVELS, STACKS, hand
from tests.engine.test_session import settings as session_settings

GAP_WAIT_S = 3.0


def online(table: Table) -> Status:
    return Status(state="online", ts=now(table), session=1)


def dealt_then_end_lost(*, sessions: bool) -> tuple[Engine, Status, int]:
    """A hand dealt, then the reader's status names three events after its last one received:
    the end of its stream is lost, and nothing else arrives."""
    table = Table(registry())
    engine = Engine(replace(settings(), gap_wait_s=GAP_WAIT_S))
    engine.handle(
        DeviceStatusReceived("rfid-1", Status(state="online", ts=now(table), session=1), RECEIVED_AT)
    )
    for message in table.run_all([*SETUP, "new_hand", "deal all"]):
        received = to_received(message)
        if sessions and isinstance(received, DeviceEventReceived):
            received = received._replace(event=received.event.model_copy(update={"session": 1}))
        engine.handle(received)
    high = table.seq["rfid-1"]
    told = Status(state="online", ts=now(table) + timedelta(milliseconds=10), session=1, seq=high + 3)
    out = engine.handle(DeviceStatusReceived("rfid-1", told, RECEIVED_AT))
    assert [(c.from_seq, c.to_seq) for _, c in out.commands if isinstance(c, ResendCommand)] == [
        (high + 1, high + 3)
    ]
    return engine, told, high


def until_nothing_due(engine: Engine, *, limit: int = 50) -> list[tuple[TimeReached, Outputs]]:
    """Give the engine each time it names as due, until it names none."""
    steps: list[tuple[TimeReached, Outputs]] = []
    while (due := engine.next_due()) is not None:
        assert len(steps) < limit, f"still due after {limit} times: {due}"
        time = TimeReached(due)
        steps.append((time, engine.handle(time)))
    return steps


@pytest.mark.parametrize("sessions", [False, True])
def test_the_lost_end_of_a_stream_is_told_when_only_time_passes(sessions: bool) -> None:
    engine, told, high = dealt_then_end_lost(sessions=sessions)
    # Asked again every second of event time, told lost after the bound: each one due in turn.
    assert engine.next_due() == told.ts + RESEND_EVERY
    steps = until_nothing_due(engine)
    times = [time.now - told.ts for time, _ in steps]
    assert times == [timedelta(seconds=s) for s in (1, 2, 3)]
    asked = [
        (c.from_seq, c.to_seq)
        for _, out in steps[:2]
        for _, c in out.commands
        if isinstance(c, ResendCommand)
    ]
    assert asked == [(high + 1, high + 3)] * 2
    (time, out) = steps[-1]
    lost = [a for a in out.alerts if a.code == "device_fault"]
    assert [(a.status, a.device, a.ts) for a in lost] == [("raised", "rfid-1", time.now)]
    assert f"did not send events {high + 1} to {high + 3} again" in lost[0].message
    assert out.state is not None
    assert not out.state.tracking
    assert engine.state.machine.device_seqs.held == ()


def test_a_time_the_clock_has_passed_changes_nothing() -> None:
    engine, told, _ = dealt_then_end_lost(sessions=True)
    before = state_to_data(engine.state)
    assert engine.handle(TimeReached(told.ts)) is NOTHING
    assert engine.handle(TimeReached(told.ts - timedelta(hours=1))) is NOTHING
    assert state_to_data(engine.state) == before


def test_time_before_anything_is_due_asks_nothing_and_keeps_holding() -> None:
    engine, _, _ = dealt_then_end_lost(sessions=True)
    due = engine.next_due()
    assert due is not None
    out = engine.handle(TimeReached(due - timedelta(milliseconds=1)))
    assert (out.alerts, out.commands, out.hands) == ((), (), ())
    assert engine.next_due() == due
    assert engine.state.machine.device_seqs.held


def test_a_filled_gap_is_released_after_the_settling_time_by_time_alone() -> None:
    """The status names events that then come (a reconnection): the held messages wait for the
    other devices to be heard from, or ``SETTLE``; on a quiet table time releases them."""
    table = Table(registry())
    engine = Engine(settings())
    engine.handle(
        DeviceStatusReceived("rfid-1", Status(state="online", ts=now(table), session=1), RECEIVED_AT)
    )
    for message in table.run_all([*SETUP, "new_hand", "deal 2 3"]):
        received = to_received(message)
        if isinstance(received, DeviceEventReceived):
            received = received._replace(event=received.event.model_copy(update={"session": 1}))
        engine.handle(received)
    # another device followed by its session: the hold waits for it to be heard from
    engine.handle(
        DeviceStatusReceived("spare", Status(state="online", ts=now(table), session=1), RECEIVED_AT)
    )
    high = table.seq["rfid-1"]
    waited = table.run_all(["deal 4 1"])
    told = Status(state="online", ts=now(table) + timedelta(milliseconds=10), session=1, seq=high + 2)
    engine.handle(DeviceStatusReceived("rfid-1", told, RECEIVED_AT))
    for message in waited:
        received = to_received(message)
        assert isinstance(received, DeviceEventReceived)
        engine.handle(received._replace(event=received.event.model_copy(update={"session": 1})))
    machine = engine.state.machine
    if not machine.device_seqs.held:
        pytest.fail("the filled gap should wait for the other devices (or SETTLE)")
    assert engine.next_due() == machine.device_seqs.hold_since + SETTLE
    steps = until_nothing_due(engine)
    assert len(steps) == 1
    assert [seat.cards for seat in engine.public_state().seats[:4]] == [1, 1, 1, 1]
    assert engine.public_state().tracking
    assert not [a for _, out in steps for a in out.alerts]


def test_a_state_restored_from_data_is_due_at_the_same_time_and_does_the_same() -> None:
    engine, _, _ = dealt_then_end_lost(sessions=True)
    restored = Engine(engine.state.machine.table.settings)
    restored.restore(state_from_data(state_to_data(engine.state), engine.state.machine.table.settings))
    assert next_due(restored.state) == next_due(engine.state)
    ours = until_nothing_due(engine)
    theirs = until_nothing_due(restored)
    assert [t for t, _ in ours] == [t for t, _ in theirs]
    assert [o for _, o in ours] == [o for _, o in theirs]


# -- the session's clock ---------------------------------------------------------------------------


def raised(outputs: list[Outputs]) -> list[Alert]:
    return [a for out in outputs for a in out.alerts if a.status == "raised"]


@pytest.mark.parametrize("profile", ["roberts", "tda"])
def test_a_seat_away_too_long_on_a_quiet_table_is_told_by_time_alone(profile: Profile) -> None:
    engine = Engine(session_settings(profile, max_absence_s=60))
    played = play([1, 2, 3], 1, "\n".join([*STACKS, *hand(1, first=True), "leave 3"]), engine=engine)
    assert played.state is not None
    assert played.state.away is not None
    left = played.state.away[0].since
    assert engine.next_due() == left + timedelta(seconds=60, microseconds=1)
    steps = until_nothing_due(engine)
    assert [time.now for time, _ in steps] == [left + timedelta(seconds=60, microseconds=1)]
    [alert] = raised([out for _, out in steps])
    assert (alert.code, alert.seat, alert.ts) == ("absence_over_limit", 3, steps[0][0].now)


def test_a_level_ends_on_a_quiet_table_by_time_alone() -> None:
    engine = Engine(session_settings("roberts", levels=LEVELS))
    played = play([1, 2, 3], 1, "\n".join([*STACKS, "level_start"]), engine=engine)
    assert played.state is not None
    assert played.state.level is not None
    ends = played.state.level.ends
    assert engine.next_due() == ends
    [(time, out)] = until_nothing_due(engine)
    assert time.now == ends
    assert out.state is not None
    assert out.state.level is not None
    assert (out.state.level.level, out.state.level.big_blind) == (2, 4)


@pytest.mark.parametrize("profile", ["roberts", "tda"])
def test_a_chip_correction_never_made_is_judged_on_a_quiet_table_by_time_alone(profile: Profile) -> None:
    """Chips left on a vacant seat and the flop dealt, then nothing: the correction awaiting its
    evidence (docs/engine.md, the remedies table) is judged when its time comes, not at the next
    message, which may be minutes away."""
    case = OFF_TABLE[1]
    engine = Engine(game_settings(case.stakes, profile=profile))
    played = play([1, 2, 3], 1, "\n".join([*case.mistake, *case.left, *case.street]), engine=engine)
    assert [a for a in played.alerts if a.code == "remedy_not_followed"] == []
    due = engine.next_due()
    assert due is not None
    steps = until_nothing_due(engine)
    assert steps[0][0].now == due
    [alert] = [a for a in raised([out for _, out in steps]) if a.code == "remedy_not_followed"]
    assert (alert.seat, alert.message, alert.ts) == (case.seat, case.message, due)


@pytest.mark.parametrize("sessions", [False, True])
def test_a_lost_end_sent_again_with_the_statuss_own_time_closes_its_gap(sessions: bool) -> None:
    """The status naming the reader's last seq has the time of that event (a clock of coarse
    grain), and the event comes after it. Released together, the status goes after the event:
    before, it went first (same time, arrived first), showed the same gap again, and the gap
    was filled, released and opened again at every message, asked for for ever."""
    table = Table(registry())
    engine = Engine(replace(settings(), gap_wait_s=GAP_WAIT_S))
    engine.handle(DeviceStatusReceived("rfid-1", online(table), RECEIVED_AT))

    def received(lines: list[str]) -> list[Received]:
        out = [to_received(m) for m in table.run_all(lines)]
        return [
            r._replace(event=r.event.model_copy(update={"session": 1}))
            if sessions and isinstance(r, DeviceEventReceived) and r.device == "rfid-1"
            else r
            for r in out
        ]

    for item in received([*SETUP, "new_hand", "deal all"]):
        engine.handle(item)
    [burn] = received(["burn"])
    told = Status(state="online", ts=now(table), session=1, seq=table.seq["rfid-1"])
    assert isinstance(burn, DeviceEventReceived)
    assert burn.event.ts == told.ts
    asked = engine.handle(DeviceStatusReceived("rfid-1", told, RECEIVED_AT))
    assert [(c.from_seq, c.to_seq) for _, c in asked.commands if isinstance(c, ResendCommand)] == [
        (burn.event.seq, burn.event.seq)
    ]
    filled = engine.handle(burn)
    assert filled.commands == ()
    seqs = engine.state.machine.device_seqs
    assert (seqs.gaps, seqs.held) == ((), ())
    assert seqs.tracks["rfid-1"].high == burn.event.seq
