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

How it is built. ``Money`` holds one :class:`~engine.betting.record.HandState` (plain data:
the seating, the betting, where the chips lie) and dispatches each call to the rules, module
functions over that state: :mod:`~engine.betting.rounds` (the betting round),
:mod:`~engine.betting.chip_moves` (the chips on the table), :mod:`~engine.betting.payout` (the
award and the pushes). Nothing derived is kept in the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.betting import chip_moves, payout, rounds
from engine.betting.award import rank_of, rankable
from engine.betting.derived import BettingAnswers
from engine.betting.record import Betting, HandState, Seating
from engine.betting.terms import (
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
from engine.betting.zones import (
    BEFORE_DEAL,
    NO_SEATS,
    STREETS,
    Profile,
    add_count,
    clockwise,
    parse_zone,
)


@dataclass(frozen=True, slots=True)
class Money:
    """The betting of one hand (see the module docstring)."""

    state: HandState

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
        seating = Seating(
            stakes=stakes,
            seats=tuple(sorted(seats)),
            button=button,
            table_seats=table_seats,
            profile=profile,
            odd_chip=odd_chip,
            no_bet_shows_first=no_bet_shows_first,
            ring=clockwise(seats, button, table_seats),
        )
        return cls(HandState(seating=seating, betting=Betting(live=frozenset(seats))))

    # ------------------------------------------------------------------ queries

    @property
    def seats(self) -> tuple[int, ...]:
        """The seats dealt in, ascending."""
        return self.state.seating.seats

    @property
    def ring(self) -> tuple[int, ...]:
        """The seats dealt in, in action order (from the first seat left of the button)."""
        return self.state.seating.ring

    @property
    def button(self) -> int | None:
        """The button, or None (order unknown)."""
        return self.state.seating.button

    @property
    def live(self) -> frozenset[int]:
        """The seats dealt in and not folded."""
        return self.state.betting.live

    @property
    def street_no(self) -> int:
        """-1 before the deal, 0 preflop ... 3 river."""
        return self.state.betting.street_no

    @property
    def to_act(self) -> int | None:
        """The seat expected to act next, or None (order unknown, round over, hand decided)."""
        return rounds.to_act_now(self.state, BettingAnswers())

    @property
    def round_complete(self) -> bool:
        """Nothing more is owed in this round: a street dealt now is not premature."""
        view = rounds.settled_view(self.state)
        return view.betting.street_no >= 0 and not rounds.anyone_owes(view)

    @property
    def window_closed(self) -> bool:
        """The misdeal window is closed: RR, two players after the blinds acted; TDA 36,
        substantial action (three actions, or two of which one put chips in)."""
        played = [a for a in self.actions if a.action != "post"]
        if self.state.seating.profile == "roberts":
            return len(played) >= 2
        return len(played) >= 3 or (len(played) >= 2 and any(a.amount for a in played))

    @property
    def actions(self) -> tuple[Action, ...]:
        """The hand's actions so far, in order (posts, inferred checks, folds, bets...)."""
        return rounds.settled_view(self.state).betting.history

    @property
    def bets(self) -> tuple[tuple[int, int], ...]:
        """Chips in front of each seat this round (seat order): as read where chips are read
        (without chips pushed to a winner), else as the action inputs put them in."""
        return _bets(self.state)

    @property
    def pots(self) -> tuple[Pot, ...]:
        """The pots as of the last sweep (main pot first)."""
        return self.state.pots

    @property
    def run_out(self) -> bool:
        """No more betting is possible: the board is run out."""
        h = self.state
        b = h.betting
        able = b.live - b.allin
        # Settling the pending action changes neither the street, the seats in, those all in
        # nor ``closed``: the settled view is needed only for the last test, rarely.
        if b.street_no < 0 or len(b.live) < 2 or len(able) > 1:
            return False
        if b.closed:
            return True
        view = rounds.settled_view(h)
        return not any(rounds.needs(view, s) for s in able)

    @property
    def shows_first(self) -> int | None:
        """At showdown, the seat that must show first (seed 000), else None."""
        return payout.shows_first(self.state)

    @property
    def decided(self) -> bool:
        """No more betting: one seat left, the last round complete, or the hand finished."""
        return payout.decided(self.state)

    @property
    def settled(self) -> bool:
        """The pushes are done: the pot zone is empty after the last round."""
        # (the pushes first: settling the pending action never moves a chip, and it is the
        # cheap test, asked after every event)
        return payout.pushes_done(self.state) and payout.decided(rounds.settled_view(self.state))

    def table_view(self, showdown: bool, answers: BettingAnswers | None = None) -> TableView:
        """What the public state shows of the betting: to_act, bets, pots, shows_first (at
        ``showdown`` nobody is to act, before it nobody shows first); ``answers``: as for
        :meth:`move`."""
        h = self.state  # (the queries' functions called directly: asked for every new value)
        return (
            None if showdown else rounds.to_act_now(h, answers or BettingAnswers()),
            _bets(h),
            h.pots,
            payout.shows_first(h) if showdown else None,
        )

    @property
    def uncalled(self) -> tuple[int, int] | None:
        """Where the uncalled chips go: (seat, amount), or None."""
        return rounds.uncalled_due(self.state, BettingAnswers())

    # ------------------------------------------------------------------ what the evidence shows

    def move(
        self, amount: int, src: ChipZone, dst: ChipZone, answers: BettingAnswers | None = None
    ) -> tuple[Money, Verdicts]:
        """One chip (value ``amount``) moved from ``src`` to ``dst``; ``answers``: the answers
        remembered between calls (the engine's; None: none kept)."""
        if answers is None:
            answers = BettingAnswers()
        h = self.state
        b = h.betting
        seats = h.seating.seats
        dst_kind, dst_seat = parse_zone(dst)
        if (
            src is None
            and dst_kind == "bet"
            and h.chip_mode
            and b.street_no != BEFORE_DEAL
            and dst_seat in seats
        ):
            # Most chips: one put in a betting area during the betting (what the rules below
            # come to for it, without their other cases).
            found: list[Verdict] = []
            return Money(chip_moves.chips_in(h, dst_seat, amount, found, answers)), tuple(found)
        src_kind, src_seat = parse_zone(src)
        # Where the chips lie, all in one copy (this runs for every chip read).
        changes: dict[str, Any] = {}
        if src_kind == "stack":
            changes["stack"] = add_count(h.stack, src_seat, -amount)
        if dst_kind == "stack":
            changes["stack"] = add_count(changes.get("stack", h.stack), dst_seat, amount)
            if b.street_no == BEFORE_DEAL:
                # Only a stack seen before the deal is known whole: its emptying is an all in.
                changes["stack_read"] = h.stack_read | {dst_seat}
        if src_kind == "pot":
            changes["pot_chips"] = max(0, h.pot_chips - amount)
        if dst_kind == "pot":
            changes["pot_chips"] = h.pot_chips + amount
        if not h.chip_mode and (src_kind == "bet" or dst_kind in ("bet", "pot")):
            changes["chip_mode"] = True
        out: list[Verdict] = []
        if b.street_no != BEFORE_DEAL:
            # The two moves of most chips after the deal, a sweep and a push, take ``changes``
            # into their own copy (the rules below would reach them with nothing else to do).
            if (
                src_kind == "bet"
                and dst_kind == "pot"
                and src_seat in seats
                and (not h.pushed_zone.get(src_seat) or not payout.decided(h))
            ):
                return Money(chip_moves.sweep(h, src_seat, amount, out, answers, changes)), tuple(out)
            if src_kind == "pot" and dst_kind == "bet" and dst_seat in seats and payout.decided(h):
                h = payout.push(h, amount, src_kind, src_seat, dst_kind, dst_seat, out, answers, changes)
                return Money(h), tuple(out)
        if changes:
            h = h.with_(**changes)
        if dst_kind == "bet" and dst_seat not in seats:
            return Money(chip_moves.vacant_seat(h, dst_seat, amount, out)), tuple(out)
        if src_kind == "bet" and src_seat not in seats:
            h = chip_moves.vacant_seat(h, src_seat, -amount, out)
            if dst_kind != "bet":
                return Money(h), tuple(out)
            src_kind = None
        rake_to_seat = src_kind == "rake" and dst_kind == "bet" and payout.decided(h)
        if dst_kind == "rake" or (src_kind == "rake" and dst_kind == "pot") or rake_to_seat:
            return Money(
                payout.after_push(
                    _rake(h, amount, src_kind, src_seat, dst_kind, dst_seat, to_seat=rake_to_seat),
                    out,
                    answers,
                )
            ), tuple(out)
        if h.betting.street_no == BEFORE_DEAL:
            h = chip_moves.before_deal(h, amount, src_kind, src_seat, dst_kind, dst_seat, out)
            return Money(h), tuple(out)
        decided = payout.decided(h)
        if src_kind == "bet" and dst_kind is None and not h.pushed_zone.get(src_seat) and decided:
            due = rounds.uncalled_due(h, answers)
            if due is not None and due[0] == src_seat and amount <= due[1]:
                # the uncalled part back to the player's side once everyone else folded
                h = h.with_(zone=add_count(h.zone, src_seat, -amount))
                h = chip_moves.give_back(h, src_seat, amount, from_pot=False)
                return Money(chip_moves.check_uncalled(h, out, answers)), tuple(out)
        late_sweep = src_kind == "bet" and dst_kind == "pot" and not h.pushed_zone.get(src_seat)
        if decided and not late_sweep and (src_kind in ("pot", "bet") or dst_kind == "pot"):
            h = payout.push(h, amount, src_kind, src_seat, dst_kind, dst_seat, out, answers)
            return Money(h), tuple(out)
        if dst_kind == "bet" and src_kind not in ("bet", "pot"):
            h = chip_moves.chips_in(h, dst_seat, amount, out, answers)
        elif src_kind == "bet" and dst_kind == "pot":
            h = chip_moves.sweep(h, src_seat, amount, out, answers, {})
        elif src_kind == "pot" and dst_kind == "bet":
            h = chip_moves.unsweep(h, dst_seat, amount, out, answers)
        elif src_kind == "bet" and dst_kind == "bet":
            h = chip_moves.chips_out(h, src_seat, amount, out, answers)
            h = chip_moves.chips_in(h, dst_seat, amount, out, answers)
        elif src_kind == "bet":
            h = chip_moves.chips_out(h, src_seat, amount, out, answers)
        elif src_kind == "pot" and dst_kind == "stack":
            h = chip_moves.pot_back(h, dst_seat, amount, out, answers)
        elif src_kind == "pot" and dst_kind is None:
            h = chip_moves.pot_off(h, amount, out, answers)
        if src_kind == "stack" and dst_kind == "bet" and src_seat == dst_seat:
            h = chip_moves.stack_emptied(h, src_seat, out)
        return Money(h), tuple(out)

    def action(self, seat: int, name: str, amount: int) -> tuple[Money, Verdicts]:
        """An ``action`` input: ``amount`` is the chips that action puts in."""
        out: list[Verdict] = []
        if name == "fold":
            return self.fold(seat)
        h = self.state
        if name == "all_in" and h.chip_mode:
            m, verdicts = self.all_in(seat)
            h = m.state
            out.extend(verdicts)
        elif name == "all_in" and seat in h.betting.live:
            h = h.with_betting(allin=h.betting.allin | {seat})  # the input's amount follows
        if h.chip_mode:
            # The chips tell the amounts; the input names what they cannot show.
            if name == "check":
                h = rounds.check_in_turn(rounds.settle(h, out), seat, out)
            return Money(h), tuple(out)
        if h.betting.street_no == BEFORE_DEAL:
            return Money(h.with_betting(put=add_count(h.betting.put, seat, amount))), tuple(out)
        if name == "check" or amount <= 0:
            h = rounds.check_in_turn(rounds.settle(h, out), seat, out)
            return Money(h), tuple(out)
        h = chip_moves.chips_in(h, seat, amount, out, BettingAnswers(), zone=False)
        return Money(rounds.settle(h, out)), tuple(out)

    def dealt(self) -> tuple[Money, Verdicts]:
        """The deal is complete: check the blinds and antes, record the posts, open preflop."""
        h = self.state
        if h.betting.street_no != BEFORE_DEAL:
            return self, ()
        out: list[Verdict] = []
        stakes = h.seating.stakes
        ante = stakes.ante
        blinds = chip_moves.blind_seats(h)
        committed: dict[int, int] = {}
        put: dict[int, int] = {}
        blind_due: dict[int, int] = {}
        posts: list[Action] = []
        blind_posts: list[Action] = []
        for seat in h.seating.ring:
            posted = h.betting.put.get(seat, 0)
            expected = blinds.get(seat)
            wrong = chip_moves.blind_wrong(h, seat, posted, expected)
            if wrong:
                out.append(Raise(f"blind:{seat}", "blind_wrong_amount", seat, wrong))
                if h.seating.button is not None:
                    blind_due[seat] = expected or 0
            seat_ante = min(ante, posted)
            if seat_ante:
                committed[seat] = seat_ante
                posts.append(Action("preflop", seat, "post", seat_ante))
            if posted - seat_ante:
                put[seat] = posted - seat_ante
                blind_posts.append(Action("preflop", seat, "post", posted - seat_ante))
        # Blinds in posting order (small then big), as the rules list them.
        blind_posts.sort(key=lambda a: stakes.big_blind if blinds.get(a.seat) is None else blinds[a.seat])
        opener, full_raise = chip_moves.preflop_start(h, blinds)
        h = h.with_(
            betting=h.betting.with_(
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
            ),
            open_keys=h.open_keys | {v.key for v in out if isinstance(v, Raise)},
        )
        h = h.with_betting(closed=rounds.nobody_to_act(h))
        return Money(h), tuple(out)

    def fold(self, seat: int) -> tuple[Money, Verdicts]:
        """The seat's cards reached the muck."""
        if seat not in self.state.betting.live:
            return self, ()
        out: list[Verdict] = []
        h = rounds.settle(self.state, out)
        if payout.decided(h) and len(h.betting.live) > 1:
            # A hand mucked at showdown: it loses its claim; no betting action to record.
            return Money(h.with_betting(live=h.betting.live - {seat})), tuple(out)
        if h.betting.street_no >= 0 and h.seating.button is not None:
            h = rounds.advance_to(h, seat, infer=not rounds.someone_owes_before(h, seat))
        b = h.betting
        h = h.with_betting(
            live=b.live - {seat}, history=(*b.history, Action(STREETS[max(0, b.street_no)], seat, "fold", 0))
        )
        return Money(rounds.after_action(h, out)), tuple(out)

    def muck(self, seat: int) -> Money:
        """A hand not tabled, mucked once the showdown began: it loses its claim (a hand
        tabled face up stays tabled wherever its cards go afterwards)."""
        h = self.state
        if seat not in h.betting.live or any(s == seat for s, _ in h.shown):
            return self
        # the round is over: its checks are inferred while the seat is still in it
        if h.betting.street_no >= 0 and not h.finished:
            h = rounds.end_round(h, [])
        return Money(h).fold(seat)[0]

    def all_in(self, seat: int, *, tabled: bool = False) -> tuple[Money, Verdicts]:
        """The keypad's (or an input's) all in for ``seat``; ``tabled``: known only now, from
        the hands tabled before the river (its last chips were its all in)."""
        b = self.state.betting
        if seat not in b.live or seat in b.allin:
            return self, ()
        out: list[Verdict] = []
        h = self.state.with_betting(allin=b.allin | {seat})
        h = rounds.after_action(rounds.mark_all_in(h, seat, out, latest=not tabled), out)
        return Money(h), tuple(out)

    def street(self, street: int, board: tuple[str, ...] = ()) -> tuple[Money, Verdicts]:
        """Street ``street`` (1 flop, 2 turn, 3 river) began: the previous round is over.

        ``board``, when given, is the board so far (an all-in's hands are tabled before the
        run-out; the award needs the whole board)."""
        h = self.state.with_(board=board) if board else self.state
        if street <= h.betting.street_no or h.betting.street_no == BEFORE_DEAL:
            return (Money(h) if board else self), ()
        out: list[Verdict] = []
        h = rounds.end_round(h, out)
        h = h.with_betting(
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
        closed = rounds.nobody_to_act(h)
        h = h.with_betting(closed=closed) if closed else h.with_betting(closed=closed, last_bettor=None)
        return Money(h), tuple(out)

    def table(self, seat: int, cards: tuple[str, str], board: tuple[str, ...]) -> tuple[Money, Verdicts]:
        """A hand tabled face up at showdown (the order of calls is the order shown)."""
        h = self.state
        if seat not in h.betting.live or any(s == seat for s, _ in h.shown):
            return Money(h.with_(board=board)), ()
        return Money(h.with_(shown=(*h.shown, (seat, cards)), board=board)), ()

    def finish(
        self, board: tuple[str, ...], answers: BettingAnswers | None = None
    ) -> tuple[Money, Verdicts, Outcome]:
        """The hand is over: its pots, awards, what was pushed and the hands shown (``answers``:
        as for :meth:`move`)."""
        out: list[Verdict] = []
        h = self.state.with_(board=board) if board else self.state
        if h.betting.street_no >= 0 and not h.finished:
            h = rounds.end_round(h, out)
        h = h.with_(finished=True)
        awards, rake = payout.awards(h, answers or BettingAnswers())
        showdown = (
            tuple(Shown(seat, cards, rank_of(h.board, cards)[1]) for seat, cards in h.shown)
            if rankable(h.board)
            else ()
        )
        outcome = Outcome(
            result="uncontested" if len(h.betting.live) <= 1 else "showdown",
            actions=h.betting.history,
            pots=awards,
            rake=rake,
            awarded=tuple(sorted(h.pushed.items())),
            showdown=showdown,
        )
        return Money(h), tuple(out), outcome


def _bets(h: HandState) -> tuple[tuple[int, int], ...]:
    """:attr:`Money.bets` of ``h`` (a function: a property is a slower call, and the public
    state asks for every new money value)."""
    if not h.chip_mode:
        return tuple(sorted((s, v) for s, v in h.betting.put.items() if v))
    pushed = h.pushed_zone
    if not pushed:
        return tuple(sorted(h.zone.items()))  # its counts are never zero
    return tuple(sorted((s, v - pushed.get(s, 0)) for s, v in h.zone.items() if v > pushed.get(s, 0)))


def _rake(
    h: HandState,
    amount: int,
    src_kind: str | None,
    src_seat: int,
    dst_kind: str | None,
    dst_seat: int,
    *,
    to_seat: bool,
) -> HandState:
    """Chips into the rake zone, or out of it (into the pot, or ``to_seat``: to the winner)."""
    sign = 1 if dst_kind == "rake" else -1
    raked = max(0, h.raked + sign * amount)
    if src_kind == "bet":
        # a rake corrected from a winner's push: what was pushed to it is less
        from_pushed = min(amount, h.pushed_zone.get(src_seat, 0))
        return h.with_(
            raked=raked,
            zone=add_count(h.zone, src_seat, -amount),
            pushed_zone=add_count(h.pushed_zone, src_seat, -from_pushed),
            pushed=add_count(h.pushed, src_seat, -from_pushed),
        )
    if to_seat:  # too much raked, given to the winner
        return h.with_(
            raked=raked,
            zone=add_count(h.zone, dst_seat, amount),
            pushed_zone=add_count(h.pushed_zone, dst_seat, amount),
            pushed=add_count(h.pushed, dst_seat, amount),
        )
    return h.with_(raked=raked)
