"""The game through the pure core: chips read in the betting areas, the pot and the rake become
bets, rounds, pots and the award; card reads and chip moves only, no keypad.

Seats 1, 2, 3 with the button on 1: seat 2 posts the small blind (1), seat 3 the big blind (2),
seat 1 acts first preflop; seat 2 first after the flop.
"""

from __future__ import annotations

from engine.betting.terms import Stakes
from tests.engine.game import game_settings, play

# Named cards: seat 1 gets As Ah, seat 2 Kd Kc, seat 3 7s 2h (deal order 2 3 1 2 3 1).
DEAL = "deal 2=Kd 3=7s 1=As 2=Kc 3=2h 1=Ah"
BOARD = ["burn =3c", "flop =9d =5h =Jc", "burn =4c", "turn =8s", "burn =6h", "river =Qd"]


def test_a_hand_with_chips_to_showdown_and_the_push() -> None:
    steps = [
        "bet 2 1",
        "bet 3 2",
        "new_hand",
        DEAL,
        "bet 1 6",  # raise to 6
        "bet 2 5",  # call
        "fold 3",
        "sweep",
        BOARD[0],
        BOARD[1],
        "bet 2 10",
        "bet 1 10",
        "sweep",
        BOARD[2],
        BOARD[3],  # checked through (nothing moves)
        BOARD[4],
        BOARD[5],
        "show 2",
        "show 1",
        "push 1 34",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    assert len(played.hands) == 1
    hand = played.hands[0]
    assert hand.result == "showdown"
    assert [(p.amount, p.eligible, p.winners) for p in hand.pots] == [(34, [1, 2], [1])]
    assert [(s.seat, s.amount) for s in hand.pots[0].shares] == [(1, 34)]
    assert [(a.seat, a.amount) for a in hand.awarded] == [(1, 34)]
    assert [(s.seat, s.rank) for s in hand.showdown] == [(2, "pair"), (1, "pair")]
    assert hand.board == ["9d", "5h", "Jc", "8s", "Qd"]
    acts = [(a.street, a.seat, a.action, a.amount) for a in hand.actions]
    assert acts[:2] == [("preflop", 2, "post", 1), ("preflop", 3, "post", 2)]
    assert ("preflop", 1, "raise", 6) in acts
    assert ("preflop", 3, "fold", 0) in acts
    assert ("flop", 2, "bet", 10) in acts
    assert ("flop", 1, "call", 10) in acts


def test_premature_flop_is_seen_from_chips_without_any_key() -> None:
    steps = ["bet 2 1", "bet 3 2", "new_hand", DEAL, "bet 1 2", BOARD[0], BOARD[1]]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert "premature_flop" in played.codes()


def test_the_flop_after_the_round_is_not_premature() -> None:
    steps = ["bet 2 1", "bet 3 2", "new_hand", DEAL, "bet 1 2", "bet 2 1", "sweep", BOARD[0], BOARD[1]]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    assert played.state is not None
    assert [(p.amount, p.eligible) for p in played.state.pots] == [(6, [1, 2, 3])]
    assert played.state.to_act == 2


def test_state_shows_bets_and_who_acts() -> None:
    played = play([1, 2, 3], 1, "\n".join(["bet 2 1", "bet 3 2", "new_hand", DEAL]))
    state = played.state
    assert state is not None
    assert state.to_act == 1
    assert sorted((b.seat, b.amount) for b in state.bets) == [(2, 1), (3, 2)]


def test_uncontested_hand_uncalled_chips_returned() -> None:
    steps = [
        "bet 2 1",
        "bet 3 2",
        "new_hand",
        DEAL,
        "bet 1 7",
        "fold 2",
        "fold 3",
        "return 1 5",  # the uncalled part goes back
        "sweep",
        "push 1 5",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    hand = played.hands[-1]
    assert hand.result == "uncontested"
    assert [(p.amount, p.winners) for p in hand.pots] == [(5, [1])]
    assert [(a.seat, a.amount) for a in hand.awarded] == [(1, 5)]
    assert hand.showdown == []


def test_wrong_push_raised_then_put_right_resolves() -> None:
    steps = [
        "bet 2 1",
        "bet 3 2",
        "new_hand",
        DEAL,
        "bet 1 2",
        "bet 2 1",
        "# the big blind checks: nothing moves",
        "sweep",
        BOARD[0],
        BOARD[1],
        BOARD[2],
        BOARD[3],
        BOARD[4],
        BOARD[5],
        "show 2",
        "show 3",
        "show 1",
        "push 2 6",  # seat 1 (aces) won
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert "pot_awarded_wrong" in played.codes()
    assert "pot_awarded_wrong" in played.active()
    steps2 = "chips bet:2 pot 6\npush 1 6\ncollect\nclear"
    # continue the same table and engine: rebuild by playing everything again
    played = play([1, 2, 3], 1, "\n".join([*steps, *steps2.splitlines()]))
    assert "pot_awarded_wrong" in played.codes("resolved")
    assert played.hands
    assert [(a.seat, a.amount) for a in played.hands[-1].awarded] == [(1, 6)]


def test_blind_wrong_amount() -> None:
    played = play([1, 2, 3], 1, "\n".join(["bet 2 1", "bet 3 1", "new_hand", DEAL]))
    assert "blind_wrong_amount" in played.codes()


def test_action_inputs_without_chips() -> None:
    steps = [
        "new_hand",
        "action 2 post 1",
        "action 3 post 2",
        DEAL,
        "action 1 raise 6",
        "action 2 call 5",
        "action 3 fold",
        BOARD[0],
        BOARD[1],
        "action 2 check",
        "action 1 check",
        BOARD[2],
        BOARD[3],
        "action 2 check",
        "action 1 check",
        BOARD[4],
        BOARD[5],
        "action 2 check",
        "action 1 check",
        "show 2",
        "show 1",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(chips=False))
    assert played.codes() == []
    hand = played.hands[-1]
    assert hand.result == "showdown"
    assert [(p.amount, p.winners) for p in hand.pots] == [(14, [1])]


def test_rake_and_fixed_limit_settings_are_followed() -> None:
    stakes = Stakes(structure="no_limit", small_blind=1, big_blind=2, rake_percent=10, rake_cap=5)
    steps = [
        "bet 2 1",
        "bet 3 2",
        "new_hand",
        DEAL,
        "bet 1 20",
        "bet 2 19",
        "fold 3",
        "sweep",
        BOARD[0],
        BOARD[1],
        BOARD[2],
        BOARD[3],
        BOARD[4],
        BOARD[5],
        "show 2",
        "show 1",
        "rake 4",
        "push 1 38",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(stakes))
    assert played.codes() == []
    hand = played.hands[-1]
    assert hand.rake == 4
    assert [(p.amount, p.winners) for p in hand.pots] == [(38, [1])]


def _showdown_with_wrong_push() -> list[str]:
    return [
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
        "push 2 6",  # seat 1 (aces) won; never put right
    ]


def test_a_wrong_push_left_standing_ends_at_the_next_hands_blinds() -> None:
    steps = [*_showdown_with_wrong_push(), "clear", "collect", "bet 3 1", "bet 1 2"]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert "pot_awarded_wrong" in played.codes()
    assert len(played.hands) == 1
    assert [(a.seat, a.amount) for a in played.hands[0].awarded] == [(2, 6)]
    assert [(p.amount, p.winners) for p in played.hands[0].pots] == [(6, [1])]


def test_chips_pushed_and_collected_are_bet_again_in_a_later_hand() -> None:
    first = [
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
        "push 1 6",
        "wait 4",
        "collect",  # the winner takes his chips off the table
        "clear",
    ]
    second = ["next_button", "shuffle B", "use B", "bet 3 1", "bet 1 2", "new_hand", "deal all", "bet 2 2"]
    played = play([1, 2, 3], 1, "\n".join([*first, *second]))
    assert played.codes() == []
    assert played.state is not None
    assert sorted((b.seat, b.amount) for b in played.state.bets) == [(1, 2), (2, 2), (3, 1)]
