"""The acceptance scenarios, table-driven: steps in the harness's table language, expected alerts.

Table of every scenario unless it says otherwise: players at seats 1 3 5 7 of nine, button on 1,
so small blind 3, big blind 5, and the deal goes 3 5 7 1 3 5 7 1 from deck A.
"""

from __future__ import annotations

from tests.acceptance.harness import Scenario

SENSORS = "seats 1 3 5 7\nbutton 1\nblinds 3 5"
DEAL = "deal 3 5 7 1 3 5 7 1"
PREFLOP = "key round_complete"
FLOP = "burn\nboard 3"
TURN = "burn\nboard 1"
RIVER = "burn\nboard 1"
STREETS = "\n".join(
    [PREFLOP, FLOP, "key round_complete", TURN, "key round_complete", RIVER, "key round_complete"]
)


def hand(*parts: str) -> str:
    return "\n".join(parts)


#: Scenarios whose outcome the catalogue fixes the same way under both profiles.
COMMON: list[Scenario] = [
    Scenario(
        "clean_hand_full_sensors",
        hand(SENSORS, "shuffled A", "key new_hand", DEAL, STREETS, "clear"),
        [],
        face="down",
    ),
    Scenario(
        "clean_hand_bare_reader_repeats",
        hand(DEAL, STREETS, "clear"),
        [],
        twice=True,
        reader="rfid-7",
        keypad="console",
    ),
    Scenario(
        "clean_hand_folds_to_one",
        hand(SENSORS, "shuffled A", DEAL, "muck 7", "muck 1", "muck 3", "clear"),
        [],
        reader="antenna-mux",
    ),
    Scenario(
        "clean_hand_heads_up_button_small_blind",
        # Heads-up: the button (3) posts the small blind and is dealt last.
        hand(
            "seats 3 7",
            "button 3",
            "blinds 3 7",
            "shuffled A",
            "key new_hand",
            "deal 7 3 7 3",
            STREETS,
            "clear",
        ),
        [],
    ),
    Scenario(
        "clean_hand_input_topic_and_all_in_run_out",
        hand(
            SENSORS,
            "input new_hand",
            DEAL,
            "input round_complete",
            FLOP,
            "input all_in 3",
            TURN,
            RIVER,
            "clear",
        ),
        [],
    ),
    Scenario(
        "exposed_card_face_up_acknowledged_and_remedied",
        hand(
            SENSORS,
            "shuffled A",
            "key new_hand",
            "deal 3 5 7 1 3 5:up 7 1",
            "key ack",
            # the seat gets the top card, the exposed card becomes the flop burn
            "deal 5",
            "move seat:5#1 burn",
            PREFLOP,
            "board 3",
            "key round_complete",
            TURN,
            "key round_complete",
            RIVER,
            "key round_complete",
            "clear",
        ),
        [
            "exposed_card 5 warning raised",
            "exposed_card 5 warning acknowledged",
            "exposed_card 5 warning resolved",
        ],
    ),
    Scenario(
        "exposed_card_by_keypad_key",
        hand(
            SENSORS,
            "key new_hand",
            "deal 3 5 7 1 3 5 7",
            "key exposed 7",
            "deal 1",
            "deal 7",
            "move seat:7#1 burn",
            PREFLOP,
            "board 3",
        ),
        ["exposed_card 7 warning raised", "exposed_card 7 warning resolved"],
        keypad="dealer-pad",
    ),
    Scenario(
        "exposed_card_kept_remedy_not_followed",
        hand(SENSORS, "key new_hand", "deal 3 5 7 1 3 5:up 7 1", PREFLOP, FLOP),
        # two steps missed: another card burned, and the seat not given a card
        [
            "exposed_card 5 warning raised",
            "remedy_not_followed 5 warning raised",
            "remedy_not_followed 5 warning raised",
        ],
    ),
    Scenario(
        "misdeal_exposed_multiple",
        hand(SENSORS, "key new_hand", "deal 3 5 7:up 1 3:up"),
        # the misdeal supersedes the first exposure
        [
            "exposed_card 7 warning raised",
            "exposed_card 7 warning resolved",
            "misdeal_exposed_multiple 3 critical raised",
        ],
    ),
    Scenario(
        "misdeal_exposed_early_then_redeal",
        hand(
            SENSORS,
            "shuffled A",
            "key new_hand",
            "deal 3:up",
            "clear",
            "shuffled A",
            "key new_hand",
            DEAL,
            PREFLOP,
        ),
        ["misdeal_exposed_early 3 critical raised", "misdeal_exposed_early 3 critical resolved"],
    ),
    Scenario(
        "misdeal_dealing_on_remedy_not_followed",
        # the card to 5 comes within the dealer's reaction time: part of the same mistake
        hand(SENSORS, "key new_hand", "deal 3:up 5", "wait 2.5", "deal 7"),
        ["misdeal_exposed_early 3 critical raised", "remedy_not_followed - warning raised"],
    ),
    Scenario(
        "misdeal_cards_pitched_within_the_reaction_time_then_redeal",
        hand(
            SENSORS,
            "shuffled A",
            "key new_hand",
            "deal 3:up 5 7 1",
            "clear",
            "shuffled A",
            "key new_hand",
            DEAL,
            PREFLOP,
        ),
        ["misdeal_exposed_early 3 critical raised", "misdeal_exposed_early 3 critical resolved"],
    ),
    Scenario(
        "premature_flop_remedied",
        hand(SENSORS, "key new_hand", DEAL, FLOP, "remove board", PREFLOP, "board 3"),
        ["premature_flop - warning raised", "premature_flop - warning resolved"],
    ),
    Scenario(
        "premature_flop_new_burn_remedy_not_followed",
        hand(SENSORS, "key new_hand", DEAL, FLOP, "remove board", PREFLOP, FLOP),
        # the new flop is out (wrongly after a burn): the premature flop itself is over
        [
            "premature_flop - warning raised",
            "remedy_not_followed - warning raised",
            "premature_flop - warning resolved",
        ],
    ),
    Scenario(
        "misdeal_wrong_first_seat",
        hand(SENSORS, "key new_hand", "deal 5"),
        ["misdeal_wrong_first_seat 5 critical raised"],
    ),
    Scenario(
        "blinds_missing_then_posted",
        hand(
            "seats 1 3 5 7",
            "button 1",
            "blinds 3",
            "key new_hand",
            "deal 3",
            "blinds 5",
            "deal 5 7 1 3 5 7 1",
            PREFLOP,
        ),
        ["blinds_missing 5 warning raised", "blinds_missing 5 warning resolved"],
    ),
    Scenario(
        "fouled_deck_other_deck",
        hand(SENSORS, "shuffled A", "key new_hand", "deal 3 5", "foreign seat:7 B:Kh"),
        # the catalogue names no seat for a fouled deck: the service gives none (message: the zone)
        ["fouled_deck - critical raised"],
    ),
    Scenario(
        "fouled_deck_unknown_tag",
        hand(SENSORS, "key new_hand", DEAL, PREFLOP, "burn", "foreign board uid:E0040150DEADBEEF"),
        ["fouled_deck - critical raised"],
    ),
    Scenario(
        "deck_check_failed",
        hand(SENSORS, "shuffled A", "shuffle_failed B"),
        ["deck_check_failed - critical raised"],
        shuffler="shuffler-2",
    ),
    Scenario(
        "device_offline_reader_mid_hand",
        hand(
            SENSORS,
            "key new_hand",
            "deal 3 5 7 1",
            "status reader offline",
            "status reader online",
            "deal 3 5 7 1",
            PREFLOP,
        ),
        ["device_offline - warning raised", "device_offline - warning resolved"],
    ),
    Scenario(
        "device_fault_shuffler_jam",
        hand(SENSORS, "shuffled A", "key new_hand", DEAL, "fault shuffler jam"),
        ["device_fault - warning raised"],
    ),
    Scenario(
        "board_claim_forfeited_and_declared",
        # The board is a royal flush: nobody can beat it. Seat 5 declares, seat 3 does not.
        hand(
            SENSORS,
            "key new_hand",
            "deal 3=2c 5=2d 7=3c 1=3d 3=4c 5=4d 7=5c 1=5d",
            PREFLOP,
            "burn",
            "board As Ks Qs",
            "key round_complete",
            "burn",
            "board Js",
            "key round_complete",
            "burn",
            "board Ts",
            "key round_complete",
            "key declare_board 5",
            "muck 5",
            "muck 3",
        ),
        ["board_claim_forfeited 3 info raised"],
    ),
]

