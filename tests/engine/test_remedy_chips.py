"""A chip finding whose remedy is a correction is put right before play goes on (issue 21, section
4; docs/engine.md, "Remedies followed to their end"): the next street dealt (its betting round
over) or the next hand started with the correction never made is ``remedy_not_followed``, under
both profiles; within the dealer's reaction time of a critical alert nothing is judged.

The hands are those of tests/engine/game_codes.py (seats 1, 2, 3, button on 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from contract.models import Profile
from engine.betting.terms import Stakes
from tests.engine.game import Played, game_settings, play
from tests.engine.game_codes import BOARD, DEAL, DEALT, FOREIGN, ON_FLOP, ON_RIVER, POT_LIMIT

PROFILES: tuple[Profile, ...] = ("roberts", "tda")
#: The next hand, the button on 2: seat 3 posts the small blind, seat 1 the big, then the deal.
NEXT_HAND = ("collect", "clear", "next_button", "shuffle B", "use B", "bet 3 1", "bet 1 2", "deal 3")
#: Preflop called around, swept: the flop's betting is next (the big blind checks).
LIMPED = (*DEALT, "bet 1 2", "bet 2 1", "sweep")


@dataclass(frozen=True)
class Step:
    """A chip finding, the next step with the correction made, and without it."""

    name: str
    code: str
    seat: int
    mistake: tuple[str, ...]
    corrected: tuple[str, ...]
    uncorrected: tuple[str, ...]
    message: str
    stakes: Stakes | None = None

    def play(self, profile: Profile, *steps: str) -> Played:
        settings = game_settings(self.stakes, profile=profile)
        return play([1, 2, 3], 1, "\n".join([*self.mistake, *steps]), settings=settings)


STEPS = (
    Step(
        "a flop bet of 1, the turn dealt",
        "bet_below_minimum",
        2,
        (*ON_FLOP, "bet 2 1", "fold 3"),
        ("bet 2 1", "bet 1 2", "sweep", *BOARD[2:4]),  # completed to the big blind, called
        ("bet 1 1", "sweep", *BOARD[2:4]),  # called as it lies
        "The turn was dealt before seat 2's bet below the minimum was completed.",
    ),
    Step(
        "a raise of 2 over a raise of 4, the flop dealt",
        "raise_below_minimum",
        2,
        (*DEALT, "bet 1 6", "bet 2 7", "fold 3"),
        ("bet 2 2", "bet 1 4", "sweep", *BOARD[:2]),  # made a full raise, to 10, called
        ("bet 1 2", "sweep", *BOARD[:2]),
        "The flop was dealt before seat 2's raise below the minimum was made a full raise or a call.",
    ),
    Step(
        "a pot-limit bet over the pot, the turn dealt",
        "bet_over_limit",
        2,
        (*ON_FLOP, "bet 2 11", "fold 3"),
        ("return 2 5", "bet 1 6", "sweep", *BOARD[2:4]),  # reduced to the pot, 6, called
        # (judged once the excess's absence could have been reported: a step 7 s later)
        ("bet 1 11", "sweep", *BOARD[2:4], "wait 7", "bet 2 2"),
        "The turn was dealt before seat 2's bet over the limit was reduced to the limit.",
        stakes=POT_LIMIT,
    ),
    Step(
        "chips taken back, the flop dealt",
        "chips_taken_back",
        1,
        (*DEALT, "bet 1 6", "return 1 5", "wait 4", "dup"),
        ("bet 1 5", "bet 2 5", "bet 3 4", "sweep", *BOARD[:2]),  # put back, called
        ("bet 2 5", "bet 3 4", "sweep", *BOARD[:2]),
        "The flop was dealt before the chips seat 1 took back were put back in its betting area.",
    ),
    Step(
        "chips on a vacant seat, the flop dealt",
        "chips_on_vacant_seat",
        5,
        (*LIMPED, "bet 5 5"),
        ("return 5 5", *BOARD[:2]),  # removed
        (*BOARD[:2], "wait 7", "bet 2 2"),
        "The flop was dealt before the chips in the betting area of vacant seat 5 were removed.",
    ),
    Step(
        "the uncalled part swept, the turn dealt",
        "uncalled_bet_not_returned",
        2,
        (*ON_FLOP, "bet 2 20", "bet 3 10", "all_in 3", "fold 1", "sweep"),
        ("chips pot bet:2 10", "return 2 10", *BOARD[2:4]),  # back to its owner
        (*BOARD[2:4], "wait 7", *BOARD[4:]),
        "The turn was dealt before the uncalled part of seat 2's bet was returned to it.",
    ),
    Step(
        "one card of a fold left at the seat, the turn dealt",
        "fold_incomplete",
        3,
        (*ON_FLOP, "bet 2 4", "move seat:3#0 muck", "wait 3", "bet 1 4"),
        ("move seat:3 muck", "sweep", *BOARD[2:4]),  # retrieved into the muck
        ("sweep", *BOARD[2:4]),
        "The turn was dealt before the other card of seat 3's fold was retrieved into the muck.",
    ),
    Step(
        "a pot-limit bet over the pot on the river, the next hand dealt",
        "bet_over_limit",
        2,
        (*ON_RIVER, "bet 2 11", "fold 3"),
        # reduced to the pot and called; seat 1's aces win 6 + 12
        ("return 2 5", "bet 1 6", "sweep", "show 2", "show 1", "push 1 18", "wait 3", *NEXT_HAND),
        ("bet 1 11", "sweep", "show 2", "show 1", "push 1 28", "wait 3", *NEXT_HAND),
        "The next hand was started before seat 2's bet over the limit was reduced to the limit.",
        stakes=POT_LIMIT,
    ),
)
PARAMS = [pytest.param(step, profile, id=f"{step.name}:{profile}") for step in STEPS for profile in PROFILES]


def _not_followed(played: Played) -> list[tuple[int | None, str]]:
    return [
        (a.seat, a.message) for a in played.alerts if a.code == "remedy_not_followed" and a.status == "raised"
    ]


@pytest.mark.parametrize(("step", "profile"), PARAMS)
def test_the_correction_made_before_the_next_step(step: Step, profile: Profile) -> None:
    played = step.play(profile, *step.corrected)
    assert played.codes("raised") == [step.code]  # nothing else: the corrected hand plays on
    assert step.code in played.codes("resolved")
    assert _not_followed(played) == []


@pytest.mark.parametrize(("step", "profile"), PARAMS)
def test_the_next_step_with_the_correction_never_made(step: Step, profile: Profile) -> None:
    played = step.play(profile, *step.uncorrected)
    assert _not_followed(played) == [(step.seat, step.message)]
    (alert,) = [a for a in played.alerts if a.code == "remedy_not_followed" and a.status == "raised"]
    assert alert.rule is not None
    assert alert.rule == next(a.rule for a in played.alerts if a.code == step.code)
    assert alert.remedy


@pytest.mark.parametrize("profile", PROFILES)
def test_the_next_hand_within_the_reaction_time_of_a_critical_alert(profile: Profile) -> None:
    """The river's bet over the limit left standing, the pot pushed to the wrong seat (critical)
    and the next hand started at once: within the reaction time nothing is judged; the next
    hand dealt 3 s later is judged (both remedies, the push's and the bet's)."""
    step = STEPS[-1]
    wrong_push = ("bet 1 11", "sweep", "show 2", "show 1", "push 2 28")
    at_once = step.play(profile, *wrong_push, "new_hand")
    assert "pot_awarded_wrong" in at_once.codes()
    assert at_once.state is not None
    assert at_once.state.hand == 2
    assert _not_followed(at_once) == []
    later = step.play(profile, *wrong_push, "wait 3", *NEXT_HAND)
    assert (2, step.message) in _not_followed(later)
    assert len(_not_followed(later)) == 2


# -- a fouled deck: the chips go back to the players who wagered them -----------------------------

#: The flop bet and called around (2 each, a pot of 12); the turn is a card of deck B: fouled.
FOULED_ON_TURN = (*ON_FLOP, "bet 2 2", "bet 3 2", "bet 1 2", "sweep", "burn", "turn =B:8s")
#: Preflop seat 1 raises to 6, seat 2 calls; the flop holds a card of deck B: fouled, the bets
#: still in the betting areas.
FOULED_ON_FLOP = (*DEALT, "bet 1 6", "bet 2 5", "burn", "flop =B:9d =5h =Jc")
#: The redeal from the other deck, the blinds posted (those in front of seats 2 and 3 stand).
REDEAL = ("clear", "shuffle B", "use B", DEAL)
FOULED = {
    "the bets taken back by those who bet them, then the redeal": (
        *FOULED_ON_FLOP,
        "wait 3",
        "return 1 6",
        "return 2 5",
        *REDEAL,
    ),
    "the pot handed back off the table, then the redeal": (
        *FOULED_ON_TURN,
        "wait 3",
        "chips pot - 12",
        "bet 2 1",
        "bet 3 2",
        *REDEAL,
    ),
}
FOULED_WRONG = {
    "a bet of seat 2 given to seat 1": (
        (*FOULED_ON_FLOP, "wait 3", "chips bet:2 stack:1 6"),
        (1, "A chip wagered by seat 2 in the hand void by the fouled deck went to seat 1."),
    ),
    "the redeal with the pot still in the middle": (
        (*FOULED_ON_TURN, "wait 3", "bet 2 1", "bet 3 2", *REDEAL),
        (None, "The redeal was started with chips of the hand void by the fouled deck still in the pot."),
    ),
}


def _play3(profile: Profile, steps: tuple[str, ...]) -> Played:
    return play([1, 2, 3], 1, "\n".join(steps), settings=game_settings(profile=profile))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", sorted(FOULED))
def test_a_fouled_decks_chips_returned(name: str, profile: Profile) -> None:
    played = _play3(profile, FOULED[name])
    # nothing else: the void hand's chip moves are not judged as bets (its action is void)
    assert played.codes("raised") == ["fouled_deck"]
    assert played.codes("resolved") == ["fouled_deck"]  # by the redeal
    assert played.state is not None
    assert played.state.hand == 2


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", sorted(FOULED_WRONG))
def test_a_fouled_decks_chips_not_returned(name: str, profile: Profile) -> None:
    steps, expected = FOULED_WRONG[name]
    played = _play3(profile, steps)
    assert played.codes("raised") == ["fouled_deck", "remedy_not_followed"]
    assert _not_followed(played) == [expected]
    (alert,) = [a for a in played.alerts if a.code == "remedy_not_followed"]
    assert alert.rule == next(a.rule for a in played.alerts if a.code == "fouled_deck")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_fouled_decks_chips_moved_within_the_reaction_time(profile: Profile) -> None:
    """The chips pushed to a wrong seat 50 ms after the fouled deck (critical): the same moment,
    not judged (docs/engine.md, "The dealer's reaction time")."""
    played = _play3(profile, (*FOULED_ON_TURN, "chips pot stack:1 12"))
    assert played.codes("raised") == ["fouled_deck"]


# -- a misdeal: the redeal with the same blinds ---------------------------------------------------

#: The first card to seat 3 (seat 2 is first): a misdeal; the cards retrieved, the other deck.
MISDEALT = ("bet 2 1", "bet 3 2", "new_hand", "deal 3", "wait 3", "clear", "shuffle B", "use B")


@pytest.mark.parametrize("profile", PROFILES)
def test_the_redeal_with_the_same_blinds(profile: Profile) -> None:
    played = _play3(profile, (*MISDEALT, DEAL))
    assert played.codes("raised") == ["misdeal_wrong_first_seat"]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_redeal_with_a_blind_changed(profile: Profile) -> None:
    """The big blind made 1 before the redeal: judged as any hand's blind (the button stays, so
    the seats are the same; the amounts are the stakes')."""
    played = _play3(profile, (*MISDEALT, "return 3 1", DEAL))
    assert played.codes("raised") == ["misdeal_wrong_first_seat", "blind_wrong_amount"]
    (wrong,) = [a for a in played.alerts if a.code == "blind_wrong_amount"]
    assert (wrong.seat, wrong.hand) == (3, 2)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_correction_judged_at_the_next_street_is_not_judged_again_at_the_next_hand(
    profile: Profile,
) -> None:
    step = next(s for s in STEPS if s.name == "a pot-limit bet over the pot, the turn dealt")
    # judged at the river, 7 s after the turn (past the time the evidence could take)
    judged = ("bet 1 11", "sweep", *BOARD[2:4], "wait 7", *BOARD[4:])
    played = step.play(profile, *judged, "show 2", "show 1", "push 1 28", "wait 3", *NEXT_HAND)
    assert played.state is not None
    assert played.state.hand == 2
    assert _not_followed(played) == [(2, step.message)]


