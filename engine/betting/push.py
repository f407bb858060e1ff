"""Whether the chips the dealer pushed match the award: the right seats, the right shares, the odd
chips where the house rule puts them, the rake the configuration asks for.

One verdict per key, every time: ``Raise`` for what is wrong, ``Clear`` for what is right, so
that a wrong push taken back and pushed right resolves its alert. Messages name seats, pots and
amounts, never a card.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Final

from engine.betting.terms import Clear, PotAward, Raise, Verdict, Verdicts

__all__ = ["check_push", "describe_awards"]

PUSH: Final = "push"
SPLIT: Final = "split"
ODD_CHIP: Final = "odd_chip"
RAKE: Final = "rake"


def check_push(awards: Sequence[PotAward], pushed: Mapping[int, int], *, raked: int, rake: int) -> Verdicts:
    """Judge the pushes: ``pushed`` is the chips each seat received (all pots together), ``raked``
    the chips put in the rake zone, ``rake`` the rake the award took out.

    Keys: ``push`` (``pot_awarded_wrong``: a seat that wins nothing got chips, a winner got
    nothing, or a seat got more than the pots it wins hold), ``split`` (``split_wrong``: shares
    off by more than the odd chips), ``odd_chip`` (``odd_chip_wrong``: right but for odd chips on
    the wrong seats), ``rake`` (``rake_wrong``). When the push itself is wrong the split and the
    odd chip cannot be judged and get no verdict. A pot that no shown hand won (all mucked) may
    go to any of its eligible seats; then only the push and the rake are judged.
    """
    verdicts: list[Verdict] = []
    expected = _expected(awards)
    # chips a rake shortfall left in the pushes (negative: an over-rake took them from the pushes)
    rake_gap = rake - raked
    rake_explains = rake_gap != 0 and sum(pushed.values()) - sum(a.amount for a in awards) == rake_gap
    wrong_push = _wrong_push(awards, expected, pushed, max(rake_gap, 0) if rake_explains else 0)
    if wrong_push is not None:
        seat, finding = wrong_push
        verdicts.append(Raise(PUSH, "pot_awarded_wrong", seat, f"{finding}: {describe_awards(awards)}."))
    else:
        verdicts.extend(_amounts(awards, expected, pushed, rake_gap if rake_explains else 0))
    if raked != rake:
        verdicts.append(_rake_wrong(awards, raked=raked, rake=rake))
    else:
        verdicts.append(Clear(RAKE))
    return tuple(verdicts)


def _rake_wrong(awards: Sequence[PotAward], *, raked: int, rake: int) -> Raise:
    """The rake zone holds ``raked`` where the hand's rake is ``rake``: say how many chips go from
    where to where. The rake comes out of the main pot first, so its winners give or get them."""
    gap = abs(raked - rake)
    chips = "1 chip" if gap == 1 else f"{gap} chips"
    winners = next((pot.winners for pot in awards if pot.winners), ())
    if not winners:
        to = "the pot"
    elif len(winners) == 1:
        to = f"seat {winners[0]}"
    else:
        to = f"the winners (seats {', '.join(map(str, winners))}, as the split says)"
    if raked > rake:
        message = f"The rake zone holds {raked} but this hand's rake is {rake}: {chips} too many."
        step = f"Move {chips} from the rake back to {to}."
    else:
        message = f"The rake zone holds {raked} but this hand's rake is {rake}: {chips} short."
        step = f"Move {chips} from {to} into the rake." if winners else f"Move {chips} into the rake."
    return Raise(RAKE, "rake_wrong", None, message, (step,))


def describe_awards(awards: Sequence[PotAward]) -> str:
    """Who wins what, pot by pot: 'main pot 120 to seat 3; side pot 1 of 80 split: seat 2 40,
    seat 5 40'."""
    parts: list[str] = []
    for index, pot in enumerate(awards):
        name = "main pot" if index == 0 else f"side pot {index}"
        if not pot.winners:
            parts.append(f"{name} of {pot.amount}: no hand shown, the floor decides")
        elif len(pot.winners) == 1:
            parts.append(f"{name} of {pot.amount} to seat {pot.winners[0]}")
        else:
            split = ", ".join(f"seat {seat} {chips}" for seat, chips in pot.shares)
            parts.append(f"{name} of {pot.amount} split: {split}")
    return "; ".join(parts)


def _expected(awards: Sequence[PotAward]) -> dict[int, int]:
    """Seat -> chips the award gives it over all pots."""
    expected: dict[int, int] = {}
    for pot in awards:
        for seat, chips in pot.shares:
            expected[seat] = expected.get(seat, 0) + chips
    return expected


def _wrong_push(
    awards: Sequence[PotAward], expected: Mapping[int, int], pushed: Mapping[int, int], slack: int
) -> tuple[int, str] | None:
    """The first seat pushed wrong and what is wrong (``None``: every chip went to a seat that may
    have it). ``slack``: chips a too-small rake left in the pushes, tolerated on any winner."""
    most: dict[int, int] = {}  # seat -> the chips of every pot it wins (or may win: all mucked)
    for pot in awards:
        for seat in pot.winners or pot.eligible:
            most[seat] = most.get(seat, 0) + pot.amount
    findings: list[tuple[int, str]] = []
    for seat in sorted(pushed):
        chips = pushed[seat]
        if chips > 0 and seat not in most:
            findings.append((seat, f"seat {seat} got {chips} but wins no pot"))
        elif chips > most.get(seat, 0) + slack:
            findings.append((seat, f"seat {seat} got {chips}, more than the pots it wins"))
    for seat in sorted(expected):
        if expected[seat] > 0 and pushed.get(seat, 0) <= 0:
            findings.append((seat, f"seat {seat} wins {expected[seat]} but got nothing"))
    if not findings:
        return None
    text = " and ".join(finding for _, finding in findings)
    return findings[0][0], text[0].upper() + text[1:]


