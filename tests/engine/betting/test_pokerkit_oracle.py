"""PokerKit as the oracle: random hold'em hands played in PokerKit (no-limit, pot-limit,
fixed-limit; 2-10 players; unequal stacks, so all-ins and side pots; antes, folds, mucks, rake)
must get the same pots and the same payoffs from ``uncalled`` + ``build_pots`` + ``award``.

PokerKit's conventions that differ from the house's are mapped in ``testing.pokerkit_oracle``:
its odd chips (the whole remainder to the first winner left of the button) are dealt out again by
the house rule, one each in the order shown (seed 001) or clockwise from the button; its rake is
given the house's arithmetic and only one-pot showdowns are raked; uncontested hands compare
payoffs only (PokerKit hands back the survivor's whole last bet, the engine only its uncalled part).
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from testing.pokerkit_oracle import PlayedHand, judge, play

HANDS = 1000


def features(hand: PlayedHand) -> set[str]:
    """What a hand exercises, to show the sample covers every case."""
    found = {hand.stakes.structure, f"{len(hand.seats)} players"}
    found.add("showdown" if hand.showdown else "uncontested")
    if len(hand.pots) > 1:
        found.add("side pot")
    if len(hand.pots) > 2:
        found.add("two side pots")
    if hand.mucked:
        found.add("muck")
    if hand.raked:
        found.add("rake")
    if hand.stakes.ante:
        found.add("ante")
    return found


def test_a_thousand_hands_agree_with_pokerkit() -> None:
    seen: Counter[str] = Counter()
    disagreements: list[str] = []
    for seed in range(HANDS):
        hand = play(seed)
        seen.update(features(hand))
        for rule in ("first_shown", "left_of_button"):
            verdict = judge(hand, rule)
            if not (verdict.pots_agree and verdict.payoffs_agree):
                disagreements.append(f"{rule}: {verdict.detail}")
            if rule == "first_shown":
                splits = [a for a in verdict.awards if len(a.winners) > 1]
                seen["split pot"] += bool(splits)
                seen["odd chip"] += any(a.amount % len(a.winners) for a in splits)
    assert not disagreements, "\n".join(disagreements[:5])
    for case in ("no_limit", "pot_limit", "fixed_limit", "showdown", "uncontested", "side pot", "rake"):
        assert seen[case] >= 50, (case, seen)
    for case in ("two side pots", "muck", "ante", "split pot", "odd chip", "2 players", "10 players"):
        assert seen[case] >= 10, (case, seen)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=HANDS, max_value=2**40))
def test_random_hands_agree_with_pokerkit(seed: int) -> None:
    hand = play(seed)
    for rule in ("first_shown", "left_of_button"):
        verdict = judge(hand, rule)
        assert verdict.pots_agree, verdict.detail
        assert verdict.payoffs_agree, verdict.detail