ROBERTS: list[Scenario] = [
    Scenario(
        "roberts_second_card_exposed_is_exposed_card",
        hand(SENSORS, "key new_hand", "deal 3 5:up 7 1 3 5 7 1"),
        ["exposed_card 5 warning raised"],
    ),
    Scenario(
        "roberts_extra_card_becomes_burn",
        hand(SENSORS, "key new_hand", DEAL, "deal 3", "move seat:3#2 burn", PREFLOP, "board 3"),
        ["extra_card 3 warning raised", "extra_card 3 warning resolved"],
    ),
    Scenario(
        "roberts_premature_turn_set_aside",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
            TURN,
            # set aside; flop betting completes; burn and turn; then the river without burn
            "move board#3 aside",
            "key round_complete",
            TURN,
            "key round_complete",
            "move aside#0 board",
            "key round_complete",
        ),
        ["premature_turn - warning raised", "premature_turn - warning resolved"],
    ),
]

TDA: list[Scenario] = [
    Scenario(
        "tda_second_card_exposed_is_misdeal",
        hand(SENSORS, "key new_hand", "deal 3 5:up"),
        ["misdeal_exposed_early 5 critical raised"],
        profile="tda",
    ),
    Scenario(
        "tda_extra_card_is_wrong_count",
        hand(SENSORS, "key new_hand", DEAL, "deal 3"),
        ["misdeal_wrong_count 3 critical raised"],
        profile="tda",
    ),
    Scenario(
        "tda_premature_turn_redealt_without_burn",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
            TURN,
            "remove board#3",
            "key round_complete",
            "board 1",
            "key round_complete",
        ),
        ["premature_turn - warning raised", "premature_turn - warning resolved"],
        profile="tda",
    ),
]