def _amounts(
    awards: Sequence[PotAward], expected: Mapping[int, int], pushed: Mapping[int, int], rake_gap: int
) -> list[Verdict]:
    """The push, split and odd-chip verdicts once every chip went to a seat that may have it."""
    seats = sorted(set(expected) | {seat for seat, chips in pushed.items() if chips})
    gaps = {seat: pushed.get(seat, 0) - expected.get(seat, 0) for seat in seats}
    undecided = any(not pot.winners and pot.amount for pot in awards)
    if undecided or not any(gaps.values()) or _rake_accounts(gaps, rake_gap):
        return [Clear(PUSH), Clear(SPLIT), Clear(ODD_CHIP)]
    if _odd_chips_only(awards, pushed):
        owed = [seat for seat in seats if gaps[seat] < 0]
        extra = [seat for seat in seats if gaps[seat] > 0]
        message = f"The odd chip goes to {_seats(owed)}, not {_seats(extra)}: {describe_awards(awards)}."
        owed_seat = owed[0] if owed else None
        chip = "odd chips" if len(owed) > 1 or len(extra) > 1 else "odd chip"
        step = f"Move the {chip} from {_seats(extra)} to {_seats(owed)}."
        return [Clear(PUSH), Clear(SPLIT), Raise(ODD_CHIP, "odd_chip_wrong", owed_seat, message, (step,))]
    wrong = ", ".join(
        f"seat {seat} should get {expected.get(seat, 0)} (got {pushed.get(seat, 0)})"
        for seat in seats
        if gaps[seat]
    )
    message = f"{wrong[0].upper()}{wrong[1:]}: {describe_awards(awards)}."
    if any(len(pot.winners) > 1 for pot in awards):
        return [Clear(PUSH), Raise(SPLIT, "split_wrong", None, message), Clear(ODD_CHIP)]
    # no split pot, yet a winner's amount is off (chips missing or extra): the pot itself is
    # awarded wrong
    return [Raise(PUSH, "pot_awarded_wrong", _first(gaps), message), Clear(SPLIT), Clear(ODD_CHIP)]


def _rake_accounts(gaps: Mapping[int, int], rake_gap: int) -> bool:
    """True when the whole difference is the rake's: every seat off in the rake's direction."""
    if not rake_gap:
        return False
    return all(gap * rake_gap >= 0 for gap in gaps.values())


def _odd_chips_only(awards: Sequence[PotAward], pushed: Mapping[int, int]) -> bool:
    """True when some other placing of the split pots' odd chips (at most one per seat per pot,
    among that pot's winners) gives exactly ``pushed``."""
    base: dict[int, int] = {}
    odd: list[tuple[int, tuple[int, ...]]] = []  # (odd chips, winners) per split pot
    for pot in awards:
        if not pot.winners:
            continue
        each, remainder = divmod(pot.amount, len(pot.winners))
        for seat in pot.winners:
            base[seat] = base.get(seat, 0) + each
        if remainder:
            odd.append((remainder, pot.winners))
    need = {seat: pushed.get(seat, 0) - base.get(seat, 0) for seat in set(base) | set(pushed)}
    if any(n < 0 for n in need.values()) or sum(need.values()) != sum(r for r, _ in odd):
        return False
    return _max_flow(odd, need) == sum(r for r, _ in odd)


def _max_flow(odd: Sequence[tuple[int, tuple[int, ...]]], need: Mapping[int, int]) -> int:
    """Most odd chips placeable: pot ``i`` gives ``odd[i][0]`` chips, one per winner at most,
    seat ``s`` takes ``need[s]`` (Edmonds-Karp on a graph of a few dozen nodes)."""
    source, sink = ("source", 0), ("sink", 0)
    capacity: dict[tuple[str, int], dict[tuple[str, int], int]] = {source: {}, sink: {}}

    def edge(a: tuple[str, int], b: tuple[str, int], cap: int) -> None:
        capacity.setdefault(a, {})[b] = capacity.setdefault(a, {}).get(b, 0) + cap
        capacity.setdefault(b, {}).setdefault(a, 0)

    for index, (chips, winners) in enumerate(odd):
        edge(source, ("pot", index), chips)
        for seat in winners:
            edge(("pot", index), ("seat", seat), 1)
    for seat, chips in need.items():
        if chips:
            edge(("seat", seat), sink, chips)
    flow = 0
    while True:
        came_from: dict[tuple[str, int], tuple[str, int]] = {source: source}
        queue = deque([source])
        while queue and sink not in came_from:
            node = queue.popleft()
            for nxt, cap in capacity[node].items():
                if cap > 0 and nxt not in came_from:
                    came_from[nxt] = node
                    queue.append(nxt)
        if sink not in came_from:
            return flow
        path: list[tuple[tuple[str, int], tuple[str, int]]] = []
        node = sink
        while node != source:
            path.append((came_from[node], node))
            node = came_from[node]
        pushed = min(capacity[a][b] for a, b in path)
        for a, b in path:
            capacity[a][b] -= pushed
            capacity[b][a] += pushed
        flow += pushed


def _seats(seats: Sequence[int]) -> str:
    """'seat 3' or 'seats 3 and 5'."""
    if len(seats) == 1:
        return f"seat {seats[0]}"
    return "seats " + ", ".join(str(s) for s in seats[:-1]) + f" and {seats[-1]}"


def _first(gaps: Mapping[int, int]) -> int | None:
    """The first seat (in seat order) whose amount is off."""
    return next((seat for seat in sorted(gaps) if gaps[seat]), None)
