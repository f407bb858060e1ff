"""The betting round of :class:`engine.betting.hand.Money`: whose turn it is, the pending action
settled and named, checks inferred, out-of-turn action, the sizes judged, the round ended."""

from __future__ import annotations

from dataclasses import replace
from typing import Self

from engine.betting.api import (
    Action,
    Clear,
    Pot,
    Raise,
    Verdict,
)
from engine.betting.pots import build_pots, uncalled
from engine.betting.record import HandRecord
from engine.betting.sizes import Frame, judge
from engine.betting.zones import (
    NO_SEATS,
    STREETS,
)


class RoundRules(HandRecord):
    """The betting round (the first layer of rules over the record)."""

    def _view(self) -> Self:
        """This hand with the pending action settled (queries answer as if it were)."""
        if self.pending is None:
            return self
        memo = self._memo()
        view: Self | None = memo.get("view")
        if view is None:
            view = memo["view"] = self._settle([], view=True)
        return view

    def _needs(self, seat: int) -> bool:
        """The seat still has to act this round (it may, or must, put chips in or check)."""
        return (
            seat in self.live
            and seat not in self.allin
            and (seat not in self.acted or self.level.get(seat, 0) < self.top)
        )

    def _anyone_owes(self) -> bool:
        """Some seat still in and not all in has not matched the highest bet."""
        top, level, allin = self.top, self.level, self.allin
        return any(level.get(s, 0) < top for s in self.live if s not in allin)

    def _owes(self, seat: int) -> bool:
        """The seat has to act and acting would move chips or cards (it faces a bet)."""
        return self._needs(seat) and self.level.get(seat, 0) < self.top

    def _nobody_to_act(self) -> bool:
        """At a round's start: nobody, or one seat that already matches, is able to act."""
        able = [s for s in self.live if s not in self.allin]
        if len(self.live) <= 1 or not able:
            return True
        return len(able) == 1 and self.level.get(able[0], 0) >= self.top

    def _next_to_act(self) -> int | None:
        if self.button is None or self.street_no < 0 or self.closed or self.finished or len(self.live) <= 1:
            return None
        ring, cursor, live, allin, acted, level, top = (
            self.ring, self.cursor, self.live, self.allin, self.acted, self.level, self.top
        )
        n = len(ring)
        for i in range(n):
            seat = ring[(cursor + i) % n]
            # _needs(seat), with this hand's fields read once (asked after most chips)
            if seat in live and seat not in allin and (seat not in acted or level.get(seat, 0) < top):
                return seat
        return None

    def _to_act_now(self) -> int | None:
        """The seat expected to act next (as if a pending action were settled)."""
        if self.pending is None:
            return self._next_to_act()
        return self._to_act_after_pending()

    def _to_act_after_pending(self) -> int | None:
        """``to_act`` as if the pending action were settled, without settling it (the same
        answer as ``self._view()._next_to_act()``, cheaply: it is asked after every chip)."""
        seat = self.pending
        assert seat is not None
        if self.button is None or self.closed or self.finished or len(self.live) <= 1:
            return None
        total = self.put.get(seat, 0)
        raised = total > self.top
        top = max(self.top, total)
        ring, cursor, acted = self.ring, self.cursor, self.acted
        n = len(ring)
        start, passed = cursor, 0
        if self.pending_oot is None and seat in ring:
            # the seats from the cursor up to this one were passed over: they checked (the
            # ring positions cursor .. cursor + passed - 1, counted rather than listed)
            at = ring.index(seat)
            start, passed = (at + 1) % n, (at - cursor) % n
        live, allin, levels = self.live, self.allin, self.level  # read once: asked every chip
        for i in range(n):
            j = (start + i) % n
            s = ring[j]
            if s not in live or s in allin:
                continue
            level = total if s == seat else levels.get(s, 0)
            if level < top or (
                s != seat and (raised or (s not in acted and (j - cursor) % n >= passed))
            ):
                return s
        return None

    def _between(self, seat: int) -> list[int]:
        """Seats from the cursor up to (not including) ``seat``, in action order."""
        n = len(self.ring)
        at = self.ring.index(seat)
        return [self.ring[(self.cursor + i) % n] for i in range((at - self.cursor) % n)]

    def _someone_owes_before(self, seat: int) -> bool:
        return seat in self.ring and any(self._owes(s) for s in self._between(seat))

    def _advance_to(self, seat: int, out: list[Verdict], *, infer: bool) -> Self:
        """``seat`` acts: when in turn, the seats passed over checked and the cursor moves past it."""
        if seat not in self.ring or not infer:
            return self
        m = self
        for skipped in self._between(seat):
            if m._needs(skipped):
                m = m._record_check(skipped)
        return m._with(cursor=(m.ring.index(seat) + 1) % len(m.ring))

    def _record_check(self, seat: int) -> Self:
        return self._with(
            acted=self.acted | {seat},
            checked=(*self.checked, seat),
            history=(*self.history, Action(STREETS[self.street_no], seat, "check", 0)),
        )

    def _check_in_turn(self, seat: int, out: list[Verdict]) -> Self:
        """A check reported by an input: the seats before it checked too (if they could)."""
        if seat not in self.live or self.street_no < 0:
            return self
        m = self
        if m.button is not None:
            if m._someone_owes_before(seat):
                m = m._out_of_turn(seat, out)
            else:
                m = m._advance_to(seat, out, infer=True)
        if m._needs(seat):
            m = m._record_check(seat)
        return m._after_action(out)

    def _out_of_turn(self, seat: int, out: list[Verdict]) -> Self:
        skipped = next(s for s in self._between(seat) if self._owes(s))
        key = f"oot:{seat}:{self.street_no}"
        out.append(Raise(key, "action_out_of_turn", seat,
                         f"Seat {seat} acted out of turn: seat {skipped} acts first; seat {seat}'s "
                         "chips stay and are binding if the action to it does not change.",
                         (f"Seat {seat}'s chips stay in its betting area.",
                          f"Seat {skipped} acts now.",
                          f"If seat {skipped} only checks or calls, seat {seat}'s action stands; if it "
                          f"bets or raises, seat {seat} may call, raise or fold again.")))
        return self._with(oot={**self.oot, seat: skipped}, open_keys=self.open_keys | {key})

    def _frame(self, seat: int) -> Frame:
        total = sum(self.committed.values()) + sum(self.level.values())
        return Frame(self.top, self.full_raise, self.raises, total, self.level.get(seat, 0))

    def _settle(self, out: list[Verdict], *, view: bool = False) -> Self:
        """Name and check the pending seat's action: its chips are all in (``view``: only to
        answer a query while they may still be coming)."""
        seat = self.pending
        if seat is None:
            return self
        m = self._with(pending=None, pending_oot=None)
        total = m.put.get(seat, 0)
        if total == m.level.get(seat, 0):
            return m
        in_turn = self.pending_oot is None
        if m.button is not None and in_turn:
            m = m._advance_to(seat, out, infer=True)
        frame = m._frame(seat)
        if not view and frame.before < total < frame.top and seat not in m.allin:
            # Chips that fall short of a call, the action gone on: an all in for less (the rules
            # know no short call; nothing else says so where no key is pressed, no stack read).
            m = m._with(allin=m.allin | {seat})
        return m._apply(seat, frame, total, len(m.history), out)

    def _apply(self, seat: int, frame: Frame, total: int, index: int, out: list[Verdict]) -> Self:
        """Record (or, for a remedy, re-record at ``index``) the action that took ``seat`` to
        ``total`` from ``frame``, and check its size."""
        verdict = judge(self.stakes, self.street_no, frame, seat, total, seat in self.allin)
        action = Action(STREETS[self.street_no], seat, verdict.name, total - frame.before)
        actions = (*self.history[:index], action, *self.history[index + 1:])
        level = {**self.level, seat: total}
        m = self._with(history=actions, level=level)
        if total > frame.top:
            # A raise gives the others the action again; an earlier action judged again (found
            # all in later) does not take back the actions made since.
            latest = index >= len(self.history) - 1
            m = m._with(
                top=max(total, m.top) if not latest else total,
                full_raise=max(frame.full_raise, total - frame.top),
                raises=frame.bets + 1,
                acted=frozenset({seat}) if latest else m.acted | {seat},
                last_bettor=seat if latest else m.last_bettor,
            )
        else:
            m = m._with(top=max(frame.top, max(level.values(), default=0)),
                        acted=m.acted | {seat})
        key = f"size:{seat}:{self.street_no}"
        frames = dict(m.frames)
        if verdict.code is not None:
            out.append(Raise(key, verdict.code, seat, verdict.message))
            frames[seat] = (frame, index)
            m = m._with(frames=frames, open_keys=m.open_keys | {key})
        elif seat in frames:
            del frames[seat]
            out.append(Clear(key))
            m = m._with(frames=frames, open_keys=m.open_keys - {key})
        return m._after_action(out)

    def _rejudge(self, seat: int, out: list[Verdict]) -> Self:
        """A seat with a size finding changed its chips: judge the action again from its frame."""
        frame, index = self.frames[seat]
        return self._apply(seat, frame, self.put.get(seat, 0), index, out)

    def _after_action(self, out: list[Verdict]) -> Self:
        """Findings the action may have put right: out-of-turn seats now in turn, a premature
        sweep whose round is now complete."""
        m = self
        for seat, skipped in list(m.oot.items()):
            if skipped not in m.live or not m._owes(skipped):
                key = f"oot:{seat}:{m.street_no}"
                out.append(Clear(key))
                m = m._with(oot={s: v for s, v in m.oot.items() if s != seat},
                            open_keys=m.open_keys - {key})
        key = f"sweep:{m.street_no}"
        if key in m.open_keys and not m._anyone_owes():
            out.append(Clear(key))
            m = m._with(open_keys=m.open_keys - {key})
        return m

    def _mark_all_in(self, seat: int, out: list[Verdict], *, latest: bool = True) -> Self:
        """``seat`` is all in: a short bet of it is allowed, and its last action is named so
        (``latest``: only if it is the action just made, as a key follows the chips it names;
        else the seat's last action that put chips in)."""
        m = self
        if seat in m.frames:
            return m._rejudge(seat, out)
        if latest:
            index = len(m.history) - 1 if m.history and m.pending != seat else -1
        else:
            index = next((i for i in range(len(m.history) - 1, -1, -1)
                          if m.history[i].seat == seat and m.history[i].amount > 0), -1)
        last = m.history[index] if index >= 0 else None
        if last is not None and last.seat == seat and last.amount > 0 and m.street_no >= 0 \
                and (last.street == STREETS[m.street_no] or not latest) \
                and last.action in ("call", "bet", "raise"):
            history = (*m.history[:index], replace(last, action="all_in"), *m.history[index + 1:])
            return m._with(history=history)
        return m

    def _end_round(self, out: list[Verdict]) -> Self:
        """The round is over (a card came, or the hand ended): settle, infer the checks, and
        move its contributions to the hand's."""
        m = self._settle(out)
        if m.button is not None and not m.closed and len(m.live) > 1:
            n = len(m.ring)
            for i in range(n):
                seat = m.ring[(m.cursor + i) % n]
                if m._needs(seat) and not m._owes(seat):
                    m = m._record_check(seat)
        pots = m._current_pots()
        return m._with(committed=m._contributions(), put={}, level={}, swept={}, pots_=pots,
                       top=0, full_raise=0, raises=0, acted=NO_SEATS, closed=True)

    def _contributions(self) -> dict[int, int]:
        total = dict(self.committed)
        for seat, value in self.put.items():
            total[seat] = total.get(seat, 0) + value
        return total

    def _current_pots(self) -> tuple[Pot, ...]:
        contributed = self._contributions()
        due = uncalled(contributed)
        if due is not None:
            contributed[due[0]] -= due[1]
        return build_pots(contributed, self.live)

    def _due(self) -> tuple[int, int] | None:
        """The uncalled chips (seat, amount) once the round is complete, else None."""
        memo = self._kept()
        if "due" not in memo:
            m = self._view()  # a seat still putting chips in may be raising: judge as if settled
            memo["due"] = None if m.street_no < 0 or m._anyone_owes() else uncalled(m._contributions())
        due: tuple[int, int] | None = memo["due"]
        return due
