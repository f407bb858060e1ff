"""Time passes on a quiet table (issue 20, point 7; docs/service.md, "Time on a quiet table"),
through the real ``tablectl run`` and a private mosquitto.

The engine learns the time from messages. When nothing arrives, the service gives it the time of
its next deadline by its own clock (a ``time`` record in the journal, replayed like a message):

- a reader's status names three events after its last one received, they never come, and then
  nothing at all happens: the alert naming the device and the seqs arrives all the same, and the
  journal's replay and a restart reproduce it (before, it waited for the next message, for ever);
- a seat left with chips in its stack and nothing after it: ``absence_over_limit`` arrives.
"""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from contract.models import Alert, ResendCommand, Status, WireModel, parse_state
from controller.journal import PublishedRecord, read_journal
from testing.mosquitto import Mosquitto
from testing.script import Message, Table
from tests.engine.game import CHIPS
from tests.engine.scenario import registry
from tests.engine.test_session import STACKS, hand
from tests.service.conftest import StartService
from tests.service.support import (
    TABLECTL,
    new_table,
    probe,
    script,
    until,
    write_session_config,
)
from tests.service.test_trust_e2e import SETUP, cards, configure, script_now, state_where

#: Generous: the alert comes about ``gap_wait_s`` after the status (2 s here); a loaded machine
#: makes it later, never earlier. So does a start of ``tablectl run`` (10 s seen at a load of 10).
TOLD_WITHIN_S = 60.0
START_S = 60.0


def replay_only(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TABLECTL), "run", "--config", str(config), "--replay-only"],
        capture_output=True,
        text=True,
        check=False,
    )


async def cause_of(journal: Path, alert: Alert) -> int:
    """The record that caused ``alert`` (its ``published`` record's cause, once journaled)."""

    def published() -> list[PublishedRecord]:
        return [
            r
            for r in read_journal(journal).published
            if r.what == "alert" and alert.id.encode() in r.payload and b'"raised"' in r.payload
        ]

    await until(lambda: bool(published()), what=f"alert {alert.id} journaled as published")
    return published()[0].cause


async def test_the_lost_end_of_a_stream_is_told_on_a_quiet_table_and_replayed_the_same(
    tmp_path: Path, mosquitto: Mosquitto, start_service: StartService
) -> None:
    config = configure(tmp_path, mosquitto, "gap_wait_s = 2.0\n")
    journal = tmp_path / "journal.jsonl"
    service = start_service(config)
    table = new_table()
    async with probe(mosquitto.port, "t1") as p:
        await p.status("online", within=START_S)
        online = Status(state="online", ts=script_now(table), session=1)
        await p.publish(p.topics.device_status("rfid-1"), online.to_json(), retain=True)
        await p.play(script(table, *SETUP, "new_hand", "deal all"))
        await state_where(p, lambda s: cards(s) == [2, 2, 2, 2])
        high = table.seq["rfid-1"]
        told = Status(
            state="online", ts=script_now(table) + timedelta(milliseconds=10), session=1, seq=high + 3
        )
        mark = len(p.messages)
        await p.publish(p.topics.device_status("rfid-1"), told.to_json(), retain=True)
        # Then nothing: no device, no dealer input.
        alert = await p.alert("device_fault", after=mark, within=TOLD_WITHIN_S)
        assert alert.device == "rfid-1"
        assert f"did not send events {high + 1} to {high + 3} again" in alert.message
        assert alert.ts - told.ts >= timedelta(seconds=2)  # the bound, on event time: never early
        state = await state_where(p, lambda s: not s.tracking, after=mark)
        assert [a.id for a in state.alerts if a.code == "device_fault"] == [alert.id]
        # Asked again a second after the first ask, by time alone too.
        command = p.topics.device_cmd("rfid-1")
        asks = [m for m in p.messages[mark:] if m.topic == command and b'"resend"' in m.payload]
        assert len(asks) >= 2
        assert {ResendCommand.model_validate_json(m.payload).from_seq for m in asks} == {high + 1}

        # The journal holds the time that came with no message, and the alert is its doing.
        times = list(read_journal(journal).times)
        assert times
        cause = await cause_of(journal, alert)
        assert cause in {t.n for t in times}
        [given] = [t for t in times if t.n == cause]
        assert given.now == alert.ts
        assert given.now - told.ts >= timedelta(seconds=2)

        # A restart rebuilds the same: the alert still active, not raised again.
        service.stop()
        mark = len(p.messages)
        start_service(config)
        await p.status("online", after=mark, within=START_S)
        again = await p.wait_for(lambda m: m.topic == p.topics.state, after=mark)
        restarted = parse_state(again.topic, again.payload)
        assert not restarted.tracking
        assert [a.id for a in restarted.alerts if a.code == "device_fault"] == [alert.id]
    raised = [a for a in p.alerts() if a.code == "device_fault" and a.status == "raised"]
    assert [a.id for a in raised] == [alert.id]

    # The audit's replay of the whole journal gives the published alerts again, byte for byte.
    audit = replay_only(config)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert " 0 divergences" in audit.stdout, audit.stdout


