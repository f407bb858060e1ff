"""A random hold'em hand played in PokerKit, written down as what happens at the table, with the
hand result PokerKit's play implies (tests and benchmarks only; PokerKit is a test dependency).

:func:`play_hand` plays one no-limit, pot-limit or fixed-limit hand (2 to 10 players on a 10-seat
table, unequal stacks so that all-ins for different amounts make side pots, antes sometimes, rake
sometimes) and returns an :class:`OracleHand`: the dealer's and players' steps in order (posts,
the deal card by card, actions, the uncalled chips back, sweeps, burns and board cards, hands
tabled or mucked, the pushes and the rake) and the :class:`Expected` result.

The expected result is PokerKit's, mapped to the house where the two differ on purpose:

- **Odd chips.** PokerKit gives a split pot's whole remainder to its first winner left of the
  button (after merging pots with the same contenders). The house (seed 001, ``first_shown``)
  splits each pot on its own and gives the odd chips one each to the winners in the order their
  hands were shown. The expected shares are each of PokerKit's pots (as they stand when the last
  hand is tabled), its winners by PokerKit's own hand ranking, split that way; each seat's total
  is checked against PokerKit's pushes within one chip per pot.
- **Uncalled chips.** When everyone folds to a bet, PokerKit hands the whole last bet back; the
  table returns only the part nobody called (the top bet above the second highest) and the rest is
  in the pot. The payoffs are the same (checked).
- **Rake.** PokerKit is given the house's arithmetic as its rake function; a hand is raked only
  where the two rake the same chips (a showdown with one pot); other hands are played again,
  choice for choice, without rake and with stakes that take none.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from pokerkit import (
    AntePosting,
    BetCollection,
    BlindOrStraddlePosting,
    BoardDealing,
    CardBurning,
    CheckingOrCalling,
    ChipsPushing,
    CompletionBettingOrRaisingTo,
    FixedLimitTexasHoldem,
    Folding,
    HoleCardsShowingOrMucking,
    HoleDealing,
    NoLimitTexasHoldem,
    StandardHighHand,
    State,
)
from pokerkit.utilities import rake as no_rake

from engine.betting.terms import Action, Stakes, Structure
from testing.pokerkit_oracle import AUTOMATIONS, STRUCTURES, PotLimitTexasHoldem, house_rake

__all__ = ["TABLE_SEATS", "Expected", "OracleHand", "Step", "play_hand"]

TABLE_SEATS = 10
_DECK = tuple(rank + suit for rank in "23456789TJQKA" for suit in "shdc")
_STRADDLE_STRUCTURES: tuple[Structure, ...] = ("no_limit", "pot_limit")  # none in fixed limit
_MAX_RAISES = 4  # per street, besides the fixed-limit cap: keeps no-limit hands short
#: PokerKit's hand labels as the hand result names ranks.
_RANK_NAME = {
    "High card": "high_card",
    "One pair": "pair",
    "Two pair": "two_pair",
    "Three of a kind": "three_of_a_kind",
    "Straight": "straight",
    "Flush": "flush",
    "Full house": "full_house",
    "Four of a kind": "four_of_a_kind",
    "Straight flush": "straight_flush",
}

Street: TypeAlias = Literal["preflop", "flop", "turn", "river"]
StepKind: TypeAlias = Literal[
    "post",  # a blind or ante into the betting area before the deal
    "deal",  # one hole card to a seat (``cards``: the card)
    "check",
    "call",
    "bet",
    "raise",
    "all_in",  # chips that leave the seat with none
    "fold",
    "return",  # the uncalled chips back from the betting area to the player
    "sweep",  # the betting areas into the pot: the round is over
    "burn",
    "board",  # board cards (3, 1 or 1)
    "show",  # a hand tabled face up at showdown (or for an all-in run-out)
    "muck",  # a beaten hand mucked at showdown
    "push",  # chips from the pot to a winner
    "rake",  # chips from the pot to the house
]


@dataclass(frozen=True, slots=True)
class Step:
    """One thing that happens at the table; ``amount`` is chips (put in, returned, pushed)."""

    kind: StepKind
    seat: int = 0
    amount: int = 0
    cards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ExpectedPot:
    amount: int  # after rake
    eligible: tuple[int, ...]
    winners: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]  # (seat, chips), seat order


@dataclass(frozen=True, slots=True)
class Expected:
    """The hand result PokerKit's play implies (house odd chips, the uncalled part returned)."""

    result: Literal["showdown", "uncontested"]
    actions: tuple[Action, ...]
    pots: tuple[ExpectedPot, ...]
    rake: int
    pushed: tuple[tuple[int, int], ...]  # (seat, chips the dealer pushes), seat order
    showdown: tuple[tuple[int, tuple[str, str], str], ...]  # (seat, cards, rank), order shown
    board: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class OracleHand:
    seed: int
    stakes: Stakes
    seats: tuple[int, ...]  # ascending
    button: int
    steps: tuple[Step, ...]
    expected: Expected
    stacks: tuple[tuple[int, int], ...] = ()  # (seat, chips at the start of the hand)