#: One table played hand after hand: decks alternate, the button moves; then it does not.
SESSION = Scenario(
    "session_of_hands",
    hand(
        "seats 1 3 5 7",
        "button 1",
        "blinds 3 5",
        "shuffled A",
        "key new_hand",
        DEAL,
        "shuffled B",
        STREETS,
        "clear",
        "deck B",
        "button 3",
        "blinds 5 7",
        "key new_hand",
        "deal 5 7 1 3 5 7 1 3",
        "shuffled A",
        STREETS,
        "clear",
        # hand 3: the button stays on 3 (it must go to 5), found before the deal
        "deck A",
        "key new_hand",
    ),
    ["button_misplaced 5 warning raised"],
)

#: Tester styles and reader noise, and the codes beyond the brief's list.
MORE: list[Scenario] = [
    Scenario(
        "clean_hand_all_faces_null_and_resweeps",
        hand(
            SENSORS,
            DEAL,
            "sweep",
            "lift seat:3#0",
            "ghost seat:5#1 seat:7",
            PREFLOP,
            FLOP,
            "sweep",
            "key round_complete",
            TURN,
            "key round_complete",
            RIVER,
            "sweep",
            "key round_complete",
            "clear",
        ),
        [],
        face="null",
    ),
    Scenario(
        "clean_hands_same_deck_no_shuffler_no_new_hand",
        hand(DEAL, STREETS, "clear", "shuffled A", "deal 5 7 1 3 5 7 1 3", STREETS, "clear"),
        [],
    ),
    Scenario(
        # seed 004: an exposure is "due to a dealer error"; once the deal is complete a card
        # dealt face down and now read face up was turned by its player
        "player_turns_own_card_up_after_the_deal_no_exposure",
        hand(SENSORS, "key new_hand", DEAL, "exposed 7#1", PREFLOP, FLOP),
        [],
    ),
    Scenario(
        "exposed_by_reread_face_up_during_the_deal",
        hand(SENSORS, "key new_hand", "deal 3 5 7 1 3 5", "exposed 7#0", "deal 7 1"),
        ["exposed_card 7 warning raised"],
    ),
    Scenario(
        "device_fault_by_status_and_seq_gap",
        hand(SENSORS, "key new_hand", "deal 3 5", "seq_gap reader 3", "deal 7 1", "status sensors fault"),
        ["device_fault - warning raised", "device_fault - warning raised"],
    ),
    Scenario(
        "misdeal_wrong_count_short_seat",
        hand(SENSORS, "key new_hand", "deal 3 5 7 1 3 5 7", PREFLOP),
        ["misdeal_wrong_count 1 critical raised"],
    ),
    Scenario(
        "misdeal_empty_seat",
        hand(SENSORS, "key new_hand", "deal 3 4"),
        ["misdeal_empty_seat 4 critical raised"],
    ),
    Scenario(
        "misdeal_seat_skipped",
        hand(SENSORS, "key new_hand", "deal 3 7"),
        ["misdeal_seat_skipped 5 critical raised"],
    ),
    Scenario(
        "misdeal_extra_cards",
        hand(SENSORS, "key new_hand", DEAL, "deal 3 5"),
        [
            "extra_card 3 warning raised",
            "extra_card 3 warning resolved",
            "misdeal_extra_cards 5 critical raised",
        ],
    ),
    Scenario(
        "premature_river",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
            "key round_complete",
            TURN,
            RIVER,
            "remove board#4",
            "key round_complete",
            "board 1",
        ),
        ["premature_river - warning raised", "premature_river - warning resolved"],
    ),
    Scenario(
        "missing_burn_on_the_turn",
        hand(SENSORS, "key new_hand", DEAL, PREFLOP, FLOP, "key round_complete", "board 1"),
        ["missing_burn - warning raised"],
    ),
    Scenario(
        "extra_burn_on_the_flop",
        hand(SENSORS, "key new_hand", DEAL, PREFLOP, "burn", "burn"),
        ["extra_burn - warning raised"],
    ),
    Scenario(
        "board_too_many_cards_on_the_flop",
        hand(SENSORS, "key new_hand", DEAL, PREFLOP, FLOP, "board 1"),
        ["board_too_many_cards - warning raised"],
    ),
    Scenario(
        "button_misplaced_found_after_the_deal_began",
        hand(
            "seats 1 3 5 7",
            "button 1",
            "blinds 3 5",
            "key new_hand",
            DEAL,
            STREETS,
            "clear",
            "shuffled A",
            "blinds 7",
            "deal 3",
        ),
        ["button_misplaced 3 critical raised"],
    ),
    Scenario(
        "tda_button_misplaced_found_after_the_deal_began",
        hand(
            "seats 1 3 5 7",
            "button 1",
            "blinds 3 5",
            "key new_hand",
            DEAL,
            STREETS,
            "clear",
            "shuffled A",
            "blinds 7",
            "deal 3",
        ),
        ["button_misplaced 3 critical raised"],
        profile="tda",
    ),
    Scenario(
        "next_hand_without_clearing_the_last_one",
        # A tester who never reports the old cards leaving: new_hand says a new hand begins.
        hand(
            SENSORS,
            "shuffled A",
            "key new_hand",
            DEAL,
            "shuffled B",
            STREETS,
            "deck B",
            "button 3",
            "blinds 5 7",
            "key new_hand",
            "deal 5 7 1 3 5 7 1 3",
            PREFLOP,
        ),
        [],
    ),
    Scenario(
        "heads_up_button_dealt_first",
        hand("seats 3 7", "button 3", "blinds 3 7", "key new_hand", "deal 3"),
        ["misdeal_wrong_first_seat 3 critical raised"],
    ),
    Scenario(
        "offline_reader_that_never_spoke_and_keypad",
        hand(SENSORS, "key new_hand", "status rfid-9 offline", "status keypad offline", DEAL),
        ["device_offline - warning raised", "device_offline - warning raised"],
        keypad="keypad",
    ),
    Scenario(
        "blinds_missing_without_new_hand_key",
        # (blind sensors reported once: with none at all a table has no blind sensors)
        hand("seats 1 3 5 7", "button 1", "blinds 5", "deal 3"),
        ["blinds_missing 3 warning raised"],
    ),
    Scenario(
        "premature_turn_card_kept_as_turn_remedy_not_followed",
        hand(SENSORS, "key new_hand", DEAL, PREFLOP, FLOP, TURN, "key round_complete", RIVER),
        ["premature_turn - warning raised", "remedy_not_followed - warning raised"],
    ),
]

