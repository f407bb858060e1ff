"""Televised hands (tests/acceptance/hands.py) through ``tablectl run`` and mosquitto, judged on
the ``hands`` message and the alerts, as an outside tester would: hand-written contract JSON
under the tester's own device ids, the tester's own chip registry.

Every hand runs against its own service and table id. A clean hand raises nothing of severity
warning or critical; a hand with a dealer's mistake raises exactly that alert (and resolves it
when the dealer follows the remedy).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from testing.mosquitto import Mosquitto
from tests.acceptance.hands import (
    BLUFF_OF_THE_CENTURY,
    CHOPPED_TRIPS,
    IVEY_DWAN,
    IVEY_DWAN_ACTIONS,
    IVEY_DWAN_RAKED,
    MISTAKES,
    MONEYMAKER_FARHA_FINAL,
    POLLAK_TRIPLES_UP,
    SESSION,
    STYLES,
    TELEVISED,
    THREE_WAY_ALL_IN,
    THREE_WAY_ALL_IN_NO_KEYS,
)
from tests.acceptance.televised import Hand, Played, play_all

HANDS = [*TELEVISED, *MISTAKES, *(variant for _, variant in STYLES)]
TABLES = {f"tv{i}": h for i, h in enumerate(HANDS)}
BY_NAME = {h.name: t for t, h in TABLES.items()}

Pot = tuple[int, list[int], list[int], list[tuple[int, int]]]


def pots(hand: dict[str, Any]) -> list[Pot]:
    return [
        (p["amount"], p["eligible"], p["winners"], [(s["seat"], s["amount"]) for s in p["shares"]])
        for p in hand["pots"]
    ]


def awarded(hand: dict[str, Any]) -> list[tuple[int, int]]:
    return [(a["seat"], a["amount"]) for a in hand["awarded"]]


def shown(hand: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [(s["seat"], " ".join(s["cards"]), s["rank"]) for s in hand["showdown"]]


def actions(hand: dict[str, Any]) -> list[str]:
    return [f"{a['street']} {a['seat']} {a['action']} {a['amount']}" for a in hand["actions"]]


@pytest.fixture(scope="module")
def played(mosquitto_session: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Played]:
    return play_all(TABLES, mosquitto_session.port, tmp_path_factory.mktemp("televised"))


def one_hand(played: dict[str, Played], hand: Hand) -> dict[str, Any]:
    out = played[BY_NAME[hand.name]]
    assert len(out.hands) == 1, f"service log:\n{out.log[-3000:]}"
    return out.hands[0]


@pytest.mark.parametrize("table", TABLES, ids=[h.name for h in TABLES.values()])
def test_the_alerts_are_exactly_those_of_the_mistake(table: str, played: dict[str, Played]) -> None:
    hand, out = TABLES[table], played[table]
    assert out.lines() == hand.expect, f"service log:\n{out.log[-3000:]}"
    if not hand.expect:
        assert not [a for a in out.alerts if a["severity"] != "info"]
    assert len(out.hands) == hand.hands


def test_the_bluff_of_the_century_uncontested_and_the_all_in_returned(played: dict[str, Played]) -> None:
    hand = one_hand(played, BLUFF_OF_THE_CENTURY)
    assert (hand["result"], hand["button"], hand["seats"]) == ("uncontested", 1, [1, 2])
    assert hand["board"] == ["9s", "2d", "6s", "8s", "3h"]
    assert pots(hand) == [(1_810_000, [1], [1], [(1, 1_810_000)])]
    assert awarded(hand) == [(1, 1_810_000)]
    assert (hand["showdown"], hand["rake"]) == ([], 0)
    assert actions(hand) == [
        "preflop 2 post 5000",
        "preflop 1 post 5000",
        "preflop 1 post 20000",
        "preflop 2 post 40000",
        "preflop 1 raise 80000",
        "preflop 2 call 60000",
        "flop 2 check 0",
        "flop 1 check 0",
        "turn 2 bet 300000",
        "turn 1 raise 800000",
        "turn 2 call 500000",
        "river 2 check 0",
        "river 1 bet 3715000",
        "river 2 fold 0",
    ]
    # Farha's folded Qs 9h appear nowhere.
    text = json.dumps(hand)
    assert '"Qs"' not in text
    assert '"9h"' not in text


def test_the_final_hand_all_in_on_the_flop_read_from_cards_and_chips_only(
    played: dict[str, Played],
) -> None:
    hand = one_hand(played, MONEYMAKER_FARHA_FINAL)
    assert (hand["result"], hand["button"], hand["seats"]) == ("showdown", 2, [1, 2])
    assert hand["board"] == ["Jd", "5s", "4c", "8d", "5h"]
    assert pots(hand) == [(3_450_000, [1, 2], [1], [(1, 3_450_000)])]
    assert awarded(hand) == [(1, 3_450_000)]
    assert shown(hand) == [(2, "Jh Td", "two_pair"), (1, "5d 4s", "full_house")]
    assert actions(hand)[4:] == [
        "preflop 2 raise 80000",
        "preflop 1 call 60000",
        "flop 1 check 0",
        "flop 2 bet 175000",
        "flop 1 raise 500000",
        "flop 2 all_in 1445000",
        "flop 1 call 1120000",  # and no betting on the run-out
    ]


@pytest.mark.parametrize("hand", [IVEY_DWAN, IVEY_DWAN_ACTIONS], ids=["chips", "action inputs"])
def test_ivey_dwan_the_straight_over_the_wheel_and_the_uncalled_part(
    hand: Hand, played: dict[str, Played]
) -> None:
    result = one_hand(played, hand)
    assert (result["result"], result["button"], result["seats"]) == ("showdown", 1, [1, 2, 3])
    assert result["board"] == ["Jc", "3d", "5c", "4h", "Jh"]
    # 538,500 from each (Ivey's 585,000 above it back to him) and Antonius' big blind
    assert pots(result) == [(1_078_000, [1, 2], [1], [(1, 1_078_000)])]
    assert shown(result) == [(2, "Ac 2d", "straight"), (1, "7h 6h", "straight")]
    assert awarded(result) == ([(1, 1_078_000)] if hand.chips else [])
    assert actions(result)[:6] == [
        "preflop 2 post 500",
        "preflop 3 post 1000",
        "preflop 1 raise 6000",
        "preflop 2 raise 22500",
        "preflop 3 fold 0",
        "preflop 1 call 17000",
    ]
    assert actions(result)[-4:-2] == ["turn 2 bet 90000", "turn 1 raise 232600"]
    assert actions(result)[-1] == "turn 1 all_in 247900"
    assert "Qd" not in json.dumps(result)  # Antonius folded


def test_the_rake_dropped_before_the_push(played: dict[str, Played]) -> None:
    hand = one_hand(played, IVEY_DWAN_RAKED)
    assert hand["rake"] == 10_000
    assert pots(hand) == [(1_068_000, [1, 2], [1], [(1, 1_068_000)])]
    assert awarded(hand) == [(1, 1_068_000)]
    raked = next(h for h in MISTAKES if h.name.startswith("rake of"))
    assert (one_hand(played, raked)["rake"], awarded(one_hand(played, raked))) == (10_000, [(1, 1_068_000)])


@pytest.mark.parametrize("hand", [THREE_WAY_ALL_IN, THREE_WAY_ALL_IN_NO_KEYS], ids=["keys", "no keys"])
def test_the_three_way_all_in_main_pot_and_side_pot(hand: Hand, played: dict[str, Played]) -> None:
    result = one_hand(played, hand)
    assert (result["result"], result["button"], result["seats"]) == ("showdown", 2, [1, 2, 3])
    assert pots(result) == [
        (105_600_000, [1, 2, 3], [3], [(3, 105_600_000)]),
        (21_200_000, [1, 3], [3], [(3, 21_200_000)]),
    ]
    assert awarded(result) == [(3, 126_800_000)]
    assert shown(result) == [(2, "Qc Td", "high_card"), (3, "Kc 9d", "pair"), (1, "Ah Qs", "high_card")]
    assert actions(result) == [
        "preflop 3 post 400000",
        "preflop 1 post 400000",
        "preflop 2 post 400000",
        "preflop 3 post 1200000",
        "preflop 1 post 2400000",
        "preflop 2 all_in 34800000",
        "preflop 3 all_in 44200000",
        "preflop 1 call 43000000",
    ]


def test_an_all_in_called_and_raised_over_the_caller_folds_the_excess_back(
    played: dict[str, Played],
) -> None:
    hand = one_hand(played, POLLAK_TRIPLES_UP)
    assert (hand["result"], hand["button"], hand["board"]) == ("showdown", 2, ["Qd", "Js", "7c", "6d", "7h"])
    # 15,300,000 from Pollak and Blumstein each, Ott's 15,300,000 dead (85,000,000 back to Blumstein)
    assert pots(hand) == [(45_900_000, [1, 2], [2], [(2, 45_900_000)])]
    assert awarded(hand) == [(2, 45_900_000)]
    assert shown(hand) == [(2, "Jc 4c", "two_pair"), (1, "Kc Tc", "pair")]
    assert actions(hand)[5:] == [
        "preflop 2 all_in 15000000",
        "preflop 3 call 14000000",
        "preflop 1 raise 98000000",
        "preflop 3 fold 0",
    ]
    assert "Ah" not in json.dumps(hand)  # Ott's folded hand


def test_the_chopped_trips_split_in_pot_limit(played: dict[str, Played]) -> None:
    hand = one_hand(played, CHOPPED_TRIPS)
    assert (hand["result"], hand["button"], hand["seats"]) == ("showdown", 4, [4, 7])
    assert pots(hand) == [(1_800_000, [4, 7], [4, 7], [(4, 900_000), (7, 900_000)])]
    assert awarded(hand) == [(4, 900_000), (7, 900_000)]
    # Spegal re-raised last on the river: he shows first
    assert shown(hand) == [(7, "8d 4d", "three_of_a_kind"), (4, "8h 4s", "three_of_a_kind")]
    assert actions(hand)[-4:] == [
        "river 7 check 0",
        "river 4 bet 180000",
        "river 7 raise 780000",
        "river 4 call 600000",
    ]


def test_a_mistake_put_right_leaves_the_hand_as_if_pushed_right(played: dict[str, Played]) -> None:
    side_pot = next(h for h in MISTAKES if h.name.startswith("side pot"))
    assert awarded(one_hand(played, side_pot)) == [(3, 126_800_000)]
    uncalled = next(h for h in MISTAKES if h.name.startswith("uncalled"))
    assert pots(one_hand(played, uncalled)) == [(1_078_000, [1, 2], [1], [(1, 1_078_000)])]


@pytest.mark.parametrize(("base", "variant"), STYLES, ids=[v.name for _, v in STYLES])
def test_the_same_hand_read_in_another_style_has_the_same_result(
    base: Hand, variant: Hand, played: dict[str, Played]
) -> None:
    expected, result = one_hand(played, base), one_hand(played, variant)
    for key in ("result", "button", "seats", "board", "pots", "rake", "awarded", "showdown", "actions"):
        assert result[key] == expected[key], key


def test_two_hands_at_one_table_each_with_its_result(played: dict[str, Played]) -> None:
    out = played[BY_NAME[SESSION.name]]
    first, second = out.hands
    assert (first["hand"], second["hand"]) == (1, 2)
    for key in ("result", "button", "pots", "awarded", "actions"):
        assert first[key] == one_hand(played, BLUFF_OF_THE_CENTURY)[key], key
        assert second[key] == one_hand(played, MONEYMAKER_FARHA_FINAL)[key], key
