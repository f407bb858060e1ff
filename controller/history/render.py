"""Hands as ``tablectl history`` prints them: one line per hand, or one hand street by street.

Only what the table published is shown: the board, the betting actions with their amounts, the
pots, the award, the alerts and the hands tabled face up at showdown (the result's ``showdown``);
no other hole card exists in the journal's published records, so none can be shown.

Actions carry no time of their own, so an alert is placed in the street its hand was in when it
was raised (the phase of the table's public state at the alert's time), after that street's
actions; an alert changed after the result was published is listed after the award.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

from contract.models import Alert, HandAction, HandResult
from controller.history.query import HandEntry

#: The sections of a hand, in order, and the public-state phases that open each.
SECTIONS: Final = ("dealing", "preflop", "flop", "turn", "river", "showdown", "misdeal")
_SECTION_OF_PHASE: Final = {
    "idle": "dealing",
    "shuffled": "dealing",
    "dealing": "dealing",
    "preflop": "preflop",
    "flop": "flop",
    "turn": "turn",
    "river": "river",
    "showdown": "showdown",
    "misdeal": "misdeal",
}
#: Board cards dealt on each street: (first, end) indices into the result's board.
_BOARD_OF_STREET: Final = {"flop": (0, 3), "turn": (3, 4), "river": (4, 5)}
_VERBS: Final = {
    "fold": "folds",
    "check": "checks",
    "call": "calls",
    "bet": "bets",
    "raise": "raises",
    "all_in": "goes all in",
    "post": "posts",
}


def when(value: datetime | None, *, precise: bool = False) -> str:
    if value is None:
        return "-"
    spec = "milliseconds" if precise else "seconds"
    return value.isoformat(sep=" ", timespec=spec).replace("+00:00", "Z")


def seats_text(seats: Iterable[int]) -> str:
    return " ".join(str(s) for s in seats) or "-"


def winners(result: HandResult) -> list[int]:
    """Every seat that won a pot, in seat order."""
    return sorted({seat for pot in result.pots for seat in pot.winners})


def pots_text(result: HandResult) -> str:
    parts = [f"{pot.amount} [{seats_text(pot.eligible)}] to {seats_text(pot.winners)}" for pot in result.pots]
    return "; ".join(parts) or "-"


def alerts_text(entry: HandEntry) -> str:
    seats: dict[str, list[int]] = {}
    for alert in entry.alerts:
        listed = seats.setdefault(alert.code, [])
        if alert.seat is not None and alert.seat not in listed:
            listed.append(alert.seat)
    return ", ".join(f"{code} (seat {seats_text(s)})" if s else code for code, s in seats.items()) or "-"


# ------------------------------------------------------------------------------------------
# The list
# ------------------------------------------------------------------------------------------


def summary_line(entry: HandEntry) -> str:
    """One hand on one line: number, time, button, board, pots, winners, alerts."""
    result = entry.result
    assert result is not None, "only hands with a result are listed"
    if entry.voided:
        outcome = f"VOIDED ({result.result})"
        money = ""
    else:
        outcome = result.result
        money = f"  pots {pots_text(result)}  winners {seats_text(winners(result))}"
    if result.evidence_missing:
        outcome += " (evidence missing)"
        if result.rake:
            money += f"  rake {result.rake}"
    board = " ".join(result.board) or "-"
    button = result.button if result.button is not None else "-"
    return (
        f"#{result.hand}  {when(result.ts)}  button {button}  {outcome}  board {board}"
        f"{money}  alerts {alerts_text(entry)}"
    )


def listing(entries: list[HandEntry]) -> str:
    if not entries:
        return "no hands"
    return "\n".join(summary_line(e) for e in entries)


def alert_json(alert: Alert) -> dict[str, Any]:
    return {
        "id": alert.id,
        "ts": alert.ts.isoformat().replace("+00:00", "Z"),
        "code": alert.code,
        "severity": alert.severity,
        "seat": alert.seat,
        "status": alert.status,
        "message": alert.message,
    }


def entry_json(entry: HandEntry, *, full: bool = False) -> dict[str, Any]:
    """A hand as JSON: the result as published, whether it was voided, its winners, its alert
    changes (``full``: and the street each was raised in)."""
    result = entry.result
    assert result is not None
    data: dict[str, Any] = result.model_dump(mode="json")
    data["voided"] = entry.voided
    data["winners"] = winners(result)
    data["record"] = entry.record
    data["alerts"] = [alert_json(a) for a in entry.alerts]
    if full:
        for item, alert in zip(data["alerts"], entry.alerts, strict=True):
            item["street"] = section_of(entry, alert)
    return data


# ------------------------------------------------------------------------------------------
# One hand in full
# ------------------------------------------------------------------------------------------


def section_of(entry: HandEntry, alert: Alert) -> str:
    """The section an alert belongs in: the street its hand was in at the alert's time."""
    result = entry.result
    if result is not None and alert.ts > result.ts:
        return "after"
    section = "dealing"
    reached = sorted(entry.phases.items(), key=lambda item: item[1])
    for phase, started in reached:
        if started <= alert.ts and phase in _SECTION_OF_PHASE:
            section = _SECTION_OF_PHASE[phase]
    return section


