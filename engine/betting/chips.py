"""The chips on the table for :class:`engine.betting.hand.Money`: chips put in, taken back or
swept, the uncalled part and its return, blinds before the deal, a vacant seat's betting area."""

from __future__ import annotations

from typing import Any, Self

from engine.betting.api import (
    Action,
    Clear,
    Raise,
    Verdict,
    Verdicts,
)
from engine.betting.rounds import RoundRules
from engine.betting.zones import (
    add_count,
)


class ChipRules(RoundRules):
    """The chips on the table (the rules over the betting round)."""

    def _chips_in(self, seat: int, amount: int, out: list[Verdict], *, zone: bool = True) -> Self:
        """Chips of ``seat`` arrive in its betting area (or an input says it put them in)."""
        if zone and self.pending == seat and seat not in self.back and seat not in self.frames:
            # The common case, one more chip of the action under way: one copy.
            return self._with(zone=add_count(self.zone, seat, amount), put=add_count(self.put, seat, amount))
        if zone and seat in self.live and seat not in self.blind_due and seat not in self.back:
            # The next common case, the first chip of an action in turn: the action before it
            # settled (it reads no chip's place), then one copy. The rules below otherwise.
            found: list[Verdict] = []
            m = self._settle(found) if self.pending is not None and self.pending != seat else self
            if m.pending is None and seat not in m.frames \
                    and (m.button is None or not m._someone_owes_before(seat)):
                out.extend(found)
                return m._with(zone=add_count(m.zone, seat, amount), pending=seat, pending_oot=None,
                               put=add_count(m.put, seat, amount))
        m = self
        if zone:
            m = m._with(zone=add_count(m.zone, seat, amount))
        if seat not in m.live:
            return m  # a folded seat's chips: dead, they are swept like the rest
        if seat in m.blind_due and m._to_act_now() != seat and m._may_fix_blind(seat):
            return m._fix_blind(seat, amount, out)  # the blind corrected, before its turn
        if m.pending is not None and m.pending != seat:
            m = m._settle(out)
        if seat in m.frames:
            # A remedy: the bet or raise is completed (or made more) in front of the dealer.
            m = m._with(put=add_count(m.put, seat, amount))
            return m._rejudge(seat, out)
        if m.pending is None:
            m = m._with(pending=seat, pending_oot=None)
            if m.button is not None and m._someone_owes_before(seat):
                m = m._out_of_turn(seat, out)._with(pending=seat, pending_oot=seat)
        m = m._with(put=add_count(m.put, seat, amount))
        if seat in m.back and m.put.get(seat, 0) >= m.back[seat]:
            key = f"back:{seat}:{m.street_no}"
            out.append(Clear(key))
            m = m._with(back={s: v for s, v in m.back.items() if s != seat},
                        open_keys=m.open_keys - {key})
        return m

    def _stack_emptied(self, seat: int, out: list[Verdict]) -> Self:
        """Where stacks are read, a stack emptied into the betting area is an all in."""
        if seat in self.stack_read and not self.stack.get(seat) and seat not in self.allin:
            return self._with(allin=self.allin | {seat})._mark_all_in(seat, out)
        return self

    def _chips_out(self, seat: int, amount: int, out: list[Verdict]) -> Self:
        """Chips leave ``seat``'s betting area for its side (or vanish) before the sweep."""
        m = self._settle(out) if self.pending not in (None, seat) else self
        m = m._with(zone=add_count(m.zone, seat, -amount))
        if seat in m.blind_due and m._may_fix_blind(seat):
            return m._fix_blind(seat, -amount, out)
        before = m.put.get(seat, 0)
        due = m._due()
        if due is not None and due[0] == seat:
            # The uncalled part goes back to its owner: not a take-back.
            return m._give_back(seat, min(amount, due[1]), from_pot=False)._check_uncalled(out)
        m = m._with(put=add_count(m.put, seat, -amount))
        if seat in m.frames:
            return m._rejudge(seat, out)  # a remedy: reduced to the limit, or to a call
        key = f"back:{seat}:{m.street_no}"
        restore = max(before, m.back.get(seat, 0))
        out.append(Raise(key, "chips_taken_back", seat,
                         f"Seat {seat} took {restore - m.put.get(seat, 0)} back from its betting area: "
                         f"chips released stay; put them back ({restore} in front)."))
        return m._with(back={**m.back, seat: restore}, open_keys=m.open_keys | {key})

    def _sweep(self, seat: int, amount: int, out: list[Verdict], changes: dict[str, Any]) -> Self:
        """A chip swept from ``seat``'s betting area into the pot; ``changes``: where the chips
        lie besides (the pot's count), made with the sweep's own copy."""
        m = self._settle(out)  # it neither reads nor changes where chips lie
        key = f"sweep:{m.street_no}"
        # Only a sweep's first chip can be premature: nobody acts while the dealer sweeps.
        if not m.swept and key not in m.open_keys and m._anyone_owes():
            behind = [s for s in m.ring if m._owes(s)]
            out.append(Raise(key, "premature_sweep", None,
                             f"The bets were swept while seat{'s' if len(behind) > 1 else ''} "
                             + ", ".join(map(str, behind))
                             + f" had not matched {m.top}: return them and finish the round."))
            m = m._with(open_keys=m.open_keys | {key})
        m = m._with(zone=add_count(m.zone, seat, -amount), swept=add_count(m.swept, seat, amount),
                    **changes)
        if "uncalled" in m.open_keys or m.put.get(seat, 0) >= max(m.put.values(), default=0):
            m = m._check_uncalled(out)  # only the top bettor's chips can be uncalled
        if not any(m.zone.values()):
            m = m._with(pots_=m._current_pots())
        return m

    def _unsweep(self, seat: int, amount: int, out: list[Verdict]) -> Self:
        """Chips back from the pot to a betting area (a premature sweep undone)."""
        m = self._with(zone=add_count(self.zone, seat, amount), swept=add_count(self.swept, seat, -amount))
        return m._check_uncalled(out)

    def _pot_back(self, seat: int, amount: int, out: list[Verdict]) -> Self:
        """Chips from the pot to a seat's stack mid-hand: the uncalled part returned late."""
        due = self._due()
        if due is None or due[0] != seat:
            return self
        return self._give_back(seat, min(amount, due[1]), from_pot=True)._check_uncalled(out)

    def _give_back(self, seat: int, back: int, *, from_pot: bool) -> Self:
        """``back`` uncalled chips return to ``seat``: from this round's bet (in front of it or
        swept), or from an earlier round's."""
        m = self
        if m.put.get(seat, 0) >= back:
            swept = add_count(m.swept, seat, -back) if from_pot else m.swept
            m = m._with(put=add_count(m.put, seat, -back), level=add_count(m.level, seat, -back), swept=swept)
            return m._with(top=max(m.level.values(), default=0))
        return m._with(committed=add_count(m.committed, seat, -back))

    def _check_uncalled(self, out: list[Verdict]) -> Self:
        """Raise when the uncalled part went into the pot; clear once it is back."""
        due = self._due()
        if due is not None and len(self.live) >= 2 \
                and self.swept.get(due[0], 0) > self.put.get(due[0], 0) - due[1]:
            if "uncalled" in self.open_keys:
                return self
            out.append(Raise("uncalled", "uncalled_bet_not_returned", due[0],
                             f"{due[1]} of seat {due[0]}'s bet was not called: return it to seat "
                             f"{due[0]} instead of the pot."))
            return self._with(open_keys=self.open_keys | {"uncalled"})
        if "uncalled" in self.open_keys:
            out.append(Clear("uncalled"))
            return self._with(open_keys=self.open_keys - {"uncalled"})
        return self

    def _before_deal(self, amount: int, src_kind: str | None, src_seat: int,
                     dst_kind: str | None, dst_seat: int, out: list[Verdict]) -> tuple[Self, Verdicts]:
        """Before the deal chips come and go freely: posts and antes, and their corrections."""
        m = self
        if dst_kind == "bet":
            m = m._with(zone=add_count(m.zone, dst_seat, amount), put=add_count(m.put, dst_seat, amount))
            if src_kind == "stack" and src_seat == dst_seat:
                m = m._stack_emptied(src_seat, out)
        elif src_kind == "bet" and dst_kind == "pot":
            m = m._with(zone=add_count(m.zone, src_seat, -amount))  # antes swept before the deal
        elif src_kind == "bet":
            m = m._with(zone=add_count(m.zone, src_seat, -amount), put=add_count(m.put, src_seat, -amount))
        elif dst_kind == "pot" and src_kind == "stack":
            m = m._with(put=add_count(m.put, src_seat, amount))  # an ante straight into the pot
        return m, tuple(out)

    def _may_fix_blind(self, seat: int) -> bool:
        """A wrong blind may still be corrected: preflop, before the seat's first action."""
        return (
            self.street_no == 0
            and self.pending != seat
            and not any(a.seat == seat and a.action != "post" for a in self.history)
        )

    def _fix_blind(self, seat: int, delta: int, out: list[Verdict]) -> Self:
        """Chips added to or taken from a wrong blind: its post is what is now in front."""
        posted = self.put.get(seat, 0) + delta
        level = {**self.level, seat: posted}
        history = list(self.history)
        posts = [i for i, a in enumerate(history) if a.seat == seat and a.action == "post"]
        # Antes are listed first: a seat's blind is its second post, or its only one without ante.
        index = posts[-1] if posts and (len(posts) == 2 or not self.stakes.ante) else None
        if index is None:
            history.append(Action("preflop", seat, "post", posted))
        else:
            history[index] = Action("preflop", seat, "post", posted)
        m = self._with(put={**self.put, seat: posted}, level=level, history=tuple(history),
                       top=max(level.values(), default=0))
        if posted != self.blind_due[seat]:
            return m
        key = f"blind:{seat}"
        out.append(Clear(key))
        return m._with(blind_due={s: v for s, v in m.blind_due.items() if s != seat},
                       open_keys=m.open_keys - {key})

    def _vacant(self, seat: int, amount: int, out: list[Verdict]) -> Self:
        vacant = add_count(self.vacant, seat, amount)
        key = f"vacant:{seat}"
        if vacant.get(seat) and key not in self.open_keys:
            out.append(Raise(key, "chips_on_vacant_seat", seat,
                             f"Chips in the betting area of seat {seat}, where nobody is dealt in: "
                             "remove them."))
            return self._with(vacant=vacant, open_keys=self.open_keys | {key})
        if not vacant.get(seat) and key in self.open_keys:
            out.append(Clear(key))
            return self._with(vacant=vacant, open_keys=self.open_keys - {key})
        return self._with(vacant=vacant)

    def _blind_seats(self) -> dict[int, int]:
        """Seat -> the blind it posts (antes aside), a straddle posted at the deal included;
        empty when the order is unknown."""
        if self.button is None or len(self.ring) < 2:
            return {}
        if len(self.ring) == 2:
            return {self.ring[1]: self.stakes.small_blind, self.ring[0]: self.stakes.big_blind}
        blinds = {self.ring[0]: self.stakes.small_blind, self.ring[1]: self.stakes.big_blind}
        straddler = self._straddler()
        if straddler is not None:
            blinds[straddler] = 2 * self.stakes.big_blind
        return blinds

    def _straddler(self) -> int | None:
        """The seat whose post at the deal is a straddle: the third left of the button (3+
        players, order known) with exactly its ante and 2 x big blind in, where the house allows
        it. Fixed limit has none: the rules count it differently (PokerKit: raises by the small
        bet, the straddle not among the four bets; Robert's Rules: a blind raise that counts)."""
        stakes, ring = self.stakes, self.ring
        if not stakes.straddle or stakes.structure == "fixed_limit" or self.button is None \
                or len(ring) < 3:
            return None
        seat = ring[2]
        return seat if self.put.get(seat, 0) == stakes.ante + 2 * stakes.big_blind else None

    def _preflop_start(self, blinds: dict[int, int]) -> tuple[int, int]:
        """Where preflop's action begins (ring index) and its full raise so far: left of the big
        blind (heads-up the button); after a straddle left of the straddler, and the straddle
        is the big blind the minimum raise is measured by."""
        n = len(self.ring)
        if n < 2:
            return 0, 0
        if n == 2:
            return 1, 0
        if blinds.get(self.ring[2]) == 2 * self.stakes.big_blind:  # straddled (3+ players)
            return 3 % n, 2 * self.stakes.big_blind
        return 2 % n, 0

    def _blind_wrong(self, seat: int, posted: int, blind: int | None) -> str:
        """The sentence for a wrong blind or ante, or ''."""
        ante = self.stakes.ante
        if self.button is None:
            allowed = {ante, ante + self.stakes.small_blind, ante + self.stakes.big_blind}
            if self.stakes.straddle and self.stakes.structure != "fixed_limit" and len(self.ring) >= 3:
                allowed.add(ante + 2 * self.stakes.big_blind)  # a straddle, wherever it lies
            if posted in allowed or (seat in self.allin and posted < max(allowed)):
                return ""
            return f"Seat {seat} posted {posted} before the deal; a blind or ante here is one of " \
                   f"{', '.join(map(str, sorted(allowed)))}."
        expected = ante + (blind or 0)
        if posted == expected or (seat in self.allin and posted < expected):
            return ""
        what = "small blind" if blind == self.stakes.small_blind and blind != self.stakes.big_blind \
            else "big blind" if blind else "ante"
        return f"Seat {seat} posted {posted} before the deal; its {what}" \
               f"{' and ante' if blind and ante else ''} is {expected}."