def play_hand(seed: int, structure: Structure | None = None, *, straddle: bool = False) -> OracleHand:
    """Hand number ``seed`` (the same seed, the same hand); ``structure`` None: drawn. ``straddle``:
    another series (no-limit and pot-limit) where two in three hands of 3+ players are straddled:
    PokerKit's ``blinds_or_straddles`` ``(sb, bb, 2 x bb)``, raised to 4 x big blind at least."""
    rng = random.Random(f"oracle-straddle-{seed}" if straddle else f"oracle-{seed}")
    drawn = rng.choice(_STRADDLE_STRUCTURES if straddle else STRUCTURES)
    structure = structure or drawn
    small, big = rng.choice(((1, 2), (5, 10), (25, 50), (2, 5), (100, 200)))
    ante = rng.choice((0, 0, 0, small, big // 2))
    rake_percent = rng.choice((0.0, 0.0, 5.0, 10.0, 2.5))
    rake_cap = rng.choice((0, 3 * big, 10 * big)) if rake_percent else 0
    stakes = Stakes(structure, small, big, ante, rake_percent, rake_cap)
    count = rng.randint(2, TABLE_SEATS)
    seats = tuple(sorted(rng.sample(range(1, TABLE_SEATS + 1), count)))
    button = rng.choice(seats)
    order = tuple(sorted(seats, key=lambda s: (s - button - 1) % TABLE_SEATS))
    straddled = straddle and count >= 3 and structure != "fixed_limit" and rng.random() < 2 / 3
    # short, medium and deep stacks; every seat covers its ante and blind (a short blind is not
    # something chips can tell from a wrong one), and its straddle
    stacks = tuple(
        rng.randint(ante + big * (2 if straddled else 1) + 1, ante + big * rng.choice((3, 10, 40, 100)))
        for _ in order
    )
    choices = rng.randrange(1 << 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # our deck is not the one PokerKit would deal
        hand = _play(seed, stakes, order, stacks, choices, raked=rake_percent > 0, straddled=straddled)
        if rake_percent and not hand.raked_ok:
            unraked = replace(stakes, rake_percent=0.0, rake_cap=0)
            hand = _play(seed, unraked, order, stacks, choices, raked=False, straddled=straddled)
    return OracleHand(
        seed,
        hand.stakes,
        seats,
        button,
        hand.steps,
        hand.expected,
        tuple(sorted(zip(order, stacks, strict=True))),
    )


_NOTHING = Expected("uncontested", (), (), 0, (), (), ())


@dataclass(frozen=True, slots=True)
class _Played:
    stakes: Stakes
    steps: tuple[Step, ...]
    expected: Expected
    raked_ok: bool  # a one-pot showdown: PokerKit rakes it as the house does


def _create(stakes: Stakes, stacks: tuple[int, ...], raked: bool, straddled: bool = False) -> State:
    blinds: tuple[int, ...] = (stakes.small_blind, stakes.big_blind)
    if straddled:
        blinds += (2 * stakes.big_blind,)
    rake = house_rake(stakes) if raked else no_rake
    bet = stakes.big_blind
    n = len(stacks)
    if stakes.structure == "fixed_limit":
        return FixedLimitTexasHoldem.create_state(
            AUTOMATIONS, False, stakes.ante, blinds, bet, 2 * bet, stacks, n, rake=rake
        )
    game = NoLimitTexasHoldem if stakes.structure == "no_limit" else PotLimitTexasHoldem
    return game.create_state(AUTOMATIONS, False, stakes.ante, blinds, bet, stacks, n, rake=rake)


def _act(state: State, rng: random.Random, raises: int, unit: int, straddle: int = 0) -> None:
    """One random legal action: fold, check or call, bet or raise (to the minimum, all in, or
    a round amount between: chips of the table's denominations, not odd change). ``straddle``: the
    smallest full raise preflop (the house's; PokerKit's after a straddle is the big blind)."""
    facing = bool(state.checking_or_calling_amount)
    draw = rng.random()
    if facing and draw < 0.25 and state.can_fold():
        state.fold()
        return
    if draw > 0.6 and raises < _MAX_RAISES and state.can_complete_bet_or_raise_to():
        low = state.min_completion_betting_or_raising_to_amount
        high = state.max_completion_betting_or_raising_to_amount
        assert low is not None
        assert high is not None
        if straddle and state.street_index == 0:  # all in (high) may be short, as any all in
            raised = state.completion_betting_or_raising_amount
            low = min(high, max(low, max(state.bets) + max(straddle, raised)))
        between = rng.randint(low, high) // unit * unit
        to = rng.choice((low, low, high, between if between >= low else low))
        state.complete_bet_or_raise_to(to)
        return
    state.check_or_call()


def _play(
    seed: int,
    stakes: Stakes,
    order: tuple[int, ...],
    stacks: tuple[int, ...],
    choices: int,
    *,
    raked: bool,
    straddled: bool = False,
) -> _Played:
    rng = random.Random(choices)
    deck = list(_DECK)
    rng.shuffle(deck)
    state = _create(stakes, stacks, raked, straddled)
    pots: list[tuple[int, tuple[int, ...]]] = []  # PokerKit's pots (amount, eligible) at showdown
    shown: set[int] = set()
    raises = 0
    street: int | None = None
    pushed: dict[int, int] = {}
    raked_amount = 0
    while state.status:
        if state.can_burn_card():
            state.burn_card(deck.pop())
        elif state.can_deal_hole():
            state.deal_hole(deck.pop())
        elif state.can_deal_board():
            state.deal_board("".join(deck.pop() for _ in range(1 if state.board_cards else 3)))
        elif state.can_show_or_muck_hole_cards():
            if len(state.showdown_indices) == 1:
                # the pots as the last hand is tabled (PokerKit then kills and merges)
                pots = [
                    (p.raked_amount + p.unraked_amount, tuple(sorted(order[i] for i in p.player_indices)))
                    for p in state.pots
                ]
            index = state.showdown_index
            assert index is not None
            if _beaten(state, index, shown) and rng.random() < 0.4:
                state.show_or_muck_hole_cards(False)
            else:
                state.show_or_muck_hole_cards(True)
                shown.add(index)
        elif state.actor_index is not None:
            if state.street_index != street:
                street, raises = state.street_index, 0
            before = len(state.operations)
            _act(state, rng, raises, stakes.small_blind, 2 * stakes.big_blind if straddled else 0)
            raises += isinstance(state.operations[before], CompletionBettingOrRaisingTo)
        elif state.can_push_chips():
            if not pushed:
                raked_amount = sum(p.raked_amount for p in state.pots)
            operation = state.push_chips()
            assert isinstance(operation, ChipsPushing)
            for i, chips in enumerate(operation.amounts):
                if chips:
                    pushed[order[i]] = pushed.get(order[i], 0) + chips
        else:  # pragma: no cover - PokerKit always offers one of the above while running
            raise AssertionError(f"stuck: {state}")
    board = tuple(repr(card) for card in state.get_board_cards(0))
    steps, actions, shows, returned = _steps(state, order, stacks)
    folds = {step.seat for step in steps if step.kind == "fold"}
    raked_ok = len(order) - len(folds) > 1 and len(pots) == 1 and len(board) >= 3
    if raked and not raked_ok:
        return _Played(stakes, steps, _NOTHING, raked_ok)  # played again without rake
    live = [s for s in order if s not in {st.seat for st in steps if st.kind in ("fold", "muck")}]
    put_in: dict[int, int] = {}
    for step in steps:
        if step.kind in ("post", "call", "bet", "raise", "all_in"):
            put_in[step.seat] = put_in.get(step.seat, 0) + step.amount
    payoffs = {order[i]: chips for i, chips in enumerate(state.payoffs)}
    if len(order) - len(folds) == 1:
        winner = live[0]
        amount = sum(put_in.values()) - returned.get(winner, 0)
        pot = ExpectedPot(amount, (winner,), (winner,), ((winner, amount),))
        expected_pots: tuple[ExpectedPot, ...] = (pot,)
        result: Literal["showdown", "uncontested"] = "uncontested"
        assert payoffs[winner] == amount - put_in[winner] + returned.get(winner, 0), seed
    else:
        expected_pots = _house_split(pots, shows, board, raked_amount)
        result = "showdown"
    # the most odd chips one seat may get more or less than PokerKit gives it: each split pot's
    # remainder goes one chip each here, all to one winner there
    odd = sum(len(pot.winners) - 1 for pot in expected_pots)
    shares: dict[int, int] = {}
    for pot in expected_pots:
        for seat, chips in pot.shares:
            shares[seat] = shares.get(seat, 0) + chips
    if result == "showdown":
        _check_against_pokerkit(seed, shares, pushed, odd)
    for seat, payoff in payoffs.items():  # what each seat won or lost, odd chips aside
        net = shares.get(seat, 0) - put_in.get(seat, 0) + returned.get(seat, 0)
        assert abs(net - payoff) <= odd, (seed, seat, net, payoff)
    ranks = {seat: _rank(cards, board) for seat, cards in shows}
    expected = Expected(
        result=result,
        actions=actions,
        pots=expected_pots,
        rake=raked_amount,
        pushed=tuple(sorted((s, v) for s, v in shares.items() if v)),
        showdown=tuple((seat, cards, ranks[seat]) for seat, cards in shows) if len(board) >= 3 else (),
        board=board,
    )
    pushes = [Step("rake", 0, raked_amount)] if raked_amount else []
    pushes += [Step("push", seat, chips) for pot in expected_pots for seat, chips in pot.shares if chips]
    return _Played(stakes, (*steps, *pushes), expected, raked_ok)


Shows: TypeAlias = tuple[tuple[int, tuple[str, str]], ...]


def _steps(
    state: State, order: tuple[int, ...], stacks: tuple[int, ...]
) -> tuple[tuple[Step, ...], tuple[Action, ...], Shows, dict[int, int]]:
    """PokerKit's operations as table steps, the actions the hand result lists, the hands shown
    (in order) and the chips returned to each seat."""
    steps: list[Step] = []
    actions: list[Action] = []
    shows: list[tuple[int, tuple[str, str]]] = []
    returned: dict[int, int] = {}
    left = list(stacks)
    bets = [0] * len(order)
    folded: set[int] = set()
    dealt = False
    board = 0
    street_names: tuple[Street, ...] = ("preflop", "flop", "turn", "river")
    for op in state.operations:
        street = street_names[{0: 0, 3: 1, 4: 2, 5: 3}[board]]
        if isinstance(op, AntePosting | BlindOrStraddlePosting):
            seat = order[op.player_index]
            left[op.player_index] -= op.amount
            if isinstance(op, BlindOrStraddlePosting):
                bets[op.player_index] += op.amount
            steps.append(Step("post", seat, op.amount))
            actions.append(Action("preflop", seat, "post", op.amount))
        elif isinstance(op, HoleDealing):
            dealt = True
            steps.extend(Step("deal", order[op.player_index], cards=(repr(c),)) for c in op.cards)
        elif isinstance(op, CheckingOrCalling | CompletionBettingOrRaisingTo):
            i = op.player_index
            seat = order[i]
            if isinstance(op, CheckingOrCalling):
                amount = op.amount
                name = "call" if amount else "check"
            else:
                amount = op.amount - bets[i]
                name = "raise" if max(bets) else "bet"
            left[i] -= amount
            bets[i] += amount
            if amount and left[i] == 0:
                name = "all_in"
            steps.append(Step(name, seat, amount))  # type: ignore[arg-type]
            actions.append(Action(street, seat, name, amount))  # type: ignore[arg-type]
        elif isinstance(op, Folding):
            seat = order[op.player_index]
            folded.add(seat)
            steps.append(Step("fold", seat))
            actions.append(Action(street, seat, "fold", 0))
        elif isinstance(op, BetCollection) and dealt:
            # the part of the top bet nobody called goes back; the rest is swept
            ranked = sorted(range(len(bets)), key=lambda j: -bets[j])
            if len(ranked) > 1 and bets[ranked[0]] > bets[ranked[1]]:
                top = ranked[0]
                back = bets[top] - bets[ranked[1]]
                returned[order[top]] = returned.get(order[top], 0) + back
                left[top] += back
                steps.append(Step("return", order[top], back))
                contested = len(order) - len(folded) > 1
                assert not contested or op.bets[top] == bets[top] - back, (op, bets)
            steps.append(Step("sweep"))
            bets = [0] * len(bets)
        elif isinstance(op, CardBurning):
            steps.append(Step("burn", cards=(repr(op.card),)))
        elif isinstance(op, BoardDealing):
            board += len(op.cards)
            steps.append(Step("board", cards=tuple(repr(c) for c in op.cards)))
        elif isinstance(op, HoleCardsShowingOrMucking):
            seat = order[op.player_index]
            if op.hole_cards:
                cards = (repr(op.hole_cards[0]), repr(op.hole_cards[1]))
                shows.append((seat, cards))
                steps.append(Step("show", seat, cards=cards))
            else:
                steps.append(Step("muck", seat))
    return tuple(steps), tuple(actions), tuple(shows), returned


def _beaten(state: State, index: int, shown: set[int]) -> bool:
    """Whether the hand due to show may be mucked: the board is complete, it is not the last
    hand, and it loses every pot it plays for to a hand already shown (a hand that would win or
    tie is tabled)."""
    if len(state.board_cards) < 5 or len(state.showdown_indices) == 1:
        return False  # the last hand is always tabled (PokerKit's pots are read before it)
    board = list(state.get_board_cards(0))
    mine = StandardHighHand.from_game(state.hole_cards[index], board)
    if mine == StandardHighHand.from_game((), board):
        return False  # the board plays: the player tables it (seed 004, board_claim_forfeited)
    for pot in state.pots:
        if index not in pot.player_indices:
            continue
        rivals = [
            StandardHighHand.from_game(state.hole_cards[i], board) for i in pot.player_indices if i in shown
        ]
        if not rivals or max(rivals) <= mine:
            return False
    return True


def _rank(cards: tuple[str, str], board: tuple[str, ...]) -> str:
    hand = StandardHighHand.from_game("".join(cards), "".join(board))
    return _RANK_NAME[hand.entry.label.value]


def _house_split(
    pots: list[tuple[int, tuple[int, ...]]],
    shows: tuple[tuple[int, tuple[str, str]], ...],
    board: tuple[str, ...],
    rake: int,
) -> tuple[ExpectedPot, ...]:
    """PokerKit's pots after the house's rake (main pot first), won by the best hand shown among
    each pot's seats (PokerKit's ranking), odd chips one each in the order shown."""
    best = {seat: StandardHighHand.from_game("".join(cards), "".join(board)) for seat, cards in shows}
    place = {seat: i for i, (seat, _) in enumerate(shows)}
    out: list[ExpectedPot] = []
    for chips, eligible in pots:
        taken = min(rake, chips)
        rake -= taken
        amount = chips - taken
        winners = [s for s in eligible if s in best] if len(eligible) > 1 else list(eligible)
        if len(winners) > 1:
            top = max(best[s] for s in winners)
            winners = [s for s in winners if best[s] == top]
        each, odd = divmod(amount, len(winners))
        lucky = set(sorted(winners, key=lambda s: place.get(s, len(place)))[:odd])
        shares = tuple((s, each + (s in lucky)) for s in sorted(winners))
        out.append(ExpectedPot(amount, eligible, tuple(sorted(winners)), shares))
    return tuple(out)


def _check_against_pokerkit(seed: int, shares: dict[int, int], pushed: dict[int, int], odd: int) -> None:
    """The house's split pays the seats PokerKit paid, the same chips in all, each seat within
    the odd chips of the split pots."""
    assert sum(shares.values()) == sum(pushed.values()), (seed, shares, pushed)
    assert {s for s, v in shares.items() if v} == {s for s, v in pushed.items() if v}, (seed, shares, pushed)
    for seat in set(shares) | set(pushed):
        assert abs(shares.get(seat, 0) - pushed.get(seat, 0)) <= odd, (seed, shares, pushed)
