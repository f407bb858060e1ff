"""A table without a keypad through ``tablectl run`` and mosquitto (issue 21, section 3): the
betting arrives as ``action`` inputs, the cards as tag reads, and no key is ever pressed. The
antes, the blinds and a straddle are posted before the first hole card, and the next hand's posts
arrive while the last hand's cards are still on the table: each hand's result lists its own
posts, with the right pots, and nothing is raised.

Four seats, ante 1, blinds 1/2. Hand 1, button 4: seat 1 small blind, seat 2 big blind, seat 3
straddles (4); seat 4 raises to 10, everybody folds: seat 4 wins 4 antes + 1 + 2 + 4 + the 4 of
its raise seat 3's straddle called = 15, the other 6 go back. Hand 2, button 1: seat 2 small
blind, seat 3 big blind; called around and checked down, every seat shows.
"""

from __future__ import annotations

from pathlib import Path

from contract.models import parse_hand
from testing.mosquitto import Mosquitto
from tests.service.conftest import StartService
from tests.service.support import new_table, probe, script, write_config

STAKES = '\n[stakes]\nstructure = "no_limit"\nsmall_blind = 1\nbig_blind = 2\nante = 1\n'
ANTES = tuple(f"action {seat} post 1" for seat in (1, 2, 3, 4))
FIRST = (
    "sit 1 2 3 4",
    "shuffle A",
    "shuffle B",
    "button 4",
    *ANTES,
    "action 1 post 1",
    "action 2 post 2",
    "action 3 post 4",  # the straddle
    "deal all",
    "action 4 raise 10",
    "action 1 fold",
    "fold 1",
    "action 2 fold",
    "fold 2",
    "action 3 fold",
    "fold 3",
)
SECOND = (
    # the next hand's posts while seat 4's cards still lie on its seat
    "button 1",
    *ANTES,
    "action 2 post 1",
    "action 3 post 2",
    "clear",
    "use B",
    "deal all",
    "action 4 call 2",
    "action 1 call 2",
    "action 2 call 1",
    "action 3 check",
    *(
        line
        for street in ("flop", "turn", "river")
        for line in ("burn", street, *(f"action {seat} check" for seat in (2, 3, 4, 1)))
    ),
    "show 2 3 4 1",
    "clear",
)


async def test_a_table_without_a_keypad_keeps_its_posts(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url, table="kl-1", seats=9, action_feed=True, journal="")
    config.write_text(config.read_text(encoding="utf-8") + STAKES, encoding="utf-8")
    lines = script(new_table(), *FIRST, *SECOND)
    assert not any(getattr(message.payload, "type", None) == "key" for message in lines)  # no key
    async with probe(mosquitto.port, "kl-1") as p:
        start_service(config)
        await p.status("online")
        await p.play(lines)
        for hand in (1, 2):
            await p.wait_for(
                lambda m, hand=hand: (
                    m.topic == p.topics.hands  # type: ignore[misc]
                    and parse_hand(m.topic, m.payload).hand == hand
                )
            )
    first, second = (parse_hand(m.topic, m.payload) for m in p.messages if m.topic == p.topics.hands)
    assert [a.code for a in p.alerts() if a.status == "raised"] == []
    assert (first.result, first.button, first.seats) == ("uncontested", 4, [1, 2, 3, 4])
    assert sorted((a.seat, a.amount) for a in first.actions if a.action == "post") == [
        (1, 1),
        (1, 1),
        (2, 1),
        (2, 2),
        (3, 1),
        (3, 4),
        (4, 1),
    ]
    assert [(pot.amount, pot.winners) for pot in first.pots] == [(15, [4])]
    assert (second.result, second.button, len(second.board)) == ("showdown", 1, 5)
    assert sorted((a.seat, a.amount) for a in second.actions if a.action == "post") == [
        (1, 1),
        (2, 1),
        (2, 1),
        (3, 1),
        (3, 2),
        (4, 1),
    ]
    assert sum(pot.amount for pot in second.pots) == 4 + 4 * 2
    assert {s.seat for s in second.showdown} == {1, 2, 3, 4}
