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
        "Robert's Rules, hold'em irregularities: the first hole card dealt exposed is a misdeal",
        tda_rule="TDA 35-A-7: the first or second hole card dealt exposed is a misdeal",
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
        "Robert's Rules, hold'em irregularities: an exposed hole card is replaced and becomes the burn",
        tda_rule="Robert's Rules, hold'em irregularities (no TDA rule): an exposed hole card is replaced "
        "and becomes the burn",
    ),
    Entry(
        "misdeal_exposed_multiple",
        "critical",
        _MISDEAL_STEPS,
        "Robert's Rules, hold'em irregularities: more than one exposed hole card is a misdeal",
        tda_rule="TDA 35-A-7: two exposed hole cards are a misdeal",
        misdeal=True,
    ),
    Entry(
        "extra_card",
        "warning",
        (
            "Take the extra card from the first seat dealt and put it back on top of the deck.",
            "Use it as the burn card for the flop.",
        ),
        "Robert's Rules, hold'em irregularities: one extra card goes back on the deck as the burn",
    ),
    Entry(
        "misdeal_extra_cards",
        "critical",
        _MISDEAL_STEPS,
        "Robert's Rules, hold'em irregularities: more than one extra card is a misdeal",
        tda_rule="TDA 35-A-5: a wrong number of cards is a misdeal",
        misdeal=True,
    ),
    Entry(
        "misdeal_wrong_count",
        "critical",
        (
            *_MISDEAL_STEPS,
            "(Robert's Rules: if the missing card can still go to that seat in proper sequence, "
            "deal it there instead and play on.)",
        ),
        "Robert's Rules, misdeals: a seat dealt a wrong number of cards is a misdeal",
        tda_remedy=(
            *_MISDEAL_STEPS,
            "(TDA 35-B, 37: the button may be dealt two cards in a row, or be given a missing "
            "card: that alone is no misdeal.)",
        ),
        tda_rule="TDA 35-A-5, 35-B, 37: a wrong number of cards is a misdeal, but for the button",
        misdeal=True,
    ),
    Entry(
        "misdeal_wrong_first_seat",
        "critical",
        _MISDEAL_STEPS,
        "Robert's Rules, misdeals: the first card dealt to the wrong seat is a misdeal",
        tda_rule="TDA 35-A-2: the first card dealt to the wrong seat is a misdeal",
        misdeal=True,
    ),
    Entry(
        "misdeal_empty_seat",
        "critical",
        _MISDEAL_STEPS,
        "Robert's Rules, misdeals: a card dealt to a seat not in the hand is a misdeal",
        tda_rule="TDA 35-A-3: a card dealt to a seat not in the hand is a misdeal",
        misdeal=True,
    ),
    Entry(
        "misdeal_seat_skipped",
        "critical",
        _MISDEAL_STEPS,
        "Robert's Rules, misdeals: a seat passed over in the deal is a misdeal",
        tda_rule="TDA 35-A-4: a seat passed over in the deal is a misdeal",
        misdeal=True,
    ),
    Entry(
        "misdeal_out_of_sequence",
        "critical",
        _MISDEAL_STEPS,
        "Robert's Rules, misdeals: a card dealt out of sequence is a misdeal",
        tda_rule="TDA 35-A: a card dealt out of sequence is a misdeal",
        misdeal=True,
    ),
    Entry(
        "button_misplaced",
        "warning",
        ("Before dealing, move the button to the seat the alert names.",),
        "Robert's Rules, the button: it moves to the next player in the game each hand",
        tda_rule="TDA 34-A: a misplaced button is corrected before substantial action",
    ),
    Entry(
        "blinds_missing",
        "warning",
        ("Stop the deal.", "Have the missing blind posted in its zone, then continue the deal."),
        "House rule (technical supplement): the dealer checks that the blinds are posted before dealing",
    ),
    Entry(
        "premature_flop",
        "warning",
        (
            "The flop may not be used: take the flop cards back and mix them with the stub.",
            "The burn card stays on the table.",
            "Complete the preflop betting, shuffle, cut and deal a new flop without burning.",
        ),
        "Robert's Rules, hold'em irregularities: board cards flopped before the betting was complete",
        tda_rule="TDA RP-5-A: premature flop",
    ),
    Entry(
        "premature_turn",
        "warning",
        (
            "Take the turn card out of play for this round and set it aside.",
            "Complete the flop betting, then burn and turn what would have been the river as the turn.",
            "After that betting round reshuffle the stub with the set-aside card "
            "(not the burns or discards), cut and deal the river without burning.",
        ),
        "Robert's Rules, hold'em irregularities: the turn card turned before the betting was complete",
        tda_remedy=(
            "Take the turn card back and reshuffle the stub with it now.",
            "Complete the flop betting, cut and deal the turn without burning.",
        ),
        tda_rule="TDA RP-5-B: premature turn",
    ),
    Entry(
        "premature_river",
        "warning",
        (
            "Take the river card back and reshuffle the stub with it.",
            "Complete the turn betting, cut and deal the river without burning.",
        ),
        "Robert's Rules, hold'em irregularities: the river card turned before the betting was complete",
        tda_rule="TDA RP-5-C: premature river",
    ),
    Entry(
        "board_too_many_cards",
        "warning",
        (
            "Take this street's board cards back and mix them with the stub; the burn stays.",
            "Shuffle, cut and redeal the street without burning.",
        ),
        "Robert's Rules, hold'em irregularities: too many board cards turned",
        tda_remedy=(
            "Scramble the four flop cards face down; one chosen at random becomes the burn.",
            "The other three are the flop.",
        ),
        tda_rule="TDA 39-A: four cards on the flop",
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
        "Robert's Rules, hold'em irregularities: failure to burn a card",
        tda_remedy=(
            "Before any action on it: take the card back, scramble it with the stub, burn and deal.",
            "Once action has been taken on it the card stands: play on.",
        ),
        tda_rule="TDA 39-B: a board card dealt without a burn",
    ),
    Entry(
        "extra_burn",
        "warning",
        (
            "Put one burn card back on top of the deck: it is the next burn.",
            "Deal the street with the cards that would have come.",
        ),
        "Robert's Rules, hold'em irregularities: one burn card before each street",
        tda_rule="TDA 38: one burn card before each street, never more",
    ),
    Entry(
        "fouled_deck",
        "critical",
        (
            "Stop play: the deck is fouled; all action is void.",
            "Return all chips in the pot to the players who wagered them.",
            "Replace the deck and redeal with the same button.",
        ),
        "Robert's Rules, irregularities: a fouled deck voids the hand",
        tda_rule="TDA 35-E: a fouled deck (a duplicate or a foreign card) voids the hand",
        misdeal=True,
    ),
    Entry(
        "deck_check_failed",
        "critical",
        ("Do not deal this deck.", "Switch to the other deck and call the floor."),
        "House rule (technical supplement): a deck is counted and checked before it is played",
    ),
    Entry(
        "board_claim_forfeited",
        "info",
        ("That seat has no claim to the pot: award it among the hands still tabled.",),
        "Robert's Rules, playing the board: declare it before throwing the cards away",
        tda_remedy=(
            "That seat has no claim to the pot (all hole cards must be tabled to win): award it among "
            "the hands still tabled.",
        ),
        tda_rule="TDA 19: all hole cards must be tabled to win",
    ),
    # -- chips, pots and showdown (tables that read chips or send actions) ----------------------
    # TDA numbers are those of the 2019/2022 rules.
    Entry(
        "blind_wrong_amount",
        "warning",
        ("Before the deal, have that seat take back or add chips to post the amount the alert names.",),
        "House rule (technical supplement): the small blind is half the big blind; the dealer checks "
        "the blinds before dealing",
    ),
    Entry(
        "action_out_of_turn",
        "warning",
        (
            "The out-of-turn chips stay in the betting area.",
            "The skipped seat the alert names acts now.",
            "The out-of-turn action is binding if the action to it does not change; if it "
            "changes (a bet or raise), that player may call, raise or fold again.",
        ),
        "Robert's Rules, action out of turn: binding if the action to it does not change",
        tda_rule="TDA 53: action out of turn",
    ),
    Entry(
        "bet_below_minimum",
        "warning",
        ("Have the player complete the bet to the minimum bet the alert names.",),
        "House rule (technical supplement): a bet is at least the big blind",
        tda_rule="TDA 43: a bet is at least the big blind",
    ),
    Entry(
        "raise_below_minimum",
        "warning",
        (
            "A raise of 50 % or more of a full raise: the player completes it to the minimum raise.",
            "Less than 50 %: it is a call; the chips above the call go back to the player.",
        ),
        "Robert's Rules, raises: at least the previous bet or raise of the round; an all-in for less "
        "does not reopen the betting",
        tda_rule="TDA 43, 47-A: at least the previous bet or raise; half or more is made a full raise",
    ),
    Entry(
        "bet_over_limit",
        "warning",
        ("Reduce the bet to the limit; the chips above it go back to the player.",),
        "Robert's Rules, limits: pot limit at most the pot; fixed limit the limit amount, a bet and "
        "three raises a round",
    ),
    Entry(
        "chips_taken_back",
        "warning",
        ("Chips released in the pot stay: the player puts them back in the betting area.",),
        "House rule (game rules): chips are in the pot as soon as they are bet",
        tda_rule="TDA 42: chips released in the pot stay",
    ),
    Entry(
        "chips_on_vacant_seat",
        "warning",
        ("Take the chips off the vacant seat's betting area and give them back to their owner.",),
        "House rule (technical supplement): no chips on a vacant place",
    ),
    Entry(
        "premature_sweep",
        "warning",
        (
            "Return the bets to the betting areas as they were.",
            "Finish the round; sweep when every seat still in has matched the highest bet or is all in.",
        ),
        "House rule (technical supplement): the bets are gathered once every player still in has called",
    ),
    Entry(
        "uncalled_bet_not_returned",
        "warning",
        ("Return the uncalled part of the bet to the player who bet it.",),
        "House rule (game rules): a bet nobody called goes back to the player who made it",
    ),
    Entry(
        "pot_awarded_wrong",
        "critical",
        (
            "Stop: do not start the next hand.",
            "Take the chips back from the seats that got them.",
            "Award each pot to its winners as the engine names them.",
        ),
        "House rule (game rules): the main pot and each side pot go to the best hand among the players in it",
        tda_rule="TDA 21, 22: each pot awarded separately; a wrong award is corrected before the next hand",
    ),
    Entry(
        "split_wrong",
        "warning",
        ("Take the chips back and split again: each seat the share the alert names.",),
        "House rule (game rules): identical hands split the pot evenly",
        tda_rule="TDA 20, 21: a pot is split as evenly as possible, each pot separately",
    ),
    Entry(
        "odd_chip_wrong",
        "warning",
        ("Move the odd chip to the seat the alert names.",),
        "House rule (odd chip): to the winner who showed first, or as configured to the first winner "
        "left of the button (Robert's Rules, TDA 20)",
    ),
    Entry(
        "rake_wrong",
        "warning",
        ("Move chips between the rake and the main pot's winner until the rake holds this hand's rake.",),
        "House rule (rake): the house takes its configured share of a pot that saw a flop, up to its cap; "
        "the winners get the rest",
    ),
    Entry(
        "fold_incomplete",
        "warning",
        ("Put the folded seat's other card in the muck.",),
        "House rule (technical supplement): the dealer gathers the folded cards and counts them",
    ),
    Entry(
        "hole_card_off_table",
        "info",
        ("Ask the player to keep the cards on the table.",),
        "House rule (technical supplement): the cards stay visible on top of the table",
    ),
    Entry(
        "burn_face_up",
        "info",
        ("The card stays the burn.", "Deal the next board card as normal."),
        "House rule (game rules): the burn card is put aside without being turned",
    ),
    Entry(
        "unknown_chip",
        "warning",
        ("Take the tag off the table: it is not a chip of this table.",),
        "House rule (chips): only the table's registered chips are in play",
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
        "House rule (remedies): the remedy of an alert is carried out before play goes on",
    ),
    Entry(
        "device_offline",
        "warning",
        ("Check the device's cable and power; the driver reconnects by itself.",),
        "House rule (devices): a hand is tracked only while its card readers are online",
    ),
    Entry(
        "device_fault",
        "warning",
        ("Clear the fault at the device (jam, door, antenna) and check the cabling.",),
        "House rule (devices): a device fault is cleared before play relies on the device",
    ),
    Entry(
        "bad_payload",
        "warning",
        ("Play on; call the technician: a device sends messages the table cannot read.",),
        "House rule (devices): every device message follows the table contract",
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