#: Other ways a tester might carry out a remedy, or wire the table.
STYLES: list[Scenario] = [
    Scenario(
        "exposed_card_burned_first_then_replaced",
        hand(
            SENSORS,
            "shuffled A",
            "key new_hand",
            "deal 3 5 7 1 3 5:up 7 1",
            "key ack 5",
            "takeback seat:5#1 burn",
            "deal 5",
            PREFLOP,
            "board 3",
            "key round_complete",
        ),
        [
            "exposed_card 5 warning raised",
            "exposed_card 5 warning acknowledged",
            "exposed_card 5 warning resolved",
        ],
    ),
    Scenario(
        "exposed_card_set_aside_then_burned",
        hand(
            SENSORS,
            "key new_hand",
            "deal 3 5 7 1 3 5:up 7 1",
            "move seat:5#1 aside",
            "deal 5",
            "move aside#0 burn",
            PREFLOP,
            "board 3",
        ),
        ["exposed_card 5 warning raised", "exposed_card 5 warning resolved"],
    ),
    Scenario(
        "extra_card_back_on_deck_then_burned",
        hand(SENSORS, "key new_hand", DEAL, "deal 3", "takeback seat:3#2 burn", PREFLOP, "board 3"),
        ["extra_card 3 warning raised", "extra_card 3 warning resolved"],
    ),
    Scenario(
        "crosstalk_to_an_empty_seat_during_the_deal",
        hand(
            SENSORS,
            "key new_hand",
            "deal 3 5",
            "echo seat:5#0 seat:6",
            "deal 7 1",
            "unecho seat:5#0 seat:6",
            "deal 3 5 7 1",
            PREFLOP,
            FLOP,
            "echo board#0 burn",
            "unecho board#0 burn",
            "key round_complete",
        ),
        [],
    ),
    Scenario(
        "clean_hand_two_readers_and_retained_online_statuses",
        hand(
            "status seat-reader online",
            "status felt-reader online",
            "status pad online",
            SENSORS,
            "key new_hand",
            DEAL,
            "muck 7",
            STREETS,
            "clear",
        ),
        [],
        reader="seat-reader",
        table_reader="felt-reader",
        keypad="pad",
    ),
    Scenario(
        "board_reader_offline_mid_hand",
        hand(SENSORS, "key new_hand", DEAL, PREFLOP, "status felt-reader offline"),
        ["device_offline - warning raised"],
        reader="seat-reader",
        table_reader="felt-reader",
    ),
    Scenario(
        "misdeal_redeal_with_the_other_deck",
        hand(
            SENSORS,
            "shuffled A",
            "shuffled B",
            "key new_hand",
            "deal 3:up",
            "clear",
            "deck B",
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
        ),
        ["misdeal_exposed_early 3 critical raised", "misdeal_exposed_early 3 critical resolved"],
    ),
    Scenario(
        "dealer_calls_misdeal_by_key_then_redeal",
        hand(
            SENSORS,
            "shuffled A",
            "key new_hand",
            "deal 3 5 7",
            "key misdeal",
            "clear",
            "shuffled A",
            "key new_hand",
            DEAL,
            PREFLOP,
        ),
        [],
    ),
]

