"""Random legal hold'em hands played in PokerKit (the oracle), and what they look like to the
betting core: chip moves between zones with keys, or ``action`` inputs.

A hand is played with PokerKit's own rules (its player 0 is the first seat left of the button,
the button last; heads-up the button posts the small blind), with our seats and button mapped
onto those indices. The recorded operations are then replayed into :class:`Money` by one of two
feeders, which check at every point that the money follows PokerKit.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pokerkit import (
    AntePosting,
    Automation,
    BetCollection,
    BlindOrStraddlePosting,
    BoardDealing,
    CheckingOrCalling,
    ChipsPushing,
    CompletionBettingOrRaisingTo,
    FixedLimitTexasHoldem,
    Folding,
    HoleCardsShowingOrMucking,
    HoleDealing,
    NoLimitTexasHoldem,
    State,
)
from pokerkit.games import PotLimitPokerMixin, TexasHoldemMixin, UnfixedLimitHoldem

from engine.betting.award import award
from engine.betting.hand import Money
from engine.betting.terms import Action, Pot, Stakes, Structure, Verdict
from engine.betting.zones import STREETS, clockwise

TABLE_SEATS = 10
DENOMINATIONS = (100, 25, 5, 1)
AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


class PotLimitTexasHoldem(PotLimitPokerMixin, TexasHoldemMixin, UnfixedLimitHoldem):
    """Pot-limit Texas hold'em, made from PokerKit's parts as it makes its no-limit game."""

    @classmethod
    def create_state(
        cls,
        automations: tuple[Automation, ...],
        ante_trimming_status: bool,
        ante: int,
        blinds: tuple[int, ...],
        min_bet: int,
        stacks: tuple[int, ...],
        n: int,
    ) -> State:
        game = cls(automations, ante_trimming_status, ante, blinds, min_bet)
        return game(stacks, n)


@dataclass
class PlayedHand:
    """One hand as PokerKit played it."""

    stakes: Stakes
    seats: tuple[int, ...]
    button: int
    ring: tuple[int, ...]  # our seat of PokerKit's player i
    starting: tuple[int, ...]
    operations: list[Any]
    actor_after: dict[int, int | None] = field(default_factory=dict)  # ops done -> next actor
    pots: tuple[Pot, ...] = ()  # PokerKit's pots before the showdown (seat numbers)
    payoffs: dict[int, int] = field(default_factory=dict)  # seat -> chips won (or lost) in the hand
    board: tuple[str, ...] = ()


def _cards(rng: random.Random) -> list[str]:
    deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    rng.shuffle(deck)
    return deck


def _create(structure: Structure, stakes: Stakes, stacks: tuple[int, ...], straddled: bool = False) -> State:
    blinds: tuple[int, ...] = (stakes.small_blind, stakes.big_blind)
    if straddled:
        blinds += (2 * stakes.big_blind,)
    n = len(stacks)
    if structure == "fixed_limit":
        return FixedLimitTexasHoldem.create_state(
            AUTOMATIONS, False, stakes.ante, blinds, stakes.big_blind, 2 * stakes.big_blind, stacks, n
        )
    game = NoLimitTexasHoldem if structure == "no_limit" else PotLimitTexasHoldem
    return game.create_state(AUTOMATIONS, False, stakes.ante, blinds, stakes.big_blind, stacks, n)


def _choose(rng: random.Random, state: State, aggression: float, straddle: int = 0) -> None:
    """One random legal action of the seat to act (``straddle``: the least full raise preflop,
    the house's rule; PokerKit's after a straddle is the big blind)."""
    roll = rng.random()
    if state.can_fold() and roll < 0.2:
        state.fold()
    elif state.can_complete_bet_or_raise_to() and roll > 1 - aggression:
        low = state.min_completion_betting_or_raising_to_amount
        high = state.max_completion_betting_or_raising_to_amount
        assert low is not None
        assert high is not None
        if straddle and state.street_index == 0:  # all in (high) may be short, as any all in
            raised = state.completion_betting_or_raising_amount
            low = min(high, max(low, max(state.bets) + max(straddle, raised)))
        pick = rng.random()
        amount = high if pick < 0.2 else low if pick < 0.5 else rng.randint(low, high)
        state.complete_bet_or_raise_to(amount)
    else:
        state.check_or_call()


def play(rng: random.Random, structure: Structure, *, straddle: bool = False) -> PlayedHand:
    """A random legal hand: 2-10 players, unequal stacks (short ones go all in), antes sometimes;
    ``straddle``: 3-10 players, the third left of the button straddles (2 x big blind)."""
    n = rng.randint(3 if straddle else 2, 10)
    seats = tuple(sorted(rng.sample(range(1, TABLE_SEATS + 1), n)))
    button = rng.choice(seats)
    small, big = rng.choice(((1, 2), (5, 10), (25, 50), (2, 5)))
    ante = rng.choice((0, 0, 0, 1, big // 2))
    stakes = Stakes(structure=structure, small_blind=small, big_blind=big, ante=ante)
    stacks = tuple(
        rng.randint(ante + big * (2 if straddle else 1) + 1, ante + big * rng.choice((3, 10, 40, 100)))
        for _ in range(n)
    )
    with warnings.catch_warnings():
        # Our deck is not PokerKit's: it warns that the cards are not the ones it would deal.
        warnings.simplefilter("ignore", UserWarning)
        return _play(rng, structure, seats, button, stakes, stacks, straddle)


def _play(
    rng: random.Random,
    structure: Structure,
    seats: tuple[int, ...],
    button: int,
    stakes: Stakes,
    stacks: tuple[int, ...],
    straddle: bool = False,
) -> PlayedHand:
    ring = clockwise(seats, button, TABLE_SEATS)
    state = _create(structure, stakes, stacks, straddle)
    deck = _cards(rng)
    aggression = rng.choice((0.1, 0.3, 0.5))
    hand = PlayedHand(stakes, seats, button, ring, stacks, state.operations)
    while state.status:
        if state.can_burn_card():
            state.burn_card(deck.pop())
        elif state.can_deal_hole():
            state.deal_hole(deck.pop())
        elif state.can_deal_board():
            assert state.street is not None
            cards = "".join(deck.pop() for _ in range(state.street.board_dealing_count))
            state.deal_board(cards)
        elif state.can_show_or_muck_hole_cards():
            if not hand.pots:
                hand.pots = _pots_of(state, ring)
            state.show_or_muck_hole_cards(True)
        elif state.actor_index is not None:
            _choose(rng, state, aggression, 2 * stakes.big_blind if straddle else 0)
        else:  # pragma: no cover - PokerKit always offers one of the above while running
            raise AssertionError("PokerKit state stuck")
        hand.actor_after[len(state.operations)] = (
            None if state.actor_index is None else ring[state.actor_index]
        )
    hand.payoffs = {ring[i]: payoff for i, payoff in enumerate(state.payoffs)}
    hand.board = tuple(str(c.rank) + str(c.suit) for cards in state.board_cards for c in cards)
    return hand


def _pots_of(state: State, ring: Sequence[int]) -> tuple[Pot, ...]:
    return tuple(Pot(pot.amount, tuple(sorted(ring[i] for i in pot.player_indices))) for pot in state.pots)


def chips_of(amount: int) -> list[int]:
    """An amount as chip values (largest first), one tag each."""
    out: list[int] = []
    for value in DENOMINATIONS:
        while amount >= value:
            out.append(value)
            amount -= value
    return out


def _card(card: Any) -> str:
    return str(card.rank) + str(card.suit)


@dataclass
class Replay:
    """What the betting core made of a hand, and PokerKit's view beside it."""

    money: Money
    verdicts: list[Verdict]
    expected_actions: list[Action]
    to_act_mismatches: list[tuple[int, int | None, int | None]]
    pushed: dict[int, int]
    outcome: Any = None


