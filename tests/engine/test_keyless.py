"""A table without a keypad (issue 21, section 3): an action feed and card reads, never a key.
Posts and actions that arrive between the previous hand's end and the deal belong to the coming
hand (contract: keys are optional), which the first hole card starts.

Seats 1, 2, 3 with the button on 1: seat 2 posts the small blind (1), seat 3 the big blind (2).
"""

from __future__ import annotations

from engine.betting.terms import Stakes
from tests.engine.game import Played, game_settings, play

DEAL = "deal 2=Kd 3=7s 1=As 2=Kc 3=2h 1=Ah"
#: The second hand, the button on 2: seat 3 small blind, seat 1 big blind (deal order 3 1 2).
DEAL_2 = "deal 3=Qs 1=Jd 2=Tc 3=Qh 1=Jc 2=9d"
ANTES = Stakes(small_blind=1, big_blind=2, ante=1)


def _posts(played: Played, hand: int = 0) -> list[tuple[int, int]]:
    return [(a.seat, a.amount) for a in played.hands[hand].actions if a.action == "post"]


def test_posts_before_the_first_card_belong_to_the_hand_it_starts() -> None:
    steps = [
        "action 2 post 1",
        "action 3 post 2",
        DEAL,
        "action 1 raise 6",
        "action 2 fold",
        "action 3 fold",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(chips=False))
    assert played.codes() == []
    (hand,) = played.hands
    assert _posts(played) == [(2, 1), (3, 2)]
    assert [(p.amount, p.winners) for p in hand.pots] == [(5, [1])]


def test_antes_blinds_and_a_straddle_without_a_key() -> None:
    steps = [
        "action 1 post 1",
        "action 2 post 1",
        "action 3 post 1",  # antes
        "action 2 post 1",
        "action 3 post 2",  # blinds
        "action 1 post 4",  # the button straddles (three players: the straddle is the button's)
        DEAL,
        "action 2 fold",
        "action 3 fold",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(ANTES, chips=False))
    assert played.codes() == []
    (hand,) = played.hands
    assert sorted(_posts(played)) == [(1, 1), (1, 4), (2, 1), (2, 1), (3, 1), (3, 2)]
    # the antes, both blinds and the straddle as far as the big blind called it
    assert [(p.amount, p.winners) for p in hand.pots] == [(8, [1])]


def test_the_next_hands_posts_while_the_last_hands_cards_are_still_out() -> None:
    """The first hand is over (one seat left) but its cards still lie on the table when the
    second hand's blinds are posted: they are the second hand's, not lost and not the first's."""
    first = ["action 2 post 1", "action 3 post 2", DEAL, "action 1 fold", "action 2 fold"]
    second = [
        "action 3 post 1",
        "action 1 post 2",
        "clear",
        "next_button",
        "shuffle B",
        "use B",
        DEAL_2,
        "action 2 call 2",
        "action 3 call 1",
        "action 1 check",
        "burn",
        "flop",
        "action 3 check",
        "action 1 check",
        "action 2 check",
        "burn",
        "turn",
        "action 3 check",
        "action 1 check",
        "action 2 check",
        "burn",
        "river",
        "action 3 check",
        "action 1 check",
        "action 2 check",
        "show 3 1 2",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join([*first, *second]), settings=game_settings(chips=False))
    assert played.codes() == []
    assert [h.hand for h in played.hands] == [1, 2]
    assert _posts(played, 0) == [(2, 1), (3, 2)]
    # the big blind's uncalled chip went back
    assert [(p.amount, p.winners) for p in played.hands[0].pots] == [(2, [3])]
    assert sorted(_posts(played, 1)) == [(1, 2), (3, 1)]
    assert played.hands[1].button == 2
    assert played.hands[1].pots[0].amount == 6


def test_posts_after_a_misdeal_belong_to_the_redeal() -> None:
    steps = [
        "action 2 post 1",
        "action 3 post 2",
        "deal 3",  # the first card to the big blind: a misdeal (wrong first seat)
        "take seat:3 all",
        "action 2 post 1",
        "action 3 post 2",  # the feed posts the redeal's blinds
        "shuffle B",
        "use B",
        DEAL,
        "action 1 fold",
        "action 2 fold",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(chips=False))
    assert played.codes() == ["misdeal_wrong_first_seat"]
    assert [h.result for h in played.hands] == ["misdeal", "uncontested"]
    assert _posts(played, 1) == [(2, 1), (3, 2)]
    assert [(p.amount, p.winners) for p in played.hands[1].pots] == [(2, [3])]


def test_more_actions_between_hands_than_a_hand_has_are_reported() -> None:
    from engine.dispatcher import COMING_LIMIT

    steps = ["action 2 post 1"] * (COMING_LIMIT + 2)
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(chips=False))
    assert played.codes() == ["bad_payload"]  # once, not once per action dropped
    assert f"only the latest {COMING_LIMIT}" in played.alerts[0].message
