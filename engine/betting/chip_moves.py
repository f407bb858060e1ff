"""The chips on the table, as functions over a :class:`HandState`: chips put in, taken back or
swept, the uncalled part and its return, blinds before the deal, a vacant seat's betting area.

Each function that changes the hand returns the new state and appends its verdicts to ``out``.
"""

from __future__ import annotations

from typing import Any

from engine.betting.derived import BettingAnswers
from engine.betting.record import HandState
from engine.betting.rounds import (
    anyone_owes,
    current_pots,
    mark_all_in,
    out_of_turn,
    owes,
    rejudge,
    settle,
    someone_owes_before,
    to_act_now,
    uncalled_due,
)
from engine.betting.terms import Action, Clear, Raise, Verdict
from engine.betting.zones import add_count


def chips_in(
    h: HandState, seat: int, amount: int, out: list[Verdict], answers: BettingAnswers, *, zone: bool = True
) -> HandState:
    """Chips of ``seat`` arrive in its betting area (or an input says it put them in)."""
    b = h.betting
    if zone and b.pending == seat and seat not in b.back and seat not in b.frames:
        # The common case, one more chip of the action under way.
        return h.with_(
            zone=add_count(h.zone, seat, amount), betting=b.with_(put=add_count(b.put, seat, amount))
        )
    if zone and seat in b.live and seat not in b.blind_due and seat not in b.back:
        # The next common case, the first chip of an action in turn: the action before it
        # settled (it reads no chip's place), then one copy. The rules below otherwise.
        found: list[Verdict] = []
        m = settle(h, found) if b.pending is not None and b.pending != seat else h
        mb = m.betting
        if (
            mb.pending is None
            and seat not in mb.frames
            and (m.seating.button is None or not someone_owes_before(m, seat))
        ):
            out.extend(found)
            return m.with_(
                zone=add_count(m.zone, seat, amount),
                betting=mb.with_(pending=seat, pending_oot=None, put=add_count(mb.put, seat, amount)),
            )
    if zone:
        h = h.with_(zone=add_count(h.zone, seat, amount))
    b = h.betting
    if seat not in b.live:
        return h  # a folded seat's chips: dead, they are swept like the rest
    if seat in b.blind_due and to_act_now(h, answers) != seat and may_fix_blind(h, seat):
        return fix_blind(h, seat, amount, out)  # the blind corrected, before its turn
    if b.pending is not None and b.pending != seat:
        h = settle(h, out)
    if seat in h.betting.frames:
        # A remedy: the bet or raise is completed (or made more) in front of the dealer.
        h = h.with_betting(put=add_count(h.betting.put, seat, amount))
        return rejudge(h, seat, out)
    if h.betting.pending is None:
        h = h.with_betting(pending=seat, pending_oot=None)
        if h.seating.button is not None and someone_owes_before(h, seat):
            h = out_of_turn(h, seat, out).with_betting(pending=seat, pending_oot=seat)
    b = h.betting
    h = h.with_betting(put=add_count(b.put, seat, amount))
    b = h.betting
    if seat in b.back and b.put.get(seat, 0) >= b.back[seat]:
        key = f"back:{seat}:{b.street_no}"
        out.append(Clear(key))
        h = h.with_betting(back={s: v for s, v in b.back.items() if s != seat})
        h = h.with_(open_keys=h.open_keys - {key})
    return h


def stack_emptied(h: HandState, seat: int, out: list[Verdict]) -> HandState:
    """Where stacks are read, a stack emptied into the betting area is an all in."""
    if seat in h.stack_read and not h.stack.get(seat) and seat not in h.betting.allin:
        return mark_all_in(h.with_betting(allin=h.betting.allin | {seat}), seat, out)
    return h