Mode = Literal["chips", "stacks", "actions"]


def replay(hand: PlayedHand, mode: Mode, log: list[tuple[str, tuple[Any, ...]]] | None = None) -> Replay:
    """Feed ``hand`` to a new :class:`Money`: as chip moves with the keypad's all-in key
    (``chips``), as chip moves where the stacks are read too (``stacks``: an emptied stack is the
    all in), or as ``action`` inputs. ``log``, when given, gets every call made (name, args)."""
    money = Money.begin(
        stakes=hand.stakes,
        seats=hand.seats,
        button=hand.button,
        table_seats=TABLE_SEATS,
        profile="tda",
        odd_chip="left_of_button",
    )
    result = Replay(money, [], [], [], {})
    stacks = list(hand.starting)
    bets = [0] * len(hand.ring)
    board: list[str] = []
    shown: list[tuple[int, tuple[str, str]]] = []
    dealt = False
    pushed = False

    def call(method: Callable[..., Any], *args: Any) -> None:
        if log is not None:
            log.append((method.__name__, args))
        answer = method(*args)
        result.money = answer[0]
        result.verdicts.extend(answer[1])

    def put_in(player: int, amount: int, name: str) -> None:
        seat = hand.ring[player]
        stacks[player] -= amount
        bets[player] += amount
        if mode != "actions":
            source = f"stack:{seat}" if mode == "stacks" or seat % 2 else None
            for chip in chips_of(amount):
                call(result.money.move, chip, source, f"bet:{seat}")
            if mode == "chips" and stacks[player] == 0 and dealt:
                call(result.money.all_in, seat)
        else:
            call(result.money.action, seat, "all_in" if stacks[player] == 0 and dealt else name, amount)

    if mode == "stacks":
        for player, stack in enumerate(hand.starting):
            for chip in chips_of(stack):
                call(result.money.move, chip, None, f"stack:{hand.ring[player]}")

    for index, op in enumerate(hand.operations):
        street = STREETS[{0: 0, 3: 1, 4: 2, 5: 3}[len(board)]]
        compare = True
        if isinstance(op, AntePosting | BlindOrStraddlePosting):
            put_in(op.player_index, op.amount, "post")
            result.expected_actions.append(Action("preflop", hand.ring[op.player_index], "post", op.amount))
            compare = False
        elif isinstance(op, HoleDealing):
            if not dealt:
                dealt = True
                call(result.money.dealt)
            compare = False
        elif isinstance(op, CheckingOrCalling):
            seat = hand.ring[op.player_index]
            if op.amount:
                put_in(op.player_index, op.amount, "call")
                name = "all_in" if stacks[op.player_index] == 0 else "call"
            else:
                name = "check"
                if mode == "actions":
                    call(result.money.action, seat, "check", 0)
                else:
                    compare = False
            result.expected_actions.append(Action(street, seat, name, op.amount))  # type: ignore[arg-type]
        elif isinstance(op, CompletionBettingOrRaisingTo):
            seat = hand.ring[op.player_index]
            delta = op.amount - bets[op.player_index]
            opening = max(bets) == 0
            put_in(op.player_index, delta, "bet" if opening else "raise")
            name = "all_in" if stacks[op.player_index] == 0 else ("bet" if opening else "raise")
            result.expected_actions.append(Action(street, seat, name, delta))  # type: ignore[arg-type]
        elif isinstance(op, Folding):
            seat = hand.ring[op.player_index]
            if mode == "actions":
                call(result.money.action, seat, "fold", 0)
            else:
                call(result.money.fold, seat)
            result.expected_actions.append(Action(street, seat, "fold", 0))
        elif isinstance(op, BetCollection):
            if dealt:
                for player, collected in enumerate(op.bets):
                    seat = hand.ring[player]
                    back = bets[player] - collected
                    if mode != "actions":
                        for chip in chips_of(back):
                            call(result.money.move, chip, f"bet:{seat}", f"stack:{seat}")
                        for chip in chips_of(collected):
                            call(result.money.move, chip, f"bet:{seat}", "pot")
                    stacks[player] += back
                bets = [0] * len(bets)
            elif mode != "actions":  # the antes, swept before the blinds go in
                for player, collected in enumerate(op.bets):
                    for chip in chips_of(collected):
                        call(result.money.move, chip, f"bet:{hand.ring[player]}", "pot")
                bets = [0] * len(bets)
            else:
                bets = [0] * len(bets)
            compare = False
        elif isinstance(op, BoardDealing):
            board.extend(_card(c) for c in op.cards)
            call(result.money.street, {3: 1, 4: 2, 5: 3}[len(board)], tuple(board))
        elif isinstance(op, HoleCardsShowingOrMucking):
            if op.hole_cards:
                cards = (_card(op.hole_cards[0]), _card(op.hole_cards[1]))
                call(result.money.table, hand.ring[op.player_index], cards, tuple(board))
                shown.append((hand.ring[op.player_index], cards))
            compare = False
        elif isinstance(op, ChipsPushing):
            for player, amount in enumerate(op.amounts):
                seat = hand.ring[player]
                result.pushed[seat] = result.pushed.get(seat, 0) + amount
            if mode != "actions" and len(result.money.live) == 1:  # uncontested: PokerKit's push
                for player, amount in enumerate(op.amounts):
                    for chip in chips_of(amount):
                        call(result.money.move, chip, "pot", f"stack:{hand.ring[player]}")
            elif mode != "actions" and not pushed:
                pushed = True
                for seat, amount in _house_shares(result.money, shown, tuple(board)).items():
                    for chip in chips_of(amount):
                        call(result.money.move, chip, "pot", f"stack:{seat}")
            compare = False
        else:
            compare = False
        done = index + 1
        if compare and done in hand.actor_after:
            want = hand.actor_after[done]
            if result.money.to_act != want:
                result.to_act_mismatches.append((done, want, result.money.to_act))
    money, verdicts, outcome = result.money.finish(tuple(board))
    result.money = money
    result.verdicts.extend(verdicts)
    result.outcome = outcome
    return result


def _house_shares(
    money: Money, shown: Sequence[tuple[int, tuple[str, str]]], board: tuple[str, ...]
) -> dict[int, int]:
    """What the dealer pushes to each seat under the house's odd-chip rule.

    PokerKit merges pots whose contenders are the same once the losers' hands are killed and
    splits the merged pot, odd chips to the first winner left of the button; the house splits
    each pot on its own, odd chips one each from the button's left. Winners and totals agree;
    single odd chips may land elsewhere, so the pushes follow the house rule (the test compares
    the two within one chip per pot)."""
    awards = award(
        money.pots,
        shown,
        board,
        rake=0,
        odd_chip="left_of_button",
        button=money.button or 0,
        table_seats=TABLE_SEATS,
    )
    out: dict[int, int] = {}
    for pot in awards:
        for seat, amount in pot.shares:
            out[seat] = out.get(seat, 0) + amount
    return out
