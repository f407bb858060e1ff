"""The dealer's own bookkeeping of a hand's money, and the players' legal choices; pure.

Independent of the engine on purpose (the engine checks the dealer): who acts, what a call
costs, the minimum bet and raise, the limits of pot limit and fixed limit, all-ins for less that
do not reopen the betting (TDA 47-A), uncalled chips (seed 001), main and side pots.

Action order (irregularities.md, seeds 000 and 003): preflop the first seat left of the big blind
acts first and the big blind last; later rounds the first seat still in left of the button;
heads-up the button posts the small blind, acts first preflop and last after.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from simulators.dealer.chips import TableStakes

Verb: TypeAlias = Literal["fold", "check", "call", "bet", "raise"]
#: Streets with betting, in order.
STREETS: tuple[str, ...] = ("preflop", "flop", "turn", "river")


@dataclass(frozen=True, slots=True)
class Choice:
    """A player's decision: ``to`` is the seat's total bet in front after it (0 for a fold)."""

    verb: Verb
    to: int = 0


@dataclass
class Ledger:
    """One hand's money: stacks behind, bets in front this round, contributions, who is in."""

    stakes: TableStakes
    order: list[int]  # dealing order: first seat left of the button ... the button
    stack: dict[int, int]  # chips behind (not yet put in)
    bet: dict[int, int] = field(default_factory=dict)  # in front this round (blinds, not antes)
    contributed: dict[int, int] = field(default_factory=dict)  # the whole hand, antes included
    folded: set[int] = field(default_factory=set)
    all_in: set[int] = field(default_factory=set)
    street: str = "preflop"
    highest: int = 0
    last_raise: int = 0  # the size of the last full bet or raise of the round
    bets_made: int = 0  # fixed limit: the bet and raises of the round (the big blind counts)
    acted: set[int] = field(default_factory=set)  # acted since the betting was last reopened
    aggressor: int | None = None  # last seat to bet or raise this round
    last_actor: int | None = None  # the action goes on clockwise from it
    pot: int = 0  # swept into the middle

    # ------------------------------------------------------------------ seats

    @property
    def heads_up(self) -> bool:
        return len(self.order) == 2

    @property
    def small_blind(self) -> int:
        return self.order[1] if self.heads_up else self.order[0]

    @property
    def big_blind(self) -> int:
        return self.order[0] if self.heads_up else self.order[1]

    @property
    def live(self) -> list[int]:
        """Seats still in the hand, in dealing order."""
        return [s for s in self.order if s not in self.folded]

    @property
    def can_act(self) -> list[int]:
        return [s for s in self.live if s not in self.all_in]

    def action_order(self) -> list[int]:
        """The seats in the order they act this round."""
        n = len(self.order)
        start = (1 if self.heads_up else 2 % n) if self.street == "preflop" else 0
        return self.order[start:] + self.order[:start]

    # ------------------------------------------------------------------ putting chips in

    def put(self, seat: int, amount: int) -> None:
        """``seat`` puts ``amount`` more in front of it (a post, call, bet or raise)."""
        if amount > self.stack[seat]:
            raise ValueError(f"seat {seat} has {self.stack[seat]}, cannot put {amount}")
        self.stack[seat] -= amount
        self.bet[seat] = self.bet.get(seat, 0) + amount
        self.contributed[seat] = self.contributed.get(seat, 0) + amount
        if self.stack[seat] == 0:
            self.all_in.add(seat)

    def ante(self, seat: int, amount: int) -> None:
        """Dead money before the deal (it is not part of the seat's bet)."""
        self.stack[seat] -= amount
        self.contributed[seat] = self.contributed.get(seat, 0) + amount

    def post_blinds(self) -> None:
        self.put(self.small_blind, self.stakes.small_blind)
        self.put(self.big_blind, self.stakes.big_blind)
        self.highest = self.stakes.big_blind
        self.last_raise = self.stakes.big_blind
        self.bets_made = 1

    def apply(self, seat: int, choice: Choice) -> int:
        """Book ``choice`` for ``seat``; returns the chips it puts in."""
        self.last_actor = seat
        if choice.verb == "fold":
            self.folded.add(seat)
            return 0
        if choice.verb == "check":
            self.acted.add(seat)
            return 0
        amount = choice.to - self.bet.get(seat, 0)
        self.put(seat, amount)
        total = self.bet[seat]
        if total > self.highest:
            raised_by = total - self.highest
            if raised_by >= self.last_raise:
                # A full bet or raise reopens the betting for everybody.
                self.last_raise = raised_by
                self.acted = set()
                self.bets_made += 1
            self.highest = total
            self.aggressor = seat
        self.acted.add(seat)
        return amount

    def owes(self, seat: int) -> bool:
        """Whether ``seat`` still has to act in this round."""
        if seat in self.folded or seat in self.all_in:
            return False
        return seat not in self.acted or self.bet.get(seat, 0) < self.highest

    def next_to_act(self) -> int | None:
        can = self.can_act
        if len(self.live) < 2 or not can:
            return None
        if len(can) == 1 and self.bet.get(can[0], 0) >= self.highest:
            return None  # everybody else is all in: nobody left to bet against
        order = self.action_order()
        if self.last_actor in order:
            at = order.index(self.last_actor) + 1
            order = order[at:] + order[:at]
        for seat in order:
            if self.owes(seat):
                return seat
        return None

    # ------------------------------------------------------------------ sizes

    def can_raise(self, seat: int) -> bool:
        """Not after an all-in for less that did not reopen the betting (TDA 47-A), nor past the
        fixed-limit cap, nor when nobody else could call."""
        if seat in self.acted or self.stack[seat] <= self.highest - self.bet.get(seat, 0):
            return False
        if self.stakes.structure == "fixed_limit" and self.bets_made >= 4:
            return False
        return any(s != seat and s not in self.all_in for s in self.live)

    def min_to(self) -> int:
        """The smallest full bet or raise, as a total in front."""
        if self.stakes.structure == "fixed_limit":
            return self.highest + self.stakes.limit_bet(self.street)
        if self.highest == 0:
            return self.stakes.big_blind
        return self.highest + self.last_raise

    def max_to(self, seat: int) -> int:
        """The largest bet or raise the structure allows, as a total in front (all in at most)."""
        everything = self.bet.get(seat, 0) + self.stack[seat]
        if self.stakes.structure == "fixed_limit":
            return min(everything, self.highest + self.stakes.limit_bet(self.street))
        if self.stakes.structure == "pot_limit":
            return min(everything, self.highest + self.pot_size_after_call(seat))
        return everything

    def pot_size_after_call(self, seat: int) -> int:
        """The pot if ``seat`` called: swept chips, every bet in front, the call."""
        return self.pot + sum(self.bet.values()) + self.highest - self.bet.get(seat, 0)

    # ------------------------------------------------------------------ the round's end

    def uncalled(self) -> tuple[int, int] | None:
        """(seat, chips) nobody called: the top contributor's excess over the second."""
        ranked = sorted(self.contributed.items(), key=lambda item: -item[1])
        if not ranked:
            return None
        top_seat, top = ranked[0]
        second = ranked[1][1] if len(ranked) > 1 else 0
        if top > second and self.bet.get(top_seat, 0) >= top - second:
            return top_seat, top - second
        return None

    def give_back(self, seat: int, amount: int) -> None:
        self.bet[seat] -= amount
        self.contributed[seat] -= amount
        self.stack[seat] += amount
        self.all_in.discard(seat)

    def sweep(self) -> None:
        """The bets go into the pot; the next round starts."""
        self.pot += sum(self.bet.values())
        self.bet = {}

    def next_street(self, street: str) -> None:
        self.street = street
        self.highest = 0
        self.last_raise = self.stakes.big_blind  # the smallest bet; a raise at least the last
        self.bets_made = 0
        self.acted = set()
        self.aggressor = None
        self.last_actor = None

    @property
    def betting_over(self) -> bool:
        """No more betting this hand: one seat left, or at most one that is not all in."""
        return len(self.live) < 2 or len(self.can_act) <= 1

    # ------------------------------------------------------------------ pots

    def pots(self, claims: Collection[int] | None = None) -> list[tuple[int, tuple[int, ...]]]:
        """(amount, eligible seats) main pot first; folded chips fill the levels. ``claims``: the
        seats still claiming at the showdown (a hand mucked there loses its claim, and its all-in
        level no longer divides the pots)."""
        live = set(self.live if claims is None else claims)
        levels = sorted({self.contributed.get(s, 0) for s in live})
        out: list[tuple[int, tuple[int, ...]]] = []
        below = 0
        for level in levels:
            amount = sum(min(c, level) - min(c, below) for c in self.contributed.values())
            eligible = tuple(sorted(s for s in live if self.contributed.get(s, 0) >= level))
            if amount:
                out.append((amount, eligible))
            below = level
        above = sum(self.contributed.values()) - sum(amount for amount, _ in out)
        if above and out:  # folded chips above the top live level stay in the last pot
            out[-1] = (out[-1][0] + above, out[-1][1])
        return out

    def shows_first(self) -> int:
        """Seed 000: the last to bet or raise on the final round, else the first seat left of the
        button still in."""
        live = self.live
        if self.aggressor is not None and self.aggressor in live:
            return self.aggressor
        return live[0]

    def showing_order(self) -> list[int]:
        first = self.shows_first()
        live = self.live
        at = live.index(first)
        return live[at:] + live[:at]