def chips_out(h: HandState, seat: int, amount: int, out: list[Verdict], answers: BettingAnswers) -> HandState:
    """Chips leave ``seat``'s betting area for its side (or vanish) before the sweep."""
    if h.betting.pending not in (None, seat):
        h = settle(h, out)
    h = h.with_(zone=add_count(h.zone, seat, -amount))
    if seat in h.betting.blind_due and may_fix_blind(h, seat):
        return fix_blind(h, seat, -amount, out)
    before = h.betting.put.get(seat, 0)
    due = uncalled_due(h, answers)
    if due is not None and due[0] == seat:
        # The uncalled part goes back to its owner: not a take-back. A bet over the limit
        # called only to the limit has its excess back so: judged again, it is reduced.
        h = check_uncalled(give_back(h, seat, min(amount, due[1]), from_pot=False), out, answers)
        return rejudge(h, seat, out) if seat in h.betting.frames else h
    h = h.with_betting(put=add_count(h.betting.put, seat, -amount))
    if seat in h.betting.frames:
        return rejudge(h, seat, out)  # a remedy: reduced to the limit, or to a call
    key = f"back:{seat}:{h.betting.street_no}"
    restore = max(before, h.betting.back.get(seat, 0))
    out.append(
        Raise(
            key,
            "chips_taken_back",
            seat,
            f"Seat {seat} took {restore - h.betting.put.get(seat, 0)} back from its betting "
            f"area: chips released stay; put them back ({restore} in front).",
        )
    )
    h = h.with_betting(back={**h.betting.back, seat: restore})
    return h.with_(open_keys=h.open_keys | {key})


def sweep(
    h: HandState, seat: int, amount: int, out: list[Verdict], answers: BettingAnswers, layout: dict[str, Any]
) -> HandState:
    """A chip swept from ``seat``'s betting area into the pot; ``layout``: changes to where the
    chips lie besides (the pot's count), made with the sweep's own copy."""
    h = settle(h, out)  # it neither reads nor changes where chips lie
    key = f"sweep:{h.betting.street_no}"
    # Only a sweep's first chip can be premature: nobody acts while the dealer sweeps.
    if not h.swept and key not in h.open_keys and anyone_owes(h):
        behind = [s for s in h.seating.ring if owes(h, s)]
        out.append(
            Raise(
                key,
                "premature_sweep",
                None,
                f"The bets were swept while seat{'s' if len(behind) > 1 else ''} "
                + ", ".join(map(str, behind))
                + f" had not matched {h.betting.top}: return them and finish the round.",
            )
        )
        h = h.with_(open_keys=h.open_keys | {key})
    h = h.with_(zone=add_count(h.zone, seat, -amount), swept=add_count(h.swept, seat, amount), **layout)
    put = h.betting.put
    if "uncalled" in h.open_keys or put.get(seat, 0) >= max(put.values(), default=0):
        h = check_uncalled(h, out, answers)  # only the top bettor's chips can be uncalled
    if not any(h.zone.values()):
        h = h.with_(pots=current_pots(h))
    return h


def unsweep(h: HandState, seat: int, amount: int, out: list[Verdict], answers: BettingAnswers) -> HandState:
    """Chips back from the pot to a betting area (a premature sweep undone)."""
    h = h.with_(zone=add_count(h.zone, seat, amount), swept=add_count(h.swept, seat, -amount))
    return check_uncalled(h, out, answers)


def pot_back(h: HandState, seat: int, amount: int, out: list[Verdict], answers: BettingAnswers) -> HandState:
    """Chips from the pot to a seat's stack mid-hand: the uncalled part returned late."""
    due = uncalled_due(h, answers)
    if due is None or due[0] != seat:
        return h
    return check_uncalled(give_back(h, seat, min(amount, due[1]), from_pot=True), out, answers)


def pot_off(h: HandState, amount: int, out: list[Verdict], answers: BettingAnswers) -> HandState:
    """Chips from the pot off the table mid-hand (no stack read where they went): the uncalled
    part handed back to its owner, once it was found swept into the pot; else nothing."""
    due = uncalled_due(h, answers)
    if due is None or "uncalled" not in h.open_keys:
        return h
    return check_uncalled(give_back(h, due[0], min(amount, due[1]), from_pot=True), out, answers)


