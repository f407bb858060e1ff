"""Televised hands whose cards, actions and results are public record, as a table would read
them: the real stakes, blinds and antes as chips, pushes as chips. Stacks the reports do not
give are said where they are assumed (they only decide the all-in amounts).

Seat numbers are the table's; deals go clockwise from the first seat left of the button
(heads-up: the button posts the small blind and acts first before the flop).
"""

from __future__ import annotations

from tests.acceptance.televised import Hand

#: WSOP 2003 main event, heads-up, "the bluff of the century": blinds 20,000/40,000, ante 5,000;
#: Moneymaker (seat 1, button) 4,620,000, Farha (seat 2) 3,770,000. Moneymaker raises to 100,000,
#: Farha calls; 9s 2d 6s checked; 8s: Farha bets 300,000, Moneymaker raises to 800,000, Farha
#: calls; 3h: Farha checks, Moneymaker moves all in (3,715,000), Farha folds Qs 9h.
BLUFF_OF_THE_CENTURY = Hand(
    "2003 wsop moneymaker farha bluff",
    """
    seats 1 2
    button 1
    shuffled A
    bet 1 5000          # antes
    bet 2 5000
    bet 1 20000         # the button's small blind
    bet 2 40000
    key new_hand
    deal 2=Qs 1=Ks 2=9h 1=7h
    bet 1 80000         # raises to 100,000
    bet 2 60000         # calls
    sweep
    burn
    board 9s 2d 6s
    burn                # checked through: nothing moves
    board 8s
    bet 2 300000
    bet 1 800000        # raises to 800,000
    bet 2 500000        # calls
    sweep
    burn
    board 3h
    pause 4             # Farha checks
    bet 1 3715000       # all in
    pause 30            # the famous tank
    fold 2
    return 1 3715000    # the uncalled bet back to Moneymaker
    push 1 all
    collect
    clear
    """,
    small_blind=20_000,
    big_blind=40_000,
    ante=5_000,
)

#: WSOP 2003 main event, the final hand: Farha (seat 2, button) Jh Td, Moneymaker (seat 1) 5d 4s;
#: flop Jd 5s 4c (one report has Js 4s 5d, which cannot be with Moneymaker's 5d): Moneymaker
#: checks, Farha bets, Moneymaker raises, Farha moves all in, Moneymaker calls; 8d, 5h:
#: Moneymaker's full house. Blinds 20,000/40,000, ante 5,000. The bet sizes and Farha's stack
#: (1,725,000 before the ante) are assumed. No shuffler, no sensor board, no keypad: the card
#: reader and the chip reader only; the hands tabled after the flop tell the all in.
MONEYMAKER_FARHA_FINAL = Hand(
    "2003 wsop moneymaker farha final hand",
    """
    bet 1 5000
    bet 2 5000
    bet 2 20000         # Farha, the button, small blind
    bet 1 40000
    deal 1=5d 2=Jh 1=4s 2=Td
    bet 2 80000         # Farha raises to 100,000
    bet 1 60000         # Moneymaker calls
    sweep
    burn
    board Jd 5s 4c
    pause 3             # Moneymaker checks
    bet 2 175000
    bet 1 500000        # raises to 500,000
    bet 2 1445000       # Farha all in: 1,620,000 on the flop
    bet 1 1120000       # Moneymaker calls
    sweep
    show 2 1
    burn
    board 8d
    burn
    board 5h
    push 1 all
    collect
    clear
    """,
    small_blind=20_000,
    big_blind=40_000,
    ante=5_000,
    keypad="no-keypad",
    sensors="no-sensors",
)

#: Full Tilt Million Dollar Cash Game (season 4): Dwan (seat 1, button) 7h 6h with 538,500;
#: Ivey (seat 2, small blind) Ac 2d with over 1.1 million (taken as 1,123,500); Antonius (seat 3,
#: big blind) folds. Blinds 500/1,000 (assumed). Dwan raises to 6,000, Ivey to 23,000, Dwan calls;
#: Jc 3d 5c: Ivey bets 35,000, Dwan calls; 4h: Ivey bets 90,000, Dwan raises to 232,600, Ivey
#: moves all in, Dwan calls all in; Jh. Dwan's seven-high straight beats Ivey's wheel.
IVEY_DWAN = Hand(
    "full tilt million dollar cash game ivey dwan",
    """
    seats 1 2 3
    button 1
    shuffled B
    deck B
    bet 2 500
    bet 3 1000
    key new_hand
    deal 2=Ac 3=Qd 1=7h 2=2d 3=8c 1=6h
    bet 1 6000
    bet 2 22500         # Ivey re-raises to 23,000
    fold 3
    bet 1 17000         # Dwan calls
    sweep
    burn
    board Jc 3d 5c
    bet 2 35000
    bet 1 35000
    sweep
    burn
    board 4h
    bet 2 90000
    bet 1 232600        # raises to 232,600
    bet 2 975500        # Ivey all in: 1,065,500 on the turn
    bet 1 247900        # Dwan calls all in: 480,500 on the turn
    key all_in 1
    return 2 585000     # Ivey's uncalled chips
    sweep
    show 2 1
    burn
    board Jh
    push 1 all
    collect
    clear
    """,
    small_blind=500,
    big_blind=1_000,
    shuffler="shuffler-b",
)

