"""Acknowledging alerts: the keypad's ``ack`` (all, or a seat's) and the display's per-alert ack."""

from __future__ import annotations

from datetime import timedelta

from contract.models import FaultEvent, KeyEvent, KeyInput
from engine.api import DeviceEventReceived, InputReceived
from engine.step import Engine
from tests.engine.runner import RECEIVED_AT, settings


def _two_alerts() -> tuple[Engine, list[str]]:
    engine = Engine(settings())
    ids = []
    for seq, device in enumerate(("shoe-1", "shoe-2"), start=1):
        event = FaultEvent(seq=seq, ts=RECEIVED_AT, code="jam", text="jam")
        outputs = engine.handle(DeviceEventReceived(device=device, event=event, received=RECEIVED_AT))
        ids.append(outputs.alerts[0].id)
    return engine, ids


def _ack(engine: Engine, alert: str | None) -> list[tuple[str, str]]:
    item = KeyInput(ts=RECEIVED_AT + timedelta(seconds=1), key="ack", alert=alert)
    outputs = engine.handle(InputReceived(input=item, received=RECEIVED_AT))
    return [(a.id, a.status) for a in outputs.alerts]


def test_ack_with_an_alert_id_acknowledges_only_that_alert() -> None:
    engine, (first, second) = _two_alerts()
    assert _ack(engine, second) == [(second, "acknowledged")]
    statuses = {a.id: a.status for a in engine.public_state().alerts}
    assert statuses == {first: "raised", second: "acknowledged"}


def test_ack_of_an_unknown_or_already_acknowledged_alert_changes_nothing() -> None:
    engine, (first, _second) = _two_alerts()
    assert _ack(engine, "99-99") == []
    assert _ack(engine, first) == [(first, "acknowledged")]
    assert _ack(engine, first) == []


def test_ack_without_an_alert_id_acknowledges_every_active_alert() -> None:
    engine, ids = _two_alerts()
    assert sorted(_ack(engine, None)) == sorted((i, "acknowledged") for i in ids)


def test_a_keypad_event_may_name_the_alert_too() -> None:
    engine, (first, second) = _two_alerts()
    key = KeyEvent(seq=1, ts=RECEIVED_AT, key="ack", alert=first)
    outputs = engine.handle(DeviceEventReceived(device="tablet", event=key, received=RECEIVED_AT))
    assert [(a.id, a.status) for a in outputs.alerts] == [(first, "acknowledged")]
    assert {a.id: a.status for a in engine.public_state().alerts}[second] == "raised"
