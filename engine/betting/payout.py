"""The end of the hand for :class:`engine.betting.hand.Money`: when the betting is decided, what
the dealer pushed where, and the award it is checked against."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Self

from engine.betting.api import (
    OddChip,
    PotAward,
    Raise,
    Stakes,
    Verdict,
    Verdicts,
)
from engine.betting.award import award, check_push, rake_for
from engine.betting.chips import ChipRules
from engine.betting.pots import build_pots, uncalled
from engine.betting.zones import (
    add_count,
)


class PayoutRules(ChipRules):
    """The award and the pushes (the rules over the chips)."""

    def _decided(self) -> bool:
        """No more betting: one seat left, or the last round complete, or the hand finished."""
        memo = self._kept()
        decided: bool | None = memo.get("decided")
        if decided is None:
            decided = memo["decided"] = (
                self.finished
                or (self.street_no >= 0 and len(self.live) <= 1)
                or (self.street_no == 3 and self.pending is None and not self._anyone_owes())
            )
        return decided

    def _shows_first(self) -> int | None:
        """At showdown, the seat that must show first (seed 000): the last to bet or raise on
        the last round with betting, else the house's rule for a showdown with no bet."""
        if self.street_no < 3 and len(self.live) > 1 and not self.finished:
            return None  # before the river nobody shows (an all-in's run-out comes first)
        view = self._view()
        if not view._decided() or len(view.live) < 2:
            return None
        if view.last_bettor is not None and view.last_bettor in view.live:
            return view.last_bettor
        if view.no_bet_shows_first == "last_to_check":
            for seat in reversed(view.checked):
                if seat in view.live:
                    return seat
        return next((s for s in view.ring if s in view.live), None)

    def _pushes_done(self) -> bool:
        if self.pot_chips:  # (the cheap test first: asked after every chip of a push)
            return False
        leftover = any(v > self.pushed_zone.get(s, 0) for s, v in self.zone.items())
        return not leftover and (bool(self.pushed) or self.raked > 0)

    def _awards(self) -> tuple[tuple[PotAward, ...], int]:
        """Each pot's winners and shares as the hands shown say, and the rake."""
        memo = self._kept()
        found: tuple[tuple[PotAward, ...], int] | None = memo.get("awards")
        if found is None:
            button = self.button if self.button is not None else (self.ring[-1] if self.ring else 0)
            shown = self.shown if len(self.board) >= 3 else ()  # no board: no ranks yet
            contributed = tuple(sorted(self._contributions().items()))
            found = memo["awards"] = _award_of(
                contributed, self.live, shown, self.board, self.stakes, self.street_no >= 1,
                self.odd_chip, button, self.table_seats,
            )
        return found

    def _push(self, amount: int, src_kind: str | None, src_seat: int, dst_kind: str | None,
              dst_seat: int, out: list[Verdict], changes: dict[str, Any] | None = None,
              ) -> tuple[Self, Verdicts]:
        """After the betting: chips from the pot (or the bets left in front) to a seat;
        ``changes``: where the chips lie besides, not made yet."""
        if src_kind == "pot" and dst_kind == "bet" and self.pending is None:
            due = self._due()  # where the chips lie does not change it
            if due is None or due[0] != dst_seat:
                # The common case, a chip of the pot pushed to a seat: one copy, not four.
                m = self._with(zone=add_count(self.zone, dst_seat, amount),
                               pushed_zone=add_count(self.pushed_zone, dst_seat, amount),
                               pushed=add_count(self.pushed, dst_seat, amount), **(changes or {}))
                return m._check_winner(dst_seat, out)._after_push(out)
        m = (self._with(**changes) if changes else self)._settle(out)
        from_pushed = 0
        if src_kind == "bet":
            from_pushed = min(amount, m.pushed_zone.get(src_seat, 0))
            m = m._with(zone=add_count(m.zone, src_seat, -amount),
                        pushed_zone=add_count(m.pushed_zone, src_seat, -from_pushed))
        if dst_kind == "pot":
            # A push taken back (or the bets swept late).
            if src_kind == "stack":
                m = m._with(pushed=add_count(m.pushed, src_seat, -amount))
            elif src_kind == "bet" and from_pushed:
                m = m._with(pushed=add_count(m.pushed, src_seat, -from_pushed))
            return m._after_push(out)
        if dst_kind not in ("bet", "stack"):
            return m._after_push(out)
        if dst_kind == "bet":
            m = m._with(zone=add_count(m.zone, dst_seat, amount),
                        pushed_zone=add_count(m.pushed_zone, dst_seat, amount))
        if src_kind == "bet" and src_seat == dst_seat and from_pushed == amount:
            return m._after_push(out)  # the winner stacking chips already pushed to it
        if src_kind == "bet" and from_pushed:
            m = m._with(pushed=add_count(m.pushed, src_seat, -from_pushed))
        due = m._due()
        if due is not None and due[0] == dst_seat:
            back = min(amount, due[1])
            m = m._give_back(dst_seat, back, from_pot=src_kind == "pot")._check_uncalled(out)
            amount -= back
        if amount > 0:
            m = m._with(pushed=add_count(m.pushed, dst_seat, amount))._check_winner(dst_seat, out)
        return m._after_push(out)

    def _check_winner(self, seat: int, out: list[Verdict]) -> Self:
        """Chips were pushed to ``seat``: at once wrong if it wins no pot."""
        awards, _ = self._awards()
        if any(seat in a.winners for a in awards):
            return self
        winners = sorted({w for a in awards for w in a.winners})
        out.append(Raise("push", "pot_awarded_wrong", seat,
                         f"Stop: seat {seat} wins no pot; take the chips back and push "
                         f"to seat {', '.join(map(str, winners))}."))
        return self._with(open_keys=self.open_keys | {"push"})

    def _after_push(self, out: list[Verdict]) -> tuple[Self, Verdicts]:
        """Once the pot is empty after the betting, check what went where."""
        m = self
        if m._decided() and m._pushes_done():
            awards, rake = m._awards()
            for verdict in _checked(awards, m.pushed, m.raked, rake):
                if isinstance(verdict, Raise):
                    # One finding per key: the full check supersedes the at-once one.
                    out[:] = [v for v in out if not (isinstance(v, Raise) and v.key == verdict.key)]
                    out.append(verdict)
                    m = m._with(open_keys=m.open_keys | {verdict.key})
                elif verdict.key in m.open_keys:
                    out.append(verdict)
                    m = m._with(open_keys=m.open_keys - {verdict.key})
        return m, tuple(out)