#: The same hand raked as a casino cash game would be (5 %, at most 10,000; the televised game
#: had no rake): the dealer drops the rake, then pushes the rest.
IVEY_DWAN_RAKED = Hand(
    **{
        **vars(IVEY_DWAN),
        "name": "full tilt million dollar cash game ivey dwan, raked",
        "steps": IVEY_DWAN.steps.replace("    push 1 all\n", "    rake 10000\n    push 1 all\n"),
        "rake_percent": 5,
        "rake_cap": 10_000,
    }
)

#: The same hand on a table without chip reading: the betting as ``action`` inputs.
IVEY_DWAN_ACTIONS = Hand(
    "full tilt million dollar cash game ivey dwan, action inputs",
    """
    seats 1 2 3
    button 1
    shuffled B
    deck B
    key new_hand
    action 2 post 500
    action 3 post 1000
    deal 2=Ac 3=Qd 1=7h 2=2d 3=8c 1=6h
    action 1 raise 6000
    action 2 raise 22500
    action 3 fold
    fold 3
    action 1 call 17000
    burn
    board Jc 3d 5c
    action 2 bet 35000
    action 1 call 35000
    burn
    board 4h
    action 2 bet 90000
    action 1 raise 232600
    action 2 all_in 975500
    action 1 all_in 247900
    show 2 1
    burn
    board Jh
    clear
    """,
    small_blind=500,
    big_blind=1_000,
    chips=False,
)

#: WSOP 2017 main event, three-handed: blinds 1,200,000/2,400,000, ante 400,000. Pollak (seat 2,
#: button) Qc Td all in for 35.2 million, Ott (seat 3, small blind) Kc 9d all in for 45.8 million,
#: Blumstein (seat 1, big blind) Ah Qs calls. Kd Js 3d 4c 6s: Ott's kings win the main pot and
#: the side pot; Pollak is out in third.
THREE_WAY_ALL_IN = Hand(
    "2017 wsop three-way all in",
    """
    seats 1 2 3
    button 2
    bet 1 400000        # antes
    bet 2 400000
    bet 3 400000
    bet 3 1200000
    bet 1 2400000
    key new_hand
    deal 3=Kc 1=Ah 2=Qc 3=9d 1=Qs 2=Td
    bet 2 34800000      # Pollak all in
    key all_in 2
    bet 3 44200000      # Ott all in
    key all_in 3
    pause 20            # Blumstein asks for a count
    bet 1 43000000      # and calls
    sweep
    show 2 3 1
    burn
    board Kd Js 3d
    burn
    board 4c
    burn
    board 6s
    push 3 all
    collect
    clear
    """,
    small_blind=1_200_000,
    big_blind=2_400_000,
    ante=400_000,
    shuffler="unused",
)

#: WSOP 2017 main event, three-handed, earlier that night ("a triple for Pollak"): blinds
#: 1,000,000/2,000,000, ante 300,000 (level 41). Pollak (seat 2, button) Jc 4c all in for 7.5 big
#: blinds (15,000,000 after his ante; assumed), Ott (seat 3, small blind) Ah 2h calls, Blumstein
#: (seat 1, big blind) Kc Tc moves all in (taken as 100,000,000: the part above Pollak's comes
#: back), Ott folds. Qd Js 7c, a six and a seven (suits assumed: 6d 7h): Pollak's jacks win a pot
#: of 45,900,000 with Ott's 15,000,000 in it. No keypad.
POLLAK_TRIPLES_UP = Hand(
    "2017 wsop pollak triples up",
    """
    seats 1 2 3
    button 2
    bet 1 300000
    bet 2 300000
    bet 3 300000
    bet 3 1000000
    bet 1 2000000
    deal 3=Ah 1=Kc 2=Jc 3=2h 1=Tc 2=4c
    bet 2 15000000      # Pollak all in
    bet 3 14000000      # Ott calls
    bet 1 98000000      # Blumstein all in
    pause 25
    fold 3              # Ott steps aside
    show 2 1
    return 1 85000000   # the dealer gives back what Pollak cannot call
    sweep
    burn
    board Qd Js 7c
    burn
    board 6d
    burn
    board 7h
    push 2 all
    collect
    clear
    """,
    small_blind=1_000_000,
    big_blind=2_000_000,
    ante=300_000,
    keypad="no-keypad",
)