#: A foreign tag in seat 2's betting area, then the flop.
FOREIGN_TAG = (*DEALT, f"tag bet:2 {FOREIGN} on", "bet 1 2", "bet 2 1", "sweep", *BOARD[:2])
#: Seat 2 bets the flop, the others fold: its bet back, the limped pot of 6 its own.
TO_THE_NEXT_HAND = ("bet 2 2", "fold 3", "fold 1", "return 2 2", "push 2 6", "wait 3")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_foreign_tag_is_judged_at_the_next_hand_not_the_next_street(profile: Profile) -> None:
    """Taking a tag off the table shows only after the reader's sweeps without it (seconds): a
    street dealt at once may come before that evidence, so the tag left on the table is judged
    when the next hand starts, not at the next street."""
    step = Step("a foreign tag", "unknown_chip", 2, FOREIGN_TAG, (), (), "")
    at_the_flop = step.play(profile)
    assert "unknown_chip" in at_the_flop.codes("raised")
    assert _not_followed(at_the_flop) == []
    removed = step.play(profile, f"tag bet:2 {FOREIGN} off", *TO_THE_NEXT_HAND, *NEXT_HAND)
    assert _not_followed(removed) == []
    left = step.play(profile, *TO_THE_NEXT_HAND, *NEXT_HAND)
    assert left.state is not None
    assert left.state.hand == 2
    assert _not_followed(left) == [
        (2, "The next hand was started before the tag that is no chip of this table was taken off the table.")
    ]


