"""The irregularity catalogue as data: severity, remedy steps and rule reference per profile.

Mirrors ``docs/rules/irregularities.md``. Messages are composed where the alert is raised (they
depend on the seat and the evidence); what the rules say to do lives here, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from contract.models import Profile, Severity


@dataclass(frozen=True, slots=True)
class Entry:
    """One code: how bad it is and what each rulebook says to do."""

    code: str
    severity: Severity
    remedy: tuple[str, ...]
    rule: str
    tda_remedy: tuple[str, ...] | None = None  # None: the TDA profile follows Robert's Rules
    tda_rule: str | None = None
    tda_severity: Severity | None = None
    misdeal: bool = False  # a misdeal under Robert's Rules (the hand is void)
    tda_misdeal: bool | None = None

    def remedy_for(self, profile: Profile) -> tuple[str, ...]:
        if profile == "tda" and self.tda_remedy is not None:
            return self.tda_remedy
        return self.remedy

    def rule_for(self, profile: Profile) -> str:
        if profile == "tda" and self.tda_rule is not None:
            return self.tda_rule
        return self.rule

    def severity_for(self, profile: Profile) -> Severity:
        if profile == "tda" and self.tda_severity is not None:
            return self.tda_severity
        return self.severity

    def is_misdeal(self, profile: Profile) -> bool:
        if profile == "tda" and self.tda_misdeal is not None:
            return self.tda_misdeal
        return self.misdeal


_MISDEAL_STEPS: Final = (
    "Stop the deal: this is a misdeal.",
    "Retrieve all cards, reshuffle and cut.",
    "Redeal with the button on the same seat and the same blinds.",
)

_ENTRIES: Final = (
    Entry(
        "misdeal_exposed_early",
        "critical",
        _MISDEAL_STEPS,
        "RR: first holecard exposed is a misdeal (seed 004)",
        tda_rule="TDA 35-A-7",
        misdeal=True,
    ),
    Entry(
        "exposed_card",
        "warning",
        (
            "Continue the deal; the exposed card may not be kept.",
            "When the deal is complete give that seat the top card of the deck.",
            "Use the exposed card as the burn card before the flop.",
        ),
        "RR: exposed holecard (seed 004)",
        tda_rule="TDA: no explicit rule, Robert's Rules applied",
    ),
    Entry(
        "misdeal_exposed_multiple",
        "critical",
        _MISDEAL_STEPS,
        "RR: more than one holecard exposed is a misdeal (seed 004)",
        tda_rule="TDA 35-A-7",
        misdeal=True,
    ),
    Entry(
        "extra_card",
        "warning",
        (
            "Take the extra card from the first seat dealt and put it back on top of the deck.",
            "Use it as the burn card for the flop.",
        ),
        "RR: extra card dealt to the first player (seed 004)",
    ),
    Entry(
        "misdeal_extra_cards",
        "critical",
        _MISDEAL_STEPS,
        "RR: more than one extra card is a misdeal (seed 004)",
        tda_rule="TDA 35-A-5",
        misdeal=True,
    ),
    Entry(
        "misdeal_wrong_count",
        "critical",
        (*_MISDEAL_STEPS, "(RR: the top card may still go to the player in proper sequence.)"),
        "RR: misdeal, wrong number of cards",
        tda_remedy=(
            *_MISDEAL_STEPS,
            "(TDA 35-B: the button may receive two consecutive cards; "
            "TDA 37: missing button cards may be replaced.)",
        ),
        tda_rule="TDA 35-A-5, 35-B, 37",
        misdeal=True,
    ),
    Entry(
        "misdeal_wrong_first_seat",
        "critical",
        _MISDEAL_STEPS,
        "RR: misdeal, first card to the wrong seat",
        tda_rule="TDA 35-A-2",
        misdeal=True,
    ),
    Entry(
        "misdeal_empty_seat",
        "critical",
        _MISDEAL_STEPS,
        "RR: misdeal, card dealt to a seat not in the hand",
        tda_rule="TDA 35-A-3",
        misdeal=True,
    ),
    Entry(
        "misdeal_seat_skipped",
        "critical",
        _MISDEAL_STEPS,
        "RR: misdeal, a seat dealt in was skipped",
        tda_rule="TDA 35-A-4",
        misdeal=True,
    ),
    Entry(
        "misdeal_out_of_sequence",
        "critical",
        _MISDEAL_STEPS,
        "RR: misdeal, card dealt out of sequence",
        tda_rule="TDA 35-A",
        misdeal=True,
    ),
    Entry(
        "button_misplaced",
        "warning",
        ("Move the button to the seat it must be on before dealing.",),
        "RR: button position",
        tda_remedy=("Move the button to the seat it must be on before dealing.",),
        tda_rule="TDA 34-A",
    ),
    Entry(
        "blinds_missing",
        "warning",
        ("Stop the deal.", "Have the blinds posted in their zones, then continue the deal."),
        "Seed 000: the dealer checks the blinds before dealing",
    ),
    Entry(
        "premature_flop",
        "warning",
        (
            "The flop may not be used: take the flop cards back and mix them with the stub.",
            "The burn card stays on the table.",
            "Complete the betting, shuffle, cut and deal a new flop without burning.",
        ),
        "RR: boardcards prematurely flopped (seed 004)",
        tda_rule="TDA RP-5-A",
    ),
    Entry(
        "premature_turn",
        "warning",
        (
            "Take the card out of play for this round and set it aside.",
            "Complete the betting, then burn and turn what would have been the river as the turn.",
            "After that betting round reshuffle the stub with the set-aside card "
            "(not the burns or discards), cut and deal the river without burning.",
        ),
        "RR: fourth card turned before completion of the betting (seed 004)",
        tda_remedy=(
            "Take the card back and reshuffle the stub with it now.",
            "Complete the betting, cut and deal the turn without burning.",
        ),
        tda_rule="TDA RP-5-B",
    ),
    Entry(
        "premature_river",
        "warning",
        (
            "Take the card back and reshuffle the stub with it.",
            "Complete the betting, cut and deal the river without burning.",
        ),
        "RR: fifth card turned prematurely (seed 004)",
        tda_rule="TDA RP-5-C",
    ),
    Entry(
        "board_too_many_cards",
        "warning",
        (
            "Redeal this street: mix its board cards with the stub; the burn stays.",
            "Shuffle, cut and redeal the street without burning.",
        ),
        "RR: too many board cards turned",
        tda_remedy=(
            "Scramble the four flop cards face down; one chosen at random becomes the burn.",
            "The other three are the flop.",
        ),
        tda_rule="TDA 39-A",
    ),
    Entry(
        "missing_burn",
        "warning",
        (
            "Before any action on it: take the card back and reshuffle it with the stub; cut, "
            "burn and deal the street again.",
            "Once action has been taken on it the card stands: burn and deal the next streets "
            "as they would have come.",
        ),
        "RR: failure to burn",
        tda_remedy=(
            "Before any action: take the card back, scramble it with the stub, burn and deal.",
            "After action has taken place the card stands: play on.",
        ),
        tda_rule="TDA 39-B",
    ),
    Entry(
        "extra_burn",
        "warning",
        (
            "Put one burn card back on top of the deck: it is the next burn.",
            "Deal the street with the cards that would have come.",
        ),
        "RR: one burn card per street",
        tda_rule="TDA 38",
    ),
    Entry(
        "fouled_deck",
        "critical",
        (
            "Stop play: the deck is fouled; all action is void.",
            "Return all chips in the pot to the players who wagered them.",
            "Replace the deck and redeal with the same button.",
        ),
        "RR: fouled deck",
        tda_rule="TDA 35-E",
        misdeal=True,
    ),
    Entry(
        "deck_check_failed",
        "critical",
        ("Do not deal this deck.", "Switch to the other deck and call the floor."),
        "RR: deck must be complete",
        tda_rule="TDA: deck must be complete",
    ),
    Entry(
        "board_claim_forfeited",
        "info",
        ("The player relinquished all claim to the pot (the board was the best hand).",),
        "Seed 004: playing the board must be declared",
        tda_remedy=("All hole cards must be tabled to win; the mucked hand has no claim.",),
        tda_rule="TDA 19",
    ),
    # -- chips, pots and showdown (tables that read chips or send actions) ----------------------
    # TDA numbers are those of the 2019/2022 rules.
    Entry(
        "blind_wrong_amount",
        "warning",
        ("Before the deal, have the blind (or ante) corrected to the configured amount.",),
        "Seed 000: the dealer checks the blinds before dealing; seeds 001 and 003: the small "
        "blind is half the big blind",
    ),
    Entry(
        "action_out_of_turn",
        "warning",
        (
            "The chips stay in the betting area.",
            "The skipped seat acts now.",
            "The out-of-turn action is binding if the action to it does not change; if it "
            "changes (a bet or raise), that player may call, raise or fold again.",
        ),
        "RR: action out of turn",
        tda_rule="TDA 53",
    ),
    Entry(
        "bet_below_minimum",
        "warning",
        ("Complete the bet to the minimum: the big blind.",),
        "Seeds 000 and 003: an opening bet is at least the big blind",
        tda_rule="TDA 43",
    ),
    Entry(
        "raise_below_minimum",
        "warning",
        (
            "50 % or more of a full raise: complete it to the minimum raise.",
            "Less than 50 %: it is a call; the extra chips go back to the player.",
        ),
        "RR: a raise is at least the previous bet or raise of the round (seed 003: at least double "
        "the bet); an all-in for less does not reopen the betting",
        tda_rule="TDA 43, 47-A",
    ),
    Entry(
        "bet_over_limit",
        "warning",
        ("Reduce the bet to the limit; the chips above it go back to the player.",),
        "RR: pot limit, at most the pot; fixed limit, the limit amount, a bet and three raises a round",
    ),
    Entry(
        "chips_taken_back",
        "warning",
        ("Chips released in the pot stay: put them back in the betting area.",),
        "Seed 001: chips are in the pot as soon as they are bet",
        tda_rule="TDA 42",
    ),
    Entry(
        "chips_on_vacant_seat",
        "warning",
        ("Remove the chips from the empty seat's betting area.",),
        "Seed 000: players cannot place chips on vacant places",
    ),
    Entry(
        "premature_sweep",
        "warning",
        (
            "Return the bets to the betting areas as they were.",
            "Finish the round; sweep when every seat still in has matched the highest bet or is all in.",
        ),
        "Seed 000: the round ends when every player still in has called; then the bets are gathered",
    ),
    Entry(
        "uncalled_bet_not_returned",
        "warning",
        ("Return the uncalled part of the bet to the player who bet it.",),
        "Seed 001: the chips of a bet nobody called go back to the player",
    ),
    Entry(
        "pot_awarded_wrong",
        "critical",
        (
            "Stop: do not start the next hand.",
            "Take the chips back from the seats that got them.",
            "Award each pot to its winners as the engine names them.",
        ),
        "Seeds 000 and 001: main and side pots, each to the best hand among the players in it",
        tda_rule="TDA 21, 22: each pot separately; a wrong award is corrected before the next hand",
    ),
    Entry(
        "split_wrong",
        "warning",
        ("Redo the split: equal shares, the odd chips as the house rule says.",),
        "Seed 002: identical hands split the pot evenly",
        tda_rule="TDA 20, 21: split as evenly as possible, each pot separately",
    ),
    Entry(
        "odd_chip_wrong",
        "warning",
        ("Move the odd chip to the seat the house rule names.",),
        "House rule, by default seed 001: the odd chip goes to the player who showed first "
        "(RR and TDA 20: the first winner left of the button)",
    ),
    Entry(
        "rake_wrong",
        "warning",
        ("Correct the rake to the configured amount: move the difference between the rake and the winners.",),
        "Seed 003: the winner gets the pot minus the legal deduction; [stakes] rake_percent and rake_cap",
    ),
    Entry(
        "fold_incomplete",
        "warning",
        ("Retrieve the other card of the folded hand into the muck.",),
        "Seed 000: the dealer gathers the folded cards and counts them",
    ),
    Entry(
        "hole_card_off_table",
        "info",
        ("Ask the player to keep the cards on the table.",),
        "Seed 000: the cards must remain visible on top of the table",
    ),
    Entry(
        "burn_face_up",
        "info",
        ("The card stays the burn.", "Deal the next board card as normal."),
        "Seed 001: the burn card is put aside without opening",
    ),
    Entry(
        "unknown_chip",
        "warning",
        ("Remove it; it is not a chip of this table.",),
        "Chip registry: only the table's registered chips are in play",
    ),
    # -- the session: buy-ins, rebuys, absence, the dealer, the last hands, tournament levels --
    Entry(
        "rebuy_during_hand",
        "warning",
        (
            "The added chips play no part in this hand.",
            "The seat's stack for this hand is what it had at the deal.",
        ),
        "House rule (session): no rebuy is accepted during a hand",
    ),
    Entry(
        "buy_in_out_of_limits",
        "warning",
        (
            "Call the floor: the floor decides.",
            "Deal the seat in only once its stack is within the limits.",
        ),
        "House rule (session): the minimum initial buy-in, fixed per session; the maximum rebuy",
    ),
    Entry(
        "absence_over_limit",
        "info",
        (
            "Call the floor.",
            "The chips are deposited in the player's name; the seat may be given to another player.",
        ),
        "House rule (session): the longest absence from the table, [table] max_absence_s",
    ),
    Entry(
        "dealer_changed_mid_hand",
        "warning",
        ("The change takes effect at the end of the hand.", "The floor is told."),
        "House rule (session): the house dealer cannot be changed during the game",
    ),
    Entry(
        "blinds_out_of_level",
        "warning",
        ("Correct the blind (or ante) to the level in force before the deal.",),
        "House rule (tournament): blinds and antes rise with the level clock; a hand plays the "
        "level in force when it began",
    ),
    Entry(
        "hand_after_last",
        "warning",
        ("The game was announced as ended: call the floor.",),
        "House rule (session): the end of the game is announced three hands before",
    ),
    Entry(
        "remedy_not_followed",
        "warning",
        (),
        "See the alert this remedy belongs to",
    ),
    Entry(
        "device_offline",
        "warning",
        ("Check the device's cable and power; the driver reconnects by itself.",),
        "Device health",
    ),
    Entry(
        "device_fault",
        "warning",
        ("Clear the fault at the device (jam, door, antenna) and check the cabling.",),
        "Device health",
    ),
    Entry(
        "bad_payload",
        "warning",
        ("Check the publisher of this topic: its message does not match the contract.",),
        "Table contract",
    ),
)

CATALOGUE: Final[dict[str, Entry]] = {entry.code: entry for entry in _ENTRIES}

#: The codes of "Chips, pots and showdown" (and ``unknown_chip``): tables that read chips or send
#: actions.
CHIP_CODES: Final[tuple[str, ...]] = (
    "blind_wrong_amount",
    "action_out_of_turn",
    "bet_below_minimum",
    "raise_below_minimum",
    "bet_over_limit",
    "chips_taken_back",
    "chips_on_vacant_seat",
    "premature_sweep",
    "uncalled_bet_not_returned",
    "pot_awarded_wrong",
    "split_wrong",
    "odd_chip_wrong",
    "rake_wrong",
    "fold_incomplete",
    "hole_card_off_table",
    "burn_face_up",
    "unknown_chip",
)

#: The codes of "The session" (docs/rules.md): buy-ins and rebuys (where stacks are read),
#: absence, the dealer, the last hands, tournament levels.
SESSION_CODES: Final[tuple[str, ...]] = (
    "rebuy_during_hand",
    "buy_in_out_of_limits",
    "absence_over_limit",
    "dealer_changed_mid_hand",
    "blinds_out_of_level",
    "hand_after_last",
)

#: The dealing irregularities of the catalogue (chip, session, device and payload codes excluded).
DEALING_CODES: Final[tuple[str, ...]] = tuple(
    e.code
    for e in _ENTRIES
    if e.code not in CHIP_CODES
    and e.code not in SESSION_CODES
    and e.code not in ("device_offline", "device_fault", "bad_payload")
)