#: WSOP 2007 event 4, $1,500 pot-limit hold'em, hand 95: Gavin Smith (seat 4, button) limps for
#: 30,000, Spegal (seat 7) checks; Ah 8c 6h: Spegal bets 30,000, Smith calls; 3d: Spegal bets
#: 60,000, Smith calls; 8s: Spegal checks, Smith bets 180,000 (as counted at the table), Spegal
#: re-raises the pot (to 780,000), Smith calls all in (his stack assumed to cover exactly). Both
#: hold 8-4: trip eights, ace and six, a split pot. Blinds 15,000/30,000.
CHOPPED_TRIPS = Hand(
    "2007 wsop pot limit chopped trips",
    """
    seats 4 7
    button 4
    shuffled A
    bet 4 15000
    bet 7 30000
    key new_hand
    deal 7=8d 4=8h 7=4d 4=4s
    bet 4 15000         # Smith completes (limps)
    pause 2             # Spegal checks
    sweep
    burn
    board Ah 8c 6h
    bet 7 30000
    bet 4 30000
    sweep
    burn
    board 3d
    bet 7 60000
    bet 4 60000
    sweep
    burn
    board 8s
    pause 2             # Spegal checks
    bet 4 180000
    bet 7 780000        # Spegal re-raises the pot
    bet 4 600000        # Smith calls all in
    sweep
    show 7 4
    push 7 900000
    push 4 900000
    collect
    clear
    """,
    small_blind=15_000,
    big_blind=30_000,
    structure="pot_limit",
)


def _replace(hand: Hand, name: str, old: str, new: str, expect: list[str], hands: int = 1) -> Hand:
    """The hand with one of its moments played otherwise (a dealer's mistake, put right or not)."""
    assert old in hand.steps, old
    return Hand(
        **{
            **vars(hand),
            "name": name,
            "steps": hand.steps.replace(old, new),
            "expect": expect,
            "hands": hands,
        }
    )


#: Dealers' mistakes injected into the televised hands: the alert raised, and resolved where the
#: dealer follows its remedy.
MISTAKES = [
    _replace(
        THREE_WAY_ALL_IN,
        "side pot pushed to the loser, taken back and pushed right",
        "    push 3 all\n",
        "    push 1 21200000\n    move bet:1 pot 21200000\n    push 3 all\n",
        ["pot_awarded_wrong 1 critical raised", "pot_awarded_wrong 1 critical resolved"],
    ),
    _replace(
        CHOPPED_TRIPS,
        "chop split 1,000,000 / 800,000 and left so",
        "    push 7 900000\n    push 4 900000\n",
        "    push 7 1000000\n    push 4 800000\n",
        ["split_wrong - warning raised"],
        hands=0,
    ),
    _replace(
        IVEY_DWAN,
        "uncalled all in swept into the pot, then returned",
        "    return 2 585000     # Ivey's uncalled chips\n    sweep\n",
        "    sweep\n    move pot bet:2 585000\n    return 2 585000\n",
        ["uncalled_bet_not_returned 2 warning raised", "uncalled_bet_not_returned 2 warning resolved"],
    ),
    _replace(
        BLUFF_OF_THE_CENTURY,
        "a foreign tag in the pot, removed",
        "    board 9s 2d 6s\n",
        "    board 9s 2d 6s\n    foreign pot E0FF00AA00BB00CC\n    unforeign pot E0FF00AA00BB00CC\n",
        ["unknown_chip - warning raised", "unknown_chip - warning resolved"],
    ),
    _replace(
        IVEY_DWAN,
        "half a fold, then the other card",
        "    fold 3\n    bet 1 17000         # Dwan calls\n",
        "    muck 3#0\n    bet 1 17000\n    pause 3\n    sweep\n    muck 3#0\n",
        ["fold_incomplete 3 warning raised", "fold_incomplete 3 warning resolved"],
    ),
    _replace(
        IVEY_DWAN_RAKED,
        "rake of 15,000 dropped, 5,000 given back to the winner",
        "    rake 10000\n    push 1 all\n",
        "    rake 15000\n    push 1 all\n    move rake bet:1 5000\n",
        ["rake_wrong - warning raised", "rake_wrong - warning resolved"],
    ),
    _replace(
        IVEY_DWAN,
        "swept before Dwan called, the bets put back",
        "    bet 1 17000         # Dwan calls\n    sweep\n",
        "    sweep\n    move pot bet:1 6000\n    move pot bet:2 23000\n    bet 1 17000\n    sweep\n",
        ["premature_sweep - warning raised", "premature_sweep - warning resolved"],
    ),
]

