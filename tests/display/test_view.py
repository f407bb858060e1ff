"""The dealer's picture (pure): alert order, the state as authority, the last hand with its alerts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from contract.models import (
    Alert,
    HandAction,
    HandResult,
    PotResult,
    PublicState,
    SeatAmount,
    SeatState,
    ShownHand,
    Status,
)
from controller.display.view import DealerView, sorted_alerts

TS = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def alert(alert_id: str, severity: str = "warning", status: str = "raised", seat: int | None = None) -> Alert:
    return Alert.model_validate(
        {
            "id": alert_id,
            "ts": TS,
            "hand": 3,
            "code": "exposed_card",
            "severity": severity,
            "status": status,
            "seat": seat,
            "message": f"alert {alert_id}",
            "remedy": ["one", "two"],
            "rule": "RR",
            "profile": "roberts",
        }
    )


def state(*alerts: Alert) -> PublicState:
    return PublicState(
        ts=TS,
        hand=3,
        phase="flop",
        button=2,
        board=["Ah", "Td", "2c"],
        burns=1,
        deck="A",
        seats=[SeatState(seat=s, occupied=True, in_hand=True, cards=2) for s in (1, 2, 3)],
        alerts=list(alerts),
    )


def test_most_severe_first_then_unacknowledged_then_newest() -> None:
    raised = [
        alert("3-1", "info"),
        alert("3-2", "warning", "acknowledged"),
        alert("3-3", "critical", "acknowledged"),
        alert("3-4", "warning"),
        alert("3-5", "critical"),
        alert("3-6", "warning"),
    ]
    assert [a.id for a in sorted_alerts(raised)] == ["3-5", "3-3", "3-6", "3-4", "3-2", "3-1"]


def test_alert_changes_apply_at_once_and_the_state_is_the_authority() -> None:
    view = DealerView(table="t1", seats=3)
    view.on_alert(alert("3-1"))
    view.on_alert(alert("3-2", "critical"))
    assert [a["id"] for a in view.to_json()["alerts"]] == ["3-2", "3-1"]
    view.on_alert(alert("3-1", status="resolved"))
    assert [a["id"] for a in view.to_json()["alerts"]] == ["3-2"]
    view.on_state(state(alert("3-7", status="acknowledged")))
    assert [(a["id"], a["status"]) for a in view.to_json()["alerts"]] == [("3-7", "acknowledged")]


def test_the_picture_has_the_public_state_devices_and_controller() -> None:
    view = DealerView(table="t1", seats=3, name="Main 1", profile="tda", configured=("rfid-1", "sensors"))
    view.on_state(state(alert("3-1", seat=2)))
    view.on_device("rfid-1", Status(state="offline", ts=TS, session=4, detail="unplugged"))
    view.on_device("shoe-9", Status(state="online", ts=TS, session=1))
    view.on_controller(Status(state="online", ts=TS, session=7))
    data = view.to_json()
    assert data["table"] == {"id": "t1", "name": "Main 1", "seats": 3, "profile": "tda"}
    assert data["controller"] == {"state": "online", "detail": None, "session": 7}
    assert data["devices"] == [
        {"id": "rfid-1", "state": "offline", "detail": "unplugged", "session": 4},
        {"id": "sensors", "state": "unknown"},
        {"id": "shoe-9", "state": "online", "detail": None, "session": 1},
    ]
    assert data["state"]["board"] == ["Ah", "Td", "2c"]
    assert "alerts" not in data["state"]  # sent sorted, on their own
    assert data["alerts"][0]["remedy"] == ["one", "two"]


def test_the_last_hand_reaches_the_dealer_with_its_alerts_and_only_tabled_hole_cards() -> None:
    view = DealerView(table="t1", seats=3)
    view.on_alert(alert("3-1", seat=1))
    view.on_alert(alert("3-1", status="resolved", seat=1))
    view.on_hand(
        HandResult(
            ts=TS,
            hand=3,
            button=2,
            seats=[1, 2, 3],
            board=["Ah", "Td", "2c", "9s", "9h"],
            result="showdown",
            actions=[HandAction(street="preflop", seat=3, action="post", amount=1)],
            pots=[
                PotResult(amount=300, eligible=[1, 3], winners=[3], shares=[SeatAmount(seat=3, amount=300)])
            ],
            awarded=[SeatAmount(seat=3, amount=300)],
            showdown=[ShownHand(seat=3, cards=["As", "Ac"], rank="full_house")],
        )
    )
    last = view.to_json()["last_hand"]
    assert (last["hand"], last["result"], last["voided"], last["winners"]) == (3, "showdown", False, [3])
    assert last["board"] == ["Ah", "Td", "2c", "9s", "9h"]
    assert last["actions"] == [{"street": "preflop", "seat": 3, "action": "post", "amount": 1}]
    assert last["showdown"] == [{"seat": 3, "cards": ["As", "Ac"], "rank": "full_house"}]
    assert [(a["id"], a["status"]) for a in last["alerts"]] == [("3-1", "raised"), ("3-1", "resolved")]


def test_a_recalled_last_hand_and_the_alerts_of_the_hand_in_progress() -> None:
    """At start-up: the last hand (2) with its alert changes, and those of hand 3 (in progress at
    the restart), which are in hand 3's view once it ends; none of them is an active alert."""
    view = DealerView(table="t1", seats=3)
    view.on_state(state())
    earlier = alert("2-1", seat=1).model_copy(update={"hand": 2})
    misdeal = HandResult(ts=TS, hand=2, button=1, seats=[1, 2, 3], result="misdeal")
    view.recall(misdeal, [earlier, alert("3-1")])
    picture = view.to_json()
    assert picture["alerts"] == []
    assert (picture["last_hand"]["hand"], [a["id"] for a in picture["last_hand"]["alerts"]]) == (2, ["2-1"])
    view.on_alert(alert("3-1", status="resolved"))
    view.on_hand(HandResult(ts=TS, hand=3, button=2, seats=[1, 2, 3], result="misdeal"))
    last = view.to_json()["last_hand"]
    assert [(a["id"], a["status"]) for a in last["alerts"]] == [("3-1", "raised"), ("3-1", "resolved")]
    view.recall(None, [])  # no hand has ended: nothing changes
    assert view.to_json()["last_hand"]["hand"] == 3


