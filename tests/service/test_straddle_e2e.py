"""A straddled hand read from chips, through ``tablectl run`` and mosquitto (seed 000: the third
seat left of the button may post 2 x big blind before the deal): no alert, and the ``hands``
message lists the straddle as a ``post`` with the right pot and share.

Button 4: seat 1 posts the small blind (1), seat 2 the big blind (2), seat 3 straddles (4). Seat 4,
first to act, raises to 8 (the least full raise after a straddle); seats 1 and 2 fold, seat 3
calls; checked down, seat 4's aces win the pot of 1 + 2 + 8 + 8 = 19.
"""

from __future__ import annotations

from pathlib import Path

from contract.models import parse_hand
from testing.chipset import chip_registry, write_chip_registry
from testing.mosquitto import Mosquitto
from testing.script import Table
from tests.engine.scenario import registry
from tests.service.conftest import StartService
from tests.service.support import probe, script, write_config

STAKES = '\n[stakes]\nstructure = "no_limit"\nsmall_blind = 1\nbig_blind = 2\n'
CHIPS = chip_registry(per_value=40, values=(25, 5, 1))
HAND = (
    "sit 1 2 3 4",
    "shuffle A",
    "button 4",
    "bet 1 1",
    "bet 2 2",
    "bet 3 4",  # the straddle
    "deal 1=2c 2=3d 3=Kh 4=Ah 1=7c 2=8d 3=Kc 4=As",
    "bet 4 8",
    "fold 1",
    "fold 2",
    "bet 3 4",
    "sweep",
    "burn",
    "flop =Qs =9h =4d",
    "burn",
    "turn =2s",
    "burn",
    "river =Jc",
    "show 3 4",
    "push 4 19",
    "collect",
    "clear",
)


async def test_a_straddled_hand_from_chips_raises_nothing_and_reports_the_straddle(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, mosquitto.url, table="st-1", seats=9, journal="")
    write_chip_registry(tmp_path / "chips.csv", CHIPS)
    text = config.read_text(encoding="utf-8") + STAKES + '\n[chips]\nregistry = "chips.csv"\n'
    config.write_text(text, encoding="utf-8")
    table = Table(registry(), table_seats=9, chips=CHIPS)
    async with probe(mosquitto.port, "st-1") as p:
        start_service(config)
        await p.status("online")
        await p.play(script(table, *HAND, "shuffle B", "button 1", "new_hand"))
        await p.wait_for(lambda m: m.topic == p.topics.hands)
    (published,) = [m for m in p.messages if m.topic == p.topics.hands]
    hand = parse_hand(published.topic, published.payload)
    assert [a.code for a in p.alerts() if a.status == "raised"] == []
    assert (hand.result, hand.button, hand.seats) == ("showdown", 4, [1, 2, 3, 4])
    posts = [(a.seat, a.amount) for a in hand.actions if a.action == "post"]
    assert posts == [(1, 1), (2, 2), (3, 4)]
    preflop = [
        (a.seat, a.action, a.amount) for a in hand.actions if a.street == "preflop" and a.action != "post"
    ]
    assert preflop == [(4, "raise", 8), (1, "fold", 0), (2, "fold", 0), (3, "call", 4)]
    (pot,) = hand.pots
    assert (pot.amount, pot.eligible, pot.winners) == (19, [3, 4], [4])
    assert [(s.seat, s.amount) for s in pot.shares] == [(4, 19)]
    assert [(a.seat, a.amount) for a in hand.awarded] == [(4, 19)]