#: The three-way all in where no keypad says "all in" and no stack is read: Ott's all in over
#: Pollak's is a short raise by the chips, and the sweep premature (Pollak has not matched it),
#: until the three hands are tabled: then both are all in, and both alerts resolved.
THREE_WAY_ALL_IN_NO_KEYS = Hand(
    **{
        **vars(THREE_WAY_ALL_IN),
        "name": "2017 wsop three-way all in, no keypad",
        "steps": THREE_WAY_ALL_IN.steps.replace("    key all_in 2\n", "").replace("    key all_in 3\n", ""),
        "keypad": "no-keypad",
        "expect": [
            "raise_below_minimum 3 warning raised",
            "premature_sweep - warning raised",
            "premature_sweep - warning resolved",
            "raise_below_minimum 3 warning resolved",
        ],
    }
)

#: The same hands read in other styles: a reader that reports a moving chip gone before it is
#: read in its new zone, one that reports every chip twice, pushes to the winner's stack, stacks
#: read, the cards off the table or mucked before the pushes, antes gathered into the pot before
#: the deal.
STYLES = [
    (
        THREE_WAY_ALL_IN,
        Hand(
            **{
                **vars(THREE_WAY_ALL_IN),
                "lift_first": True,
                "name": "2017 three-way, chips gone before they land",
            }
        ),
    ),
    (
        IVEY_DWAN,
        Hand(**{**vars(IVEY_DWAN), "name": "ivey dwan, chips gone before they land", "lift_first": True}),
    ),
    (
        BLUFF_OF_THE_CENTURY,
        Hand(**{**vars(BLUFF_OF_THE_CENTURY), "twice": True, "name": "bluff, every chip read twice"}),
    ),
    (
        CHOPPED_TRIPS,
        Hand(**{**vars(CHOPPED_TRIPS), "name": "chop, pushed to the stacks", "push_to": "stack"}),
    ),
    (
        THREE_WAY_ALL_IN,
        Hand(
            **{
                **vars(THREE_WAY_ALL_IN_NO_KEYS),
                "name": "2017 three-way, stacks read, no keypad",
                "from_stacks": True,
                "push_to": "stack",
                "expect": [],
                "steps": THREE_WAY_ALL_IN_NO_KEYS.steps.replace(
                    "    seats 1 2 3\n",
                    "    seats 1 2 3\n    stack 1 400000 2400000 43000000 180650000\n"
                    "    stack 2 400000 34800000\n    stack 3 400000 1200000 44200000\n",
                ),
            }
        ),
    ),
    (
        CHOPPED_TRIPS,
        _replace(
            CHOPPED_TRIPS,
            "chop, cards off the table before the pushes",
            "    push 7 900000\n",
            "    clear\n    push 7 900000\n",
            [],
        ),
    ),
    (
        THREE_WAY_ALL_IN,
        _replace(
            THREE_WAY_ALL_IN,
            "2017 three-way, hands mucked before the push",
            "    push 3 all\n",
            "    fold 2\n    fold 1\n    fold 3\n    push 3 all\n",
            [],
        ),
    ),
    (
        BLUFF_OF_THE_CENTURY,
        _replace(
            BLUFF_OF_THE_CENTURY,
            "bluff, antes gathered before the deal",
            "    key new_hand\n",
            "    move bet:1 pot 5000\n    move bet:2 pot 5000\n    key new_hand\n",
            [],
        ),
    ),
]

#: Two hands at one table: the bluff, then (the button passed to Farha, the deck shuffled) the
#: final hand.
SESSION = Hand(
    **{
        **vars(BLUFF_OF_THE_CENTURY),
        "name": "2003 heads-up session: the bluff, then the final hand",
        "steps": BLUFF_OF_THE_CENTURY.steps
        + "    pause 40\n    shuffled A\n    button 2\n    key new_hand\n"
        + MONEYMAKER_FARHA_FINAL.steps,
        "hands": 2,
    }
)

TELEVISED = [
    BLUFF_OF_THE_CENTURY,
    THREE_WAY_ALL_IN_NO_KEYS,
    POLLAK_TRIPLES_UP,
    SESSION,
    MONEYMAKER_FARHA_FINAL,
    IVEY_DWAN,
    IVEY_DWAN_ACTIONS,
    IVEY_DWAN_RAKED,
    THREE_WAY_ALL_IN,
    CHOPPED_TRIPS,
]