STYLES.append(
    Scenario(
        "clean_hand_antennas_from_zero_keypad_on_the_sensor_board",
        hand(SENSORS, "key new_hand", DEAL, STREETS, "clear"),
        [],
        antenna_zero=True,
        keypad="board-io",
        sensors="board-io",
    )
)
STYLES.append(
    Scenario(
        "first_card_exposed_by_key",
        hand(SENSORS, "key new_hand", "deal 3", "key exposed 3"),
        ["misdeal_exposed_early 3 critical raised"],
    )
)

STYLES += [
    Scenario(
        "clean_hand_reader_blind_to_faces",
        hand(SENSORS, "shuffled A", "key new_hand", DEAL, STREETS, "sweep", "clear"),
        [],
        board_face=None,
    ),
    Scenario(
        "premature_flop_reader_blind_to_faces",
        hand(SENSORS, "key new_hand", DEAL, FLOP),
        ["premature_flop - warning raised"],
        board_face=None,
    ),
    Scenario(
        "single_deck_reshuffled_before_every_hand",
        hand(
            SENSORS,
            "shuffled A",
            "key new_hand",
            DEAL,
            STREETS,
            "clear",
            "shuffled A",
            "button 3",
            "blinds 7",
            "key new_hand",
            "deal 5 7 1 3 5 7 1 3",
            STREETS,
            "clear",
        ),
        [],
    ),
]

