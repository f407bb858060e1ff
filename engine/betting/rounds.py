"""The betting round, as functions over a :class:`HandState`: whose turn it is, the pending action
settled and named, checks inferred, out-of-turn action, the sizes judged, the round ended.

Each function that changes the hand returns the new state and appends its verdicts to ``out``.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import repeat

from engine.betting.derived import BettingAnswers
from engine.betting.pots import build_pots, uncalled
from engine.betting.record import Betting, HandState
from engine.betting.sizes import Frame, judge
from engine.betting.terms import Action, Clear, Pot, Raise, Verdict
from engine.betting.zones import NO_SEATS, STREETS

#: The level of a seat with none (``map`` with ``dict.get``'s default).
_ZEROS = repeat(0)


def settled_view(h: HandState) -> HandState:
    """The hand with the pending action settled (queries answer as if it were)."""
    if h.betting.pending is None:
        return h
    return settle(h, [], query=True)


def needs(h: HandState, seat: int) -> bool:
    """The seat still has to act this round (it may, or must, put chips in or check)."""
    b = h.betting
    return seat in b.live and seat not in b.allin and (seat not in b.acted or b.level.get(seat, 0) < b.top)


def anyone_owes(h: HandState) -> bool:
    """Some seat still in and not all in has not matched the highest bet."""
    b = h.betting
    top = b.top
    if not top:
        return False  # nothing bet this round: nobody owes (the contributions are never below 0)
    # the lowest level of the seats able to act, found in C (asked after nearly every chip of
    # the pushes: as a loop here, 3 % of the bytecodes of a pass of 20 chip hands)
    return min(map(b.level.get, b.live - b.allin, _ZEROS), default=top) < top


def owes(h: HandState, seat: int) -> bool:
    """The seat has to act and acting would move chips or cards (it faces a bet)."""
    return needs(h, seat) and h.betting.level.get(seat, 0) < h.betting.top


def nobody_to_act(h: HandState) -> bool:
    """At a round's start: nobody, or one seat that already matches, is able to act."""
    b = h.betting
    able = [s for s in b.live if s not in b.allin]
    if len(b.live) <= 1 or not able:
        return True
    return len(able) == 1 and b.level.get(able[0], 0) >= b.top


def next_to_act(h: HandState) -> int | None:
    """The seat expected to act next, with no action pending."""
    b = h.betting
    if h.seating.button is None or b.street_no < 0 or b.closed or h.finished or len(b.live) <= 1:
        return None
    ring = h.seating.ring
    cursor, live, allin, acted, level, top = b.cursor, b.live, b.allin, b.acted, b.level, b.top
    n = len(ring)
    for i in range(n):
        seat = ring[(cursor + i) % n]
        # needs(seat), with the fields read once (asked after most chips)
        if seat in live and seat not in allin and (seat not in acted or level.get(seat, 0) < top):
            return seat
    return None


def to_act_now(h: HandState, answers: BettingAnswers) -> int | None:
    """The seat expected to act next (as if a pending action were settled); remembered in
    ``answers``: asked for every new money value, and a sweep's or a push's chips leave the
    betting as it is."""
    return answers.to_act.get(h.seating, h.betting, h.finished, None, _to_act_now, h)


def _to_act_now(h: HandState) -> int | None:
    if h.betting.pending is None:
        return next_to_act(h)
    return _to_act_after_pending(h)


def _to_act_after_pending(h: HandState) -> int | None:
    """``to_act`` as if the pending action were settled, without settling it (the same answer
    as ``next_to_act(settled_view(h))``, cheaply: it is asked after every chip)."""
    b = h.betting
    seat = b.pending
    assert seat is not None
    if h.seating.button is None or b.closed or h.finished or len(b.live) <= 1:
        return None
    total = b.put.get(seat, 0)
    raised = total > b.top
    top = max(b.top, total)
    ring, cursor, acted = h.seating.ring, b.cursor, b.acted
    n = len(ring)
    start, passed = cursor, 0
    if b.pending_oot is None and seat in ring:
        # the seats from the cursor up to this one were passed over: they checked (the ring
        # positions cursor .. cursor + passed - 1, counted rather than listed)
        at = ring.index(seat)
        start, passed = (at + 1) % n, (at - cursor) % n
    live, allin, levels = b.live, b.allin, b.level
    for i in range(n):
        j = (start + i) % n
        s = ring[j]
        if s not in live or s in allin:
            continue
        level = total if s == seat else levels.get(s, 0)
        if level < top or (s != seat and (raised or (s not in acted and (j - cursor) % n >= passed))):
            return s
    return None


def between(h: HandState, seat: int) -> list[int]:
    """Seats from the cursor up to (not including) ``seat``, in action order."""
    ring, cursor = h.seating.ring, h.betting.cursor
    n = len(ring)
    at = ring.index(seat)
    return [ring[(cursor + i) % n] for i in range((at - cursor) % n)]