# -- corrections taken off the table: their absence is reported after the next street -------------


@dataclass(frozen=True)
class OffTable:
    """A chip finding corrected by taking chips off the table where no stack is read (``late``:
    the reader reports them absent only at ``absences``, seconds later), then the next street."""

    name: str
    code: str
    seat: int
    mistake: tuple[str, ...]
    removed: tuple[str, ...]  # the correction, its absences reported late
    left: tuple[str, ...]  # play as it goes on with no correction
    street: tuple[str, ...]
    after: tuple[str, ...]  # the next steps, past the time the evidence could take
    message: str
    stakes: Stakes | None = None

    def play(self, profile: Profile, *steps: str) -> Played:
        settings = game_settings(self.stakes, profile=profile)
        return play([1, 2, 3], 1, "\n".join([*self.mistake, *steps]), settings=settings)


OFF_TABLE = (
    OffTable(
        "a pot-limit bet over the pot reduced, the turn dealt at once",
        "bet_over_limit",
        2,
        (*ON_FLOP, "bet 2 11", "fold 3"),
        ("return 2 5 late", "bet 1 6", "sweep"),  # the excess handed back; 6 called
        ("bet 1 11", "sweep"),
        BOARD[2:4],
        ("bet 2 2",),
        "The turn was dealt before seat 2's bet over the limit was reduced to the limit.",
        stakes=POT_LIMIT,
    ),
    OffTable(
        "chips on a vacant seat removed, the flop dealt at once",
        "chips_on_vacant_seat",
        5,
        (*LIMPED, "bet 5 5"),
        ("return 5 5 late",),
        (),
        BOARD[:2],
        ("bet 2 2",),
        "The flop was dealt before the chips in the betting area of vacant seat 5 were removed.",
    ),
    OffTable(
        "the uncalled part handed back from the pot, the turn dealt at once",
        "uncalled_bet_not_returned",
        2,
        (*ON_FLOP, "bet 2 20", "bet 3 10", "all_in 3", "fold 1", "sweep"),
        ("chips pot - 10 late",),
        (),
        BOARD[2:4],
        BOARD[4:],
        "The turn was dealt before the uncalled part of seat 2's bet was returned to it.",
    ),
)
OFF_TABLE_PARAMS = [
    pytest.param(case, profile, id=f"{case.code}:{profile}") for case in OFF_TABLE for profile in PROFILES
]


