"""How much a seat may bet or raise: the minimum sizes and the limits of the three structures.

One function judges one settled action against the betting situation it started from (its
:class:`Frame`), so the same judgement serves a first look and a remedy (a bet completed, a raise
reduced to the limit or to a call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from engine.betting.terms import Stakes

ActionName: TypeAlias = Literal["call", "bet", "raise", "all_in"]
#: Fixed limit: a bet and three raises per round (the fifth bet is over the limit).
FIXED_LIMIT_BETS = 4


@dataclass(frozen=True, slots=True)
class Frame:
    """The round as it stood when a seat's action began."""

    top: int  # the highest contribution of the round
    full_raise: int  # the size of the last full bet or raise of the round (0: none yet)
    bets: int  # bets and raises so far this round
    pot: int  # every chip in so far (earlier rounds, antes, this round's bets)
    before: int  # the acting seat's own contribution this round


@dataclass(frozen=True, slots=True)
class Judgement:
    """A settled action: its name and, when it breaks a size rule, the code and the sentence."""

    name: ActionName
    code: str | None
    message: str


def street_minimum(stakes: Stakes, street: int) -> int:
    """The smallest opening bet (and raise) of a round; fixed limit doubles it on turn and river."""
    if stakes.structure == "fixed_limit" and street >= 2:
        return 2 * stakes.big_blind
    return stakes.big_blind


def pot_limit_to(frame: Frame) -> int:
    """Pot limit: the most a seat may make its bet, a call plus the pot after the call."""
    call = frame.top - frame.before
    return frame.top + frame.pot + call


def judge(stakes: Stakes, street: int, frame: Frame, seat: int, total: int, all_in: bool) -> Judgement:
    """Name the action that brought ``seat`` to ``total`` this round and check its size."""
    top = frame.top
    if total <= top:
        return Judgement("all_in" if all_in else "call", None, "")
    opening = top == 0
    name: ActionName = "all_in" if all_in else ("bet" if opening else "raise")
    size = total - top
    minimum = max(frame.full_raise, street_minimum(stakes, street))
    if stakes.structure == "pot_limit" and total > pot_limit_to(frame):
        limit = pot_limit_to(frame)
        return Judgement(
            name,
            "bet_over_limit",
            f"Seat {seat} made it {total}, over the pot limit of {limit}: reduce it to {limit}.",
        )
    if stakes.structure == "fixed_limit":
        if frame.bets >= FIXED_LIMIT_BETS:
            return Judgement(
                name,
                "bet_over_limit",
                f"Seat {seat} made a fifth bet in this round ({total}): the limit is "
                f"{FIXED_LIMIT_BETS} bets; make it a call of {top}.",
            )
        if size > minimum:
            return Judgement(
                name,
                "bet_over_limit",
                f"Seat {seat} made it {total}; the limit is {top + minimum}: reduce it.",
            )
    if all_in or size >= minimum:
        return Judgement(name, None, "")
    if opening:
        return Judgement(
            name,
            "bet_below_minimum",
            f"Seat {seat} bet {total}, less than the minimum bet of {minimum}: complete it to {minimum}.",
        )
    # RR / TDA 43: half a raise or more must be made a full raise; less becomes a call.
    remedy = f"make it {top + minimum}" if 2 * size >= minimum else f"make it a call of {top}"
    return Judgement(
        name,
        "raise_below_minimum",
        f"Seat {seat} raised to {total}, less than the minimum raise to {top + minimum}: {remedy}.",
    )
