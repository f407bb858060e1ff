"""The broker as the table PC runs it (``deploy/mosquitto/table-pc.conf``): it starts as shipped,
keeps a persistent client's queue across a SIGKILL, and queues far more than mosquitto's stock
1,000 messages for a controller that is away."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiomqtt

from config.models import MqttSection
from controller.deploy.mosquitto import BrokerPaths
from link.client import make_client
from testing.mosquitto import TABLE_PC_CONF, running_mosquitto

TOPIC = "holdem/tpc/dev/rfid-1/event"


def settings_of(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        words = line.split("#", 1)[0].split(maxsplit=1)
        if len(words) == 2:
            out[words[0]] = words[1]
    return out


def test_the_shipped_file_says_what_the_table_pc_needs() -> None:
    shipped = settings_of(TABLE_PC_CONF.read_text(encoding="utf-8"))
    assert shipped["set_tcp_nodelay"] == "true"
    assert shipped["persistence"] == "true"
    assert int(shipped["autosave_interval"]) <= 5
    assert shipped["autosave_on_changes"] == "false"
    assert int(shipped["max_queued_messages"]) >= 100_000
    assert int(shipped["max_queued_bytes"]) >= 100_000 * 165  # a tag event is 165 bytes at most
    assert shipped["listener"] == "1883 127.0.0.1"
    # Nobody anonymous, the identities and ACL tablectl deploy renders where it puts them.
    assert shipped["allow_anonymous"] == "false"
    paths = BrokerPaths(config_dir=Path("/etc/mosquitto"), state_dir=Path("/var/lib/mosquitto"))
    assert shipped["password_file"] == str(paths.passwd)
    assert shipped["acl_file"] == str(paths.acl)


async def subscribe_and_leave(port: int, identifier: str) -> None:
    client = make_client(MqttSection(url=f"mqtt://127.0.0.1:{port}"), identifier, persistent=True)
    async with client:
        await client.subscribe(TOPIC, qos=1)


async def publish(port: int, count: int) -> None:
    async with make_client(MqttSection(url=f"mqtt://127.0.0.1:{port}"), "tpc-driver") as client:
        for start in range(0, count, 100):
            batch = range(start, min(count, start + 100))
            await asyncio.gather(*(client.publish(TOPIC, b"%d" % n, qos=1) for n in batch))


async def collect(port: int, identifier: str, count: int, within: float) -> list[bytes]:
    got: list[bytes] = []
    client = make_client(MqttSection(url=f"mqtt://127.0.0.1:{port}"), identifier, persistent=True)
    async with client, asyncio.timeout(within):
        async for message in client.messages:
            assert isinstance(message.payload, bytes)
            got.append(message.payload)
            if len(got) == count:
                break
    return got


def saved_after(path: Path, moment: float) -> bool:
    return path.exists() and path.stat().st_mtime > moment


async def test_a_killed_broker_comes_back_with_the_queue_of_an_absent_controller(tmp_path: Path) -> None:
    with running_mosquitto(tmp_path, config=TABLE_PC_CONF) as broker:
        await subscribe_and_leave(broker.port, "tpc-controller")
        # The controller is away: 5,000 events wait for it (stock mosquitto keeps 1,000).
        await publish(broker.port, 5000)
        published = time.time()
        database = tmp_path / "mosquitto.db"
        deadline = time.monotonic() + 10
        while not saved_after(database, published):  # the next autosave (every 2 s)
            assert time.monotonic() < deadline, "no autosave within 10 s"
            await asyncio.sleep(0.1)
        await asyncio.to_thread(broker.kill)
        await asyncio.to_thread(broker.start)
        got = await collect(broker.port, "tpc-controller", 5000, within=20)
        assert sorted(int(p) for p in got) == list(range(5000))


async def test_the_conf_is_run_with_only_the_places_replaced(tmp_path: Path) -> None:
    with running_mosquitto(tmp_path, config=TABLE_PC_CONF) as broker:
        text = (tmp_path / "mosquitto.conf").read_text(encoding="utf-8")
        ran = settings_of(text)
        shipped = settings_of(TABLE_PC_CONF.read_text(encoding="utf-8"))
        assert ran["listener"] == f"{broker.port} 127.0.0.1"
        assert ran["persistence_location"] == f"{tmp_path}/"
        for key in (
            "set_tcp_nodelay",
            "persistence",
            "autosave_interval",
            "max_queued_messages",
            "max_queued_bytes",
            "max_inflight_messages",
            "persistent_client_expiration",
        ):
            assert ran[key] == shipped[key]
        async with make_client(MqttSection(url=broker.url), "tpc-probe") as client:
            await client.publish("holdem/tpc/probe", b"x", qos=1)
        assert isinstance(client, aiomqtt.Client)
