"""The secrecy audit of the demo and floor tests sees a leak when there is one."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from config.registry import load_registry
from contract.models import ShuffleCompleteEvent, TagEvent
from tests.conftest import EXAMPLE_REGISTRY
from tests.support.secrecy import Audit

REGISTRY = load_registry(EXAMPLE_REGISTRY)
EVENT = "holdem/t/dev/rfid-1/event"
NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def tag(card: str, zone: str, *, face: str | None = "down", deck: str = "A") -> bytes:
    uid = REGISTRY.uid_of(deck, card)
    return TagEvent(seq=1, ts=NOW, antenna=1, zone=zone, uid=uid, present=True, face=face).to_json()


def alert(text: str) -> bytes:
    return json.dumps({"v": 1, "id": "1-1", "hand": 1, "message": text, "board": []}).encode()


def test_a_hidden_hole_card_named_in_an_alert_is_a_leak() -> None:
    audit = Audit(REGISTRY)
    audit.device_event(EVENT, tag("Js", "seat:8"))
    audit.device_event(EVENT, tag("5s", "seat:8"))
    audit.device_event(EVENT, tag("Js", "seat:8", face="up"))  # the dealer shows the first card
    audit.public_message("holdem/t/alerts", alert("A hole card of seat 8 was exposed (Js)."))
    assert audit.problems == []
    audit.public_message("holdem/t/alerts", alert("A hole card of seat 8 was exposed (5s)."))
    assert len(audit.problems) == 1
    assert "names hidden hole card 5s" in audit.problems[0]


def test_uids_and_device_topics_are_leaks_and_board_cards_are_not() -> None:
    audit = Audit(REGISTRY)
    audit.device_event(EVENT, tag("Ah", "board", face=None))
    audit.public_message("holdem/t/state", json.dumps({"board": ["Ah"]}).encode())
    assert audit.problems == []
    uid = REGISTRY.uid_of("B", "2c")
    audit.public_message("holdem/t/state", json.dumps({"note": f"tag {uid}"}).encode())
    audit.public_message("holdem/t/dev/rfid-1/event", b"{}")
    assert len(audit.problems) == 2


def test_an_old_alert_text_is_no_leak_after_its_card_is_dealt_again() -> None:
    audit = Audit(REGISTRY)
    audit.device_event(EVENT, tag("8d", "seat:6", face="up"))
    text = "A hole card of seat 6 was exposed (8d): it may not be kept."
    audit.public_message("holdem/t/alerts", alert(text))
    audit.device_event(
        EVENT,
        ShuffleCompleteEvent(seq=2, ts=NOW, deck="A", count=52, ok=True, missing=[], duplicates=[]).to_json(),
    )
    audit.device_event(EVENT, tag("8d", "seat:2"))  # the same card, face down, a later hand
    audit.public_text("INFO log", text)  # e.g. "alert 1-1 resolved ...", logged later
    assert audit.problems == []
    audit.public_message("holdem/t/hands", json.dumps({"showdown": [{"cards": ["8d"]}]}).encode())
    assert len(audit.problems) == 1  # a bare card code is judged now: 8d is hidden