def someone_owes_before(h: HandState, seat: int) -> bool:
    """A seat before ``seat`` in the action faces a bet: ``seat`` acting now is out of turn."""
    return seat in h.seating.ring and any(owes(h, s) for s in between(h, seat))


def advance_to(h: HandState, seat: int, *, infer: bool) -> HandState:
    """``seat`` acts: when in turn, the seats passed over checked and the cursor moves past it."""
    ring = h.seating.ring
    if seat not in ring or not infer:
        return h
    for skipped in between(h, seat):
        if needs(h, skipped):
            h = record_check(h, skipped)
    return h.with_betting(cursor=(ring.index(seat) + 1) % len(ring))


def record_check(h: HandState, seat: int) -> HandState:
    """``seat`` checked."""
    b = h.betting
    return h.with_betting(
        acted=b.acted | {seat},
        checked=(*b.checked, seat),
        history=(*b.history, Action(STREETS[b.street_no], seat, "check", 0)),
    )


def check_in_turn(h: HandState, seat: int, out: list[Verdict]) -> HandState:
    """A check reported by an input: the seats before it checked too (if they could)."""
    if seat not in h.betting.live or h.betting.street_no < 0:
        return h
    if h.seating.button is not None:
        in_turn = not someone_owes_before(h, seat)
        h = advance_to(h, seat, infer=True) if in_turn else out_of_turn(h, seat, out)
    if needs(h, seat):
        h = record_check(h, seat)
    return after_action(h, out)


def out_of_turn(h: HandState, seat: int, out: list[Verdict]) -> HandState:
    """``seat`` acted while a seat before it faces a bet."""
    skipped = next(s for s in between(h, seat) if owes(h, s))
    key = f"oot:{seat}:{h.betting.street_no}"
    out.append(
        Raise(
            key,
            "action_out_of_turn",
            seat,
            f"Seat {seat} acted out of turn: seat {skipped} acts first; seat {seat}'s "
            "chips stay and are binding if the action to it does not change.",
            (
                f"Seat {seat}'s chips stay in its betting area.",
                f"Seat {skipped} acts now.",
                f"If seat {skipped} only checks or calls, seat {seat}'s action stands; if it "
                f"bets or raises, seat {seat} may call, raise or fold again.",
            ),
        )
    )
    h = h.with_betting(oot={**h.betting.oot, seat: skipped})
    return h.with_(open_keys=h.open_keys | {key})


def frame_of(h: HandState, seat: int) -> Frame:
    """The round as it stands for ``seat``'s action."""
    b = h.betting
    total = sum(b.committed.values()) + sum(b.level.values())
    return Frame(b.top, b.full_raise, b.raises, total, b.level.get(seat, 0))


def settle(h: HandState, out: list[Verdict], *, query: bool = False) -> HandState:
    """Name and check the pending seat's action: its chips are all in (``query``: only to answer
    a query while they may still be coming)."""
    seat = h.betting.pending
    if seat is None:
        return h
    in_turn = h.betting.pending_oot is None
    h = h.with_betting(pending=None, pending_oot=None)
    total = h.betting.put.get(seat, 0)
    if total == h.betting.level.get(seat, 0):
        return h
    if h.seating.button is not None and in_turn:
        h = advance_to(h, seat, infer=True)
    frame = frame_of(h, seat)
    if not query and frame.before < total < frame.top and seat not in h.betting.allin:
        # Chips that fall short of a call, the action gone on: an all in for less (the rules
        # know no short call; nothing else says so where no key is pressed, no stack read).
        h = h.with_betting(allin=h.betting.allin | {seat})
    return apply(h, seat, frame, total, len(h.betting.history), out)


def apply(h: HandState, seat: int, frame: Frame, total: int, index: int, out: list[Verdict]) -> HandState:
    """Record (or, for a remedy, re-record at ``index``) the action that took ``seat`` to
    ``total`` from ``frame``, and check its size."""
    b = h.betting
    street_no = b.street_no
    verdict = judge(h.seating.stakes, street_no, frame, seat, total, seat in b.allin)
    action = Action(STREETS[street_no], seat, verdict.name, total - frame.before)
    actions = (*b.history[:index], action, *b.history[index + 1 :])
    level = {**b.level, seat: total}
    if total > frame.top:
        # A raise gives the others the action again; an earlier action judged again (found
        # all in later) does not take back the actions made since.
        latest = index >= len(b.history) - 1
        b = b.with_(
            history=actions,
            level=level,
            top=total if latest else _top_after(b, seat, total, level),
            full_raise=max(frame.full_raise, total - frame.top),
            raises=frame.bets + 1,
            acted=frozenset({seat}) if latest else b.acted | {seat},
            last_bettor=seat if latest else b.last_bettor,
        )
    else:
        b = b.with_(
            history=actions,
            level=level,
            top=max(frame.top, max(level.values(), default=0)),
            acted=b.acted | {seat},
        )
    key = f"size:{seat}:{street_no}"
    open_keys = h.open_keys
    if verdict.code is not None:
        out.append(Raise(key, verdict.code, seat, verdict.message))
        b = b.with_(frames={**b.frames, seat: (frame, index)})
        open_keys = open_keys | {key}
    elif seat in b.frames:
        out.append(Clear(key))
        b = b.with_(frames={s: v for s, v in b.frames.items() if s != seat})
        open_keys = open_keys - {key}
    return after_action(h.with_(betting=b, open_keys=open_keys), out)


