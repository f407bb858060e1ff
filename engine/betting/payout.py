"""The end of the hand, as functions over a :class:`HandState`: when the betting is decided, what
the dealer pushed where, and the award it is checked against."""

from __future__ import annotations

from typing import Any

from engine.betting.award import award, check_push, rake_for
from engine.betting.chip_moves import check_uncalled, give_back
from engine.betting.derived import BettingAnswers
from engine.betting.pots import build_pots, uncalled
from engine.betting.record import HandState
from engine.betting.rounds import anyone_owes, contributions, settle, settled_view, uncalled_due
from engine.betting.terms import PotAward, Raise, Verdict, Verdicts
from engine.betting.zones import Counts, add_count


def decided(h: HandState) -> bool:
    """No more betting: one seat left, or the last round complete, or the hand finished."""
    b = h.betting
    if h.finished or (b.street_no >= 0 and len(b.live) <= 1):
        return True
    return b.street_no == 3 and b.pending is None and not anyone_owes(h)


def shows_first(h: HandState) -> int | None:
    """At showdown, the seat that must show first (seed 000): the last to bet or raise on the
    last round with betting, else the house's rule for a showdown with no bet."""
    if h.betting.street_no < 3 and len(h.betting.live) > 1 and not h.finished:
        return None  # before the river nobody shows (an all-in's run-out comes first)
    v = settled_view(h)
    b = v.betting
    if not decided(v) or len(b.live) < 2:
        return None
    if b.last_bettor is not None and b.last_bettor in b.live:
        return b.last_bettor
    if v.seating.no_bet_shows_first == "last_to_check":
        for seat in reversed(b.checked):
            if seat in b.live:
                return seat
    return next((s for s in v.seating.ring if s in b.live), None)


def pushes_done(h: HandState) -> bool:
    """The pot zone is empty and nothing but pushed chips lies in the betting areas."""
    if h.pot_chips:  # (the cheap test first: asked after every chip of a push)
        return False
    pushed_zone = h.pushed_zone
    for seat, chips in h.zone.items():  # (a loop, not any(): asked after every chip of a push)
        if chips > pushed_zone.get(seat, 0):
            return False  # chips other than pushed ones lie in a betting area
    return bool(h.pushed) or h.raked > 0


def awards(h: HandState, answers: BettingAnswers) -> tuple[tuple[PotAward, ...], int]:
    """Each pot's winners and shares as the hands shown say, and the rake (remembered in
    ``answers``: asked after every chip of a push, which leaves the betting, the hands shown and
    the board as they are)."""
    return answers.awards.get(h.seating, h.betting, h.shown, h.board, _awards, h)


def _awards(h: HandState) -> tuple[tuple[PotAward, ...], int]:
    seating = h.seating
    button = seating.button if seating.button is not None else (seating.ring[-1] if seating.ring else 0)
    shown = h.shown if len(h.board) >= 3 else ()  # no board: no ranks yet
    put = dict(sorted(contributions(h).items()))
    due = uncalled(put)
    if due is not None:
        put[due[0]] -= due[1]
    pots = build_pots(put, h.betting.live)
    rake = rake_for(seating.stakes, sum(p.amount for p in pots), h.betting.street_no >= 1)
    found = award(
        pots,
        shown,
        h.board,
        rake=rake,
        odd_chip=seating.odd_chip,
        button=button,
        table_seats=seating.table_seats,
    )
    return found, rake


