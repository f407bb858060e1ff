"""One valid instance of every contract payload, for round-trip tests."""

from __future__ import annotations

from datetime import UTC, datetime

from contract import models as m

TS = datetime(2026, 11, 29, 20, 15, 30, 250000, tzinfo=UTC)

EVENTS: list[m.EventBase] = [
    m.TagEvent(seq=1, ts=TS, antenna=3, zone="seat:3", uid="E0040150654CC41C", present=True, face="down"),
    m.TagEvent(seq=2, ts=TS, antenna=12, zone="burn", uid="E00401501EE63A2D", present=False),
    m.ShufflingEvent(seq=3, ts=TS, deck="A"),
    m.ShuffleCompleteEvent(seq=4, ts=TS, deck="B", count=51, ok=False, missing=["Td"], duplicates=[]),
    m.FaultEvent(seq=5, ts=TS, code="jam", text="card jam in the elevator"),
    m.ButtonEvent(seq=6, ts=TS, seat=4),
    m.ButtonEvent(seq=7, ts=TS, seat=None),
    m.BlindEvent(seq=8, ts=TS, seat=5, present=True),
    m.SeatEvent(seq=9, ts=TS, seat=10, occupied=False),
    m.KeyEvent(seq=10, ts=TS, key="exposed", seat=2),
    m.KeyEvent(seq=11, ts=TS, key="round_complete"),
    m.KeyEvent(seq=12, ts=TS, key="new_hand", session=7),
]

STATUSES = [
    m.Status(state="online", ts=TS, session=3),
    m.Status(state="fault", ts=TS, session=3, detail="crc_errors"),
]

INPUTS: list[m.KeyInput | m.ActionInput | m.DealerBadgeInput | m.LevelStartInput] = [
    m.KeyInput(ts=TS, key="ack"),
    m.KeyInput(ts=TS, key="ack", alert="3-2"),
    m.ActionInput(ts=TS, seat=7, action="raise", amount=400),
    m.KeyInput(ts=TS, key="last_hands"),
    m.DealerBadgeInput(ts=TS, dealer="B-1042"),
    m.LevelStartInput(ts=TS),
]

ALERT = m.Alert(
    id="12-1",
    ts=TS,
    hand=12,
    code="exposed_card",
    severity="warning",
    seat=4,
    status="raised",
    message="Seat 4's hole card was exposed by the dealer: the deal continues.",
    remedy=[
        "Finish the deal.",
        "Give seat 4 the top card of the deck.",
        "Use the exposed card as the flop burn.",
    ],
    rule="RR Irregularities 1",
    profile="roberts",
)

STATE = m.PublicState(
    ts=TS,
    hand=12,
    phase="flop",
    button=3,
    seats=[
        m.SeatState(seat=s, occupied=True, in_hand=s != 5, cards=0 if s == 5 else 2) for s in range(1, 10)
    ],
    board=["As", "Td", "7c"],
    burns=1,
    deck="A",
    alerts=[ALERT],
    profile="roberts",
)

COMMANDS: list[m.DeviceCommand] = [
    m.ShuffleCommand(ts=TS, deck="B"),
    m.LampCommand(ts=TS, colour="red", blink=True),
    m.BuzzerCommand(ts=TS, duration_ms=300),
    m.SweepCommand(ts=TS, antennas=[1, 2, 3], dwell_ms=15),
    m.ResendCommand(ts=TS, session=4, from_seq=120, to_seq=131),
]