def test_only_the_last_few_hands_keep_their_alerts() -> None:
    view = DealerView(table="t1", seats=3)
    for hand in range(1, 7):
        view.on_alert(alert(f"{hand}-1").model_copy(update={"hand": hand}))
    assert view.hand_alerts.of(1) == []
    assert [a["id"] for a in view.hand_alerts.of(6)] == ["6-1"]


async def test_the_display_applies_a_burst_of_outputs_once_with_the_newest_state() -> None:
    from config.models import TableConfig
    from controller.display.server import DealerDisplay
    from controller.service.table import Outgoing
    from tests.conftest import EXAMPLE_REGISTRY

    config = TableConfig.model_validate(
        {
            "table": {"id": "t1", "seats": 3},
            "decks": {"registry": str(EXAMPLE_REGISTRY)},
            "display": {"listen": "127.0.0.1:0"},
        }
    )
    display = DealerDisplay(config, state(), submit=lambda item: None)  # type: ignore[arg-type, return-value]
    first, second = alert("3-1"), alert("3-2", "critical")
    display.produced(
        [
            Outgoing("alert", 1, "holdem/t1/alerts", first.to_json(), retain=False),
            Outgoing("state", 1, "holdem/t1/state", state(first).to_json(), retain=True),
            Outgoing("alert", 2, "holdem/t1/alerts", second.to_json(), retain=False),
            Outgoing("state", 2, "holdem/t1/state", state(first, second).to_json(), retain=True),
            Outgoing("command", 2, "holdem/t1/dev/sensors/cmd", b"{}", retain=False),
        ]
    )
    picture = json.loads(display.current())
    assert [a["id"] for a in picture["alerts"]] == ["3-2", "3-1"]
    assert picture["state"]["phase"] == "flop"
    offline = b'{"state": "offline", "ts": "2026-11-30T20:00:00Z", "session": 2}'
    display.received("holdem/t1/dev/rfid-1/status", offline)
    display.received("holdem/t1/dev/rfid-1/status", b"not json")  # the engine reports it; no crash
    assert json.loads(display.current())["devices"][0]["state"] == "offline"


def coded(alert_id: str, code: str, severity: str, seat: int | None = None, status: str = "raised") -> Alert:
    return alert(alert_id, severity, status, seat).model_copy(update={"code": code})


def test_follow_ups_go_under_the_alert_they_follow_up_which_leads() -> None:
    misdeal = coded("3-1", "misdeal_extra_cards", "warning", seat=3)
    exposed = coded("3-2", "exposed_card", "warning", seat=5)
    played_on = coded("3-3", "remedy_not_followed", "warning")
    replaced = coded("3-4", "remedy_not_followed", "warning", seat=5)
    view = DealerView(table="t1", seats=9)
    view.on_state(state(misdeal, exposed, played_on, replaced))
    groups = view.to_json()["groups"]
    # The follow-up about seat 5 goes under seat 5's alert; the one without a seat under the
    # newest alert of its hand left (no critical): the exposed card. Newest group first.
    assert groups == [
        {"lead": "3-2", "follow_ups": ["3-3", "3-4"]},
        {"lead": "3-1", "follow_ups": []},
    ]
    # A critical misdeal: the follow-up without a seat belongs to it, and it leads.
    critical = coded("3-1", "misdeal_wrong_first_seat", "critical")
    view.on_state(state(critical, exposed, played_on))
    assert view.to_json()["groups"] == [
        {"lead": "3-1", "follow_ups": ["3-3"]},
        {"lead": "3-2", "follow_ups": []},
    ]
    # The alert followed up resolved: its follow-up stands alone.
    view.on_state(state(played_on))
    assert view.to_json()["groups"] == [{"lead": "3-3", "follow_ups": []}]


def test_groups_are_ordered_as_alerts_are() -> None:
    acknowledged = coded("3-1", "misdeal_wrong_first_seat", "critical", status="acknowledged")
    warning = coded("3-2", "exposed_card", "warning", seat=4)
    fresh = coded("3-3", "remedy_not_followed", "warning", seat=4)
    view = DealerView(table="t1", seats=9)
    view.on_state(state(acknowledged, warning, fresh))
    assert [g["lead"] for g in view.to_json()["groups"]] == ["3-1", "3-2"]
    info = coded("3-4", "board_claim_forfeited", "info", seat=2)
    unacknowledged = coded("3-5", "misdeal_exposed_early", "critical")
    view.on_state(state(acknowledged, warning, fresh, info, unacknowledged))
    assert [g["lead"] for g in view.to_json()["groups"]] == ["3-5", "3-1", "3-2", "3-4"]