@pytest.mark.parametrize(("case", "profile"), OFF_TABLE_PARAMS)
def test_a_correction_off_the_table_reported_after_the_street_was_in_time(
    case: OffTable, profile: Profile
) -> None:
    """The chips' absence comes a second after the street (the reader's sweeps without them):
    the correction came before it, and nothing is raised; the finding is resolved."""
    played = case.play(profile, *case.removed, *case.street, "wait 1", "absences", "wait 6", *case.after)
    assert _not_followed(played) == []
    assert played.codes("raised") == [case.code]
    assert case.code in played.codes("resolved")


@pytest.mark.parametrize(("case", "profile"), OFF_TABLE_PARAMS)
def test_a_correction_off_the_table_never_made(case: OffTable, profile: Profile) -> None:
    played = case.play(profile, *case.left, *case.street, "wait 7", *case.after)
    assert _not_followed(played) == [(case.seat, case.message)]
    (alert,) = [a for a in played.alerts if a.code == "remedy_not_followed" and a.status == "raised"]
    assert alert.rule == next(a.rule for a in played.alerts if a.code == case.code)


@pytest.mark.parametrize(("case", "profile"), OFF_TABLE_PARAMS)
def test_chips_reported_gone_long_after_the_street_were_no_correction_before_it(
    case: OffTable, profile: Profile
) -> None:
    """Their absence comes 7 s after the street: later than a reader takes to report chips
    taken away before it (docs/engine.md), so they left after it."""
    played = case.play(profile, *case.removed, *case.street, "wait 7", "absences", *case.after)
    assert _not_followed(played) == [(case.seat, case.message)]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_next_hand_before_the_evidence_could_come_judges_the_street(profile: Profile) -> None:
    """The next hand started at once after the flop: the vacant seat's chips are judged then, as
    of the flop (once), the correction reported absent before it counting."""
    case = OFF_TABLE[1]
    left = case.play(profile, *case.street, "new_hand")
    assert _not_followed(left) == [(case.seat, case.message)]
    removed = case.play(profile, *case.removed, *case.street, "absences", "new_hand")
    assert _not_followed(removed) == []
