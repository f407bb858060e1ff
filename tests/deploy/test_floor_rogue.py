"""A rogue client holding the floor's credentials, on the TLS LAN listener, during whole hands.

The table runs as deployed: the rendered broker files, the controller with its own identity, each
device publishing under its own. The rogue subscribes to ``#`` and tries to inject a tag and an
input. Whole hands with an exposed card and a showdown are played (and, once the game lands, the
hand results on ``hands`` are checked the same way: every public message is).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import aiomqtt

from config.loader import load_table
from config.registry import DeckRegistry
from contract.models import Status, TagEvent
from testing.script import Message
from tests.deploy.certs import Authority, make_ca, make_server_cert
from tests.deploy.support import (
    TABLE,
    client,
    deployment,
    free_port,
    install,
    listening,
    publish_as_devices,
    until,
)
from tests.service.support import new_table, running_service, script
from tests.support.secrecy import Audit

BASE = f"holdem/{TABLE}"
SETUP = ("sit 1 2 3 4 5 6", "shuffle A", "shuffle B", "button 1", "blinds")
HANDS = (
    # Seat 3's first card is dealt face up (exposed): remedied, played to a showdown of 2 and 4.
    (
        "new_hand",
        "deal 2 3:up 4 5 6 1 2 3 4 5 6 1",
        "ack",
        "deal 3",
        "move seat:3#0 burn",
        "round",
        "flop",
        "round",
        "burn",
        "turn",
        "round",
        "burn",
        "river",
        "round",
        "fold 1",
        "fold 5",
        "fold 6",
        "show 2 4",
        "fold 3",
        "clear",
    ),
    # A plain hand with deck B to a showdown of 3 and 5.
    (
        "next_button",
        "blinds",
        "use B",
        "new_hand",
        "deal all",
        "shuffle A",
        "round",
        "burn",
        "flop",
        "round",
        "burn",
        "turn",
        "round",
        "burn",
        "river",
        "round",
        "fold 2",
        "fold 4",
        "fold 6",
        "show 3 5",
        "fold 1",
        "clear",
    ),
)
LAN = """
[deploy.lan]
port = {port}
bind = "127.0.0.1"
cert_file = "{cert}"
key_file = "{key}"
"""


def lan_listener(tmp_path: Path, port: int) -> tuple[Authority, Callable[[Path], str]]:
    ca = make_ca(tmp_path, "house-ca")

    def extra(etc: Path) -> str:
        cert, key = make_server_cert(tmp_path, ca, "table-pc")
        return LAN.format(
            port=port, cert=install(cert, etc / "table.crt"), key=install(key, etc / "table.key")
        )

    return ca, extra


def hand_audit(messages: list[Message], audit: Audit) -> Audit:
    """``audit`` after the device events of one hand: its hidden and its public cards."""
    for message in messages:
        if message.kind == "event" and not isinstance(message.payload, str):
            audit.device_event(f"{BASE}/dev/{message.device}/event", message.payload.to_json())
    return audit


def codes(registry: DeckRegistry, uids: set[str]) -> set[str]:
    return {card.card for uid in uids if (card := registry.lookup(uid)) is not None}


async def test_the_floor_sees_public_topics_only_and_cannot_inject(tmp_path: Path) -> None:
    lan_port = free_port()
    ca, extra = lan_listener(tmp_path, lan_port)
    with deployment(tmp_path, extra=extra) as table:
        config, registry = load_table(table.config)
        script_table = new_table(seats=9)
        setup = script(script_table, *SETUP)
        hands = [script(script_table, *lines) for lines in HANDS]

        # What must stay secret: hole cards never seen face up, in any hand of the run (a code
        # hidden in one hand but public in another is left out, to keep the check exact).
        audits = [hand_audit(messages, Audit(registry)) for messages in hands]
        public = codes(registry, {u for a in audits for u in a.public})
        hidden = {u for a in audits for u in a.hidden if codes(registry, {u}) - public}
        assert len(hidden) >= 10, "the hands must leave enough hidden hole cards to check"
        assert len(public) >= 15  # two boards, the exposed card, two showdowns

        tls = ssl.create_default_context(cafile=str(ca.cert))
        floor_user = f"{TABLE}-floor"
        # TLS only on the LAN port: a plain connection gets nowhere.
        try:
            async with aiomqtt.Client(
                "127.0.0.1", lan_port, username=floor_user, password=table.secret(floor_user), timeout=3
            ):
                raise AssertionError("a plain-text connection to the LAN listener was accepted")
        except aiomqtt.MqttError:
            pass
        rogue = aiomqtt.Client(
            "127.0.0.1",
            lan_port,
            username=floor_user,
            password=table.secret(floor_user),
            tls_context=tls,
            timeout=5,
            identifier="rogue",
        )
        seen: list[tuple[str, bytes]] = []
        async with rogue, running_service(table.config):
            await rogue.subscribe("#", qos=1)
            await rogue.subscribe("$SYS/#", qos=1)

            async def collect() -> None:
                async for message in rogue.messages:
                    assert isinstance(message.payload, bytes)
                    seen.append((str(message.topic), message.payload))

            reader = asyncio.create_task(collect())
            await until(
                lambda: any(t == f"{BASE}/controller/status" for t, _ in seen),
                what="the controller online, seen by the floor",
            )
            await publish_as_devices(table, setup + [m for h in hands for m in h])
            await until(
                lambda: (
                    sum(b'"phase":"idle"' in p and b'"hand":2' in p for t, p in seen if t == f"{BASE}/state")
                    >= 1
                ),
                within=20,
                what="the second hand over, on the floor's state",
            )

            # The rogue tries to deal itself a card and to acknowledge for the dealer.
            fake_uid = "E0040150F00DCAFE"  # no card of the registry: unmistakable in the journal
            fake = TagEvent(
                seq=999,
                ts=datetime.now(UTC),
                antenna=1,
                zone="seat:1",
                uid=fake_uid,
                present=True,
                face="down",
            )
            await rogue.publish(f"{BASE}/dev/rfid-1/event", fake.to_json(), qos=1)
            await rogue.publish(
                f"{BASE}/input",
                b'{"v":1,"ts":"2026-11-30T20:00:00Z","type":"key","key":"ack","seat":null}',
                qos=1,
            )
            await rogue.publish(
                f"{BASE}/dev/rfid-1/status",
                Status(state="offline", ts=fake.ts, session=99).to_json(),
                qos=1,
                retain=True,
            )
            # Then a real device speaks: the controller sees that, and never saw the rogue's.
            async with listening(
                table.port,
                f"{TABLE}-controller",
                table.secret(f"{TABLE}-controller"),
                f"{BASE}/dev/#",
                f"{BASE}/input",
            ) as (_, watched):
                marker = TagEvent(
                    seq=1000,
                    ts=fake.ts,
                    antenna=2,
                    zone="board",
                    uid=registry.uid_of("B", "2c"),
                    present=False,
                    face=None,
                )
                async with client(
                    table.port, f"{TABLE}-dev-rfid-1", table.secret(f"{TABLE}-dev-rfid-1")
                ) as rfid:
                    await rfid.publish(f"{BASE}/dev/rfid-1/event", marker.to_json(), qos=1)
                await until(
                    lambda: any(b'"seq":1000' in p for _, p in watched.messages),
                    what="the real device's marker",
                )
                assert all(b'"seq":999' not in p and b'"key":"ack"' not in p for _, p in watched.messages)
                retained = [p for t, p in watched.messages if t.endswith("/rfid-1/status")]
                assert all(b'"session":99' not in p for p in retained)
            await until(
                lambda: marker.uid in config.journal.path.read_text(),
                what="the marker in the controller's journal",
            )
            assert fake_uid not in config.journal.path.read_text()  # never reached the engine
            reader.cancel()

    topics = {topic for topic, _ in seen}
    assert topics <= {f"{BASE}/{t}" for t in ("alerts", "state", "hands", "controller/status")}
    assert f"{BASE}/alerts" in topics
    assert f"{BASE}/state" in topics
    check = Audit(registry, hidden=dict.fromkeys(hidden, -1))
    for topic, payload in seen:
        check.public_message(topic, payload)
    assert check.problems == []
    assert check.named_cards > 0  # the board, the exposed card: the check looked at card codes
    exposed = [p for t, p in seen if t == f"{BASE}/alerts" and b"exposed_card" in p]
    assert exposed, "the exposure was alerted on the floor"
