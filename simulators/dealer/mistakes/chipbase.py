"""What the chip mistakes share: they need a table that reads chips, and a few seats and waits."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from simulators.dealer.hand import HandPlay
from simulators.dealer.mistakes.base import Mistake
from simulators.dealer.steps import Wait

if TYPE_CHECKING:
    from simulators.dealer.betting import Ledger
    from simulators.dealer.dealer import VirtualDealer
    from simulators.dealer.money import TableMoney
    from simulators.dealer.steps import Step


class ChipMistake(Mistake):
    """A mistake with chips: infeasible without stakes (or under the structures it cannot
    happen in); ``players`` seats at least are dealt in."""

    chips = True
    keep = 2
    players: ClassVar[int] = 2
    structures: ClassVar[tuple[str, ...]] = ("no_limit", "pot_limit", "fixed_limit")

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.done = False

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        stakes = dealer.settings.stakes
        if stakes is None:
            return f"{cls.code}: the table reads no chips"
        if stakes.structure not in cls.structures:
            return f"{cls.code}: cannot happen in {stakes.structure.replace('_', ' ')}"
        if dealer.settings.most_players < cls.players:
            return f"{cls.code}: needs at least {cls.players} players"
        return None

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        while len(dealer.occupied) < self.players:
            dealer.join(steps)


def money_of(play: HandPlay) -> tuple[TableMoney, Ledger]:
    money = play.money
    assert money is not None, "a chip mistake at a table without chips"
    return money, money.ledger


def next_in_turn(ledger: Ledger, seat: int) -> int | None:
    """The seat that acts after ``seat`` (live, not all in), or None."""
    order = ledger.action_order()
    at = order.index(seat)
    for other in order[at + 1 :] + order[:at]:
        if other in ledger.live and other not in ledger.all_in:
            return other
    return None


def wait(play: HandPlay, seconds: float) -> None:
    """Real time passes (event time, which the engine's timers run on)."""
    play.emit(Wait(seconds=seconds, pause_s=0.0))