@dataclass
class Tendencies:
    """How the simulated players play (chances per decision)."""

    fold: float = 0.45
    raise_: float = 0.06
    bet: float = 0.18
    all_in: float = 0.06


def choose(
    ledger: Ledger,
    seat: int,
    rng: random.Random,
    tendencies: Tendencies,
    *,
    may_fold: bool = True,
    may_raise: bool = True,
) -> Choice:
    """A legal decision for ``seat`` (the players' behaviour is random, the sizes are legal)."""
    facing = ledger.highest - ledger.bet.get(seat, 0)
    everything = ledger.bet.get(seat, 0) + ledger.stack[seat]
    aggressive = may_raise and ledger.can_raise(seat)
    if facing > 0:
        if may_fold and rng.random() < tendencies.fold:
            return Choice("fold")
        if aggressive and rng.random() < tendencies.raise_:
            return Choice("raise", _size(ledger, seat, rng, tendencies, everything))
        return Choice("call", min(ledger.highest, everything))
    if aggressive and rng.random() < (tendencies.raise_ if ledger.highest else tendencies.bet):
        return Choice("raise" if ledger.highest else "bet", _size(ledger, seat, rng, tendencies, everything))
    return Choice("check", ledger.bet.get(seat, 0))


def _size(ledger: Ledger, seat: int, rng: random.Random, tendencies: Tendencies, top: int) -> int:
    """A legal bet or raise total: the minimum, half the pot or the pot, sometimes all in."""
    low, high = ledger.min_to(), ledger.max_to(seat)
    if ledger.stakes.structure == "fixed_limit":
        return min(ledger.highest + ledger.stakes.limit_bet(ledger.street), top)
    if high <= low or (ledger.stakes.structure == "no_limit" and rng.random() < tendencies.all_in):
        return high  # all in (for less, perhaps), or the pot-limit maximum
    pot = ledger.pot_size_after_call(seat)
    step = ledger.stakes.big_blind
    share = rng.choice((0.0, 0.0, 0.5, 0.5, 0.75, 1.0))
    wanted = ledger.highest + int(pot * share) // step * step
    return min(high, max(low, wanted))