def give_back(h: HandState, seat: int, back: int, *, from_pot: bool) -> HandState:
    """``back`` uncalled chips return to ``seat``: from this round's bet (in front of it or
    swept), or from an earlier round's."""
    b = h.betting
    if b.put.get(seat, 0) >= back:
        if from_pot:
            h = h.with_(swept=add_count(h.swept, seat, -back))
        level = add_count(b.level, seat, -back)
        return h.with_betting(
            put=add_count(b.put, seat, -back), level=level, top=max(level.values(), default=0)
        )
    return h.with_betting(committed=add_count(b.committed, seat, -back))


def check_uncalled(h: HandState, out: list[Verdict], answers: BettingAnswers) -> HandState:
    """Raise when the uncalled part went into the pot; clear once it is back."""
    due = uncalled_due(h, answers)
    if (
        due is not None
        and len(h.betting.live) >= 2
        and h.swept.get(due[0], 0) > h.betting.put.get(due[0], 0) - due[1]
    ):
        if "uncalled" in h.open_keys:
            return h
        out.append(
            Raise(
                "uncalled",
                "uncalled_bet_not_returned",
                due[0],
                f"{due[1]} of seat {due[0]}'s bet was not called: return it to seat "
                f"{due[0]} instead of the pot.",
            )
        )
        return h.with_(open_keys=h.open_keys | {"uncalled"})
    if "uncalled" in h.open_keys:
        out.append(Clear("uncalled"))
        return h.with_(open_keys=h.open_keys - {"uncalled"})
    return h


def before_deal(
    h: HandState,
    amount: int,
    src_kind: str | None,
    src_seat: int,
    dst_kind: str | None,
    dst_seat: int,
    out: list[Verdict],
) -> HandState:
    """Before the deal chips come and go freely: posts and antes, and their corrections."""
    zone, put = h.zone, h.betting.put
    if dst_kind == "bet":
        h = h.with_(
            zone=add_count(zone, dst_seat, amount),
            betting=h.betting.with_(put=add_count(put, dst_seat, amount)),
        )
        if src_kind == "stack" and src_seat == dst_seat:
            h = stack_emptied(h, src_seat, out)
    elif src_kind == "bet" and dst_kind == "pot":
        h = h.with_(zone=add_count(zone, src_seat, -amount))  # antes swept before the deal
    elif src_kind == "bet":
        h = h.with_(
            zone=add_count(zone, src_seat, -amount),
            betting=h.betting.with_(put=add_count(put, src_seat, -amount)),
        )
    elif dst_kind == "pot" and src_kind == "stack":
        h = h.with_betting(put=add_count(put, src_seat, amount))  # an ante straight into the pot
    return h


def may_fix_blind(h: HandState, seat: int) -> bool:
    """A wrong blind may still be corrected: preflop, before the seat's first action."""
    b = h.betting
    return (
        b.street_no == 0
        and b.pending != seat
        and not any(a.seat == seat and a.action != "post" for a in b.history)
    )


def fix_blind(h: HandState, seat: int, delta: int, out: list[Verdict]) -> HandState:
    """Chips added to or taken from a wrong blind: its post is what is now in front."""
    b = h.betting
    posted = b.put.get(seat, 0) + delta
    level = {**b.level, seat: posted}
    history = list(b.history)
    posts = [i for i, a in enumerate(history) if a.seat == seat and a.action == "post"]
    # Antes are listed first: a seat's blind is its second post, or its only one without ante.
    index = posts[-1] if posts and (len(posts) == 2 or not h.seating.stakes.ante) else None
    if index is None:
        history.append(Action("preflop", seat, "post", posted))
    else:
        history[index] = Action("preflop", seat, "post", posted)
    b = b.with_(
        put={**b.put, seat: posted}, level=level, history=tuple(history), top=max(level.values(), default=0)
    )
    if posted != b.blind_due[seat]:
        return h.with_(betting=b)
    key = f"blind:{seat}"
    out.append(Clear(key))
    return h.with_(
        betting=b.with_(blind_due={s: v for s, v in b.blind_due.items() if s != seat}),
        open_keys=h.open_keys - {key},
    )


