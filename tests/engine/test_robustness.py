"""Any sequence of table steps, however wrong, never crashes the core and yields valid payloads."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contract.models import Alert, PublicState
from engine.step import Engine
from testing.script import ScriptError, Table, setup_lines
from tests.engine.runner import settings as engine_settings
from tests.engine.runner import to_received
from tests.engine.scenario import registry

SEATS = [str(s) for s in range(1, 10)]
REFS = ["seat:1", "seat:2", "seat:3", "seat:5", "board", "burn", "muck", "aside", "seat:2#0"]
ZONES = ["seat:1", "seat:2", "seat:4", "board", "burn", "muck", "aside"]

step = st.one_of(
    st.sampled_from(
        [
            "deal all",
            "burn",
            "flop",
            "turn",
            "river",
            "board",
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
            "shuffle fail",
            "use A",
            "use B",
            "status rfid-1 offline",
            "status rfid-1 online 7",
            "fault shuffler jam",
            "gap rfid-1 2",
            "bad rfid-1 {}",
            "button none",
        ]
    ),
    st.builds(lambda s: f"deal {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"deal {s}:up", st.sampled_from(SEATS)),
    st.builds(lambda s: f"fold {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"exposed {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"declare {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"button {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"sit {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"leave {s}", st.sampled_from(SEATS)),
    st.builds(lambda s: f"blind {s} off", st.sampled_from(SEATS)),
    st.builds(
        lambda s, a: f"action {s} {a} 10",
        st.sampled_from(SEATS),
        st.sampled_from(["fold", "bet", "call", "post", "raise", "check"]),
    ),
    st.builds(lambda r, z: f"move {r} {z}", st.sampled_from(REFS), st.sampled_from(ZONES)),
    st.builds(lambda r: f"take {r}", st.sampled_from(REFS)),
    st.builds(lambda r, z: f"crosstalk {r} {z}", st.sampled_from(REFS), st.sampled_from(ZONES)),
    st.builds(lambda r: f"flap {r}", st.sampled_from(REFS)),
)


@settings(max_examples=500, deadline=None)
@given(
    lines=st.lists(step, min_size=1, max_size=60),
    profile=st.sampled_from(["roberts", "tda"]),
    action_feed=st.booleans(),
)
def test_random_steps_never_crash(lines: list[str], profile: str, action_feed: bool) -> None:
    table = Table(registry())
    messages = table.run_all(setup_lines([1, 2, 3, 5], 2, ["A", "B"]))
    for line in lines:
        try:
            messages += table.run(line)
        except ScriptError:
            continue  # a step that makes no sense at the table (no card there)
    engine = Engine(engine_settings(profile, 9, action_feed))  # type: ignore[arg-type]
    for message in messages:
        outputs = engine.handle(to_received(message))
        for alert in outputs.alerts:
            assert Alert.model_validate_json(alert.model_dump_json()) == alert
        if outputs.state is not None:
            PublicState.model_validate_json(outputs.state.model_dump_json())
