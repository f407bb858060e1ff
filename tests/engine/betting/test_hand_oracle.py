"""The betting core against PokerKit: random legal hands, fed as chip moves (with the keypad's
all in, or with the stacks read) and as ``action`` inputs, must raise nothing and agree with
PokerKit on whose turn it is at every point, the actions, the pots and every seat's winnings.

The odd chip: PokerKit splits a pot merged across contenders and gives all its odd chips to the
first winner left of the button; the house (``left_of_button`` here) splits each pot on its own,
one odd chip each. Winnings are therefore compared within a pot's odd chips (its winners less
one, per pot: six winners of a board that plays may leave five odd chips), and the dealer's
pushes in the chip feeds follow the house rule (see ``pokerkit_play._house_shares``).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.betting.pots import uncalled
from engine.betting.terms import Action, Raise, Structure
from tests.engine.betting.pokerkit_play import Mode, PlayedHand, play, replay

STRUCTURES: tuple[Structure, ...] = ("no_limit", "pot_limit", "fixed_limit")
MODES: tuple[Mode, ...] = ("actions", "chips", "stacks")


def _split_posts(actions: list[Action]) -> tuple[list[Action], list[Action]]:
    """Posts in a fixed order (the core lists antes then blinds; PokerKit posts heads-up's big
    blind first), then the rest in the order played."""
    posts = sorted((a for a in actions if a.action == "post"), key=lambda a: (a.seat, a.amount))
    return posts, [a for a in actions if a.action != "post"]


def disagreements(hand: PlayedHand, mode: Mode) -> list[str]:
    """What the betting core got different from PokerKit on ``hand`` fed as ``mode``."""
    result = replay(hand, mode)
    outcome = result.outcome
    problems: list[str] = []
    raised = [v for v in result.verdicts if isinstance(v, Raise)]
    if raised:
        problems.append(f"verdicts on a legal hand: {raised[:3]}")
    if result.to_act_mismatches:
        problems.append(f"to_act (ops done, PokerKit, ours): {result.to_act_mismatches[:3]}")
    if _split_posts(list(outcome.actions)) != _split_posts(result.expected_actions):
        problems.append(f"actions: {outcome.actions} != {result.expected_actions}")
    if hand.pots and result.money.pots != hand.pots:
        problems.append(f"pots: {result.money.pots} != {hand.pots}")
    shares: Counter[int] = Counter()
    for pot in outcome.pots:
        for seat, amount in pot.shares:
            shares[seat] += amount
    put_in: Counter[int] = Counter()
    for action in outcome.actions:
        put_in[action.seat] += action.amount
    back = uncalled(put_in)
    net = {s: shares[s] - put_in[s] + (back[1] if back and back[0] == s else 0) for s in put_in}
    # the most odd chips one seat may get more or less than PokerKit gives it: each split pot's
    # remainder goes one chip each here, all to one winner there (up to winners - 1 per pot)
    odd = sum(len(pot.winners) - 1 for pot in outcome.pots if pot.winners)
    if sum(net.values()) or any(
        abs(net.get(s, 0) - hand.payoffs.get(s, 0)) > odd for s in set(net) | set(hand.payoffs)
    ):
        problems.append(f"winnings: {net} != PokerKit's {hand.payoffs}")
    if mode != "actions":
        if dict(outcome.awarded) != {s: v for s, v in shares.items() if v}:
            problems.append(f"awarded: {outcome.awarded} != {dict(shares)}")
        if not result.money.settled:
            problems.append("not settled after the pushes")
    return problems


@pytest.mark.parametrize("structure", STRUCTURES)
def test_a_batch_of_random_hands_agrees_with_pokerkit(structure: Structure) -> None:
    """340 hands per structure (1,020 in all), each fed three ways."""
    failures: list[str] = []
    for seed in range(340):
        hand = play(random.Random(f"{structure}-{seed}"), structure)
        for mode in MODES:
            failures.extend(f"{structure} seed {seed} {mode}: {p}" for p in disagreements(hand, mode))
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("structure", ["no_limit", "pot_limit"])
def test_straddled_hands_agree_with_pokerkit_on_whose_turn_it_is(structure: Structure) -> None:
    """120 straddled hands per structure (their own seeds), each fed three ways: whose turn it
    is after every action (PokerKit's ``actor_index``), the actions, pots and winnings."""
    failures: list[str] = []
    for seed in range(120):
        hand = play(random.Random(f"straddle-{structure}-{seed}"), structure, straddle=True)
        for mode in MODES:
            failures.extend(f"{structure} seed {seed} {mode}: {p}" for p in disagreements(hand, mode))
    assert not failures, "\n".join(failures[:10])


@settings(max_examples=100, deadline=None)
@example(seed=967, structure="fixed_limit", mode="actions")  # six-way split, four odd chips a pot
@given(seed=st.integers(0, 2**32 - 1), structure=st.sampled_from(STRUCTURES), mode=st.sampled_from(MODES))
def test_any_legal_hand_agrees_with_pokerkit(seed: int, structure: Structure, mode: Mode) -> None:
    hand = play(random.Random(seed), structure)
    assert disagreements(hand, mode) == []
