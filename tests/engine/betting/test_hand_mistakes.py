"""One chip mistake injected into a legal hand raises exactly its code, and the dealer's remedy
resolves it (hypothesis over PokerKit hands fed as chip moves)."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.betting.hand import Money
from engine.betting.terms import Clear, Raise, Structure, Verdict
from tests.engine.betting.pokerkit_play import TABLE_SEATS, PlayedHand, play, replay

Call = tuple[str, tuple[Any, ...]]
MISTAKES = ("chips_on_vacant_seat", "chips_taken_back", "premature_sweep", "pot_awarded_wrong")


def _run(hand: PlayedHand, calls: list[Call]) -> tuple[Money, list[Verdict]]:
    money = Money.begin(
        stakes=hand.stakes,
        seats=hand.seats,
        button=hand.button,
        table_seats=TABLE_SEATS,
        profile="tda",
        odd_chip="left_of_button",
    )
    verdicts: list[Verdict] = []
    for name, args in calls:
        answer = getattr(money, name)(*args)
        money = answer[0]
        verdicts.extend(answer[1])
    return money, verdicts


def _candidates(hand: PlayedHand, log: list[Call], mistake: str) -> list[tuple[int, list[Call]]]:
    """Where the mistake can be made (index in ``log`` after which it comes) and its moves:
    the mistake, then the dealer's remedy."""
    out: list[tuple[int, list[Call]]] = []
    money, _ = _run(hand, [])
    vacant = [s for s in range(1, TABLE_SEATS + 1) if s not in hand.seats]
    for index, (name, args) in enumerate(log):
        money = getattr(money, name)(*args)[0]
        if mistake == "chips_on_vacant_seat" and vacant and index % 7 == 0:
            seat = vacant[index % len(vacant)]
            out.append((index, [("move", (5, None, f"bet:{seat}")), ("move", (5, f"bet:{seat}", None))]))
        if name != "move" or money.street_no < 0:
            continue
        amount, _src, dst = args
        if mistake == "chips_taken_back" and dst and dst.startswith("bet:") and money.uncalled is None:
            seat = dst[4:]
            out.append(
                (index, [("move", (amount, dst, f"stack:{seat}")), ("move", (amount, f"stack:{seat}", dst))])
            )
        following = log[index + 1] if index + 1 < len(log) else ("", ())
        # Between two actions: a sweep settles the action whose chips (and all-in key) it takes.
        between = following[1][-1] != dst if following[0] == "move" else following[0] != "all_in"
        if (
            mistake == "premature_sweep"
            and dst
            and dst.startswith("bet:")
            and between
            and not money.round_complete
        ):
            out.append((index, [("move", (amount, dst, "pot")), ("move", (amount, "pot", dst))]))
        if (
            mistake == "pot_awarded_wrong"
            and args[1] == "pot"
            and dst
            and dst.startswith("stack:")
            and not out
            and len(money.live) >= 2
        ):
            losers = sorted(money.live - {int(dst[6:])})
            loser = f"stack:{losers[0]}"
            out.append((index - 1, [("move", (1, "pot", loser)), ("move", (1, loser, "pot"))]))
    return out


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    structure=st.sampled_from(("no_limit", "pot_limit", "fixed_limit")),
    mistake=st.sampled_from(MISTAKES),
    pick=st.integers(0, 10_000),
)
def test_one_injected_chip_mistake_raises_exactly_its_code_and_its_remedy_resolves_it(
    seed: int, structure: Structure, mistake: str, pick: int
) -> None:
    hand = play(random.Random(seed), structure)
    log: list[Call] = []
    replay(hand, "chips", log)
    places = _candidates(hand, log, mistake)
    if mistake == "pot_awarded_wrong":
        # Only a chip of a pot that a single seat wins is surely wrong on another seat.
        places = [p for p in places if _single_winner(hand, log)]
    assume(places)
    index, moves = places[pick % len(places)]
    _, verdicts = _run(hand, [*log[: index + 1], *moves, *log[index + 1 :]])
    raised = {v.code for v in verdicts if isinstance(v, Raise)}
    assert raised == {mistake}
    keys = {v.key for v in verdicts if isinstance(v, Raise)}
    assert keys <= {v.key for v in verdicts if isinstance(v, Clear)}


def _single_winner(hand: PlayedHand, log: list[Call]) -> bool:
    money, _ = _run(hand, log)
    _, _, outcome = money.finish(hand.board)
    return len({w for pot in outcome.pots for w in pot.winners}) == 1
