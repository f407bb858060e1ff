"""The scripted hands of every code of "Chips, pots and showdown" (and ``unknown_chip``): the
mistake, the dealer's remedy and a game that goes on without it (tests/engine/test_game_codes.py;
tests/engine/test_scenarios.py holds the catalogue to them).

Seats 1, 2, 3, button on 1: seat 2 posts the small blind (1), seat 3 the big blind (2); seat 1
acts first preflop, seat 2 first after the flop. Card reads and chip moves only, no keypad (but
the ``all_in`` key where a stack is not read).
"""

from __future__ import annotations

from dataclasses import dataclass

from contract.models import Profile
from engine.betting.terms import Stakes
from tests.engine.game import Played, game_settings, play

# Seat 1 As Ah, seat 2 Kd Kc, seat 3 7s 2h (deal order 2 3 1 2 3 1).
DEAL = "deal 2=Kd 3=7s 1=As 2=Kc 3=2h 1=Ah"
BOARD = ("burn =3c", "flop =9d =5h =Jc", "burn =4c", "turn =8s", "burn =6h", "river =Qd")
BLINDS = ("bet 2 1", "bet 3 2", "new_hand")
DEALT = (*BLINDS, DEAL)
#: Preflop called around (the big blind checks), swept: the flop's betting is next.
LIMPED = (*DEALT, "bet 1 2", "bet 2 1", "sweep")
ON_FLOP = (*LIMPED, *BOARD[:2])
ON_RIVER = (*LIMPED, *BOARD)
#: Seat 1 raises to 20, seat 2 calls, seat 3 folds: a pot of 42 to the river, shown.
RAISED_TO_SHOWDOWN = (*DEALT, "bet 1 20", "bet 2 19", "fold 3", "sweep", *BOARD, "show 2", "show 1")
#: Seats 1 and 3 play the board's straight (9 to K) and split; seat 2 folds its small blind.
SPLIT_DEAL = "deal 2=4h 3=7s 1=2c 2=5c 3=2h 1=3d"
SPLIT_BOARD = ("burn", "flop =9d =Th =Jc", "burn", "turn =Qs", "burn", "river =Ks")
#: A pot of 21 (seat 1 to 10, seat 2 folds 1, seat 3 calls): 11 for seat 1 (shown first), 10.
SPLIT = (*BLINDS, SPLIT_DEAL, "bet 1 10", "fold 2", "bet 3 8", "sweep", *SPLIT_BOARD, "show 1", "show 3")
POT_LIMIT = Stakes(structure="pot_limit", small_blind=1, big_blind=2)
RAKED = Stakes(small_blind=1, big_blind=2, rake_percent=10, rake_cap=5)
FOREIGN = "E0FFFF0000000001"


@dataclass(frozen=True)
class Case:
    """One code: the steps that make the mistake, the remedy, and a game that goes on without."""

    name: str
    code: str
    seat: int | None
    mistake: tuple[str, ...]
    followed: tuple[str, ...] | None  # None: a note with nothing to put right
    not_followed: tuple[str, ...]
    #: other codes the game raises when it goes on without the remedy (a second mistake)
    also: tuple[str, ...] = ()
    stakes: Stakes | None = None
    odd_chip: str = "first_shown"

    def play(self, steps: tuple[str, ...], profile: Profile) -> Played:
        settings = game_settings(self.stakes, profile=profile, odd_chip=self.odd_chip)
        return play([1, 2, 3], 1, "\n".join(steps), settings=settings)


