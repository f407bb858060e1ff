"""The rendered broker files on a real mosquitto: who may connect, publish and read what.

mosquitto drops an unauthorised publish silently (the publisher still gets its PUBACK) and never
delivers a message to a client that may not read it; mosquitto 2.0 grants the subscription itself
(SUBACK 0) and filters each delivery. So every "cannot" below is shown positively: a client that
may read the topic sees a marker published *after* the forbidden message, and by then has still
not seen the forbidden one (the broker keeps one publisher's messages in order).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import aiomqtt
import pytest

from testing.mosquitto import TABLE_PC_CONF, running_mosquitto
from tests.deploy.support import TABLE, Deployment, client, deployment, listening, until

BASE = f"holdem/{TABLE}"
EVENT = {"v": 1, "seq": 1, "ts": "2026-11-30T20:00:00Z", "type": "key", "key": "ack", "seat": None}


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Deployment]:
    with deployment(tmp_path) as rendered:
        yield rendered


def who(table: Deployment, name: str) -> tuple[int, str, str]:
    user = f"{TABLE}-{name}"
    return table.port, user, table.secret(user)


def payload(marker: str) -> bytes:
    return json.dumps({**EVENT, "marker": marker}).encode()


async def test_anonymous_and_wrong_passwords_are_refused(table: Deployment) -> None:
    for user, password in ((None, None), (f"{TABLE}-controller", "wrong"), ("nobody", "x")):
        with pytest.raises(aiomqtt.MqttCodeError) as refused:
            async with client(table.port, user, password):
                pass
        assert refused.value.rc in (4, 5, 134, 135)  # bad user name or password / not authorised
    async with client(*who(table, "controller")):
        pass  # the rendered password file holds the hash of the rendered secret


async def test_a_driver_publishes_only_its_own_event_and_status(table: Deployment) -> None:
    async with (
        listening(*who(table, "controller"), f"{BASE}/dev/#", f"{BASE}/input") as (_, seen),
        listening(*who(table, "floor"), "#") as (_, public),
        client(*who(table, "dev-rfid-1")) as rfid,
        client(*who(table, "controller")) as controller,
    ):
        forbidden = {
            f"{BASE}/dev/sensors/event": payload("rfid-as-sensors"),
            f"{BASE}/dev/shuffler/status": payload("rfid-as-shuffler"),
            f"{BASE}/input": payload("rfid-input"),
            f"{BASE}/alerts": payload("rfid-alert"),
            f"{BASE}/state": payload("rfid-state"),
            f"{BASE}/controller/status": payload("rfid-controller"),
        }
        for topic, data in forbidden.items():
            await rfid.publish(topic, data, qos=1)
        await rfid.publish(f"{BASE}/dev/rfid-1/event", payload("own-event"), qos=1)
        await rfid.publish(f"{BASE}/dev/rfid-1/status", payload("own-status"), qos=1, retain=True)
        await controller.publish(f"{BASE}/alerts", payload("controller-alert"), qos=1)
        await until(lambda: len(seen.messages) >= 2 and len(public.messages) >= 1, what="markers")
        assert seen.messages == [
            (f"{BASE}/dev/rfid-1/event", payload("own-event")),
            (f"{BASE}/dev/rfid-1/status", payload("own-status")),
        ]
        assert public.messages == [(f"{BASE}/alerts", payload("controller-alert"))]


async def test_a_driver_reads_nothing_but_its_own_cmd_and_status(table: Deployment) -> None:
    port, user, password = who(table, "dev-rfid-1")
    async with (
        client(port, user, password) as rfid,
        client(*who(table, "dev-sensors")) as sensors,
        client(*who(table, "controller")) as controller,
    ):
        # mosquitto 2.0 grants these subscriptions (SUBACK 0) and filters every delivery.
        await rfid.subscribe(f"{BASE}/#", qos=1)
        await rfid.subscribe("#", qos=1)
        await rfid.subscribe(f"{BASE}/dev/+/event", qos=1)
        received: list[tuple[str, bytes]] = []

        async def collect() -> None:
            async for message in rfid.messages:
                assert isinstance(message.payload, bytes)
                received.append((str(message.topic), message.payload))

        reader = asyncio.create_task(collect())
        try:
            await sensors.publish(f"{BASE}/dev/sensors/event", payload("other-device"), qos=1)
            await controller.publish(f"{BASE}/dev/sensors/cmd", payload("other-cmd"), qos=1)
            await controller.publish(f"{BASE}/state", payload("state"), qos=1, retain=True)
            await controller.publish(f"{BASE}/dev/rfid-1/cmd", payload("own-cmd"), qos=1)
            await until(lambda: len(received) >= 1, what="the driver's own command")
            assert received == [(f"{BASE}/dev/rfid-1/cmd", payload("own-cmd"))]
        finally:
            reader.cancel()


async def test_the_controller_reads_every_device_and_input_and_publishes_the_outputs(
    table: Deployment,
) -> None:
    async with (
        listening(*who(table, "controller"), f"{BASE}/dev/+/event", f"{BASE}/input") as (_, seen),
        listening(*who(table, "floor"), f"{BASE}/#") as (_, public),
        listening(*who(table, "dev-sensors"), f"{BASE}/dev/sensors/cmd") as (_, commands),
        client(*who(table, "controller")) as controller,
        client(*who(table, "console")) as console,
    ):
        for device in ("shuffler", "rfid-1", "sensors"):
            async with client(*who(table, f"dev-{device}")) as driver:
                await driver.publish(f"{BASE}/dev/{device}/event", payload(device), qos=1)
        await console.publish(f"{BASE}/input", payload("console-input"), qos=1)
        outputs = ("alerts", "state", "hands", "controller/status")
        for topic in outputs:
            await controller.publish(f"{BASE}/{topic}", payload(topic), qos=1)
        await controller.publish(f"{BASE}/dev/sensors/cmd", payload("lamp"), qos=1)
        await until(lambda: len(seen.messages) >= 4, what="device events and input")
        await until(lambda: len(public.messages) >= 4, what="the outputs on the floor")
        await until(lambda: len(commands.messages) >= 1, what="the command")
        assert [t for t, _ in seen.messages] == [
            f"{BASE}/dev/shuffler/event",
            f"{BASE}/dev/rfid-1/event",
            f"{BASE}/dev/sensors/event",
            f"{BASE}/input",
        ]
        assert public.topics() == [f"{BASE}/{topic}" for topic in outputs]
        assert commands.messages == [(f"{BASE}/dev/sensors/cmd", payload("lamp"))]


@pytest.mark.parametrize("allow_input", [False, True])
async def test_the_floor_reads_the_public_topics_and_sends_input_only_when_allowed(
    tmp_path: Path, allow_input: bool
) -> None:
    extra = ""
    if allow_input:
        # A floor section needs a CA path; no bridge connects in this test (the address is
        # unreachable), only the ACL is exercised.
        extra = (
            '\n[deploy.floor]\nurl = "mqtts://127.0.0.1:1"\n'
            f'ca_file = "{tmp_path / "ca.crt"}"\nallow_input = true\n'
        )
    with deployment(tmp_path, extra=extra) as table:
        async with (
            listening(*who(table, "controller"), f"{BASE}/input") as (_, inputs),
            client(*who(table, "floor")) as floor,
            client(*who(table, "console")) as console,
        ):
            await floor.publish(f"{BASE}/input", payload("floor-ack"), qos=1)
            await floor.publish(f"{BASE}/dev/rfid-1/event", payload("floor-tag"), qos=1)
            await floor.publish(f"{BASE}/state", payload("floor-state"), qos=1)
            await console.publish(f"{BASE}/input", payload("console-marker"), qos=1)
            await until(lambda: payload("console-marker") in inputs.on(f"{BASE}/input"))
            expected = [payload("floor-ack")] if allow_input else []
            assert inputs.on(f"{BASE}/input") == [*expected, payload("console-marker")]


async def test_a_sensor_board_cannot_publish_on_the_readers_topics(table: Deployment) -> None:
    """Its own topic it may use (what it says there the engine judges by its kind: a tag from a
    sensor board is refused, tests/service/test_trust_e2e.py); a reader's it may not."""
    async with (
        listening(*who(table, "controller"), f"{BASE}/dev/#") as (_, seen),
        client(*who(table, "dev-sensors")) as sensors,
    ):
        await sensors.publish(f"{BASE}/dev/rfid-1/event", payload("sensors-as-reader"), qos=1)
        await sensors.publish(f"{BASE}/dev/rfid-1/status", payload("sensors-status"), qos=1, retain=True)
        await sensors.publish(f"{BASE}/dev/sensors/event", payload("own"), qos=1)
        await until(lambda: len(seen.messages) >= 1, what="the board's own event")
        assert seen.messages == [(f"{BASE}/dev/sensors/event", payload("own"))]


