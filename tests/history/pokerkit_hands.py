"""Random legal hands played by PokerKit, written down as the engine's ``HandResult``.

The test-only oracle of the PHH export: PokerKit plays a hand (random stacks, antes, all-ins,
side pots, folds, showdowns), and the hand is described the way the contract's hand result
describes it (seats, button, actions with the chips each put in, board, hands tabled, what each
seat got back). Exporting that result and replaying the file must give every seat the same net.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pokerkit import Automation, HoleCardsShowingOrMucking, NoLimitTexasHoldem, State

from contract.models import HandResult
from controller.history.phh import Stakes, player_order

STREETS = ("preflop", "flop", "turn", "river")
T0 = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.CARD_BURNING,
    Automation.HOLE_DEALING,
    Automation.BOARD_DEALING,
    Automation.RUNOUT_COUNT_SELECTION,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


@dataclass(frozen=True)
class Played:
    """A hand PokerKit played: the result as the engine would publish it, and each seat's net."""

    result: HandResult
    stakes: Stakes
    net: dict[int, int]


def _card(card: object) -> str:
    return f"{card.rank}{card.suit}"  # type: ignore[attr-defined]


def _choose(rng: random.Random, state: State) -> tuple[str, int | None]:
    """A random legal action: fold, check or call, bet or raise (now and then all in)."""
    options: list[tuple[str, int | None]] = []
    if state.can_fold() and state.checking_or_calling_amount:
        options += [("fold", None)] * 2
    if state.can_check_or_call():
        options += [("cc", None)] * 4
    if state.can_complete_bet_or_raise_to():
        low = state.min_completion_betting_or_raising_to_amount
        high = state.max_completion_betting_or_raising_to_amount
        assert low is not None
        assert high is not None
        options.append(("cbr", rng.randint(low, min(high, low * 3))))
        options.append(("cbr", high))
    return rng.choice(options)


def play(rng: random.Random, hand: int) -> Played:
    """One random hand of 2 to 10 players at a 10-seat table."""
    count = rng.randint(2, 10)
    seats = sorted(rng.sample(range(1, 11), count))
    button = rng.choice(seats)
    stakes = Stakes(ante=rng.choice((0, 0, 1)), small_blind=1, big_blind=2)
    stacks = [rng.choice((rng.randint(20, 80), rng.randint(100, 600))) for _ in seats]
    state = NoLimitTexasHoldem.create_state(
        AUTOMATIONS,
        True,
        stakes.ante,
        (stakes.small_blind, stakes.big_blind),
        stakes.big_blind,
        stacks,
        count,
    )
    probe = HandResult(ts=T0, hand=hand, button=button, seats=seats, result="uncontested")
    order = player_order(probe)  # PokerKit's player i sits at order[i]
    actions: list[dict[str, object]] = []
    for index in range(count):
        posted = stacks[index] - state.stacks[index]
        if posted:
            actions.append({"street": "preflop", "seat": order[index], "action": "post", "amount": posted})
    folded: set[int] = set()
    while state.status:
        actor = state.actor_index
        if actor is None:
            break
        street = STREETS[state.street_index or 0]
        facing = max(state.bets)
        stack, bet = state.stacks[actor], state.bets[actor]
        verb, amount = _choose(rng, state)
        # Measured from the action itself: what follows it (bets collected, pots pushed) may
        # already have moved the stacks when it returns.
        if verb == "fold":
            state.fold()
            name, put_in = "fold", 0
            folded.add(actor)
        elif verb == "cc":
            operation = state.check_or_call()
            put_in = operation.amount
            name = "call" if put_in else "check"
        else:
            assert amount is not None
            state.complete_bet_or_raise_to(amount)
            name, put_in = ("raise" if facing else "bet"), amount - bet
        if put_in and put_in == stack:
            name = "all_in"
        actions.append({"street": street, "seat": order[actor], "action": name, "amount": put_in})
    net = {order[i]: state.stacks[i] - stacks[i] for i in range(count)}
    contributed = dict.fromkeys(seats, 0)
    for action in actions:
        contributed[int(action["seat"])] += int(action["amount"])  # type: ignore[call-overload]
    shown = [
        {"seat": order[op.player_index], "cards": [_card(c) for c in op.hole_cards], "rank": "high_card"}
        for op in state.operations
        if isinstance(op, HoleCardsShowingOrMucking) and op.hole_cards
    ]
    board = [_card(c) for cards in state.board_cards for c in cards]
    # The uncalled chips go back to the seat that put in the most: in no pot.
    ordered = sorted(contributed.values(), reverse=True)
    uncalled = ordered[0] - (ordered[1] if len(ordered) > 1 else 0)
    top = max(contributed, key=lambda seat: contributed[seat])
    won = {seat: net[seat] + contributed[seat] - (uncalled if seat == top else 0) for seat in seats}
    shares = [{"seat": seat, "amount": won[seat]} for seat in seats if won[seat] > 0]
    contested = count - len(folded) > 1
    result = HandResult.model_validate(
        {
            "ts": T0 + timedelta(minutes=hand),
            "hand": hand,
            "button": button,
            "seats": seats,
            "board": board,
            "result": "showdown" if contested else "uncontested",
            "actions": actions,
            "pots": [
                {
                    "amount": sum(contributed.values()) - uncalled,
                    "eligible": sorted(set(seats) - {order[i] for i in folded}),
                    "winners": [s["seat"] for s in shares],
                    "shares": shares,
                }
            ],
            "awarded": shares,
            "showdown": shown if contested else [],
        }
    )
    return Played(result, stakes, net)
