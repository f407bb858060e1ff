"""PokerKit as the oracle for pots and the award (tests and benchmarks only).

:func:`play` plays one random hold'em hand in PokerKit — no-limit, pot-limit or fixed-limit, 2 to
10 players on a 10-seat table, unequal stacks (so all-ins make side pots), antes sometimes, random
folds, random cards, a showdown where a beaten hand is sometimes mucked — and returns what the
engine would see (what each seat put in, who is still in, the board, the hands tabled in order)
with what PokerKit decided (pots, what it pushed from each pot, payoffs). :func:`judge` runs the
engine's ``uncalled``, ``build_pots``, ``rake_for`` and ``award`` on the same hand and compares.

Where the house rules and PokerKit's conventions differ, the comparison maps them:

- **Odd chips.** PokerKit gives a split pot's whole remainder to the first winner in its player
  order (first seat left of the button onwards). The house gives the odd chips one each, in the
  order shown (seed 001, ``first_shown``) or clockwise from the button (``left_of_button``). The
  expected shares are PokerKit's winners and pot amount with the remainder dealt out by the house
  rule; with two winners and ``left_of_button`` that is PokerKit's own split, chip for chip.
- **Rake.** PokerKit rakes each pot by itself and rounds to nearest; the house takes
  ``rake_percent`` of the whole hand rounded down, capped, out of the main pot first. PokerKit is
  given the house's arithmetic as its rake function, and a hand is raked only where the two
  agree on what is raked: a showdown with one pot (other hands are played again without rake).
- **Uncontested hands.** PokerKit leaves the last bet of the seat everyone folded to out of its
  pot and hands it back; the engine returns only the uncalled part and counts the rest in the pot.
  The payoffs are the same; pots are compared at showdowns only.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from pokerkit import (
    Automation,
    ChipsPushing,
    FixedLimitTexasHoldem,
    NoLimitTexasHoldem,
    PotLimitPokerMixin,
    StandardHighHand,
    State,
)
from pokerkit.utilities import rake as no_rake  # PokerKit's default: 0 %

from engine.betting.award import award, rake_for
from engine.betting.pots import build_pots, uncalled
from engine.betting.terms import OddChip, Pot, PotAward, Stakes, Structure

__all__ = [
    "AUTOMATIONS",
    "STRUCTURES",
    "EngineResult",
    "Judgement",
    "PlayedHand",
    "PotLimitTexasHoldem",
    "engine_result",
    "house_rake",
    "judge",
    "play",
    "show_or_muck",
]

TABLE = 10
STRUCTURES: tuple[Structure, ...] = ("no_limit", "pot_limit", "fixed_limit")
AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.RUNOUT_COUNT_SELECTION,
    Automation.HAND_KILLING,
    Automation.CHIPS_PULLING,
)
_RANKS = "23456789TJQKA"
_DECK = tuple(rank + suit for rank in _RANKS for suit in "shdc")
_MAX_RAISES = 4  # per street, besides the fixed-limit cap: keeps no-limit hands finite and short


class PotLimitTexasHoldem(PotLimitPokerMixin, NoLimitTexasHoldem):
    """Pot-limit Texas hold'em: PokerKit's no-limit game with its pot-limit betting structure
    (PokerKit ships pot-limit Omaha but no pot-limit Texas class)."""


@dataclass(frozen=True, slots=True)
class PlayedHand:
    """One hand as PokerKit played it, in seats (PokerKit's players are ``seats`` in order)."""

    seed: int
    stakes: Stakes
    button: int
    seats: tuple[int, ...]  # PokerKit's player order: first seat left of the button ... the button
    contributed: dict[int, int]  # chips each seat put in, the uncalled part included
    live: frozenset[int]  # seats whose hand was neither folded nor mucked
    board: tuple[str, ...]
    shown: tuple[tuple[int, tuple[str, str]], ...]  # hands tabled face up, in the order shown
    mucked: tuple[int, ...]  # seats that mucked at showdown, in order
    showdown: bool  # more than one seat left when the betting ended
    pots: tuple[Pot, ...]  # PokerKit's pots once all hands are tabled (rake included), as seats
    raked: int  # the rake PokerKit took (only one-pot showdowns are raked)
    pushed: dict[int, int]  # seat -> the chips PokerKit pushed to it (all pots)
    payoffs: dict[int, int]  # seat -> chips won (or lost) over the hand


@dataclass(frozen=True, slots=True)
class Judgement:
    """The engine's verdict on a played hand next to PokerKit's."""

    pots_agree: bool  # showdowns: same pots and eligible seats; uncontested: one pot, the survivor
    payoffs_agree: bool  # the same chips won and lost per seat, odd chips mapped to the house rule
    awards: tuple[PotAward, ...] = field(default=())
    detail: str = ""


def play(seed: int) -> PlayedHand:
    """Play hand number ``seed`` in PokerKit (the same seed gives the same hand)."""
    rng = random.Random(seed)
    stakes = _stakes(rng)
    count = rng.randint(2, 10)
    seats = sorted(rng.sample(range(1, TABLE + 1), count))
    button = rng.choice(seats)
    order = tuple(sorted(seats, key=lambda s: (s - button - 1) % TABLE))
    stacks = [_stack(rng, stakes) for _ in order]
    hand = _play(seed, stakes, button, order, stacks, with_rake=stakes.rake_percent > 0)
    if stakes.rake_percent > 0 and not (hand.showdown and len(hand.pots) == 1):
        # only a one-pot showdown is raked the same way by both: play it again unraked
        unraked = Stakes(stakes.structure, stakes.small_blind, stakes.big_blind, stakes.ante)
        hand = _play(seed, unraked, button, order, stacks, with_rake=False)
    return hand


@dataclass(frozen=True, slots=True)
class EngineResult:
    """What the engine's functions make of a played hand."""

    pots: tuple[Pot, ...]
    awards: tuple[PotAward, ...]
    rake: int
    payoffs: dict[int, int]


def engine_result(hand: PlayedHand, odd_chip: OddChip) -> EngineResult:
    """The engine's ``uncalled`` + ``build_pots`` + ``rake_for`` + ``award`` on ``hand``."""
    contributed = dict(hand.contributed)
    back = uncalled(contributed)
    if back is not None:
        contributed[back[0]] -= back[1]
    pots = build_pots(contributed, hand.live)
    rake = rake_for(hand.stakes, sum(pot.amount for pot in pots), saw_flop=len(hand.board) >= 3)
    awards = award(
        pots, hand.shown, hand.board, rake=rake, odd_chip=odd_chip, button=hand.button, table_seats=TABLE
    )
    payoffs = {seat: -put for seat, put in hand.contributed.items()}
    if back is not None:
        payoffs[back[0]] += back[1]
    for pot in awards:
        for seat, chips in pot.shares:
            payoffs[seat] += chips
    return EngineResult(pots, awards, rake, payoffs)


def judge(hand: PlayedHand, odd_chip: OddChip = "first_shown", ours: EngineResult | None = None) -> Judgement:
    """Compare the engine's result on ``hand`` (``ours``, computed when not given) with PokerKit."""
    if ours is None:
        ours = engine_result(hand, odd_chip)
    if hand.showdown:
        pots_agree = ours.pots == hand.pots
    else:
        pots_agree = len(ours.awards) == 1 and ours.awards[0].winners == tuple(hand.live)
    expected = _house_payoffs(hand, odd_chip)
    payoffs_agree = ours.payoffs == expected and ours.rake == hand.raked
    detail = "" if pots_agree and payoffs_agree else _detail(hand, ours, expected)
    return Judgement(pots_agree, payoffs_agree, ours.awards, detail)


def _house_payoffs(hand: PlayedHand, rule: OddChip) -> dict[int, int]:
    """PokerKit's payoffs with its pushes replaced by the house's split of its pots: the winners
    of each pot by PokerKit's own hand ranking, the odd chips one each by the house rule."""
    payoffs = dict(hand.payoffs)
    for seat, chips in hand.pushed.items():
        payoffs[seat] -= chips
    best = {
        seat: StandardHighHand.from_game("".join(cards), "".join(hand.board)) for seat, cards in hand.shown
    }
    place = {seat: index for index, (seat, _) in enumerate(hand.shown)}
    clockwise = {seat: index for index, seat in enumerate(hand.seats)}
    line = place if rule == "first_shown" else clockwise
    rake = hand.raked
    for pot in hand.pots:
        taken = min(rake, pot.amount)
        rake -= taken
        winners = list(pot.eligible)
        if len(winners) > 1:
            top = max(best[seat] for seat in winners)
            winners = [seat for seat in winners if best[seat] == top]
        each, odd = divmod(pot.amount - taken, len(winners))
        lucky = set(sorted(winners, key=lambda seat: line.get(seat, len(line)))[:odd])
        for seat in winners:
            payoffs[seat] += each + (seat in lucky)
    return payoffs


def _detail(hand: PlayedHand, ours: EngineResult, expected: dict[int, int]) -> str:
    return (
        f"seed {hand.seed} {hand.stakes} button {hand.button} contributed {hand.contributed} "
        f"live {sorted(hand.live)} board {hand.board} shown {hand.shown}\n"
        f"  pokerkit pots {hand.pots} pushed {hand.pushed} payoffs {hand.payoffs} raked {hand.raked}\n"
        f"  ours     pots {ours.pots} awards {ours.awards} payoffs {ours.payoffs} rake {ours.rake}\n"
        f"  expected payoffs {expected}"
    )


def _stakes(rng: random.Random) -> Stakes:
    small = rng.choice((1, 1, 2, 5))
    ante = rng.choice((0, 0, 0, small))
    rake_percent = rng.choice((0.0, 0.0, 5.0, 10.0, 2.5))
    rake_cap = rng.choice((0, 3, 10)) if rake_percent else 0
    structure = rng.choice(STRUCTURES)
    return Stakes(structure, small, 2 * small, ante, rake_percent, rake_cap)


def _stack(rng: random.Random, stakes: Stakes) -> int:
    """Short, medium and deep stacks, so that all-ins for different amounts are common."""
    depth = rng.choice((2, 5, 10, 25, 60, 150))
    return rng.randint(1, depth * stakes.big_blind)


def house_rake(stakes: Stakes) -> Callable[[int, State], tuple[int, int]]:
    """The house's rake as PokerKit's rake function (applied to a one-pot hand's only pot)."""

    def rake(amount: int, state: State) -> tuple[int, int]:
        taken = rake_for(stakes, amount, saw_flop=any(state.board_cards))
        return taken, amount - taken

    # the same arithmetic written out again, so that a fault in rake_for cannot hide here
    def check(amount: int, state: State) -> tuple[int, int]:
        if not any(state.board_cards):
            return 0, amount
        taken = int(Decimal(amount) * Decimal(str(stakes.rake_percent)) / 100)
        if stakes.rake_cap:
            taken = min(taken, stakes.rake_cap)
        assert rake(amount, state) == (taken, amount - taken)
        return taken, amount - taken

    return check


def _create(stakes: Stakes, stacks: list[int], with_rake: bool) -> State:
    blinds = (stakes.small_blind, stakes.big_blind)
    rake = house_rake(stakes) if with_rake else no_rake
    bet = stakes.big_blind
    if stakes.structure == "fixed_limit":
        return FixedLimitTexasHoldem.create_state(
            AUTOMATIONS, True, stakes.ante, blinds, bet, 2 * bet, stacks, len(stacks), rake=rake
        )
    game = NoLimitTexasHoldem if stakes.structure == "no_limit" else PotLimitTexasHoldem
    return game.create_state(AUTOMATIONS, True, stakes.ante, blinds, bet, stacks, len(stacks), rake=rake)


def _play(
    seed: int, stakes: Stakes, button: int, order: tuple[int, ...], stacks: list[int], *, with_rake: bool
) -> PlayedHand:
    rng = random.Random(seed * 7919 + 1)  # the hand's own choices, the same on a replay
    deck = list(_DECK)
    rng.shuffle(deck)
    state = _create(stakes, stacks, with_rake)
    lowest = list(state.stacks)  # the lowest stack seen: chips put in before any refund or push
    shown: list[tuple[int, tuple[str, str]]] = []
    mucked: list[int] = []
    pots: tuple[Pot, ...] = ()
    raked = 0
    pushed: dict[int, int] = {}
    live: frozenset[int] = frozenset()
    raises = 0
    street: int | None = None
    while state.status:
        if state.can_burn_card():
            state.burn_card(deck.pop())
        elif state.can_deal_hole():
            state.deal_hole(deck.pop() + deck.pop())
        elif state.can_deal_board():
            state.deal_board("".join(deck.pop() for _ in range(1 if state.board_cards else 3)))
        elif state.can_show_or_muck_hole_cards():
            if len(state.showdown_indices) == 1:
                # the pots as the last hand is tabled: PokerKit then kills the hands that cannot
                # win and merges pots, which is its bookkeeping, not what the table sees
                live, pots = _pots(state, order)
            seat = order[state.showdown_index or 0]
            cards = show_or_muck(state, rng, {order.index(s) for s, _ in shown})
            if cards is None:
                mucked.append(seat)
            else:
                shown.append((seat, cards))
        elif state.actor_index is not None:
            if state.street_index != street:
                street, raises = state.street_index, 0
            raises += _act(state, rng, raises)
        elif state.can_push_chips():
            if not pushed:
                # the rake as PokerKit takes it at the push (an all-in's hands are tabled before
                # the board comes, when nothing is raked yet)
                raked = sum(pot.raked_amount for pot in state.pots)
            if not pots:  # uncontested: no showdown
                live, pots = _pots(state, order)
            operation = state.push_chips()
            assert isinstance(operation, ChipsPushing)
            for index, chips in enumerate(operation.amounts):
                if chips:
                    pushed[order[index]] = pushed.get(order[index], 0) + chips
        else:  # pragma: no cover - every state of a hold'em hand is handled above
            raise AssertionError(f"stuck: {state}")
        lowest = [min(a, b) for a, b in zip(lowest, state.stacks, strict=True)]
    return PlayedHand(
        seed=seed,
        stakes=stakes,
        button=button,
        seats=order,
        contributed={
            order[i]: start - low for i, (start, low) in enumerate(zip(stacks, lowest, strict=True))
        },
        live=live,
        board=tuple(repr(card) for card in state.get_board_cards(0)),
        shown=tuple(shown),
        mucked=tuple(mucked),
        showdown=len(shown) + len(mucked) > 1,
        pots=pots,
        raked=raked,
        pushed=pushed,
        payoffs={order[i]: chips for i, chips in enumerate(state.payoffs)},
    )


def _pots(state: State, order: tuple[int, ...]) -> tuple[frozenset[int], tuple[Pot, ...]]:
    """The seats still in and PokerKit's pots (before any rake) as seats."""
    live = frozenset(order[i] for i, status in enumerate(state.statuses) if status)
    found = tuple(state.pots)
    pots = tuple(
        Pot(p.raked_amount + p.unraked_amount, tuple(sorted(order[i] for i in p.player_indices)))
        for p in found
    )
    return live, pots


def _act(state: State, rng: random.Random, raises: int) -> int:
    """One random legal action of the seat to act: fold, check or call, bet or raise (to the
    minimum, all in, or anything between). Returns 1 for a bet or raise."""
    facing = bool(state.checking_or_calling_amount)
    draw = rng.random()
    if facing and draw < 0.3 and state.can_fold():
        state.fold()
        return 0
    if draw > 0.65 and raises < _MAX_RAISES and state.can_complete_bet_or_raise_to():
        low = state.min_completion_betting_or_raising_to_amount
        high = state.max_completion_betting_or_raising_to_amount
        assert low is not None
        assert high is not None
        to = rng.choice((low, low, high, rng.randint(low, high)))
        state.complete_bet_or_raise_to(to)
        return 1
    state.check_or_call()
    return 0


def show_or_muck(state: State, rng: random.Random, shown: set[int]) -> tuple[str, str] | None:
    """Table the hand of the seat due to show, or (sometimes) muck it when every pot it could win
    already has another hand shown: no pot is ever left without a hand. Returns the cards shown."""
    index = state.showdown_index
    assert index is not None
    cards = tuple(repr(card) for card in state.hole_cards[index])
    contested = [pot for pot in state.pots if index in pot.player_indices]
    covered = all(any(other in shown for other in pot.player_indices if other != index) for pot in contested)
    # a hand is mucked only once the board is complete (in an all-in run-out hands are tabled
    # before the board comes, and PokerKit cannot run out a board for one hand)
    last = len(state.showdown_indices) == 1  # the last hand is always tabled
    if covered and not last and len(state.board_cards) == 5 and rng.random() < 0.3:
        state.show_or_muck_hole_cards(False)
        return None
    state.show_or_muck_hole_cards(True)
    return cards[0], cards[1]
