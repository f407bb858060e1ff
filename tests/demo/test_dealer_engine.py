"""The dealer's scripts through the pure engine core: each hand raises exactly its mistakes.

The generator and the engine were written apart from the catalogue; this is where they must
agree (the demo's precision and recall of 1.0 depend on it), with no devices or broker between.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from itertools import groupby

import pytest

from config.chips import ChipRegistry
from config.registry import load_registry
from contract.models import Profile
from engine.api import DeviceEventReceived, EngineSettings, InputReceived, Received
from engine.betting.terms import Stakes
from engine.session import Level, SessionRules
from engine.step import Engine
from simulators.dealer import (
    DealerSettings,
    InfeasibleMistake,
    MoveChips,
    Step,
    VirtualDealer,
    raisable_codes,
)
from simulators.dealer.chips import BlindLevel, Structure, TableStakes, chip_registry
from testing.events import SourcedEvent, SourcedInput, to_events, to_stream
from tests.conftest import EXAMPLE_REGISTRY

REGISTRY = load_registry(EXAMPLE_REGISTRY)
START = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


CHIPS = chip_registry()
#: The house's session rules at a table that reads chips (its stacks too): as the demo's.
MAX_REBUY = 100
MAX_ABSENCE_S = 1.0
#: A tournament's levels: short (a hand takes a minute or two of event time), so that the first
#: dozen hands see them all; the last lasts to the end.
LEVELS = (
    BlindLevel(1, 2, 0, 4.0),
    BlindLevel(2, 4, 0, 4.0),
    BlindLevel(3, 6, 1, 4.0),
    BlindLevel(5, 10, 1, 4.0),
)


def _session(
    profile: Profile,
    seats: int,
    seed: int,
    hands: int,
    structure: Structure | None = None,
    mistake_rate: float = 0.4,
    *,
    tournament: bool = False,
) -> tuple[Counter[str], list[str]]:
    """A session through the engine; ``structure``: a table that reads chips (and its stacks,
    with the demo's maximum rebuy and longest absence), in that game; ``tournament``: by the
    clock through :data:`LEVELS` (the dealer is told the clock as the events' time has it)."""
    levels = LEVELS if tournament else ()
    stakes = (
        None
        if structure is None
        else TableStakes(
            structure=structure,
            ante=1 if seed % 2 and not levels else 0,
            rake_percent=0 if levels else 5,
            rake_cap=0 if levels else 3,
            levels=levels,
        )
    )
    engine = Engine(
        EngineSettings(
            seats=seats,
            profile=profile,
            registry=REGISTRY,
            chips=None if stakes is None else ChipRegistry(CHIPS),
            stakes=None
            if stakes is None
            else Stakes(
                structure=stakes.structure,
                small_blind=stakes.small_blind,
                big_blind=stakes.big_blind,
                ante=stakes.ante,
                rake_percent=stakes.rake_percent,
                rake_cap=stakes.rake_cap,
            ),
            hole_card_off_s=60.0,
            session=SessionRules()
            if stakes is None
            else SessionRules(
                max_rebuy=MAX_REBUY,
                max_absence_s=MAX_ABSENCE_S,
                levels=tuple(Level(lv.small_blind, lv.big_blind, lv.ante, lv.minutes) for lv in levels),
                stack_seats=frozenset(range(1, seats + 1)),
            ),
        )
    )
    dealer = VirtualDealer(
        REGISTRY.decks,
        DealerSettings(
            seats=seats,
            profile=profile,
            mistake_rate=mistake_rate,
            all_in_rate=0.1,
            stakes=stakes,
            chip_values=CHIPS,
            hole_card_off_s=60.0,
            max_rebuy=0 if stakes is None else MAX_REBUY,
            max_absence_s=None if stakes is None else MAX_ABSENCE_S,
        ),
        seed=seed,
    )
    injected: Counter[str] = Counter()
    disagreements: list[str] = []
    clock: datetime | None = None  # the tournament clock's start (the level_start input)
    start = START
    for number in range(1, hands + 1):
        if not tournament:  # an hour a hand; a tournament's hands follow each other
            start = START + timedelta(hours=number)
        if clock is not None:
            dealer.clock_s = (start - clock).total_seconds()
        script = dealer.next_hand()
        injected.update(script.mistakes)
        raised: list[str] = []
        for item in to_stream(script.steps, start=start):
            received: Received
            if isinstance(item, SourcedEvent):
                received = DeviceEventReceived(item.device, item.event, item.event.ts)
            else:
                received = InputReceived(item.input, item.input.ts)
                if item.input.type == "level_start":
                    clock = item.input.ts
            start = received.received + timedelta(seconds=1)
            for alert in engine.handle(received).alerts:
                if alert.status == "raised":
                    raised.append(alert.code)
        if sorted(raised) != sorted(script.mistakes):
            disagreements.append(f"hand {script.hand}: injected {script.mistakes}, raised {raised}")
    return injected, disagreements


HOUSE = frozenset({"max_rebuy", "max_absence_s"})


@pytest.mark.parametrize("profile", ["roberts", "tda"])
@pytest.mark.parametrize(("seats", "seed"), [(9, 1), (6, 2), (10, 3), (3, 4)])
def test_every_hand_raises_exactly_the_injected_mistakes(profile: Profile, seats: int, seed: int) -> None:
    injected, disagreements = _session(profile, seats, seed, hands=120)
    assert not disagreements, "\n".join(disagreements[:10])
    assert sum(injected.values()) > 30


@pytest.mark.parametrize("profile", ["roberts", "tda"])
@pytest.mark.parametrize(
    ("structure", "seats", "seed"),
    [
        ("no_limit", 9, 1),
        ("pot_limit", 6, 2),
        ("fixed_limit", 10, 3),
        ("no_limit", 3, 4),
        ("pot_limit", 2, 5),
    ],
)
def test_with_chips_every_hand_raises_exactly_the_injected_mistakes(
    profile: Profile, structure: Structure, seats: int, seed: int
) -> None:
    injected, disagreements = _session(profile, seats, seed, hands=120, structure=structure)
    assert not disagreements, "\n".join(disagreements[:10])
    assert sum(injected.values()) > 20


def test_legal_chip_hands_raise_nothing() -> None:
    games: tuple[tuple[Structure, int], ...] = (("no_limit", 7), ("pot_limit", 8), ("fixed_limit", 9))
    for structure, seed in games:
        _, disagreements = _session("roberts", 9, seed, hands=150, structure=structure, mistake_rate=0.0)
        assert not disagreements, "\n".join(disagreements[:10])


def test_a_long_chip_session_exercises_every_code() -> None:
    """Seed 12 has drawn every code by hand 92 (it played 300 hands before)."""
    injected, disagreements = _session("roberts", 9, 12, hands=120, structure="pot_limit")
    assert not disagreements, "\n".join(disagreements[:10])
    assert set(injected) == set(raisable_codes("roberts", chips=True, house=HOUSE))


@pytest.mark.parametrize(
    ("profile", "structure", "seed"), [("roberts", "no_limit", 21), ("tda", "fixed_limit", 22)]
)
def test_a_tournament_raises_exactly_the_injected_mistakes(
    profile: Profile, structure: Structure, seed: int
) -> None:
    """Levels by the clock (every level is reached, the last lasts): each hand's blinds are
    those of its level, a hand close to a level's end waits for the next; a wrong blind is
    blinds_out_of_level. Seeds 21 and 22 have drawn the five codes below by hands 75 and 73 (they
    played 200 hands before)."""
    injected, disagreements = _session(profile, 9, seed, hands=100, structure=structure, tournament=True)
    assert not disagreements, "\n".join(disagreements[:10])
    house = HOUSE | {"levels"}
    assert set(injected) <= set(raisable_codes(profile, chips=True, house=house))
    assert {
        "blinds_out_of_level",
        "rebuy_during_hand",
        "buy_in_out_of_limits",
        "absence_over_limit",
        "dealer_changed_mid_hand",
    } <= set(injected)
    assert "blind_wrong_amount" not in injected


def test_each_session_mistake_raises_its_code_through_the_engine() -> None:
    """The session's codes, each drawn often (a bag of them only), in a cash game with chips."""
    injected, disagreements = _session("roberts", 9, 31, hands=60, structure="no_limit", mistake_rate=1.0)
    assert not disagreements, "\n".join(disagreements[:10])
    session = {"rebuy_during_hand", "buy_in_out_of_limits", "absence_over_limit", "dealer_changed_mid_hand"}
    assert session <= set(injected)


def test_a_long_session_exercises_every_code_the_profile_can_raise() -> None:
    injected, disagreements = _session("roberts", 9, 11, hands=250)
    assert not disagreements, "\n".join(disagreements[:10])
    assert set(injected) == set(raisable_codes("roberts"))


def test_the_hand_after_the_last_three_raises_hand_after_last_then_the_game_ends() -> None:
    """Announced, three hands dealt, a fourth: only that hand raises ``hand_after_last``; the
    dealer then ends the game (the table empties) and the next hand is a legal one again."""
    engine = Engine(EngineSettings(seats=6, profile="roberts", registry=REGISTRY, hole_card_off_s=60.0))
    dealer = VirtualDealer(REGISTRY.decks, DealerSettings(seats=6), seed=8)
    with pytest.raises(InfeasibleMistake, match="announce_last_hands"):
        dealer.next_hand(mistake="hand_after_last")
    raised_by_hand: list[list[str]] = []
    scripts = [dealer.next_hand(mistake=None)]  # the dealer's state did not change: deal on
    dealer.announce_last_hands()
    scripts += [dealer.next_hand(mistake=None) for _ in range(3)]
    scripts += [dealer.next_hand(mistake="hand_after_last"), dealer.next_hand(mistake=None)]
    for script in scripts:
        raised: list[str] = []
        for sourced in to_events(script.steps, start=START + timedelta(hours=script.hand)):
            received = DeviceEventReceived(sourced.device, sourced.event, sourced.event.ts)
            raised += [a.code for a in engine.handle(received).alerts if a.status == "raised"]
        raised_by_hand.append(raised)
    assert raised_by_hand == [[], [], [], [], ["hand_after_last"], []]
    assert [s.mistakes for s in scripts] == [(), (), (), (), ("hand_after_last",), ()]


def _two_readers(
    items: list[SourcedEvent | SourcedInput], steps: tuple[Step, ...]
) -> tuple[list[SourcedEvent | SourcedInput], int]:
    """The stacks on a reader of their own (``rfid-3``, as at the demo's table), and each
    handful of four chips or more handed back to a stack reported interleaved: the betting
    area's reader reports two chips gone before the stacks' reader reports them arrived (their
    arrival read earlier, on its clock). Returns the stream and how many handfuls were so."""
    out: list[SourcedEvent | SourcedInput] = []
    interleaved = 0
    # A step's items are contiguous in the stream (to_stream emits them step by step).
    for number, group in groupby(items, key=lambda x: x.step):
        step = steps[number]
        run = list(group)
        if isinstance(step, MoveChips) and step.zone.startswith("stack:") and len(step.uids) >= 4:
            arrived = [
                x for x in run if isinstance(x, SourcedEvent) and x.event.type == "tag" and x.event.present
            ]
            left = [x for x in run if x not in arrived]
            run = [
                arrived[0],
                left[1],
                left[2],
                arrived[3],
                arrived[1],
                arrived[2],
                left[0],
                *left[3:],
                *arrived[4:],
            ]
            interleaved += 1
        out += run
    seqs: Counter[str] = Counter()
    renamed: list[SourcedEvent | SourcedInput] = []
    for item in out:
        if not isinstance(item, SourcedEvent):
            renamed.append(item)
            continue
        zone = getattr(item.event, "zone", "") or ""
        device = "rfid-3" if zone.startswith("stack:") else item.device
        seqs[device] += 1
        renamed.append(SourcedEvent(device, item.event.model_copy(update={"seq": seqs[device]}), item.step))
    return renamed, interleaved


def test_a_hand_back_read_by_two_readers_interleaved_is_no_rebuy() -> None:
    """A chip leaving a betting area (one reader) is taken off the table only for chips lifted
    before the read that moves another chip (on that read's own clock): a handful handed back
    to a stack, its arrivals and departures interleaved across the two readers, is no new money
    (it was a false rebuy_during_hand in a loaded demo)."""
    stakes = TableStakes(structure="no_limit", rake_percent=5, rake_cap=3)
    engine = Engine(
        EngineSettings(
            seats=9,
            profile="roberts",
            registry=REGISTRY,
            chips=ChipRegistry(CHIPS),
            stakes=Stakes(
                structure="no_limit", small_blind=1, big_blind=2, ante=0, rake_percent=5, rake_cap=3
            ),
            hole_card_off_s=60.0,
            session=SessionRules(stack_seats=frozenset(range(1, 10))),
        )
    )
    dealer = VirtualDealer(
        REGISTRY.decks,
        DealerSettings(seats=9, stakes=stakes, chip_values=CHIPS, hole_card_off_s=60.0),
        seed=5,
    )
    steps = tuple(step for _ in range(150) for step in dealer.next_hand(mistake=None).steps)
    stream, interleaved = _two_readers(to_stream(steps, start=START), steps)
    assert interleaved > 0
    raised = []
    for item in stream:
        received: Received
        if isinstance(item, SourcedEvent):
            received = DeviceEventReceived(item.device, item.event, item.event.ts)
        else:
            received = InputReceived(item.input, item.input.ts)
        raised += [a.code for a in engine.handle(received).alerts if a.status == "raised"]
    assert raised == []