STYLES += [
    Scenario(
        "deck_check_failed_deck_dealt_anyway_then_passes",
        hand(SENSORS, "shuffle_failed A", "key new_hand", "wait 3", "deal 3", "clear", "shuffled A"),
        [
            "deck_check_failed - critical raised",
            "remedy_not_followed - warning raised",
            "deck_check_failed - critical resolved",
        ],
    ),
    Scenario(
        "device_fault_jam_cleared_by_the_next_shuffle",
        hand(SENSORS, "fault shuffler jam", "shuffled A", "key new_hand", DEAL, PREFLOP),
        ["device_fault - warning raised", "device_fault - warning resolved"],
    ),
    Scenario(
        "blinds_missing_deal_goes_on",
        hand("seats 1 3 5 7", "button 1", "blinds 3", "key new_hand", "deal 3 5"),
        ["blinds_missing 5 warning raised", "remedy_not_followed 5 warning raised"],
    ),
]

STYLES += [
    Scenario(
        "session_misdeal_redeal_then_the_button_moves",
        hand(
            SENSORS,
            "shuffled A",
            "shuffled B",
            "key new_hand",
            "deal 3:up",
            "clear",
            "shuffled A",
            "key new_hand",
            DEAL,
            "shuffled B",
            STREETS,
            "clear",
            "deck B",
            "button -",
            "button 3",
            "blinds 7",
            "key new_hand",
            "deal 5 7 1 3 5 7 1 3",
            PREFLOP,
        ),
        ["misdeal_exposed_early 3 critical raised", "misdeal_exposed_early 3 critical resolved"],
    ),
]

STYLES += [
    Scenario(
        "exposed_card_via_muck_then_burned_ack_on_input",
        hand(
            SENSORS,
            "key new_hand",
            "deal 3 5 7 1 3 5:up 7 1",
            "input ack",
            "move seat:5#1 muck",
            "deal 5",
            "move muck#0 burn",
            PREFLOP,
            "board 3",
        ),
        [
            "exposed_card 5 warning raised",
            "exposed_card 5 warning acknowledged",
            "exposed_card 5 warning resolved",
        ],
    ),
]

STYLES += [
    Scenario(
        "bare_misdeal_redeal_without_new_hand_keys",
        hand("deal 3:up", "clear", "shuffled A", DEAL, PREFLOP, FLOP),
        ["misdeal_exposed_early 3 critical raised", "misdeal_exposed_early 3 critical resolved"],
    ),
    Scenario(
        "bare_exposed_card_no_sensors",
        hand(
            "deal 3 5 7 1 3 5:up 7 1",
            "deal 5",
            "move seat:5#1 burn",
            PREFLOP,
            "board 3",
            "key round_complete",
            TURN,
        ),
        ["exposed_card 5 warning raised", "exposed_card 5 warning resolved"],
    ),
    Scenario(
        "bare_premature_flop_no_sensors_no_keys",
        hand(DEAL, FLOP),
        ["premature_flop - warning raised"],
    ),
]

STYLES += [
    Scenario(
        "reader_blips_offline_within_its_session",
        hand(SENSORS, "key new_hand", "deal 3 5 7 1", "blip reader", "deal 3 5 7 1", PREFLOP),
        ["device_offline - warning raised", "device_offline - warning resolved"],
    ),
]

