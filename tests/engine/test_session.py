"""The session around the hands through the pure core (docs/rules.md, "The session"): each code
followed and not followed, in both profiles, with chips and stacks read (or action inputs).

Seats 1, 2, 3. Each hand: the blinds from the stacks, the deal, the button and the small blind
fold, the big blind takes back its uncalled chip, the dealer sweeps and pushes the pot to it,
and it stacks its chips; the button moves one seat a hand.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from contract.models import Profile
from engine.api import EngineSettings
from engine.betting.terms import Stakes
from engine.catalogue import SESSION_CODES
from engine.session import Level, SessionRules, SessionState
from engine.step import Engine
from tests.engine.game import Played, game_settings, play
from tests.engine.scenario import registry

PROFILES: tuple[Profile, ...] = ("roberts", "tda")
#: 100 each, with small chips for the blinds.
STACKS = tuple(f"chips - stack:{seat} {amount}" for seat in (1, 2, 3) for amount in (4, 96))


def settings(profile: Profile, stakes: Stakes | None = None, **session: object) -> EngineSettings:
    base = game_settings(stakes, profile=profile)
    rules = SessionRules(stack_seats=frozenset({1, 2, 3}), **session)  # type: ignore[arg-type]
    return replace(base, session=rules)


def hand(
    button: int,
    *,
    first: bool = False,
    mid: tuple[str, ...] = (),
    blinds: tuple[int, int] = (1, 2),
    before: tuple[str, ...] = (),
) -> list[str]:
    """One hand won by the big blind uncontested (``mid``: steps right after the deal)."""
    small = button % 3 + 1
    big = small % 3 + 1
    order = [small, big, button] * 2
    setup = [] if first else ["shuffle A", f"button {button}"]
    return [
        *setup,
        *before,
        f"chips stack:{small} bet:{small} {blinds[0]}",
        f"chips stack:{big} bet:{big} {blinds[1]}",
        "new_hand",
        "deal " + " ".join(map(str, order)),
        *mid,
        f"fold {button}",
        f"fold {small}",
        f"return {big} {blinds[1] - blinds[0]}",
        "sweep",
        f"push {big} {2 * blinds[0]}",
        f"chips bet:{big} stack:{big}",
        "clear",
    ]


def run(steps: list[str], profile: Profile, **session: object) -> Played:
    stakes = session.pop("stakes", None)
    return play([1, 2, 3], 1, "\n".join(steps), settings=settings(profile, stakes, **session))  # type: ignore[arg-type]


@pytest.mark.parametrize("profile", PROFILES)
def test_hands_with_stacks_read_and_no_session_rule_broken_raise_nothing(profile: Profile) -> None:
    played = run([*STACKS, *hand(1, first=True), *hand(2), *hand(3)], profile, min_buy_in=100, max_rebuy=200)
    assert played.codes() == []
    assert len(played.hands) == 3
    assert [h.dealer for h in played.hands] == [None, None, None]


# -- rebuy_during_hand ---------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_chips_added_to_a_stack_during_the_hand_play_no_part_in_it(profile: Profile) -> None:
    # Seat 1 (the button, dealt in) adds 500 from his pocket mid-hand: the alert, and the hand
    # goes on with his stack as it was at the deal; the alert ends with the hand.
    played = run([*STACKS, *hand(1, first=True, mid=("chips - stack:1 500",))], profile)
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [(a.code, a.seat, a.severity) for a in raised] == [("rebuy_during_hand", 1, "warning")]
    assert "with the 100 it had at the deal" in raised[0].message
    assert played.codes("resolved") == ["rebuy_during_hand"]
    assert played.hands[0].result == "uncontested"


@pytest.mark.parametrize("profile", PROFILES)
def test_a_rebuy_between_hands_is_no_rebuy_during_a_hand(profile: Profile) -> None:
    played = run([*STACKS, *hand(1, first=True), "chips - stack:1 150", *hand(2)], profile, max_rebuy=200)
    assert played.codes() == []


def test_the_all_in_is_judged_on_the_stack_at_the_deal() -> None:
    # Seat 1 is dealt in with 100; 500 arrive mid-hand; then he pushes his 100 into the betting
    # area: that is his whole stack for the hand, an all in, whatever lies behind it.
    steps = [
        *STACKS,
        "chips stack:2 bet:2 1",
        "chips stack:3 bet:3 2",
        "new_hand",
        "deal 2 3 1 2 3 1",
        "chips - stack:1 500",
        "chips stack:1 bet:1 100",
        "fold 2",
        "fold 3",
    ]
    engine = Engine(settings("roberts"))
    played = play([1, 2, 3], 1, "\n".join(steps), engine=engine)
    assert played.codes() == ["rebuy_during_hand"]
    money = engine.state.machine.result_state.money
    assert money is not None
    assert 1 in money.state.betting.allin
    assert money.state.stack.get(1, 0) == 0  # the betting core never saw the 500


# -- buy_in_out_of_limits ------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_a_first_stack_below_the_minimum_buy_in_until_the_player_adds_to_it(profile: Profile) -> None:
    steps = [
        *STACKS[:4],
        "chips - stack:3 4",
        "chips - stack:3 36",
        *hand(1, first=True),
        "chips - stack:3 60",
        *hand(2),
    ]
    played = run(steps, profile, min_buy_in=100)
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [(a.code, a.seat) for a in raised] == [("buy_in_out_of_limits", 3)]
    assert "bought in for 40, below the session's minimum buy-in of 100" in raised[0].message
    assert played.codes("resolved") == ["buy_in_out_of_limits"]  # 60 more: within the limits


@pytest.mark.parametrize("profile", PROFILES)
def test_a_rebuy_over_the_maximum_until_the_excess_is_taken_back(profile: Profile) -> None:
    steps = [*STACKS, *hand(1, first=True), "chips - stack:2 300", *hand(2), "chips stack:2 - 100", *hand(3)]
    played = run(steps, profile, max_rebuy=200)
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [(a.code, a.seat) for a in raised] == [("buy_in_out_of_limits", 2)]
    assert "added 300 to its stack between hands, more than the maximum rebuy of 200" in raised[0].message
    assert played.codes("resolved") == ["buy_in_out_of_limits"]


def test_without_a_stack_zone_the_buy_in_codes_stay_silent() -> None:
    base = game_settings(profile="roberts")
    quiet = replace(base, session=SessionRules(min_buy_in=1000, max_rebuy=1))
    played = play(
        [1, 2, 3],
        1,
        "\n".join([*STACKS, *hand(1, first=True), "chips - stack:2 300", *hand(2)]),
        settings=quiet,
    )
    assert played.codes() == []


# -- absence_over_limit --------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_a_seat_away_longer_than_the_house_allows(profile: Profile) -> None:
    steps = [*STACKS, *hand(1, first=True), "leave 3", "wait 30", "dealer D-1", "wait 40", "dealer D-1"]
    played = run(steps, profile, max_absence_s=60)
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [(a.code, a.seat, a.severity) for a in raised] == [("absence_over_limit", 3, "info")]
    assert raised[0].message == (
        "Seat 3 has been empty with chips in its stack for 70 s, longer than the house's 60 s: "
        "call the floor."
    )
    assert played.state is not None
    assert played.state.away is not None
    assert [s.seat for s in played.state.away] == [3]
    back = run([*steps, "sit 3"], profile, max_absence_s=60)
    assert back.codes("resolved") == ["absence_over_limit"]
    assert back.state is not None
    assert back.state.away is None


@pytest.mark.parametrize("profile", PROFILES)
def test_a_seat_back_within_the_limit_or_emptied_raises_nothing(profile: Profile) -> None:
    back = run(
        [*STACKS, *hand(1, first=True), "leave 3", "wait 50", "sit 3", "wait 50", "dealer D-1"],
        profile,
        max_absence_s=60,
    )
    assert back.codes() == []
    # the floor took the chips (deposited in his name): nobody is away any more
    emptied = run(
        [*STACKS, *hand(1, first=True), "leave 3", "wait 50", "chips stack:3 - 100", "wait 50", "dealer D-1"],
        profile,
        max_absence_s=60,
    )
    assert emptied.codes() == []


# -- the dealer ----------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_the_dealer_names_the_hands_and_a_change_mid_hand_waits_for_its_end(profile: Profile) -> None:
    steps = [*STACKS, "dealer B-1", *hand(1, first=True, mid=("dealer B-2",)), *hand(2)]
    played = run(steps, profile)
    assert [h.dealer for h in played.hands] == ["B-1", "B-2"]
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [(a.code, a.severity) for a in raised] == [("dealer_changed_mid_hand", "warning")]
    assert played.codes("resolved") == ["dealer_changed_mid_hand"]  # at the hand's end
    assert played.state is not None
    assert played.state.dealer == "B-2"


def test_a_dealer_change_taken_back_during_the_hand_is_over() -> None:
    played = run([*STACKS, "dealer B-1", *hand(1, first=True, mid=("dealer B-2", "dealer B-1"))], "roberts")
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [a.message for a in raised] == [
        "A new dealer (B-2) was announced during the hand dealt by B-1: the change takes effect "
        "when this hand ends; the floor is told."
    ]
    assert played.codes("resolved") == ["dealer_changed_mid_hand"]
    assert [h.dealer for h in played.hands] == ["B-1"]
    assert played.state is not None
    assert played.state.dealer == "B-1"


@pytest.mark.parametrize("profile", PROFILES)
def test_a_dealer_change_between_hands_is_no_irregularity(profile: Profile) -> None:
    played = run([*STACKS, "dealer B-1", *hand(1, first=True), "dealer B-2", *hand(2)], profile)
    assert played.codes() == []
    assert [h.dealer for h in played.hands] == ["B-1", "B-2"]


# -- the last three hands ------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("announce", ["last_hands", "input last_hands"])
def test_the_last_three_hands_are_counted_and_a_fourth_is_one_too_many(
    profile: Profile, announce: str
) -> None:
    lefts: list[int | None] = []
    steps = [*STACKS, announce]
    played = run(steps, profile)
    assert played.state is not None
    lefts.append(played.state.hands_left)
    for count, button in enumerate((1, 2, 3), start=1):
        steps += hand(button, first=count == 1)
        played = run(steps, profile)
        assert played.state is not None
        lefts.append(played.state.hands_left)
    assert lefts == [3, 2, 1, 0]
    assert played.codes() == []  # the three announced hands: followed
    played = run([*steps, *hand(1)], profile)
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [(a.code, a.severity) for a in raised] == [("hand_after_last", "warning")]


# -- tournament levels ---------------------------------------------------------------------------

LEVELS = (Level(1, 2, 0, 20), Level(2, 4, 0, 20))


@pytest.mark.parametrize("profile", PROFILES)
def test_the_blinds_of_the_level_in_force_when_the_hand_began(profile: Profile) -> None:
    steps = [*STACKS, "level_start", *hand(1, first=True), "wait 1200", *hand(2, blinds=(2, 4))]
    played = run(steps, profile, levels=LEVELS)
    assert played.codes() == []
    assert played.state is not None
    assert played.state.level is not None
    assert (played.state.level.level, played.state.level.big_blind) == (2, 4)
    assert played.state.level.ends is None  # the last level lasts to the end


@pytest.mark.parametrize("profile", PROFILES)
def test_blinds_of_the_level_before_are_out_of_level(profile: Profile) -> None:
    steps = [*STACKS, "level_start", *hand(1, first=True), "wait 1200", *hand(2)]
    played = run(steps, profile, levels=LEVELS)
    raised = [a for a in played.alerts if a.status == "raised"]
    # both blinds of level 1 where level 2 is in force: one alert per seat
    assert [(a.code, a.seat) for a in raised] == [("blinds_out_of_level", 3), ("blinds_out_of_level", 1)]
    assert raised[0].message == (
        "Seat 3 posted 1 before the deal; its small blind is 2. "
        "Level 2 (2/4) was in force when the hand began."
    )
    assert "blind_wrong_amount" not in played.codes()


def test_the_level_and_its_end_are_in_the_state_from_the_clock() -> None:
    played = run([*STACKS, "level_start"], "roberts", levels=LEVELS)
    assert played.state is not None
    assert played.state.level is not None
    level = played.state.level
    assert (level.level, level.small_blind, level.big_blind) == (1, 1, 2)
    assert level.ends is not None
    assert level.ends - played.state.ts <= timedelta(minutes=20)
    # (level 2 stays in the state whatever comes next: a key with no time of its own)
    later = run([*STACKS, "level_start", "wait 1201", "dealer D-1", "last_hands"], "roberts", levels=LEVELS)
    assert later.state is not None
    assert later.state.level is not None
    assert later.state.level.level == 2


@pytest.mark.parametrize("profile", PROFILES)
def test_levels_with_action_inputs_and_no_chips(profile: Profile) -> None:
    base = game_settings(profile=profile, chips=False)
    tournament = replace(base, action_feed=True, session=SessionRules(levels=LEVELS))
    steps = ["level_start", "wait 1300", "new_hand", "action 2 post 1", "action 3 post 2", "deal all"]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=tournament)
    raised = [a for a in played.alerts if a.status == "raised"]
    assert [(a.code, a.seat) for a in raised] == [("blinds_out_of_level", 2), ("blinds_out_of_level", 3)]
    steps = ["level_start", "wait 1300", "new_hand", "action 2 post 2", "action 3 post 4", "deal all"]
    played = play([1, 2, 3], 1, "\n".join(steps), settings=tournament)
    assert played.codes() == []


# -- the state as plain data ---------------------------------------------------------------------


def test_the_session_state_round_trips_through_json() -> None:
    steps = [*STACKS, "dealer B-1", "last_hands", "level_start", *hand(1, first=True), "leave 3"]
    from testing.script import Table
    from tests.engine.runner import to_received

    engine = Engine(settings("roberts", levels=LEVELS, max_absence_s=60))
    table = Table(registry(), table_seats=9, chips=engine.state.settings.chips)
    from testing.script import setup_lines

    for line in [*(x for x in setup_lines([1, 2, 3], 1, ["A", "B"]) if x != "blinds"), *steps]:
        for message in table.run(line):
            engine.handle(to_received(message))
    state = engine.state.machine.session.state
    assert state.dealer == "B-1"
    assert state.hands_left == 2
    assert state.away
    assert SessionState.from_json(state.to_json()) == state


# -- one scripted case per code (tests/engine/test_scenarios.py holds the catalogue to them) -----


def raised_by_case(code: str, profile: Profile) -> set[str]:
    """The codes raised by the scripted case of ``code`` under ``profile``."""
    cases: dict[str, tuple[list[str], dict[str, object]]] = {
        "rebuy_during_hand": ([*STACKS, *hand(1, first=True, mid=("chips - stack:1 500",))], {}),
        "buy_in_out_of_limits": (
            [*STACKS, *hand(1, first=True), "chips - stack:2 300", *hand(2)],
            {"max_rebuy": 200},
        ),
        "absence_over_limit": (
            [*STACKS, *hand(1, first=True), "leave 3", "wait 61", "dealer D-1"],
            {"max_absence_s": 60},
        ),
        "dealer_changed_mid_hand": ([*STACKS, "dealer B-1", *hand(1, first=True, mid=("dealer B-2",))], {}),
        "blinds_out_of_level": (
            [*STACKS, "level_start", "wait 1200", *hand(1, first=True)],
            {"levels": LEVELS},
        ),
        "hand_after_last": ([*STACKS, "last_hands", *hand(1, first=True), *hand(2), *hand(3), *hand(1)], {}),
    }
    steps, session = cases[code]
    return set(run(steps, profile, **session).codes())


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("code", SESSION_CODES)
def test_each_session_code_has_its_case(code: str, profile: Profile) -> None:
    assert raised_by_case(code, profile) == {code}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_redeal_after_a_misdeal_is_the_same_hand_of_the_last_three(profile: Profile) -> None:
    # No chips here: the dealer calls a misdeal on the first announced hand and redeals it; the
    # fourth hand dealt (the engine's fifth) is the one after the last.
    plain = EngineSettings(seats=9, profile=profile, registry=registry())
    steps = [
        "last_hands",
        "new_hand",
        "deal 2 3",
        "misdeal",
        "clear",
        "use B",
        "new_hand",
        "deal all",
        "fold 2",
        "fold 3",
        "fold 4",
        "clear",
        "shuffle A",
        "use A",
        "button 2",
        "new_hand",
        "deal all",
        "fold 3",
        "fold 4",
        "fold 1",
        "clear",
        "shuffle B",
        "use B",
        "button 3",
        "new_hand",
        "deal all",
        "fold 4",
        "fold 1",
        "fold 2",
        "clear",
        "shuffle A",
    ]
    played = play([1, 2, 3, 4], 1, "\n".join(steps), settings=plain)
    assert played.codes() == []
    assert played.state is not None
    assert played.state.hands_left == 0
    played = play(
        [1, 2, 3, 4], 1, "\n".join([*steps, "use A", "button 4", "new_hand", "deal all"]), settings=plain
    )
    assert [(a.hand, a.code) for a in played.alerts if a.status == "raised"] == [(5, "hand_after_last")]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_dealer_and_the_last_hands_at_a_table_with_action_inputs(profile: Profile) -> None:
    # No chips: the betting comes as action inputs (a dealer's tablet).
    base = game_settings(profile=profile, chips=False)
    tablet = replace(base, action_feed=True)
    one = [
        "dealer B-1",
        "input last_hands",
        "new_hand",
        "action 2 post 1",
        "action 3 post 2",
        "deal all",
        "dealer B-2",
        "action 1 fold",
        "fold 1",
        "action 2 fold",
        "fold 2",
        "clear",
    ]
    played = play([1, 2, 3], 1, "\n".join(one), settings=tablet)
    assert [a.code for a in played.alerts if a.status == "raised"] == ["dealer_changed_mid_hand"]
    assert played.codes("resolved") == ["dealer_changed_mid_hand"]
    assert [(h.result, h.dealer) for h in played.hands] == [("uncontested", "B-1")]
    assert played.state is not None
    assert (played.state.dealer, played.state.hands_left) == ("B-2", 2)


@pytest.mark.parametrize("profile", PROFILES)
def test_once_the_table_is_empty_the_next_game_is_not_the_one_announced(profile: Profile) -> None:
    steps = [*STACKS, "last_hands", *hand(1, first=True), *hand(2), *hand(3), "leave 1 2 3"]
    played = run(steps, profile)
    assert played.state is not None
    assert played.state.hands_left is None
    played = run([*steps, "sit 1 2 3", *hand(1)], profile)
    assert played.codes() == []


@pytest.mark.parametrize("profile", PROFILES)
def test_a_redeal_after_a_level_ended_keeps_the_level_of_the_hand(profile: Profile) -> None:
    # The misdeal is called in level 1; the redeal comes after the level's end: it is the same
    # hand, its blinds (posted once, level 1's) stand.
    redealt = [
        *STACKS,
        "level_start",
        "chips stack:2 bet:2 1",
        "chips stack:3 bet:3 2",
        "new_hand",
        "deal 2 3",
        "misdeal",
        "clear",
        "wait 1200",
        "use B",
        "new_hand",
        "deal 2 3 1 2 3 1",
        "fold 1",
        "fold 2",
        "return 3 1",
        "sweep",
        "push 3 2",
        "chips bet:3 stack:3",
        "clear",
    ]
    played = run(redealt, profile, levels=LEVELS)
    assert played.codes() == []
    assert played.hands[-1].awarded[0].amount == 2  # level 1's blinds
