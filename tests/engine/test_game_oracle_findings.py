"""What the PokerKit oracle of the whole engine found (tests/engine/test_engine_oracle.py), one
test each, through the pure core.

Seats 1, 2, 3 with the button on 1: seat 2 posts the small blind (1), seat 3 the big blind (2),
seat 1 acts first preflop; seat 2 first after the flop.
"""

from __future__ import annotations

from tests.engine.game import game_settings, play

# seat 1 As Ah, seat 2 Kd Kc, seat 3 7s 2h
DEAL = "deal 2=Kd 3=7s 1=As 2=Kc 3=2h 1=Ah"
BOARD = ["burn =3c", "flop =9d =5h =Jc", "burn =4c", "turn =8s", "burn =6h", "river =Qd"]
LIMPED = ["bet 2 1", "bet 3 2", "new_hand", DEAL, "bet 1 2", "bet 2 1", "sweep"]


def test_a_hand_mucked_untabled_at_showdown_is_no_longer_eligible() -> None:
    """Seat 3's beaten hand goes to the muck at showdown: the pot is contested by 1 and 2 only
    (PokerKit's pots; a mucked hand is dead). It was listed as eligible."""
    steps = [*LIMPED, *BOARD, "show 2", "fold 3", "show 1", "push 1 6", "collect", "clear"]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    hand = played.hands[-1]
    assert hand.result == "showdown"
    assert [(p.amount, p.eligible, p.winners) for p in hand.pots] == [(6, [1, 2], [1])]
    assert [s.seat for s in hand.showdown] == [2, 1]
    # the checks of the river are all in the actions, the muck is none
    assert [(a.street, a.seat, a.action) for a in hand.actions if a.street == "river"] == [
        ("river", 2, "check"),
        ("river", 3, "check"),
        ("river", 1, "check"),
    ]


def test_action_inputs_a_check_on_the_river_does_not_end_the_betting() -> None:
    """With action inputs every action is reported: the first river check left seat 1 to act;
    the showdown used to begin at once and the bet and call were lost."""
    steps = [
        "new_hand",
        "action 2 post 1",
        "action 3 post 2",
        DEAL,
        "action 1 call 2",
        "action 2 call 1",
        "action 3 check",
        *BOARD[:2],
        "action 2 check",
        "action 3 check",
        "action 1 check",
        *BOARD[2:4],
        "action 2 check",
        "action 3 fold",
        "fold 3",
        "action 1 check",
        *BOARD[4:],
        "action 2 check",
        "action 1 bet 10",
        "action 2 call 10",
        "show 1",
        "show 2",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(chips=False))
    assert played.codes() == []
    hand = played.hands[-1]
    river = [(a.seat, a.action, a.amount) for a in hand.actions if a.street == "river"]
    assert river == [(2, "check", 0), (1, "bet", 10), (2, "call", 10)]
    assert [(p.amount, p.winners) for p in hand.pots] == [(26, [1])]


