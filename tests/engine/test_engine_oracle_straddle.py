"""The whole engine against PokerKit on straddled hands (seed 000's optional third blind): a
series of random no-limit and pot-limit hands of its own (``play_hand(..., straddle=True)``: two
in three hands of three players or more have a straddle, PokerKit's ``blinds_or_straddles``
``(sb, bb, 2 x bb)``), each fed as chips with the all-in key, chips with the stacks read, and
``action`` inputs, after the keypad's ``new_hand`` or (every other hand) with no key at all: the
antes, blinds and straddle posted before the first hole card belong to the hand it starts. The
result must be PokerKit's (the actions with the straddle's ``post``, the pots, winners and
shares) and no alert may be raised.

PokerKit's minimum raise after a straddle is the big blind; the house's is the straddle (a raise
to 4 x big blind at least, as RR and TDA have it): the random players keep to the house's.
"""

from __future__ import annotations

from collections import Counter

from testing.engine_oracle import disagreements
from testing.oracle_hand import play_hand

#: Hands in CI (each fed three ways: about 10 s); ``benchmarks/pokerkit_engine.py --straddle``
#: plays more.
HANDS = 300


def test_straddled_hands_agree_with_pokerkit() -> None:
    failures: list[str] = []
    kinds: Counter[str] = Counter()
    for seed in range(HANDS):
        hand = play_hand(seed, straddle=True)
        actions = hand.expected.actions
        big = hand.stakes.big_blind
        straddler = next(
            (a.seat for a in actions if a.action == "post" and a.amount == 2 * big and len(hand.seats) >= 3),
            None,
        )
        if straddler is not None:
            kinds[hand.stakes.structure] += 1
            preflop = [a for a in actions if a.street == "preflop" and a.action != "post"]
            kinds["straddler acts last"] += bool(preflop) and preflop[-1].seat == straddler
            kinds["raised over it"] += any(a.action == "raise" for a in preflop)
            kinds["folded to it"] += (
                hand.expected.result == "uncontested"
                and hand.expected.pots[0].winners == (straddler,)
                and len(preflop) == len(hand.seats) - 1
            )
        for path in ("chips", "stacks", "keyless" if seed % 2 else "actions"):
            failures += [f"hand {seed} {path}: {p}" for p in disagreements(hand, path)]
    assert not failures, f"{len(failures)} disagreements:\n" + "\n".join(failures[:10])
    # the series covers the straddle's cases
    for kind in ("no_limit", "pot_limit", "straddler acts last", "raised over it", "folded to it"):
        assert kinds[kind] > 0, kinds