STAKES = """
[stakes]
structure = "no_limit"
small_blind = 1
big_blind = 2
"""


async def test_a_seat_away_too_long_on_a_quiet_table_is_told(
    tmp_path: Path, mosquitto: Mosquitto, start_service: StartService
) -> None:
    config = write_session_config(tmp_path, mosquitto.url, table="qa-1", max_absence_s=2, stakes=STAKES)
    journal = tmp_path / "journal.jsonl"
    table = Table(registry(), table_seats=9, chips=CHIPS)
    setup = ["sit 1 2 3", "shuffle A", "shuffle B", "button 1"]
    async with probe(mosquitto.port, "qa-1") as p:
        start_service(config)
        await p.status("online", within=START_S)
        await p.play(script(table, *setup, *STACKS, *hand(1, first=True)))
        mark = len(p.messages)
        await p.play(script(table, "leave 3"))
        left = await state_where(p, lambda s: bool(s.away), after=mark)
        assert left.away is not None
        since = left.away[0].since
        # Then nothing.
        away = await p.alert("absence_over_limit", after=mark, within=TOLD_WITHIN_S)
    assert away.seat == 3
    assert away.ts - since > timedelta(seconds=2)
    # The alert is the doing of a time record: event time past the limit, with no message.
    cause = await cause_of(journal, away)
    [given] = [t for t in read_journal(journal).times if t.n == cause]
    assert given.now == away.ts


def in_session(messages: list[Message]) -> list[Message]:
    """The reader's events naming their session, as the drivers' do."""
    return [
        replace(m, payload=m.payload.model_copy(update={"session": 1}))
        if m.kind == "event" and m.device == "rfid-1" and isinstance(m.payload, WireModel)
        else m
        for m in messages
    ]


async def test_a_deadline_that_falls_while_the_devices_come_back_waits_for_them(
    tmp_path: Path, mosquitto: Mosquitto, start_service: StartService
) -> None:
    """The broker restarts (no persistence: it forgets everything) while a reader's event is
    missing: the controller is back at once, the reader a few seconds later with the event it
    held. The gap's bound (1 s) passes on the controller's clock before the reader is back, but
    within the grace a reconnection gives the devices (``startup_grace_s``, 10 s here): the
    event is taken, and no ``device_fault`` says it was lost. Before, the time signal told the
    event lost one second after the controller came back (a false alarm of the demo's broker
    crashes)."""
    config = configure(tmp_path, mosquitto, "gap_wait_s = 1.0\nstartup_grace_s = 10.0\n")
    start_service(config)
    table = new_table()
    async with probe(mosquitto.port, "t1") as p:
        await p.status("online", within=START_S)
        online = Status(state="online", ts=script_now(table), session=1)
        await p.publish(p.topics.device_status("rfid-1"), online.to_json(), retain=True)
        await p.play(in_session(script(table, *SETUP, "new_hand", "deal all", "round")))
        await state_where(p, lambda s: cards(s) == [2, 2, 2, 2])
        held = in_session(script(table, "burn"))  # published only when the reader is back
        told = Status(state="online", ts=script_now(table), session=1, seq=table.seq["rfid-1"])
        mark = len(p.messages)
        await p.publish(p.topics.device_status("rfid-1"), told.to_json(), retain=True)
        command = p.topics.device_cmd("rfid-1")
        # The gap is known: the engine asks the reader for the event.
        await p.wait_for(lambda m: m.topic == command and b'"resend"' in m.payload, after=mark)
    before = p.alerts()
    mosquitto.kill()
    mosquitto.start()
    async with probe(mosquitto.port, "t1") as p:
        await p.status("online", within=START_S)
        # The bound passes by the controller's clock (1 s after it came back) with the reader away.
        await asyncio.sleep(2.5)
        mark = len(p.messages)
        await p.play(held)
        state = await state_where(p, lambda s: s.burns == 1, after=mark)
    assert not [a for a in state.alerts if a.code == "device_fault"], state.alerts
    assert not [a for a in [*before, *p.alerts()] if a.code == "device_fault"]
