"""Hands and a journal that published them, for the history tests (no engine, no broker)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from contract.models import Alert, HandResult, PublicState
from contract.topics import Topics
from controller.journal import JournalFiles, JournalOptions, open_journal

T0 = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
TOPICS = Topics("holdem", "t1")
#: Hole cards dealt in the sample hands and never tabled: they must appear nowhere.
HIDDEN = ("Qs", "Jd", "8c", "3h")


def _action(street: str, seat: int, action: str, amount: int = 0) -> dict[str, object]:
    return {"street": street, "seat": seat, "action": action, "amount": amount}


def showdown_hand(hand: int = 7, at: datetime = T0) -> HandResult:
    """Seats 1 2 3, button 1: a raise, a flop bet, a river bet, seat 3 shows and wins 78."""
    return HandResult.model_validate(
        {
            "ts": at,
            "hand": hand,
            "button": 1,
            "seats": [1, 2, 3],
            "board": ["Ah", "Kd", "7c", "2s", "9h"],
            "result": "showdown",
            "actions": [
                _action("preflop", 2, "post", 1),
                _action("preflop", 3, "post", 2),
                _action("preflop", 1, "raise", 6),
                _action("preflop", 2, "call", 5),
                _action("preflop", 3, "call", 4),
                _action("flop", 2, "check"),
                _action("flop", 3, "bet", 10),
                _action("flop", 1, "call", 10),
                _action("flop", 2, "fold"),
                _action("turn", 3, "check"),
                _action("turn", 1, "check"),
                _action("river", 3, "bet", 20),
                _action("river", 1, "call", 20),
            ],
            "pots": [
                {"amount": 78, "eligible": [1, 3], "winners": [3], "shares": [{"seat": 3, "amount": 78}]}
            ],
            "awarded": [{"seat": 3, "amount": 78}],
            "showdown": [{"seat": 3, "cards": ["As", "Ac"], "rank": "three_of_a_kind"}],
        }
    )


def uncontested_hand(hand: int = 8, at: datetime = T0) -> HandResult:
    """Seats 2 4, button 4 (heads-up): the button raises, the big blind folds."""
    return HandResult.model_validate(
        {
            "ts": at,
            "hand": hand,
            "button": 4,
            "seats": [2, 4],
            "result": "uncontested",
            "actions": [
                _action("preflop", 4, "post", 1),
                _action("preflop", 2, "post", 2),
                _action("preflop", 4, "raise", 5),
                _action("preflop", 2, "fold"),
            ],
            "pots": [{"amount": 8, "eligible": [4], "winners": [4], "shares": [{"seat": 4, "amount": 8}]}],
            "awarded": [{"seat": 4, "amount": 8}],
        }
    )


def misdeal_hand(hand: int = 9, at: datetime = T0) -> HandResult:
    return HandResult(ts=at, hand=hand, button=2, seats=[1, 2, 3], result="misdeal")


def alert(
    hand: int, code: str, at: datetime, *, seat: int | None = None, status: str = "raised", n: int = 1
) -> Alert:
    return Alert.model_validate(
        {
            "id": f"{hand}-{n}",
            "ts": at,
            "hand": hand,
            "code": code,
            "severity": "warning",
            "profile": "roberts",
            "seat": seat,
            "status": status,
            "message": f"{code} at seat {seat}",
        }
    )


def state(hand: int, phase: str, at: datetime) -> PublicState:
    return PublicState.model_validate({"ts": at, "hand": hand, "phase": phase})


def write_journal(
    path: Path, items: list[HandResult | Alert | PublicState], *, segment_bytes: int = 64 << 20
) -> Path:
    """A journal whose published records are ``items``, in order (each caused by a received
    record of its own, as the service writes them)."""
    journal = open_journal(JournalFiles(path), JournalOptions(fsync=False, segment_bytes=segment_bytes))
    journal.start(1, T0, "t1")
    for item in items:
        cause = journal.received(TOPICS.input, b"{}", T0)
        if isinstance(item, HandResult):
            what, topic, retain = "hand", TOPICS.hands, False
        elif isinstance(item, Alert):
            what, topic, retain = "alert", TOPICS.alerts, False
        else:
            what, topic, retain = "state", TOPICS.state, True
        journal.published(what, cause, topic, item.to_json(), retain=retain, when=item.ts)  # type: ignore[arg-type]
    journal.close()
    return path


def sample_journal(path: Path) -> Path:
    """Hand 7 (an exposed card while dealing, a premature turn at the flop), hand 8, hand 9
    voided by a misdeal with its alert, and another table's noise: states and alerts."""
    s = timedelta(seconds=1)
    start7, start8, start9 = T0, T0 + 60 * s, T0 + 120 * s
    return write_journal(
        path,
        [
            state(7, "dealing", start7),
            alert(7, "exposed_card", start7 + 2 * s, seat=2),
            state(7, "preflop", start7 + 5 * s),
            alert(7, "exposed_card", start7 + 6 * s, seat=2, status="resolved"),
            state(7, "flop", start7 + 10 * s),
            alert(7, "premature_turn", start7 + 12 * s, n=2),
            state(7, "turn", start7 + 14 * s),
            state(7, "river", start7 + 18 * s),
            state(7, "showdown", start7 + 22 * s),
            showdown_hand(7, start7 + 30 * s),
            state(8, "dealing", start8),
            state(8, "preflop", start8 + 5 * s),
            uncontested_hand(8, start8 + 10 * s),
            state(9, "dealing", start9),
            alert(9, "misdeal_extra_cards", start9 + 3 * s, seat=3),
            state(9, "misdeal", start9 + 3 * s),
            misdeal_hand(9, start9 + 5 * s),
        ],
    )