def test_a_seat_all_in_does_not_close_the_betting_of_the_others() -> None:
    """Seat 1 is all in preflop (the dealer's key); seats 2 and 3 go on betting. A turn dealt
    before seat 3 answers the flop bet is premature: the key used to end every check."""
    steps = [
        "bet 2 1",
        "bet 3 2",
        "new_hand",
        DEAL,
        "bet 1 6",
        "all_in 1",
        "bet 2 5",
        "bet 3 4",
        "sweep",
        *BOARD[:2],
        "bet 2 10",
        *BOARD[2:4],
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == ["premature_turn"]


def test_the_uncalled_bet_handed_back_just_before_the_push_is_not_the_push() -> None:
    """Everyone folds to seat 2's flop bet: its 10 go back to the player, then the pot of 6 is
    pushed to it at once (no sweep in between). The 10 read nowhere were taken for chips still
    in the air, and the push's first chips for the uncalled bet: a wrong push was raised."""
    steps = [
        *LIMPED,
        *BOARD[:2],
        "bet 2 10",
        "fold 3",
        "fold 1",
        "return 2 10",
        "push 2 6",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    hand = played.hands[-1]
    assert hand.result == "uncontested"
    assert [(p.amount, p.winners) for p in hand.pots] == [(6, [2])]
    assert [(a.seat, a.amount) for a in hand.awarded] == [(2, 6)]


def test_a_fold_input_whose_cards_reach_the_muck_after_the_river_closed_claims_nothing() -> None:
    """The board plays for everyone. Seat 1 folds the river's last action by an input and then
    pushes its cards into the muck: the showdown has begun, but a fold is not a hand mucked at
    showdown (board_claim_forfeited was raised)."""
    deal = "deal 2=4d 3=6c 1=2c 2=5d 3=7c 1=3d"
    board = ["burn =3c", "flop =Ah =Kh =Qh", "burn =4c", "turn =Jh", "burn =6h", "river =Th"]
    steps = [
        "new_hand",
        "action 2 post 1",
        "action 3 post 2",
        deal,
        "action 1 call 2",
        "action 2 call 1",
        "action 3 check",
        *board[:2],
        "action 2 check",
        "action 3 check",
        "action 1 check",
        *board[2:4],
        "action 2 check",
        "action 3 check",
        "action 1 check",
        *board[4:],
        "action 2 bet 10",
        "action 3 call 10",
        "action 1 fold",
        "fold 1",
        "show 2",
        "show 3",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(chips=False))
    assert played.codes() == []
    hand = played.hands[-1]
    assert [(p.amount, p.winners) for p in hand.pots] == [(26, [2, 3])]


def test_stacks_read_before_the_deal_make_an_emptied_stack_an_all_in() -> None:
    """The reader covers the stacks: seat 1 pushes its whole stack in, no key pressed. The
    stacks lay there before the betting core began (at the deal) and were never told to it:
    the all in went unseen (the uncalled chips back to a stack were a take-back, the sweep
    premature)."""
    steps = [
        "chips - stack:1 50",
        "chips - stack:2 1",
        "chips - stack:2 49",
        "chips - stack:2 50",
        "chips - stack:3 2",
        "chips - stack:3 98",
        "chips stack:2 bet:2 1",
        "chips stack:3 bet:3 2",
        "new_hand",
        DEAL,
        "chips stack:1 bet:1 50",  # the stack emptied: all in
        "chips stack:2 bet:2 49",
        "fold 3",
        "sweep",
        "show 2",
        "show 1",
        *BOARD,
        "push 1 102",
        "collect",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert played.codes() == []
    hand = played.hands[-1]
    assert ("preflop", 1, "all_in", 50) in [(a.street, a.seat, a.action, a.amount) for a in hand.actions]
    assert [(p.amount, p.winners) for p in hand.pots] == [(102, [1])]
    assert [(a.seat, a.amount) for a in hand.awarded] == [(1, 102)]


def test_a_half_fold_is_judged_on_the_readers_next_event() -> None:
    """Only one of seat 3's cards reaches the muck; 3 s later the next card the reader sees
    shows it (the handling timers run on the reader's own events, so that another device's
    event applied before reader events sent again by the gap fill cannot judge a fold still on
    its way: tests/engine/test_sequences.py)."""
    steps = [*LIMPED[:4], "bet 1 2", "move seat:3#0 muck", "wait 3", "key ack"]
    assert "fold_incomplete" not in play([1, 2, 3], 1, "\n".join(steps)).codes()
    played = play([1, 2, 3], 1, "\n".join([*steps, "bet 2 1"]))  # a chip: the reader's
    assert "fold_incomplete" in played.codes()


def test_a_hole_card_off_the_table_is_judged_on_the_readers_next_event() -> None:
    steps = [*LIMPED, "take seat:1#0", "wait 11", *BOARD[:2]]
    played = play([1, 2, 3], 1, "\n".join(steps))
    assert "hole_card_off_table" in played.codes()


def test_action_inputs_a_fold_to_the_river_bet_wins_uncontested() -> None:
    """Heads-up by inputs, the river bet is folded to: the hand is won uncontested. The fold
    input ended the river's betting before the machine counted the seat out, so the showdown
    began (result ``showdown``)."""
    steps = [
        "new_hand",
        "action 2 post 1",
        "action 3 post 2",
        DEAL,
        "action 1 fold",
        "fold 1",
        "action 2 call 1",
        "action 3 check",
        *BOARD[:2],
        "action 2 check",
        "action 3 check",
        *BOARD[2:4],
        "action 2 check",
        "action 3 check",
        *BOARD[4:],
        "action 2 bet 4",
        "action 3 fold",
        "fold 3",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(chips=False))
    assert played.codes() == []
    hand = played.hands[-1]
    assert hand.result == "uncontested"
    assert [(p.amount, p.winners) for p in hand.pots] == [(4, [2])]