def _top_after(b: Betting, seat: int, total: int, level: dict[int, int]) -> int:
    """The round's highest total once an earlier action of ``seat`` is re-recorded at ``total``:
    the seat that set it, reduced (a remedy: a bet reduced to the limit), leaves the highest of
    the totals now in front; otherwise it stands or grows."""
    if b.level.get(seat, 0) >= b.top:
        return max(level.values(), default=0)
    return max(total, b.top)


def rejudge(h: HandState, seat: int, out: list[Verdict]) -> HandState:
    """A seat with a size finding changed its chips: judge the action again from its frame."""
    frame, index = h.betting.frames[seat]
    return apply(h, seat, frame, h.betting.put.get(seat, 0), index, out)


def after_action(h: HandState, out: list[Verdict]) -> HandState:
    """Findings the action may have put right: out-of-turn seats now in turn, a premature
    sweep whose round is now complete."""
    street_no = h.betting.street_no
    oot = h.betting.oot
    for seat, skipped in list(oot.items()) if oot else ():
        if skipped not in h.betting.live or not owes(h, skipped):
            key = f"oot:{seat}:{street_no}"
            out.append(Clear(key))
            h = h.with_betting(oot={s: v for s, v in h.betting.oot.items() if s != seat})
            h = h.with_(open_keys=h.open_keys - {key})
    if not h.open_keys:
        return h  # (most actions: no finding open, none to clear)
    key = f"sweep:{street_no}"
    if key in h.open_keys and not anyone_owes(h):
        out.append(Clear(key))
        h = h.with_(open_keys=h.open_keys - {key})
    return h


def mark_all_in(h: HandState, seat: int, out: list[Verdict], *, latest: bool = True) -> HandState:
    """``seat`` is all in: a short bet of it is allowed, and its last action is named so
    (``latest``: only if it is the action just made, as a key follows the chips it names;
    else the seat's last action that put chips in)."""
    b = h.betting
    if seat in b.frames:
        return rejudge(h, seat, out)
    history = b.history
    if latest:
        index = len(history) - 1 if history and b.pending != seat else -1
    else:
        index = next(
            (i for i in range(len(history) - 1, -1, -1) if history[i].seat == seat and history[i].amount > 0),
            -1,
        )
    last = history[index] if index >= 0 else None
    if (
        last is not None
        and last.seat == seat
        and last.amount > 0
        and b.street_no >= 0
        and (last.street == STREETS[b.street_no] or not latest)
        and last.action in ("call", "bet", "raise")
    ):
        named = replace(last, action="all_in")
        return h.with_betting(history=(*history[:index], named, *history[index + 1 :]))
    return h


def end_round(h: HandState, out: list[Verdict]) -> HandState:
    """The round is over (a card came, or the hand ended): settle, infer the checks, and move
    its contributions to the hand's."""
    h = settle(h, out)
    b = h.betting
    if h.seating.button is not None and not b.closed and len(b.live) > 1:
        ring, cursor = h.seating.ring, b.cursor
        n = len(ring)
        for i in range(n):
            seat = ring[(cursor + i) % n]
            if needs(h, seat) and not owes(h, seat):
                h = record_check(h, seat)
    pots = current_pots(h)
    h = h.with_betting(
        committed=contributions(h),
        put={},
        level={},
        top=0,
        full_raise=0,
        raises=0,
        acted=NO_SEATS,
        closed=True,
    )
    return h.with_(swept={}, pots=pots)


def contributions(h: HandState) -> dict[int, int]:
    """Seat -> every chip it put in this hand (earlier rounds, antes, this round)."""
    total = dict(h.betting.committed)
    for seat, value in h.betting.put.items():
        total[seat] = total.get(seat, 0) + value
    return total


def current_pots(h: HandState) -> tuple[Pot, ...]:
    """The pots if the round ended now (the uncalled part returned)."""
    contributed = contributions(h)
    due = uncalled(contributed)
    if due is not None:
        contributed[due[0]] -= due[1]
    return build_pots(contributed, h.betting.live)


def uncalled_due(h: HandState, answers: BettingAnswers) -> tuple[int, int] | None:
    """The uncalled chips (seat, amount) once the round is complete, else None; remembered in
    ``answers``: asked after most chips of a sweep or a push, which leave the betting as it is."""
    return answers.due.get(h.seating, h.betting, None, None, _uncalled_due, h)


def _uncalled_due(h: HandState) -> tuple[int, int] | None:
    v = settled_view(h)  # a seat still putting chips in may be raising: judge as if settled
    if v.betting.street_no < 0 or anyone_owes(v):
        return None
    return uncalled(contributions(v))
