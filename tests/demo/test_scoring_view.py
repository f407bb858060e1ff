"""Scoring (pairing mistakes with alerts), the summary figures and the live view's rendering."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime

from rich.console import Console

from config.models import MqttSection
from config.registry import load_registry
from contract.models import Alert, PotState, PublicState, SeatAmount, SeatState, Status
from contract.topics import Topics
from controller.demo.monitor import Monitor, TableView
from controller.demo.runner import FIRST_MISTAKES, first_hand
from controller.demo.scoring import LATE_S, Scorer
from controller.demo.setup import EXAMPLE_REGISTRY, demo_stakes
from controller.demo.summary import Summary, Tally, percentile
from controller.demo.view import Header, render
from link.client import make_client
from simulators.dealer import DealerSettings, VirtualDealer

TS = datetime(2026, 11, 30, 21, 0, tzinfo=UTC)


def _alert(code: str, status: str = "raised", seat: int | None = 3) -> Alert:
    return Alert.model_validate(
        {
            "id": f"{code}-1",
            "ts": TS,
            "hand": 7,
            "code": code,
            "severity": "warning",
            "seat": seat,
            "status": status,
            "message": f"{code} at seat {seat}.",
            "remedy": ["Do the first thing.", "Then the second."],
            "rule": "RR",
            "profile": "roberts",
        }
    )


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile([3.0], 0.99) == 3.0
    assert percentile([], 0.5) is None


async def test_alerts_pair_with_mistakes_by_code_in_either_order() -> None:
    tally = Tally()
    scorer = Scorer(tally)
    matched = scorer.expect("premature_flop", acted=10.000)
    scorer.alert(_alert("premature_flop"), arrived=10.020)
    await asyncio.wait_for(matched.wait(), 1)
    # An alert may arrive before the runner registers the step (a deck check's verdict).
    scorer.alert(_alert("deck_check_failed", seat=None), arrived=11.005)
    scorer.expect("deck_check_failed", acted=11.000)
    scorer.alert(_alert("premature_flop", status="acknowledged"), arrived=11.1)  # not a detection
    scorer.alert(_alert("device_offline", seat=None), arrived=11.2)  # device code: apart
    scorer.expect("extra_burn", acted=12.0)  # never raised: a miss
    scorer.alert(_alert("missing_burn"), arrived=12.5)  # never injected: a false alarm
    scorer.close_hand()
    summary = Summary.from_tally(tally, seed=1, profile="roberts", broker="embedded")
    assert summary.detected == {"deck_check_failed": 1, "premature_flop": 1}
    assert summary.missed == {"extra_burn": 1}
    assert summary.unexpected == {"missing_burn": 1}
    assert summary.other_alerts == {"device_offline": 1}
    assert summary.precision == round(2 / 3, 4)
    assert summary.recall == round(2 / 3, 4)
    assert summary.latency_ms["p50"] == 5.0
    assert summary.latency_ms["max"] == 20.0
    line = summary.as_json()
    assert "\n" not in line
    assert json.loads(line)["mistakes_injected"] == 3


def test_an_alert_after_its_hand_closed_is_a_late_detection_within_late_s() -> None:
    """A controller catching up after an outage raises the alert seconds after the act, the
    dealer on the next hand: a detection with its latency, neither a miss nor a false alarm;
    after ``LATE_S`` the same code is a false alarm and the miss stands."""
    tally = Tally()
    scorer = Scorer(tally)
    scorer.expect("blind_wrong_amount", acted=100.0)
    scorer.expect("premature_flop", acted=100.5)
    scorer.close_hand()
    assert dict(tally.missed) == {"blind_wrong_amount": 1, "premature_flop": 1}
    scorer.alert(_alert("blind_wrong_amount"), arrived=104.1)  # 4.1 s late
    scorer.alert(_alert("premature_flop"), arrived=100.5 + LATE_S + 0.1)  # too late
    scorer.close_hand()
    summary = Summary.from_tally(tally, seed=1, profile="roberts", broker="embedded")
    assert summary.detected == {"blind_wrong_amount": 1}
    assert summary.missed == {"premature_flop": 1}
    assert summary.unexpected == {"premature_flop": 1}
    assert summary.latency_ms["max"] == 4100.0


async def test_after_a_reconnection_the_monitor_takes_the_alerts_raised_meanwhile_from_the_state() -> None:
    """A broker that restarted keeps no session: an alert raised while the monitor was away
    reaches it only in the next state's active alerts, counted arrived then; one seen live is
    not counted twice."""
    seen: list[tuple[str, str, float]] = []
    monitor = Monitor(
        make_client(MqttSection(), "scoring-test-unused"),
        Topics("holdem", "t1"),
        on_alert=lambda alert, now: seen.append((alert.code, alert.status, now)),
        watch_state=True,
    )
    topics = monitor.topics
    live = _alert("premature_flop").model_copy(update={"id": "7-1"})
    monitor.dispatch(topics.alerts, live.to_json(), 1.0)
    monitor.reconnected()
    away = _alert("misdeal_exposed_early", status="acknowledged").model_copy(update={"id": "7-2"})
    state = PublicState(ts=TS, hand=7, phase="preflop", button=1, seats=[], alerts=[live, away])
    monitor.dispatch(topics.state, state.to_json(), 2.0)
    monitor.dispatch(topics.state, state.to_json(), 3.0)  # (only the first state after it)
    monitor.dispatch(topics.alerts, away.model_copy(update={"status": "raised"}).to_json(), 4.0)
    assert seen == [("premature_flop", "raised", 1.0), ("misdeal_exposed_early", "raised", 2.0)]


def test_the_view_shows_the_table_alerts_and_devices() -> None:
    seats = [
        SeatState(seat=s, occupied=s in (2, 5, 9), in_hand=s in (2, 5), cards=2 if s in (2, 5) else 0)
        for s in range(1, 10)
    ]
    view = TableView()
    view.state = PublicState(
        ts=TS,
        hand=7,
        phase="flop",
        button=9,
        seats=seats,
        board=["Ah", "Td", "2c"],
        burns=1,
        deck="B",
    )
    view.devices = {"rfid-1": Status(state="online", ts=TS, session=2)}
    view.controller = Status(state="online", ts=TS, session=1)
    view.alerts.append(_alert("premature_flop"))
    tally = Tally(hands=6)
    tally.injected["premature_flop"] += 1
    console = Console(record=True, width=110, color_system=None)
    console.print(render(view, tally, Header("t1", "roberts", "embedded", 0, 200), seats=9))
    text = console.export_text()
    # The header's hand is the table box's; the hands played are counted apart.
    assert "table demo" not in text
    assert "profile roberts, hand 7, played 6/200" in text
    assert "hand 7   phase flop" in text
    assert "A♥ 10♦ 2♣" in text
    assert "phase flop" in text
    assert "deck B" in text
    assert "burns 1" in text
    assert "premature_flop" in text
    assert "→ Do the first thing." in text
    assert "rfid-1 online (session 2)" in text
    assert "controller online" in text
    assert "mistakes injected 1" in text
    # The legend of the marks under the seats.
    assert "▮ a card at the seat (the count, never its face)" in text
    assert "· seated, no card" in text
    assert "— empty seat" in text
    assert "numbers under the seats: chips bet this round" in text


def test_the_feed_has_one_row_per_alert_with_its_latest_status_and_its_remedy() -> None:
    view = TableView()
    raised = _alert("exposed_card")
    view.alerts.append(raised)
    view.alerts.append(_alert("premature_flop"))
    later = {"remedy": [], "ts": TS}
    view.alerts.append(raised.model_copy(update={"status": "acknowledged", **later}))
    view.alerts.append(raised.model_copy(update={"status": "resolved", **later}))
    console = Console(record=True, width=110, color_system=None)
    console.print(render(view, Tally(), Header("t1", "roberts", "embedded", 1, 0), seats=9))
    text = console.export_text()
    rows = re.findall(r"│\s+7 │ (\w+)\s+│\s+3 │ (\w+)", text)
    # Newest change first, each alert once with its latest status, the raised one's remedy kept.
    assert rows == [("exposed_card", "resolved"), ("premature_flop", "raised")]
    assert text.count("→ Do the first thing.") == 2


def test_the_first_hand_at_a_dealers_pace_makes_its_mistake_while_dealing() -> None:
    decks = load_registry(EXAMPLE_REGISTRY).decks
    for seed in range(8):
        settings = DealerSettings(seats=9, mistake_rate=0.2, stakes=demo_stakes(seed))
        script = first_hand(VirtualDealer(decks, settings, seed=seed))
        marked = [i for i, step in enumerate(script.steps) if step.mistake is not None]
        assert marked, seed
        assert script.steps[marked[0]].mistake in FIRST_MISTAKES
        # Within the hole cards: before the first board card (the pauses before it: seconds).
        assert sum(step.pause_s for step in script.steps[: marked[0]]) < 40, seed
    legal = first_hand(VirtualDealer(decks, DealerSettings(seats=9, mistake_rate=0.0), seed=1))
    assert all(step.mistake is None for step in legal.steps)


def test_the_view_shows_bets_pots_who_acts_and_who_shows_first() -> None:
    seats = [SeatState(seat=s, occupied=True, in_hand=True, cards=2) for s in range(1, 7)]
    view = TableView()
    view.state = PublicState(
        ts=TS,
        hand=3,
        phase="turn",
        button=6,
        seats=seats,
        board=["Ah", "Td", "2c", "9s"],
        to_act=4,
        bets=[SeatAmount(seat=2, amount=40), SeatAmount(seat=3, amount=15)],
        pots=[PotState(amount=90, eligible=[1, 2, 3, 4]), PotState(amount=30, eligible=[2, 4])],
        shows_first=2,
    )
    console = Console(record=True, width=110, color_system=None)
    console.print(render(view, Tally(hands=2), Header("t1", "roberts", "embedded", 0, 0), seats=6))
    text = console.export_text()
    assert "▶ 4" in text
    assert "40" in text
    assert "15" in text
    assert "main 90 (seats 1,2,3,4)" in text
    assert "side 1 30 (seats 2,4)" in text
    assert "to act: seat 4" in text
    assert "shows first: seat 2" in text
