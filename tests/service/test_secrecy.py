"""Secrecy by construction: no output and no INFO log line names a hole card not read face up.

Random hands with random keys, inputs, face-up reads, folds, moves, reader noise and malformed
payloads (some carrying card names in their text) go through the controller (inbox, engine,
alert log) exactly as received from the broker. After every message, every alert, state and
command it published and every log line at INFO or above is searched for card codes: none may be
a card that has been on a seat and was never read face up (nor on the board).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config.models import TableConfig
from contract.models import KeyInput, TagEvent, WireModel
from contract.topics import Topics
from controller.service.table import TableController
from engine.api import Outputs
from engine.step import Engine
from testing.script import Message, ScriptError, Table, setup_lines
from tests.engine.runner import settings as engine_settings
from tests.engine.runner import to_received
from tests.engine.scenario import REGISTRY_PATH, registry

CARD = re.compile(r"(?<![A-Za-z0-9])([AKQJT2-9][shdc])(?![A-Za-z0-9])")
TOPICS = Topics("holdem", "t1")
SEATS = [str(s) for s in (1, 2, 3, 4, 5)]
REFS = ["seat:1", "seat:2", "seat:3", "seat:2#0", "board", "burn", "muck", "aside"]
ZONES = ["seat:1", "seat:2", "seat:4", "board", "burn", "muck", "aside"]

step = st.one_of(
    st.sampled_from(
        [
            "deal all",
            "burn",
            "flop",
            "turn",
            "river",
            "round",
            "all_in",
            "new_hand",
            "misdeal",
            "ack",
            "clear",
            "dup",
            "repeat",
            "next_button",
            "blinds",
            "shuffle A",
            "shuffle B",
            "shuffle fail count=50 missing=Ah,Kd",
            "use A",
            "use B",
            "wait 3",
            "status rfid-1 offline",
            "status rfid-1 online 7",
            "fault shuffler jam Ah Kh",
            'bad rfid-1 {"v":1,"seq":1,"ts":"2026-11-29T20:00:00Z","type":"seat 4 holds Ah Kh"}',
            'bad sensors {"type":"key","key":"Qs Jd"}',
            "bad rfid-1 Ah Kh 7c",
        ]
    ),
    st.builds(lambda s: f"deal {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"deal {s}:up", st.sampled_from(SEATS)),
    st.builds(lambda s: f"fold {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"exposed {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"show {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"declare {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"button {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"input exposed {s}", st.sampled_from(SEATS)),
    st.builds(
        lambda s, a: f"action {s} {a} 10",
        st.sampled_from(SEATS),
        st.sampled_from(["fold", "bet", "call", "post", "raise", "check", "all_in"]),
    ),
    st.builds(lambda r, z: f"move {r} {z}", st.sampled_from(REFS), st.sampled_from(ZONES)),
    st.builds(lambda r, z: f"move {r} {z} up", st.sampled_from(REFS), st.sampled_from(ZONES)),
    st.builds(lambda r: f"take {r}", st.sampled_from(REFS)),
    st.builds(lambda r, z: f"crosstalk {r} {z}", st.sampled_from(REFS), st.sampled_from(ZONES)),
)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class _Secrets:
    """Cards that have been on a seat and were never read face up nor on the board."""

    def __init__(self) -> None:
        self.hole: set[str] = set()
        self.public: set[str] = set()

    def see(self, message: Message) -> None:
        event = message.payload
        if not isinstance(event, TagEvent) or not event.present:
            return
        card = registry().lookup(event.uid)
        if card is None:
            return
        if event.face == "up" or event.zone == "board":
            self.public.add(card.card)
        elif event.zone.startswith("seat:"):
            self.hole.add(card.card)

    def named_in(self, text: str) -> set[str]:
        return set(CARD.findall(text)) & (self.hole - self.public)


def _messages(lines: list[str], profile: str) -> Iterator[Message]:
    table = Table(registry(), table_seats=9)
    for line in setup_lines([1, 2, 3, 5], 2, ["A", "B"]) + lines:
        if line.startswith("input exposed"):
            seat = int(line.split()[2])
            yield Message("input", None, KeyInput(ts=table._ts(), key="exposed", seat=seat))
            continue
        try:
            yield from table.run(line)
        except ScriptError:
            continue  # a step that makes no sense here (no card to move)


def _config(profile: str, action_feed: bool) -> TableConfig:
    return TableConfig.model_validate(
        {
            "table": {"id": "t1", "seats": 9, "profile": profile, "action_feed": action_feed},
            "decks": {"registry": str(REGISTRY_PATH)},
        }
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(step, min_size=1, max_size=50),
    profile=st.sampled_from(["roberts", "tda"]),
    action_feed=st.booleans(),
)
def test_no_output_or_info_log_names_a_hidden_hole_card(
    lines: list[str], profile: str, action_feed: bool
) -> None:
    controller = TableController(_config(profile, action_feed), registry(), journal=False)
    handler = _Lines()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    secrets = _Secrets()
    now = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)
    try:
        for message in _messages(lines, profile):
            secrets.see(message)
            now += timedelta(milliseconds=300)
            topic, payload = message.wire(TOPICS, device="x")
            out = controller.receive(topic, payload, now).outgoing
            out += controller.tick(now + timedelta(seconds=1))
            for sent in out:
                leaked = secrets.named_in(sent.payload.decode())
                assert not leaked, f"{sent.what} names {leaked}: {sent.payload!r}"
            for line in handler.lines:
                leaked = secrets.named_in(line)
                assert not leaked, f"log names {leaked}: {line}"
            handler.lines.clear()
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def _dump(outputs: Outputs) -> str:
    """Every field of the outputs as text, whatever the engine adds to them (hand results)."""
    parts: list[str] = []
    for value in outputs:
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            for part in item if isinstance(item, tuple) else (item,):
                if isinstance(part, WireModel):
                    parts.append(part.model_dump_json())
                elif part is not None:
                    parts.append(str(part))
    return "\n".join(parts)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(step, min_size=1, max_size=50),
    profile=st.sampled_from(["roberts", "tda"]),
    action_feed=st.booleans(),
)
def test_no_engine_output_names_a_hidden_hole_card(lines: list[str], profile: str, action_feed: bool) -> None:
    engine = Engine(engine_settings(profile, 9, action_feed))  # type: ignore[arg-type]
    secrets = _Secrets()
    for message in _messages(lines, profile):
        secrets.see(message)
        text = _dump(engine.handle(to_received(message)))
        leaked = secrets.named_in(text)
        assert not leaked, f"{message} -> names {leaked}: {text}"
