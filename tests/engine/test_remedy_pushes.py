"""A push found wrong is put right before the next hand (issue 21, section 4; docs/engine.md,
"Remedies followed to their end"): the next hand started with it still wrong is
``remedy_not_followed``, after the dealer's reaction time (``pot_awarded_wrong`` is critical),
under both profiles.

Seats 1, 2, 3 with the button on 1: seat 1's aces win the pot of 6; the dealer pushes it to seat 2.
"""

from __future__ import annotations

import pytest

from contract.models import Profile
from tests.engine.game import Played, game_settings, play

DEAL = "deal 2=Kd 3=7s 1=As 2=Kc 3=2h 1=Ah"
BOARD = ["burn =3c", "flop =9d =5h =Jc", "burn =4c", "turn =8s", "burn =6h", "river =Qd"]
WRONG_PUSH = [
    "bet 2 1",
    "bet 3 2",
    "new_hand",
    DEAL,
    "bet 1 2",
    "bet 2 1",
    "sweep",
    *BOARD,
    "show 2",
    "show 3",
    "show 1",
    "push 2 6",
]
PUT_RIGHT = ["chips bet:2 pot 6", "push 1 6"]
#: The next hand, the button on 2: seat 3 posts the small blind, seat 1 the big, then the deal.
NEXT_HAND = ["collect", "clear", "next_button", "shuffle B", "use B", "bet 3 1", "bet 1 2", "deal 3"]


def _play(profile: Profile, *steps: str) -> Played:
    return play([1, 2, 3], 1, "\n".join([*WRONG_PUSH, *steps]), settings=game_settings(profile=profile))


def _not_followed(played: Played) -> list[str]:
    return [a.message for a in played.alerts if a.code == "remedy_not_followed" and a.status == "raised"]


@pytest.mark.parametrize("profile", ["roberts", "tda"])
def test_a_wrong_push_put_right_before_the_next_hand(profile: Profile) -> None:
    played = _play(profile, *PUT_RIGHT, "wait 3", *NEXT_HAND)
    assert "pot_awarded_wrong" in played.codes("resolved")
    assert _not_followed(played) == []
    assert [(a.seat, a.amount) for a in played.hands[0].awarded] == [(1, 6)]


@pytest.mark.parametrize("profile", ["roberts", "tda"])
def test_the_next_hand_dealt_with_a_wrong_push_left_standing(profile: Profile) -> None:
    played = _play(profile, "wait 3", *NEXT_HAND)
    assert _not_followed(played) == [
        "The next hand was started before the last hand's pots were put right "
        "(a pot awarded to the wrong seat)."
    ]
    (nf,) = [a for a in played.alerts if a.code == "remedy_not_followed" and a.status == "raised"]
    assert nf.hand == 2  # it belongs to the hand dealt on, shown while it is played
    assert "remedy_not_followed" in played.active()


@pytest.mark.parametrize("profile", ["roberts", "tda"])
def test_the_next_hand_within_the_reaction_time_of_the_wrong_push(profile: Profile) -> None:
    """The next hand's first card within the reaction time of the critical alert is part of the
    same moment: not judged (docs/engine.md, "The dealer's reaction time")."""
    played = _play(profile, "new_hand")
    assert "pot_awarded_wrong" in played.codes()
    assert played.state is not None
    assert played.state.hand == 2  # the next hand did start
    assert _not_followed(played) == []