# The last push check, by the identity of its award (remembered, see _award_of) and of the
# pushed counts (replaced, never updated): every chip a winner collects asks it again unchanged.
# One entry, a tuple read and replaced whole (consistent when engines run in several threads).
_last_check: list[tuple[object, object, int, int, Verdicts]] = [(None, None, 0, 0, ())]


def _checked(awards: tuple[PotAward, ...], pushed: Mapping[int, int], raked: int, rake: int) -> Verdicts:
    last_awards, last_pushed, last_raked, last_rake, verdicts = _last_check[0]
    if awards is last_awards and pushed is last_pushed and raked == last_raked and rake == last_rake:
        return verdicts
    verdicts = check_push(awards, pushed, raked=raked, rake=rake)
    _last_check[0] = (awards, pushed, raked, rake, verdicts)
    return verdicts


@lru_cache(maxsize=64)
def _award_of(
    contributed: tuple[tuple[int, int], ...],
    live: frozenset[int],
    shown: tuple[tuple[int, tuple[str, str]], ...],
    board: tuple[str, ...],
    stakes: Stakes,
    saw_flop: bool,
    odd_chip: OddChip,
    button: int,
    table_seats: int,
) -> tuple[tuple[PotAward, ...], int]:
    """The award of a hand (a pure function of its arguments, remembered: every chip of a push
    asks for it, and the hands do not change while the pot is pushed)."""
    put = dict(contributed)
    due = uncalled(put)
    if due is not None:
        put[due[0]] -= due[1]
    pots = build_pots(put, live)
    rake = rake_for(stakes, sum(p.amount for p in pots), saw_flop)
    awards = award(pots, shown, board, rake=rake, odd_chip=odd_chip, button=button, table_seats=table_seats)
    return awards, rake