def push(
    h: HandState,
    amount: int,
    src_kind: str | None,
    src_seat: int,
    dst_kind: str | None,
    dst_seat: int,
    out: list[Verdict],
    answers: BettingAnswers,
    layout: dict[str, Any] | None = None,
) -> HandState:
    """After the betting: chips from the pot (or the bets left in front) to a seat; ``layout``:
    changes to where the chips lie besides, not made yet."""
    if src_kind == "pot" and dst_kind == "bet" and h.betting.pending is None:
        due = uncalled_due(h, answers)  # where the chips lie does not change it
        if due is None or due[0] != dst_seat:
            # The common case, a chip of the pot pushed to a seat: one copy.
            h = h.with_(
                zone=add_count(h.zone, dst_seat, amount),
                pushed_zone=add_count(h.pushed_zone, dst_seat, amount),
                pushed=add_count(h.pushed, dst_seat, amount),
                **(layout or {}),
            )
            return after_push(check_winner(h, dst_seat, out, answers), out, answers)
    if layout:
        h = h.with_(**layout)
    h = settle(h, out)
    from_pushed = 0
    if src_kind == "bet":
        from_pushed = min(amount, h.pushed_zone.get(src_seat, 0))
        h = h.with_(
            zone=add_count(h.zone, src_seat, -amount),
            pushed_zone=add_count(h.pushed_zone, src_seat, -from_pushed),
        )
    if dst_kind == "pot":
        # A push taken back (or the bets swept late).
        if src_kind == "stack":
            h = h.with_(pushed=add_count(h.pushed, src_seat, -amount))
        elif src_kind == "bet" and from_pushed:
            h = h.with_(pushed=add_count(h.pushed, src_seat, -from_pushed))
        return after_push(h, out, answers)
    if dst_kind not in ("bet", "stack"):
        return after_push(h, out, answers)
    if dst_kind == "bet":
        h = h.with_(
            zone=add_count(h.zone, dst_seat, amount), pushed_zone=add_count(h.pushed_zone, dst_seat, amount)
        )
    if src_kind == "bet" and src_seat == dst_seat and from_pushed == amount:
        return after_push(h, out, answers)  # the winner stacking chips already pushed to it
    if src_kind == "bet" and from_pushed:
        h = h.with_(pushed=add_count(h.pushed, src_seat, -from_pushed))
    due = uncalled_due(h, answers)
    if due is not None and due[0] == dst_seat:
        back = min(amount, due[1])
        h = check_uncalled(give_back(h, dst_seat, back, from_pot=src_kind == "pot"), out, answers)
        amount -= back
    if amount > 0:
        h = check_winner(h.with_(pushed=add_count(h.pushed, dst_seat, amount)), dst_seat, out, answers)
    return after_push(h, out, answers)


def check_winner(h: HandState, seat: int, out: list[Verdict], answers: BettingAnswers) -> HandState:
    """Chips were pushed to ``seat``: at once wrong if it wins no pot."""
    found, _ = awards(h, answers)
    for pot in found:  # (a loop, not any(): every chip of a push asks it)
        if seat in pot.winners:
            return h
    winners = sorted({w for a in found for w in a.winners})
    out.append(
        Raise(
            "push",
            "pot_awarded_wrong",
            seat,
            f"Stop: seat {seat} wins no pot; take the chips back and push "
            f"to seat {', '.join(map(str, winners))}.",
        )
    )
    return h.with_(open_keys=h.open_keys | {"push"})


def after_push(h: HandState, out: list[Verdict], answers: BettingAnswers) -> HandState:
    """Once the pot is empty after the betting, check what went where."""
    if pushes_done(h) and decided(h):
        found, rake = awards(h, answers)
        open_keys = h.open_keys
        for verdict in _checked(found, h.pushed, h.raked, rake, answers):
            if isinstance(verdict, Raise):
                # One finding per key: the full check supersedes the at-once one.
                out[:] = [v for v in out if not (isinstance(v, Raise) and v.key == verdict.key)]
                out.append(verdict)
                open_keys = open_keys | {verdict.key}
            elif verdict.key in open_keys:
                out.append(verdict)
                open_keys = open_keys - {verdict.key}
        if open_keys != h.open_keys:
            h = h.with_(open_keys=open_keys)
    return h


def _checked(
    found: tuple[PotAward, ...], pushed: Counts, raked: int, rake: int, answers: BettingAnswers
) -> Verdicts:
    """The pushes checked against the award (remembered in ``answers``, by the award's identity
    and the pushed counts', replaced and never updated: every chip a winner collects asks it
    again unchanged)."""
    return answers.push_check.get(found, pushed, raked, rake, _check, (found, pushed, raked, rake))


def _check(args: tuple[tuple[PotAward, ...], Counts, int, int]) -> Verdicts:
    found, pushed, raked, rake = args
    return check_push(found, pushed, raked=raked, rake=rake)