async def test_the_shipped_plain_file_allows_no_anonymous_client(tmp_path: Path) -> None:
    """``deploy/mosquitto/table-pc.conf`` as shipped, with the password file and ACL tablectl
    deploy renders (its ``password_file`` and ``acl_file`` lines moved to them, nothing else)."""
    (tmp_path / "render").mkdir()
    with deployment(tmp_path / "render", start=False) as rendered:
        paths = (rendered.out / "mosquitto" / "tablectl.passwd", rendered.out / "mosquitto" / "tablectl.acl")
        (tmp_path / "broker").mkdir()
        with running_mosquitto(tmp_path / "broker", config=TABLE_PC_CONF, auth=paths) as broker:
            for user, password in ((None, None), (f"{TABLE}-dev-sensors", "wrong")):
                with pytest.raises(aiomqtt.MqttCodeError) as refused:
                    async with client(broker.port, user, password):
                        pass
                assert refused.value.rc in (4, 5, 134, 135)
            sensors = (broker.port, f"{TABLE}-dev-sensors", rendered.secret(f"{TABLE}-dev-sensors"))
            controller = (broker.port, f"{TABLE}-controller", rendered.secret(f"{TABLE}-controller"))
            async with listening(*controller, f"{BASE}/dev/#") as (_, seen), client(*sensors) as board:
                await board.publish(f"{BASE}/dev/rfid-1/event", payload("sensors-as-reader"), qos=1)
                await board.publish(f"{BASE}/dev/sensors/event", payload("own"), qos=1)
                await until(lambda: len(seen.messages) >= 1, what="the board's own event")
                assert seen.messages == [(f"{BASE}/dev/sensors/event", payload("own"))]