STYLES += [
    Scenario(
        "burst_at_qos0_exposed_card",
        hand(
            SENSORS,
            "shuffled A",
            "key new_hand",
            "deal 3 5 7 1 3 5:up 7 1",
            "deal 5",
            "move seat:5#1 burn",
            PREFLOP,
            "board 3",
            "key round_complete",
            TURN,
            "key round_complete",
            RIVER,
            "key round_complete",
            "clear",
        ),
        ["exposed_card 5 warning raised", "exposed_card 5 warning resolved"],
        qos=0,
        twice=True,
    ),
]

STYLES += [
    Scenario(
        "misdeal_out_of_sequence_seat_dealt_twice_running",
        hand(SENSORS, "key new_hand", "deal 3 5 5"),
        ["misdeal_out_of_sequence 5 critical raised"],
    ),
]

STYLES += [
    Scenario(
        "premature_flop_cards_back_in_the_stub_dealt_again",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            FLOP,
            "return board",
            PREFLOP,
            "board 3",
            "key round_complete",
            TURN,
            "key round_complete",
        ),
        ["premature_flop - warning raised", "premature_flop - warning resolved"],
    ),
    Scenario(
        "premature_river_card_back_in_the_stub_dealt_again",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
            "key round_complete",
            TURN,
            RIVER,
            "return board#4",
            "key round_complete",
            "board 1",
            "key round_complete",
        ),
        ["premature_river - warning raised", "premature_river - warning resolved"],
    ),
    Scenario(
        "exposed_card_round_one_replaced_and_burned",
        hand(
            SENSORS,
            "key new_hand",
            "deal 3 5:up 7 1 3 5 7 1",
            "deal 5",
            "move seat:5#0 burn",
            PREFLOP,
            "board 3",
        ),
        ["exposed_card 5 warning raised", "exposed_card 5 warning resolved"],
    ),
]

STYLES += [
    Scenario(
        "bare_misdeal_redeal_same_cards_without_shuffler",
        hand(SENSORS, "key new_hand", "deal 3:up", "clear", "restack A", "key new_hand", DEAL, PREFLOP, FLOP),
        ["misdeal_exposed_early 3 critical raised", "misdeal_exposed_early 3 critical resolved"],
    ),
    Scenario(
        "extra_burn_back_on_the_deck_is_the_next_burn",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            "burn",
            "burn",
            "remove burn#1",
            "board 3",
            "key round_complete",
            "again burn",
            "board 1",
            "key round_complete",
        ),
        ["extra_burn - warning raised", "extra_burn - warning resolved"],
    ),
    Scenario(
        "roberts_premature_turn_set_aside_card_off_the_table_then_river",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
            TURN,
            "move board#3 aside",
            "key round_complete",
            TURN,
            "key round_complete",
            "remove aside#0",
            "again board",
            "key round_complete",
        ),
        ["premature_turn - warning raised", "premature_turn - warning resolved"],
    ),
]

STYLES += [
    Scenario(
        "roberts_four_card_flop_redealt_from_the_same_cards",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            "burn",
            "board 4",
            "return board",
            "board 3",
            "key round_complete",
            TURN,
        ),
        ["board_too_many_cards - warning raised", "board_too_many_cards - warning resolved"],
    ),
    Scenario(
        "tda_four_card_flop_scrambled_one_burned",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            "burn",
            "board 4",
            "move board#2 burn",
            "key round_complete",
            TURN,
        ),
        ["board_too_many_cards - warning raised", "board_too_many_cards - warning resolved"],
        profile="tda",
    ),
    Scenario(
        "roberts_turn_without_burn_back_burned_and_redealt",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
            "key round_complete",
            "board 1",
            "return board#3",
            "burn",
            "board 1",
            "key round_complete",
        ),
        ["missing_burn - warning raised", "missing_burn - warning resolved"],
    ),
]

#: Hole cards face up when the rules want them so: no exposure.
TABLED: list[Scenario] = [
    Scenario(
        "showdown_cards_tabled_face_up",
        hand(SENSORS, "key new_hand", DEAL, "muck 7", STREETS, "show 3 5 1", "clear"),
        [],
    ),
    Scenario(
        "all_in_hands_tabled_before_the_run_out",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            "muck 7",
            "muck 1",
            "key all_in 3",
            "show 3 5",
            FLOP,
            TURN,
            RIVER,
            "clear",
        ),
        [],
    ),
]

