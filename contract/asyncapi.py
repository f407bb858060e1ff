"""Generate the AsyncAPI 3 document of the MQTT contract from the models (``docs/asyncapi.yaml``).

The document is written from the table controller's point of view: it *receives* device events,
device status and dealer inputs, and *sends* alerts, the public state, its own status and device
commands. A driver is the mirror image. ``tests/contract/test_asyncapi.py`` fails when the committed
document is not what these models generate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from contract import models as m

REF_TEMPLATE = "#/components/schemas/{model}"


@dataclass(frozen=True)
class _Channel:
    name: str
    address: str
    description: str
    messages: tuple[type[BaseModel], ...]
    action: str  # "send" or "receive", for the controller
    retain: bool
    publisher: str


_CHANNELS = (
    _Channel(
        "deviceEvent",
        "{root}/{table}/dev/{device}/event",
        "One device event, as the hardware observed it. Never retained. Card identities travel only "
        "here, on a topic the controller alone reads.",
        m.EVENT_TYPES,
        "receive",
        False,
        "device driver",
    ),
    _Channel(
        "deviceStatus",
        "{root}/{table}/dev/{device}/status",
        "Retained device status; `offline` is also the driver's last will. `session` grows by one "
        "at every (re)start and `seq` starts again at 1 with it.",
        (m.Status,),
        "receive",
        True,
        "device driver",
    ),
    _Channel(
        "deviceCommand",
        "{root}/{table}/dev/{device}/cmd",
        "A command to a device, discriminated on `cmd`.",
        (m.ShuffleCommand, m.LampCommand, m.BuzzerCommand, m.SweepCommand, m.ResendCommand, m.StatusCommand),
        "send",
        False,
        "controller",
    ),
    _Channel(
        "alerts",
        "{root}/{table}/alerts",
        "One alert change (raised, updated, acknowledged, resolved). Never names an unexposed hole card.",
        (m.Alert,),
        "send",
        False,
        "engine",
    ),
    _Channel(
        "state",
        "{root}/{table}/state",
        "The retained public table state. Card counts only for seats; never hole cards.",
        (m.PublicState,),
        "send",
        True,
        "engine",
    ),
    _Channel(
        "hands",
        "{root}/{table}/hands",
        "One hand result when a hand ends: pots, winners and shares, rake, what was pushed, and "
        "the hands tabled face up at showdown (no other hole card). Never retained.",
        (m.HandResult,),
        "send",
        False,
        "engine",
    ),
    _Channel(
        "controllerStatus",
        "{root}/{table}/controller/status",
        "Retained controller status; `online` only once subscribed and ready; last will `offline`.",
        (m.Status,),
        "send",
        True,
        "controller",
    ),
    _Channel(
        "input",
        "{root}/{table}/input",
        "Dealer inputs from sources that are not sensors (tablet, console, tests), discriminated on `type`.",
        (m.KeyInput, m.ActionInput, m.DealerBadgeInput, m.LevelStartInput),
        "receive",
        False,
        "dealer console, tablet, tests",
    ),
)

_PARAMETERS = {
    "root": {"description": "Topic root from the configuration.", "default": "holdem"},
    "table": {"description": "Table id from the configuration ([table] id)."},
    "device": {"description": "Device id from the configuration, or any id a driver uses."},
}


def _message_name(model: type[BaseModel], channel: _Channel) -> str:
    # Status is used on two channels; give each its own message name.
    if model is m.Status:
        return "ControllerStatus" if channel.name == "controllerStatus" else "DeviceStatus"
    return model.__name__


def build_asyncapi() -> dict[str, Any]:
    """The AsyncAPI 3.0 document as plain data."""
    models: list[type[BaseModel]] = []
    for channel in _CHANNELS:
        for model in channel.messages:
            if model not in models:
                models.append(model)
    _, top = models_json_schema([(model, "serialization") for model in models], ref_template=REF_TEMPLATE)
    schemas = top.get("$defs", {})

    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    for channel in _CHANNELS:
        names = [_message_name(model, channel) for model in channel.messages]
        for model, name in zip(channel.messages, names, strict=True):
            messages[name] = {
                "name": name,
                "title": name,
                "summary": (model.__doc__ or "").strip().splitlines()[0],
                "contentType": "application/json",
                "payload": {"$ref": REF_TEMPLATE.format(model=model.__name__)},
            }
        params = [p for p in _PARAMETERS if "{" + p + "}" in channel.address]
        channels[channel.name] = {
            "address": channel.address,
            "description": f"{channel.description} Publisher: {channel.publisher}.",
            "parameters": {p: dict(_PARAMETERS[p]) for p in params},
            "messages": {n: {"$ref": f"#/components/messages/{n}"} for n in names},
        }
        verb = "receive" if channel.action == "receive" else "send"
        operations[f"{verb}{channel.name[0].upper()}{channel.name[1:]}"] = {
            "action": channel.action,
            "channel": {"$ref": f"#/channels/{channel.name}"},
            "messages": [{"$ref": f"#/channels/{channel.name}/messages/{n}"} for n in names],
            "bindings": {"mqtt": {"qos": 1, "retain": channel.retain, "bindingVersion": "0.2.0"}},
        }

    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "tablectl table contract",
            "version": str(m.SCHEMA_VERSION),
            "description": "MQTT topics and payloads of a Texas Hold'em table: device events in, "
            "alerts and public state out. Generated from contract/models.py by "
            "`tablectl asyncapi -o docs/asyncapi.yaml`; do not edit by hand. Readers ignore unknown "
            "fields; timestamps are RFC 3339 UTC.",
        },
        "defaultContentType": "application/json",
        "servers": {
            "table": {
                "host": "127.0.0.1:1883",
                "protocol": "mqtt",
                "protocolVersion": "3.1.1",
                "description": "The card room's broker (mosquitto); the demo embeds amqtt.",
            }
        },
        "channels": channels,
        "operations": operations,
        "components": {"messages": messages, "schemas": schemas},
    }


def render_asyncapi() -> str:
    """The AsyncAPI document as YAML text, stable for a given set of models."""
    header = "# Generated from contract/models.py by `tablectl asyncapi -o docs/asyncapi.yaml`.\n"
    body = yaml.safe_dump(build_asyncapi(), sort_keys=False, allow_unicode=True, width=100)
    return header + body