def _action_line(action: HandAction, to: int) -> str:
    verb = _VERBS.get(action.action, action.action)
    if action.action in ("fold", "check"):
        return f"  seat {action.seat} {verb}"
    if action.action in ("raise", "all_in"):
        put_in = f" (puts in {action.amount})" if to != action.amount else ""
        return f"  seat {action.seat} {verb} to {to}{put_in}"
    return f"  seat {action.seat} {verb} {action.amount}"


def _alert_line(alert: Alert) -> str:
    seat = f" seat {alert.seat}" if alert.seat is not None else ""
    return (
        f"  ! {when(alert.ts, precise=True)} {alert.code}{seat} {alert.status} "
        f"({alert.severity}, {alert.id}): {alert.message}"
    )


def _award_lines(result: HandResult) -> list[str]:
    lines = ["Award"]
    for index, pot in enumerate(result.pots, start=1):
        name = "main pot" if index == 1 else f"side pot {index - 1}"
        shares = ", ".join(f"seat {s.seat} {s.amount}" for s in pot.shares) or "-"
        lines.append(
            f"  {name} {pot.amount} (eligible {seats_text(pot.eligible)}): won by "
            f"{seats_text(pot.winners)}; shares {shares}"
        )
    if result.rake:
        lines.append(f"  rake {result.rake}")
    # Without chip reading no push is seen: ``awarded`` stays empty.
    pushed = ", ".join(f"seat {a.seat} {a.amount}" for a in result.awarded) or "none seen"
    lines.append(f"  pushed by the dealer: {pushed}")
    return lines


def detail(entry: HandEntry) -> str:
    """One hand street by street, its alerts where they happened, then the award."""
    result = entry.result
    assert result is not None
    placed: dict[str, list[Alert]] = {}
    for alert in entry.alerts:
        placed.setdefault(section_of(entry, alert), []).append(alert)
    lines = [
        f"Hand {result.hand}: {'VOIDED (' + result.result + ')' if entry.voided else result.result}, "
        f"ended {when(result.ts, precise=True)}"
        + (f" (journal record {entry.record})" if entry.record else ""),
        f"Button seat {result.button if result.button is not None else '-'}; "
        f"seats dealt in: {seats_text(result.seats)}",
    ]
    if result.evidence_missing:
        lines.append(
            "Followed with evidence missing (device events or dealer inputs lost on the way): "
            "what follows is what was seen."
        )
    by_street: dict[str, list[HandAction]] = {}
    for action in result.actions:
        by_street.setdefault(action.street, []).append(action)
    for section in SECTIONS:
        actions = by_street.get(section, [])
        alerts = placed.get(section, [])
        board = ""
        if section in _BOARD_OF_STREET:
            first, end = _BOARD_OF_STREET[section]
            board = " ".join(result.board[first:end])
        shown = result.showdown if section == "showdown" else []
        if not (actions or alerts or board or shown):
            continue
        lines.append(section.capitalize() + (f"  {board}" if board else ""))
        put_in: dict[int, int] = {}
        for action in actions:
            put_in[action.seat] = put_in.get(action.seat, 0) + action.amount
            lines.append(_action_line(action, put_in[action.seat]))
        for hand in shown:
            lines.append(f"  seat {hand.seat} shows {' '.join(hand.cards)} ({hand.rank.replace('_', ' ')})")
        lines += [_alert_line(a) for a in alerts]
    if entry.voided:
        lines.append(f"The hand was voided ({result.result}): no award.")
    else:
        lines += _award_lines(result)
    if placed.get("after"):
        lines.append("After the hand")
        lines += [_alert_line(a) for a in placed["after"]]
    return "\n".join(lines)