def vacant_seat(h: HandState, seat: int, amount: int, out: list[Verdict]) -> HandState:
    """Chips put in (or, negative, taken from) the betting area of a seat not dealt in."""
    vacant = add_count(h.vacant, seat, amount)
    key = f"vacant:{seat}"
    h2 = h.with_(vacant=vacant)
    if vacant.get(seat) and key not in h.open_keys:
        out.append(
            Raise(
                key,
                "chips_on_vacant_seat",
                seat,
                f"Chips in the betting area of seat {seat}, where nobody is dealt in: remove them.",
            )
        )
        return h2.with_(open_keys=h.open_keys | {key})
    if not vacant.get(seat) and key in h.open_keys:
        out.append(Clear(key))
        return h2.with_(open_keys=h.open_keys - {key})
    return h2


def blind_seats(h: HandState) -> dict[int, int]:
    """Seat -> the blind it posts (antes aside), a straddle posted at the deal included; empty
    when the order is unknown."""
    seating = h.seating
    ring, stakes = seating.ring, seating.stakes
    if seating.button is None or len(ring) < 2:
        return {}
    if len(ring) == 2:
        return {ring[1]: stakes.small_blind, ring[0]: stakes.big_blind}
    blinds = {ring[0]: stakes.small_blind, ring[1]: stakes.big_blind}
    straddler = _straddler(h)
    if straddler is not None:
        blinds[straddler] = 2 * stakes.big_blind
    return blinds


def _straddler(h: HandState) -> int | None:
    """The seat whose post at the deal is a straddle: the third left of the button (3+ players,
    order known) with exactly its ante and 2 x big blind in, where the house allows it. Fixed
    limit has none: the rules count it differently (PokerKit: raises by the small bet, the
    straddle not among the four bets; Robert's Rules: a blind raise that counts)."""
    stakes, ring = h.seating.stakes, h.seating.ring
    if not stakes.straddle or stakes.structure == "fixed_limit" or h.seating.button is None or len(ring) < 3:
        return None
    seat = ring[2]
    return seat if h.betting.put.get(seat, 0) == stakes.ante + 2 * stakes.big_blind else None


def preflop_start(h: HandState, blinds: dict[int, int]) -> tuple[int, int]:
    """Where preflop's action begins (ring index) and its full raise so far: left of the big
    blind (heads-up the button); after a straddle left of the straddler, and the straddle is the
    big blind the minimum raise is measured by."""
    ring, big_blind = h.seating.ring, h.seating.stakes.big_blind
    n = len(ring)
    if n < 2:
        return 0, 0
    if n == 2:
        return 1, 0
    if blinds.get(ring[2]) == 2 * big_blind:  # straddled (3+ players)
        return 3 % n, 2 * big_blind
    return 2 % n, 0


def blind_wrong(h: HandState, seat: int, posted: int, blind: int | None) -> str:
    """The sentence for a wrong blind or ante, or ''."""
    stakes = h.seating.stakes
    ante = stakes.ante
    allin = h.betting.allin
    if h.seating.button is None:
        allowed = {ante, ante + stakes.small_blind, ante + stakes.big_blind}
        if stakes.straddle and stakes.structure != "fixed_limit" and len(h.seating.ring) >= 3:
            allowed.add(ante + 2 * stakes.big_blind)  # a straddle, wherever it lies
        if posted in allowed or (seat in allin and posted < max(allowed)):
            return ""
        return (
            f"Seat {seat} posted {posted} before the deal; a blind or ante here is one of "
            f"{', '.join(map(str, sorted(allowed)))}."
        )
    expected = ante + (blind or 0)
    if posted == expected or (seat in allin and posted < expected):
        return ""
    what = (
        "small blind"
        if blind == stakes.small_blind and blind != stakes.big_blind
        else "big blind"
        if blind
        else "ante"
    )
    return (
        f"Seat {seat} posted {posted} before the deal; its {what}"
        f"{' and ante' if blind and ante else ''} is {expected}."
    )
