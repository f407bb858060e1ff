"""Mistakes of the session around the hands (docs/rules.md, "The session"): one injector per code.

- ``hand_after_last`` spans hands, so the dealer itself keeps the count of the announced last
  hands (:attr:`VirtualDealer.hands_left`, the engine's ``hands_left`` mirrored); this injector
  only deals the hand that comes one too many.
- ``dealer_changed_mid_hand``: the relief dealer badges in while the hand is dealt.
- ``rebuy_during_hand``, ``buy_in_out_of_limits``, ``absence_over_limit``: a player's chips put on
  its ``stack:N`` zone, where the table reads them (the players' stacks are otherwise off the
  table: chips bought from the rack are new money only if they did not last leave the table from
  that seat, :attr:`Rack.left_from`). They need a table that reads chips, and the last two the
  house's ``max_rebuy`` and ``max_absence_s``.
- ``blinds_out_of_level``: a tournament's small blind posted at the next level's amount.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from contract.cards import stack_zone
from simulators.dealer.chips import pick
from simulators.dealer.hand import PACE, HandPlay
from simulators.dealer.mistakes.base import DealPlan, Mistake
from simulators.dealer.mistakes.chipbase import ChipMistake, money_of
from simulators.dealer.mistakes.registry import register
from simulators.dealer.money import CHIP_PACE
from simulators.dealer.steps import DealerBadge, MoveButton, PlaceChips, Press, TakeChips, Wait

#: How long before the limit of an absence the dealer counts the mistake as committed.
ACT_EARLY_S: Final = 0.05

if TYPE_CHECKING:
    from simulators.dealer.dealer import VirtualDealer
    from simulators.dealer.steps import Step


@register
class HandAfterLast(Mistake):
    """``last_hands`` was pressed and the three announced hands dealt; the dealer starts a fourth.

    The floor is called (the alert is acknowledged); the dealer then ends the game: every player
    stands up before the next hand and sits down again, a new game (see ``VirtualDealer``).
    """

    code = "hand_after_last"

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.hands_left != 0:
            return (
                f"{cls.code}: the last hands must be announced and dealt first "
                "(announce_last_hands(), then three hands)"
            )
        return None

    def new_hand(self, play: HandPlay, due: int) -> None:
        play.press("new_hand", mistake=self.code)
        play.ack()


@register
class DealerChangedMidHand(Mistake):
    """Once the hole cards are out, the relief dealer holds his badge to the reader: the change
    is announced during the hand. The alert is acknowledged; the relief takes over at the hand's
    end (the engine's remedy: nothing for the dealer to undo)."""

    code = "dealer_changed_mid_hand"

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.relief = ""

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.badge is None:
            return f"{cls.code}: no dealer has badged in yet (the first hand)"
        return None

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        self.relief = dealer.relief_badge()
        dealer.badge = self.relief  # in force from this hand's end

    def after_deal(self, play: HandPlay) -> bool:
        play.emit(DealerBadge(badge=self.relief, mistake=self.code, pause_s=PACE["ack"]))
        play.ack()
        return True


@register
class RebuyDuringHand(ChipMistake):
    """Preflop, when its turn comes, a player buys chips and they are put on its stack: chips
    arriving in a dealt-in seat's stack from off the table during the hand. Acknowledged; the
    chips stay there and play no part in the hand (its remedy), taken with the stack after it."""

    code = "rebuy_during_hand"

    def act(self, play: HandPlay, seat: int) -> bool:
        money, ledger = money_of(play)
        if self.done or ledger.street != "preflop":
            return False
        self.done = True
        amount = ledger.stakes.buy_in // 2
        uids = money.rack.take(amount, complete=False, new_to=seat)
        play.emit(
            PlaceChips(uids=tuple(uids), zone=stack_zone(seat), mistake=self.code, pause_s=CHIP_PACE["bet"])
        )
        play.ack()
        money.stacked.setdefault(seat, []).extend(uids)
        money.bought[seat] = money.bought.get(seat, 0) + amount
        return False  # then it acts as it would have


@register
class BuyInOutOfLimits(ChipMistake):
    """Between hands a player who played the last hand buys more than the house's maximum
    rebuy and the chips are put on its stack; judged when the next hand begins (``new_hand``).
    Acknowledged; the player takes the excess back off the table before the deal, so the rebuy
    is within the limit (the engine's remedy), and plays with it."""

    code = "buy_in_out_of_limits"
    needs = frozenset({"max_rebuy"})

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.seat = 0
        self.kept: list[str] = []
        self.excess: list[str] = []

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.settings.max_rebuy <= 0:
            return f"{cls.code}: the house sets no maximum rebuy"
        if len(dealer.last_players) < 2 or dealer.hands_left == 0:
            # (after the game's end every player sits down anew: a first buy-in, not a rebuy)
            return f"{cls.code}: a rebuy needs a player who played the last hand of this game"
        return super().infeasible(dealer)

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        super().seat_changes(dealer, steps)
        rack = dealer.rack
        assert rack is not None
        # At most one player leaves between hands: somebody who played the last hand stays.
        stayed = [s for s in dealer.last_players if s in dealer.occupied]
        self.seat = dealer.rng.choice(stayed)
        limit = dealer.settings.max_rebuy
        excess = max(1, limit // 4)
        uids = rack.take(limit + excess, complete=True, new_to=self.seat)
        taken = pick(rack.chips, uids, excess)
        assert taken is not None, "a complete handful holds every smaller amount"
        self.excess = taken
        self.kept = [u for u in uids if u not in set(taken)]
        steps.append(PlaceChips(uids=tuple(uids), zone=stack_zone(self.seat), pause_s=CHIP_PACE["bet"]))

    def stacks(self, dealer: VirtualDealer, stacks: dict[int, int]) -> None:
        stacks[self.seat] = stacks.get(self.seat, 0) + dealer.settings.max_rebuy

    def new_hand(self, play: HandPlay, due: int) -> None:
        money, _ = money_of(play)
        play.press("new_hand", mistake=self.code)
        play.ack()
        play.emit(TakeChips(uids=tuple(self.excess), pause_s=CHIP_PACE["collect"]))
        money.rack.give(self.excess, seat=self.seat)
        money.stacked.setdefault(self.seat, []).extend(self.kept)  # taken with it after the hand


@register
class AbsenceOverLimit(ChipMistake):
    """Between hands a player leaves the table with his chips on his stack (``stack:N``) and
    stays away longer than the house allows (a real-time wait, even flat out); the engine judges
    when the limit passes, by time alone, then the button moves for the next hand. Acknowledged; the
    floor takes the chips off the table, deposited in the player's name (the remedy), and the
    seat is free."""

    code = "absence_over_limit"
    needs = frozenset({"max_absence_s"})
    players = 3  # two still play while the third is away

    def __init__(self, *, ignore_remedy: bool = False) -> None:
        super().__init__(ignore_remedy=ignore_remedy)
        self.seat = 0
        self.left_behind: list[str] = []

    @classmethod
    def infeasible(cls, dealer: VirtualDealer) -> str | None:
        if dealer.settings.max_absence_s is None:
            return f"{cls.code}: the house sets no longest absence"
        if dealer.button is None:
            return f"{cls.code}: not at the first hand (the players are only sitting down)"
        if dealer.settings.min_players >= dealer.settings.most_players:
            return f"{cls.code}: no player may leave this table"
        return super().infeasible(dealer)

    def seat_changes(self, dealer: VirtualDealer, steps: list[Step]) -> None:
        while len(dealer.occupied) <= max(2, dealer.settings.min_players):
            dealer.join(steps)
        rack, limit = dealer.rack, dealer.settings.max_absence_s
        assert rack is not None
        assert limit is not None
        self.seat = dealer.rng.choice(sorted(dealer.occupied))
        stakes = dealer.settings.stakes
        assert stakes is not None
        self.left_behind = rack.take(dealer.stacks.get(self.seat, stakes.buy_in), complete=False)
        steps.append(
            PlaceChips(uids=tuple(self.left_behind), zone=stack_zone(self.seat), pause_s=CHIP_PACE["bet"])
        )
        dealer.leave(steps, seat=self.seat)
        # The engine raises it when the limit passes, by the table's time alone (docs/engine.md,
        # "Time on a quiet table"): the mistake is committed by the wait's second part, which
        # starts just before the limit (ACT_EARLY_S: the clocks of the dealer and the controller
        # differ by the leave's delivery, a millisecond or so).
        steps.append(Wait(seconds=limit - ACT_EARLY_S, pause_s=0.0))
        steps.append(Wait(seconds=0.5 + ACT_EARLY_S, pause_s=0.0, mistake=self.code))

    def place_button(self, dealer: VirtualDealer, steps: list[Step], due: int) -> None:
        # (the button always moves: to the next occupied seat, never the one it is on)
        steps.append(MoveButton(seat=due, pause_s=PACE["button"]))
        steps.append(Press(key="ack", pause_s=PACE["ack"]))
        steps.append(TakeChips(uids=tuple(self.left_behind), pause_s=CHIP_PACE["collect"]))
        rack = dealer.rack
        assert rack is not None
        rack.give(self.left_behind, seat=self.seat)


@register
class BlindsOutOfLevel(ChipMistake):
    """Tournament: the small blind posts the next level's small blind (the dealer thinks the
    level went up; at the last level, the big blind's amount); seen when the deal is complete.
    Acknowledged; the remedy ("before the deal") is too late once cards are out: the hand plays
    on."""

    code = "blinds_out_of_level"
    needs = frozenset({"levels"})

    def blind_amount(self, play: HandPlay, seat: int, due: int) -> int:
        _, ledger = money_of(play)
        if seat != ledger.small_blind:
            return due
        small, big = ledger.stakes.small_blind, ledger.stakes.big_blind
        stakes = play.settings.stakes
        levels = stakes.levels if stakes is not None else ()
        wrong = next((lv.small_blind for lv in levels if lv.small_blind > small), big)
        if wrong == small:
            wrong += 1
        return due - small + wrong

    def plan_deal(self, play: HandPlay, targets: list[int]) -> DealPlan:
        return DealPlan(targets, tags={len(targets) - 1: self.code or ""})

    def after_deal(self, play: HandPlay) -> bool:
        play.ack()
        return True
