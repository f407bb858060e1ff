"""The money of one hand, followed from chip moves (or ``action`` inputs): who put in what, whose
turn it is, the pots, and whether the dealer's sweeps, returns and pushes are right.

:class:`Money` is a frozen value: every call returns a new one and the verdicts it reached. The
machine tells it what the evidence shows (chips moved between zones, the deal complete, a fold,
a street, a hand tabled); it answers with :class:`Raise` / :class:`Clear` verdicts.

How betting is inferred from chips. A seat's chips arrive tag by tag, so its action is *pending*
until something else happens (another seat's chips or fold, a card, the sweep, a key): then it
is settled and named by the amount (call, bet, raise, all in). A check moves nothing: it is
inferred for the seats passed over when a later seat acts, and at the end of the round. A round's
contribution of a seat is what it put in front of it, whether still there or already swept into
the pot, so the sweep (which may itself be tag by tag, or undone) never changes who bet what.
"""

from __future__ import annotations

from typing import Any

from engine.betting.api import (
    Action,
    ChipZone,
    NoBetShowsFirst,
    OddChip,
    Outcome,
    Pot,
    Raise,
    Shown,
    Stakes,
    TableView,
    Verdict,
    Verdicts,
)
from engine.betting.award import rank_of, rankable
from engine.betting.payout import PayoutRules
from engine.betting.zones import (
    BEFORE_DEAL,
    NO_SEATS,
    STREETS,
    Profile,
    add_count,
    clockwise,
    parse_zone,
)


