"""The session's rules through ``tablectl run`` and mosquitto: chips read in the betting areas and
the stacks, the dealer's badge, the last hands and a tournament's levels (docs/rules.md, "The
session"). One session of four hands raises each code once, in order, and the messages carry the
dealer, the hands left and the level.

The stacks are read where the configuration says an antenna covers ``stack:N`` (the reader's
``[[devices]]`` entry, its driver run elsewhere: the test publishes its events).
"""

from __future__ import annotations

from pathlib import Path

from contract.models import parse_hand, parse_state
from testing.mosquitto import Mosquitto
from testing.script import Table
from tests.engine.game import CHIPS
from tests.engine.scenario import registry
from tests.engine.test_session import STACKS, hand
from tests.service.conftest import StartService
from tests.service.support import probe, script, write_session_config

STAKES = """
[stakes]
structure = "no_limit"
small_blind = 1
big_blind = 2
min_buy_in = 100
max_rebuy = 200

[[stakes.levels]]
small_blind = 1
big_blind = 2
minutes = 20

[[stakes.levels]]
small_blind = 2
big_blind = 4
minutes = 20
"""


async def test_each_session_code_once_through_the_service(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_session_config(tmp_path, mosquitto.url, table="se-1", max_absence_s=60, stakes=STAKES)
    table = Table(registry(), table_seats=9, chips=CHIPS)
    setup = ["sit 1 2 3", "shuffle A", "shuffle B", "button 1"]
    async with probe(mosquitto.port, "se-1") as p:
        start_service(config)
        await p.status("online")
        # Hand 1: the dealer B-1, the clock and the last three hands announced; a new dealer
        # and a rebuy arrive during the hand.
        await p.play(script(table, *setup, *STACKS, "dealer B-1", "level_start", "last_hands"))
        # (the latest state is always published; one a newer state supersedes may be skipped)
        announced = await p.wait_for(
            lambda m: m.topic == p.topics.state and parse_state(m.topic, m.payload).hands_left == 3
        )
        first_state = parse_state(announced.topic, announced.payload)
        assert first_state.dealer == "B-1"
        assert first_state.level is not None
        assert first_state.level.level == 1
        await p.play(script(table, *hand(1, first=True, mid=("dealer B-2", "chips - stack:1 500"))))
        changed = await p.alert("dealer_changed_mid_hand")
        rebuy = await p.alert("rebuy_during_hand")
        assert rebuy.seat == 1
        await p.alert("dealer_changed_mid_hand", status="resolved")
        await p.alert("rebuy_during_hand", status="resolved")
        first = parse_hand(p.topics.hands, (await p.wait_for(lambda m: m.topic == p.topics.hands)).payload)
        assert first.dealer == "B-1"
        # Hand 2: seat 2 adds 300 between hands, over the maximum rebuy of 200.
        mark = len(p.messages)
        await p.play(script(table, "chips - stack:2 300", *hand(2)))
        over = await p.alert("buy_in_out_of_limits", after=mark)
        assert over.seat == 2
        # Seat 3 leaves his chips longer than a minute (the next event tells).
        await p.play(script(table, "leave 3", "wait 61", "dealer B-2"))
        away = await p.alert("absence_over_limit", after=mark)
        assert (away.seat, away.severity) == (3, "info")
        await p.play(script(table, "sit 3"))
        await p.alert("absence_over_limit", status="resolved", after=mark)
        # Hand 3, twenty minutes on: level 2 is in force, the blinds of level 1 are posted.
        await p.play(script(table, "wait 1200", *hand(3)))
        out_of_level = await p.alert("blinds_out_of_level", after=mark)
        assert "Level 2 (2/4)" in out_of_level.message
        # Hand 4: one after the three announced.
        await p.play(script(table, *hand(1, blinds=(2, 4))))
        await p.alert("hand_after_last", after=mark)

    hands = [parse_hand(m.topic, m.payload) for m in p.messages if m.topic == p.topics.hands]
    assert [h.dealer for h in hands[:3]] == ["B-1", "B-2", "B-2"]
    states = [parse_state(m.topic, m.payload) for m in p.messages if m.topic == p.topics.state]
    lefts = [s.hands_left for s in states if s.hands_left is not None]
    assert lefts == sorted(lefts, reverse=True)  # 3, 2, 1, 0 (some superseded ones skipped)
    assert states[-1].hands_left == 0
    assert states[-1].level is not None
    assert (states[-1].level.level, states[-1].level.big_blind) == (2, 4)
    assert states[-1].dealer == "B-2"
    raised = [a.code for a in p.alerts() if a.status == "raised"]
    assert sorted(raised) == sorted(
        [
            "dealer_changed_mid_hand",
            "rebuy_during_hand",
            "buy_in_out_of_limits",
            "absence_over_limit",
            "blinds_out_of_level",
            "blinds_out_of_level",
            "hand_after_last",
        ]
    )
    assert changed.seat is None