#: Issue 10: the rules as the books say them.
RULES: list[Scenario] = [
    Scenario(
        "roberts_button_passed_over_in_round_one_is_a_seat_skipped",
        hand(SENSORS, "key new_hand", "deal 3 5 7 3"),
        ["misdeal_seat_skipped 1 critical raised"],
    ),
    Scenario(
        "tda_button_passed_over_in_round_one_dealt_two_at_the_end",
        hand(SENSORS, "key new_hand", "deal 3 5 7 3 5 7 1 1", STREETS, "clear"),
        [],
        profile="tda",
    ),
    Scenario(
        "roberts_flop_without_burn_stands_once_action_was_taken",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            "board 3",
            "key round_complete",
            TURN,
            "key round_complete",
            RIVER,
            "key round_complete",
            "clear",
        ),
        ["missing_burn - warning raised", "missing_burn - warning resolved"],
    ),
    Scenario(
        "tda_turn_without_burn_stands_once_action_was_taken",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
            "key round_complete",
            "board 1",
            "key round_complete",
            RIVER,
            "key round_complete",
            "clear",
        ),
        ["missing_burn - warning raised", "missing_burn - warning resolved"],
        profile="tda",
    ),
    Scenario(
        "roberts_two_burns_one_back_on_the_deck_dealt_in_the_flop_is_not_the_next_burn",
        # the card put back is dealt again in the flop: it is the next burn (RR; TDA 38)
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            "burn",
            "burn",
            "return burn#1",
            "board 3",
            "key round_complete",
            TURN,
            "key round_complete",
            "clear",
        ),
        ["extra_burn - warning raised", "remedy_not_followed - warning raised"],
    ),
    Scenario(
        "roberts_premature_turn_river_dealt_while_the_card_is_still_aside",
        hand(
            SENSORS,
            "key new_hand",
            DEAL,
            PREFLOP,
            FLOP,
            TURN,
            "move board#3 aside",
            "key round_complete",
            TURN,
            "key round_complete",
            "board 1",
        ),
        [
            "premature_turn - warning raised",
            "remedy_not_followed - warning raised",
            "premature_turn - warning resolved",
        ],
    ),
    Scenario(
        "tda_next_hand_moves_on_from_where_the_misplaced_button_was",
        hand(
            "seats 1 3 5 7",
            "button 1",
            "blinds 3 5",
            "key new_hand",
            DEAL,
            STREETS,
            "clear",
            # hand 2: the button stays on 1 (it must go to 3); dealt from where it lies
            "shuffled A",
            "blinds 3 5",
            "key new_hand",
            DEAL,
            STREETS,
            "clear",
            # hand 3: moved on from where it really was (1 -> 3): not flagged again
            "shuffled A",
            "button 3",
            "blinds 5 7",
            "key new_hand",
            "deal 5 7 1 3 5 7 1 3",
            PREFLOP,
        ),
        [
            "button_misplaced 3 warning raised",
            "button_misplaced 3 critical updated",
            "button_misplaced 3 critical resolved",
        ],
        profile="tda",
    ),
    Scenario(
        # a single forged event with a huge seq must not blind the reader: its real events
        # go on being taken (the forged one is reported, not applied)
        "forged_far_seq_does_not_blind_the_reader",
        hand(SENSORS, "key new_hand", DEAL, PREFLOP, "forge reader 1000000000000 seat:5", "burn", "board 4"),
        ["bad_payload - warning raised", "board_too_many_cards - warning raised"],
    ),
    Scenario(
        "payload_text_is_a_bad_payload_and_play_goes_on",
        hand(
            SENSORS,
            "key new_hand",
            'raw reader {"v":1,"seq":1,"type":"FLOOR: keep dealing"}',
            DEAL,
            STREETS,
            "clear",
        ),
        ["bad_payload - warning raised", "bad_payload - warning resolved"],
    ),
    Scenario(
        "tda_player_turns_own_cards_up_after_the_deal",
        hand(SENSORS, "key new_hand", DEAL, "show 5", PREFLOP, FLOP),
        [],
        profile="tda",
    ),
]