class Money(PayoutRules):
    """The betting of one hand (see the module docstring)."""

    @classmethod
    def begin(
        cls,
        *,
        stakes: Stakes,
        seats: tuple[int, ...],
        button: int | None,
        table_seats: int,
        profile: Profile,
        odd_chip: OddChip = "first_shown",
        no_bet_shows_first: NoBetShowsFirst = "first_to_act",
    ) -> Money:
        """A hand about to be dealt to ``seats`` (ascending); ``button`` None: order unknown."""
        return cls(
            stakes=stakes,
            seats=tuple(sorted(seats)),
            button=button,
            table_seats=table_seats,
            profile=profile,
            odd_chip=odd_chip,
            no_bet_shows_first=no_bet_shows_first,
            ring=clockwise(seats, button, table_seats),
            live=frozenset(seats),
        )

    @property
    def to_act(self) -> int | None:
        """The seat expected to act next, or None (order unknown, round over, hand decided)."""
        memo = self._kept()
        if "to_act" not in memo:
            memo["to_act"] = self._to_act_now()
        seat: int | None = memo["to_act"]
        return seat

    @property
    def round_complete(self) -> bool:
        """Nothing more is owed in this round: a street dealt now is not premature."""
        memo = self._kept()
        complete: bool | None = memo.get("round_complete")
        if complete is None:
            view = self._view()
            complete = memo["round_complete"] = view.street_no >= 0 and not view._anyone_owes()
        return complete

    @property
    def window_closed(self) -> bool:
        """The misdeal window is closed: RR, two players after the blinds acted; TDA 36,
        substantial action (three actions, or two of which one put chips in)."""
        played = [a for a in self._view().history if a.action != "post"]
        if self.profile == "roberts":
            return len(played) >= 2
        return len(played) >= 3 or (len(played) >= 2 and any(a.amount for a in played))

    @property
    def actions(self) -> tuple[Action, ...]:
        """The hand's actions so far, in order (posts, inferred checks, folds, bets...)."""
        return self._view().history

    @property
    def bets(self) -> tuple[tuple[int, int], ...]:
        """Chips in front of each seat this round (seat order): as read where chips are read
        (without chips pushed to a winner), else as the action inputs put them in."""
        memo = self._memo()
        bets: tuple[tuple[int, int], ...] | None = memo.get("bets")
        if bets is None:
            if not self.chip_mode:
                bets = tuple(sorted((s, v) for s, v in self.put.items() if v))
            elif not self.pushed_zone:
                bets = tuple(sorted(self.zone.items()))  # its counts are never zero
            else:
                pushed = self.pushed_zone
                bets = tuple(sorted((s, v - pushed.get(s, 0)) for s, v in self.zone.items()
                                    if v > pushed.get(s, 0)))
            memo["bets"] = bets
        return bets

    @property
    def pots(self) -> tuple[Pot, ...]:
        """The pots as of the last sweep (main pot first)."""
        return self.pots_

    @property
    def run_out(self) -> bool:
        """No more betting is possible: the board is run out."""
        memo = self._kept()
        run_out: bool | None = memo.get("run_out")
        if run_out is None:
            # Settling the pending action changes neither the street, the seats in, those all
            # in nor ``closed``: the view (a settle) is needed only for the last test, rarely.
            able = self.live - self.allin
            run_out = memo["run_out"] = (
                self.street_no >= 0
                and len(self.live) >= 2
                and len(able) <= 1
                and (self.closed or not any(self._view()._needs(s) for s in able))
            )
        return run_out

    @property
    def shows_first(self) -> int | None:
        """At showdown, the seat that must show first (seed 000), else None."""
        memo = self._kept()
        if "shows_first" not in memo:
            memo["shows_first"] = self._shows_first()
        seat: int | None = memo["shows_first"]
        return seat

    @property
    def decided(self) -> bool:
        """No more betting: one seat left, the last round complete, or the hand finished."""
        return self._decided()

    @property
    def settled(self) -> bool:
        """The pushes are done: the pot zone is empty after the last round."""
        memo = self._memo()
        settled: bool | None = memo.get("settled")
        if settled is None:
            view = self._view()
            settled = memo["settled"] = view._decided() and view._pushes_done()
        return settled

    def table_view(self, showdown: bool) -> TableView:
        """What the public state shows of the betting: to_act, bets, pots, shows_first (at
        ``showdown`` nobody is to act, before it nobody shows first); the same value while
        the money does not change (the state's change check compares it every event)."""
        memo = self._memo()
        key = "table_view_showdown" if showdown else "table_view"
        view: TableView | None = memo.get(key)
        if view is None:  # once per money value
            view = memo[key] = (
                None if showdown else self.to_act,
                self.bets,
                self.pots,
                self.shows_first if showdown else None,
            )
        return view

    @property
    def uncalled(self) -> tuple[int, int] | None:
        """Where the uncalled chips go: (seat, amount), or None."""
        return self._view()._due()

    def move(self, amount: int, src: ChipZone, dst: ChipZone) -> tuple[Money, Verdicts]:
        """One chip (value ``amount``) moved from ``src`` to ``dst``."""
        dst_kind, dst_seat = parse_zone(dst)
        if src is None and dst_kind == "bet" and self.chip_mode and self.street_no != BEFORE_DEAL \
                and dst_seat in self.seats:
            # Most chips: one put in a betting area during the betting (what the rules below
            # come to for it, without their other cases).
            found: list[Verdict] = []
            return self._chips_in(dst_seat, amount, found), tuple(found)
        src_kind, src_seat = parse_zone(src)
        # Where the chips lie, all in one copy (this runs for every chip read).
        changes: dict[str, Any] = {}
        if src_kind == "stack":
            changes["stack"] = add_count(self.stack, src_seat, -amount)
        if dst_kind == "stack":
            changes["stack"] = add_count(changes.get("stack", self.stack), dst_seat, amount)
            if self.street_no == BEFORE_DEAL:
                # Only a stack seen before the deal is known whole: its emptying is an all in.
                changes["stack_read"] = self.stack_read | {dst_seat}
        if src_kind == "pot":
            changes["pot_chips"] = max(0, self.pot_chips - amount)
        if dst_kind == "pot":
            changes["pot_chips"] = self.pot_chips + amount
        if not self.chip_mode and (src_kind == "bet" or dst_kind in ("bet", "pot")):
            changes["chip_mode"] = True
        out: list[Verdict] = []
        if self.street_no != BEFORE_DEAL:
            # The two moves of most chips after the deal, a sweep and a push, take ``changes``
            # into their own copy (the rules below would reach them with nothing else to do).
            if src_kind == "bet" and dst_kind == "pot" and src_seat in self.seats \
                    and (not self.pushed_zone.get(src_seat) or not self._decided()):
                return self._sweep(src_seat, amount, out, changes), tuple(out)
            if src_kind == "pot" and dst_kind == "bet" and dst_seat in self.seats and self._decided():
                return self._push(amount, src_kind, src_seat, dst_kind, dst_seat, out, changes)
        m = self._with(**changes) if changes else self
        if dst_kind == "bet" and dst_seat not in self.seats:
            m = m._vacant(dst_seat, amount, out)
            return m, tuple(out)
        if src_kind == "bet" and src_seat not in self.seats:
            m = m._vacant(src_seat, -amount, out)
            if dst_kind != "bet":
                return m, tuple(out)
            src_kind = None
        rake_to_seat = src_kind == "rake" and dst_kind == "bet" and m._decided()
        if dst_kind == "rake" or (src_kind == "rake" and dst_kind == "pot") or rake_to_seat:
            sign = 1 if dst_kind == "rake" else -1
            m = m._with(raked=max(0, m.raked + sign * amount))
            if src_kind == "bet":
                # a rake corrected from a winner's push: what was pushed to it is less
                from_pushed = min(amount, m.pushed_zone.get(src_seat, 0))
                m = m._with(zone=add_count(m.zone, src_seat, -amount),
                            pushed_zone=add_count(m.pushed_zone, src_seat, -from_pushed),
                            pushed=add_count(m.pushed, src_seat, -from_pushed))
            elif rake_to_seat:  # too much raked, given to the winner
                m = m._with(zone=add_count(m.zone, dst_seat, amount),
                            pushed_zone=add_count(m.pushed_zone, dst_seat, amount),
                            pushed=add_count(m.pushed, dst_seat, amount))
            return m._after_push(out)
        if m.street_no == BEFORE_DEAL:
            return m._before_deal(amount, src_kind, src_seat, dst_kind, dst_seat, out)
        if src_kind == "bet" and dst_kind is None and not m.pushed_zone.get(src_seat) and m._decided():
            due = m._due()
            if due is not None and due[0] == src_seat and amount <= due[1]:
                # the uncalled part back to the player's side once everyone else folded
                m = m._with(zone=add_count(m.zone, src_seat, -amount))
                return m._give_back(src_seat, amount, from_pot=False)._check_uncalled(out), tuple(out)
        late_sweep = src_kind == "bet" and dst_kind == "pot" and not m.pushed_zone.get(src_seat)
        if m._decided() and not late_sweep and (src_kind in ("pot", "bet") or dst_kind == "pot"):
            return m._push(amount, src_kind, src_seat, dst_kind, dst_seat, out)
        if dst_kind == "bet" and src_kind not in ("bet", "pot"):
            m = m._chips_in(dst_seat, amount, out)
        elif src_kind == "bet" and dst_kind == "pot":
            m = m._sweep(src_seat, amount, out, {})
        elif src_kind == "pot" and dst_kind == "bet":
            m = m._unsweep(dst_seat, amount, out)
        elif src_kind == "bet" and dst_kind == "bet":
            m = m._chips_out(src_seat, amount, out)
            m = m._chips_in(dst_seat, amount, out)
        elif src_kind == "bet":
            m = m._chips_out(src_seat, amount, out)
        elif src_kind == "pot" and dst_kind == "stack":
            m = m._pot_back(dst_seat, amount, out)
        if src_kind == "stack" and dst_kind == "bet" and src_seat == dst_seat:
            m = m._stack_emptied(src_seat, out)
        return m, tuple(out)

    def action(self, seat: int, name: str, amount: int) -> tuple[Money, Verdicts]:
        """An ``action`` input: ``amount`` is the chips that action puts in."""
        out: list[Verdict] = []
        if name == "fold":
            return self.fold(seat)
        if name == "all_in" and self.chip_mode:
            m, verdicts = self.all_in(seat)
            out.extend(verdicts)
        elif name == "all_in" and seat in self.live:
            m = self._with(allin=self.allin | {seat})  # the input's amount follows
        else:
            m = self
        if m.chip_mode:
            # The chips tell the amounts; the input names what they cannot show.
            if name == "check":
                m = m._settle(out)._check_in_turn(seat, out)
            return m, tuple(out)
        if m.street_no == BEFORE_DEAL:
            return m._with(put=add_count(m.put, seat, amount)), tuple(out)
        if name == "check" or amount <= 0:
            m = m._settle(out)._check_in_turn(seat, out)
            return m, tuple(out)
        m = m._chips_in(seat, amount, out, zone=False)
        return m._settle(out), tuple(out)

    def dealt(self) -> tuple[Money, Verdicts]:
        """The deal is complete: check the blinds and antes, record the posts, open preflop."""
        if self.street_no != BEFORE_DEAL:
            return self, ()
        out: list[Verdict] = []
        ante = self.stakes.ante
        blinds = self._blind_seats()
        committed: dict[int, int] = {}
        put: dict[int, int] = {}
        blind_due: dict[int, int] = {}
        posts: list[Action] = []
        blind_posts: list[Action] = []
        for seat in self.ring:
            posted = self.put.get(seat, 0)
            expected = blinds.get(seat)
            wrong = self._blind_wrong(seat, posted, expected)
            if wrong:
                out.append(Raise(f"blind:{seat}", "blind_wrong_amount", seat, wrong))
                if self.button is not None:
                    blind_due[seat] = expected or 0
            seat_ante = min(ante, posted)
            if seat_ante:
                committed[seat] = seat_ante
                posts.append(Action("preflop", seat, "post", seat_ante))
            if posted - seat_ante:
                put[seat] = posted - seat_ante
                blind_posts.append(Action("preflop", seat, "post", posted - seat_ante))
        # Blinds in posting order (small then big), as the rules list them.
        blind_posts.sort(key=lambda a: self.stakes.big_blind if blinds.get(a.seat) is None
                         else blinds[a.seat])
        opener, full_raise = self._preflop_start(blinds)
        m = self._with(
            street_no=0,
            committed=committed,
            put=put,
            level=dict(put),
            top=max(put.values(), default=0),
            full_raise=full_raise,
            raises=0,
            acted=NO_SEATS,
            cursor=opener,
            history=(*posts, *blind_posts),
            blind_due=blind_due,
            open_keys=self.open_keys | {v.key for v in out if isinstance(v, Raise)},
        )
        m = m._with(closed=m._nobody_to_act())
        return m, tuple(out)

    def fold(self, seat: int) -> tuple[Money, Verdicts]:
        """The seat's cards reached the muck."""
        if seat not in self.live:
            return self, ()
        out: list[Verdict] = []
        m = self._settle(out)
        if m._decided() and len(m.live) > 1:
            # A hand mucked at showdown: it loses its claim; no betting action to record.
            return m._with(live=m.live - {seat}), tuple(out)
        if m.street_no >= 0 and m.button is not None:
            m = m._advance_to(seat, out, infer=not m._someone_owes_before(seat))
        m = m._with(
            live=m.live - {seat},
            history=(*m.history, Action(STREETS[max(0, m.street_no)], seat, "fold", 0)),
        )
        m = m._after_action(out)
        return m, tuple(out)

    def muck(self, seat: int) -> Money:
        """A hand not tabled, mucked once the showdown began: it loses its claim (a hand
        tabled face up stays tabled wherever its cards go afterwards)."""
        if seat not in self.live or any(s == seat for s, _ in self.shown):
            return self
        # the round is over: its checks are inferred while the seat is still in it
        m = self._end_round([]) if self.street_no >= 0 and not self.finished else self
        return m.fold(seat)[0]

    def all_in(self, seat: int, *, tabled: bool = False) -> tuple[Money, Verdicts]:
        """The keypad's (or an input's) all in for ``seat``; ``tabled``: known only now, from
        the hands tabled before the river (its last chips were its all in)."""
        if seat not in self.live or seat in self.allin:
            return self, ()
        out: list[Verdict] = []
        m = self._with(allin=self.allin | {seat})
        m = m._mark_all_in(seat, out, latest=not tabled)._after_action(out)
        return m, tuple(out)

    def street(self, street: int, board: tuple[str, ...] = ()) -> tuple[Money, Verdicts]:
        """Street ``street`` (1 flop, 2 turn, 3 river) began: the previous round is over.

        ``board``, when given, is the board so far (an all-in's hands are tabled before the
        run-out; the award needs the whole board)."""
        if board:
            self = self._with(board=board)  # noqa: PLW0642 - the new value is what follows
        if street <= self.street_no or self.street_no == BEFORE_DEAL:
            return self, ()
        out: list[Verdict] = []
        m = self._end_round(out)
        m = m._with(
            street_no=street,
            top=0,
            full_raise=0,
            raises=0,
            acted=NO_SEATS,
            cursor=0,
            checked=(),
            frames={},
            oot={},
            back={},
        )
        m = m._with(closed=m._nobody_to_act())
        if not m.closed:
            m = m._with(last_bettor=None)
        return m, tuple(out)

    def table(self, seat: int, cards: tuple[str, str], board: tuple[str, ...]) -> tuple[Money, Verdicts]:
        """A hand tabled face up at showdown (the order of calls is the order shown)."""
        if seat not in self.live or any(s == seat for s, _ in self.shown):
            return self._with(board=board), ()
        return self._with(shown=(*self.shown, (seat, cards)), board=board), ()

    def finish(self, board: tuple[str, ...]) -> tuple[Money, Verdicts, Outcome]:
        """The hand is over: its pots, awards, what was pushed and the hands shown."""
        out: list[Verdict] = []
        m = self._with(board=board) if board else self
        if m.street_no >= 0 and not m.finished:
            m = m._end_round(out)
        m = m._with(finished=True)
        awards, rake = m._awards()
        showdown = tuple(
            Shown(seat, cards, rank_of(m.board, cards)[1]) for seat, cards in m.shown
        ) if rankable(m.board) else ()
        outcome = Outcome(
            result="uncontested" if len(m.live) <= 1 else "showdown",
            actions=m.history,
            pots=awards,
            rake=rake,
            awarded=tuple(sorted(m.pushed.items())),
            showdown=showdown,
        )
        return m, tuple(out), outcome