CASES = (
    Case(
        "big blind short",
        "blind_wrong_amount",
        3,
        (*BLINDS[:1], "bet 3 1", "new_hand", DEAL),
        ("bet 3 1",),  # completed before seat 3's turn: it becomes its post
        ("fold 1", "bet 2 1"),
    ),
    Case(
        "seat 2 calls before seat 1 acted",
        "action_out_of_turn",
        2,
        (*DEALT, "bet 2 1"),
        ("bet 1 2", "sweep"),  # the skipped seat acts; seat 2's call stands
        ("wait 5", "bet 2 4"),
    ),
    Case(
        "flop bet of 1",
        "bet_below_minimum",
        2,
        (*ON_FLOP, "bet 2 1", "fold 3"),
        ("bet 2 1", "bet 1 2"),  # completed to the big blind
        ("bet 1 1",),
    ),
    Case(
        "raise of 2 over a raise of 4",
        "raise_below_minimum",
        2,
        (*DEALT, "bet 1 6", "bet 2 7", "fold 3"),
        ("bet 2 2",),  # 50 % or more of a raise: made a full raise, to 10
        ("bet 1 2",),
    ),
    Case(
        "raise of 1 over a raise of 4",
        "raise_below_minimum",
        2,
        (*DEALT, "bet 1 6", "bet 2 6", "fold 3"),
        ("return 2 1", "sweep"),  # less than half a raise: made a call of 6
        ("bet 1 1", "sweep"),
    ),
    Case(
        "pot limit bet over the pot",
        "bet_over_limit",
        2,
        (*ON_FLOP, "bet 2 11", "fold 3"),
        ("return 2 5", "bet 1 6"),  # reduced to the pot, 6
        ("bet 1 11",),
        stakes=POT_LIMIT,
    ),
    Case(
        "chips taken back",
        "chips_taken_back",
        1,
        (*DEALT, "bet 1 6", "return 1 5", "wait 4", "dup"),  # gone after 3 s
        ("bet 1 5",),  # put back
        ("fold 2", "bet 3 4"),
    ),
    Case(
        "chips on a vacant seat",
        "chips_on_vacant_seat",
        5,
        (*DEALT, "bet 5 5"),
        ("return 5 5", "bet 1 2"),  # removed
        ("bet 1 2", "bet 2 1"),
    ),
    Case(
        "swept before the big blind acted",
        "premature_sweep",
        None,
        (*DEALT, "bet 1 6", "bet 2 5", "sweep"),
        ("chips pot bet:1 6", "chips pot bet:2 6", "chips pot bet:3 2", "bet 3 4", "sweep"),
        BOARD[:2],
        also=("premature_flop",),
    ),
    Case(
        "uncalled part swept into the pot",
        "uncalled_bet_not_returned",
        2,
        (*ON_RIVER, "bet 2 20", "bet 3 10", "all_in 3", "fold 1", "sweep"),
        ("chips pot bet:2 10", "return 2 10"),  # back to its owner
        ("show 2", "show 3"),
    ),
    Case(
        "pot pushed to the loser",
        "pot_awarded_wrong",
        2,
        (*ON_RIVER, "show 2", "show 3", "show 1", "push 2 6"),
        ("chips bet:2 pot 6", "push 1 6", "collect", "clear"),
        ("collect", "clear"),
    ),
    Case(
        "split 16 and 5 instead of 11 and 10",
        "split_wrong",
        None,
        (*SPLIT, "push 1 16", "push 3 5"),
        ("chips bet:1 bet:3 5", "collect", "clear"),
        ("collect", "clear"),
    ),
    Case(
        "odd chip to the second shown",
        "odd_chip_wrong",
        1,
        (*SPLIT, "push 1 10", "push 3 11"),
        ("chips bet:3 bet:1 1", "collect", "clear"),
        ("collect", "clear"),
    ),
    Case(
        "odd chip not left of the button",
        "odd_chip_wrong",
        3,
        (*SPLIT, "push 1 11", "push 3 10"),
        ("chips bet:1 bet:3 1", "collect", "clear"),
        ("collect", "clear"),
        odd_chip="left_of_button",
    ),
    Case(
        "rake too small",
        "rake_wrong",
        None,
        (*RAISED_TO_SHOWDOWN, "rake 3", "push 1 39"),
        ("chips bet:1 rake 1", "collect", "clear"),  # 10 % of 42 is 4
        ("collect", "clear"),
        stakes=RAKED,
    ),
    Case(
        "rake too big",
        "rake_wrong",
        None,
        (*RAISED_TO_SHOWDOWN, "rake 5", "push 1 37"),
        ("chips rake bet:1 5", "chips bet:1 rake 4", "collect", "clear"),
        ("collect", "clear"),
        stakes=RAKED,
    ),
    Case(
        "one card of a fold left at the seat",
        "fold_incomplete",
        3,
        (*ON_FLOP, "bet 2 4", "move seat:3#0 muck", "wait 3", "bet 1 4"),  # judged after the
        # dealer's reaction time
        ("move seat:3 muck",),  # retrieved into the muck
        ("sweep", *BOARD[2:4]),
        also=("remedy_not_followed",),
    ),  # the turn dealt with it left (test_remedy_chips.py)
    Case(
        "a hole card off the table",
        "hole_card_off_table",
        1,
        (*DEALT, "take seat:1#0", "wait 11", "bet 1 2"),
        ("again seat:1",),  # back on the table
        ("bet 2 1", "sweep", *BOARD[:2]),
    ),
    Case(
        "burn card face up",
        "burn_face_up",
        None,
        (*LIMPED, "burn =3c up"),
        None,  # it stays the burn: nothing to put right
        (BOARD[1], "bet 2 2", "bet 3 2", "bet 1 2", "sweep", *BOARD[2:4]),
    ),
    Case(
        "a foreign tag in a betting area",
        "unknown_chip",
        2,
        (*DEALT, f"tag bet:2 {FOREIGN} on"),
        (f"tag bet:2 {FOREIGN} off",),  # removed
        # the flop dealt with it left: not judged before the next hand (test_remedy_chips.py)
        ("bet 1 2", "bet 2 1", "sweep", *BOARD[:2]),
    ),
)
