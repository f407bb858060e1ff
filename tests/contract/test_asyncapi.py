"""The committed AsyncAPI document is exactly what the contract models generate."""

from __future__ import annotations

from pathlib import Path

import yaml

from contract.asyncapi import build_asyncapi, render_asyncapi

DOC = Path(__file__).resolve().parents[2] / "docs" / "asyncapi.yaml"


def test_committed_document_matches_the_models() -> None:
    committed = DOC.read_text(encoding="utf-8")
    assert committed == render_asyncapi(), (
        "docs/asyncapi.yaml is out of date: run `tablectl asyncapi -o docs/asyncapi.yaml`"
    )


def test_document_is_asyncapi_3_with_every_contract_topic() -> None:
    doc = yaml.safe_load(DOC.read_text(encoding="utf-8"))
    assert doc["asyncapi"] == "3.0.0"
    addresses = {channel["address"] for channel in doc["channels"].values()}
    assert addresses == {
        "{root}/{table}/dev/{device}/event",
        "{root}/{table}/dev/{device}/status",
        "{root}/{table}/dev/{device}/cmd",
        "{root}/{table}/alerts",
        "{root}/{table}/state",
        "{root}/{table}/hands",
        "{root}/{table}/controller/status",
        "{root}/{table}/input",
    }
    event_messages = set(doc["channels"]["deviceEvent"]["messages"])
    assert {"TagEvent", "KeyEvent", "ShuffleCompleteEvent", "SeatEvent"} <= event_messages


def test_every_message_reference_resolves() -> None:
    doc = build_asyncapi()
    schemas = doc["components"]["schemas"]
    for message in doc["components"]["messages"].values():
        name = message["payload"]["$ref"].rsplit("/", 1)[1]
        assert name in schemas
    for operation in doc["operations"].values():
        channel = operation["channel"]["$ref"].rsplit("/", 1)[1]
        assert channel in doc["channels"]
        assert operation["bindings"]["mqtt"]["qos"] == 1
