"""A restart behind a broker's backlog: the service takes what the broker sends from the moment
the connection is up, and says ``online`` without waiting for the SUBACK (issue 20, point 1).

A broker sends a persistent session's queued messages before the SUBACK of the new
subscriptions; with a long backlog the SUBACK comes late. A proxy between the service and
mosquitto holds the SUBACK back for as long as the test wants (``testing.mqtt_proxy``), which is
what hundreds of thousands of queued messages do on a real table PC.
"""

from __future__ import annotations

import re
import socket
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from contract.models import FaultEvent, Status
from link.aiomqtt_adapter import socket_of
from testing.mosquitto import Mosquitto
from testing.mqtt_proxy import MqttProxy
from tests.service.conftest import StartService
from tests.service.support import probe, running_service, until, write_config


async def test_restart_behind_a_backlog_comes_online_and_drains_before_the_suback(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    proxy = MqttProxy(mosquitto.port)
    await proxy.start()
    try:
        config = write_config(tmp_path, proxy.url)
        async with probe(mosquitto.port, "t1") as p:
            service = start_service(config)
            await p.status("online")  # a new session: subscribed (its SUBACK passed)
            service.stop()
            mark = len(p.messages)
            await p.status("offline", after=mark)

            # The backlog: events queued for the controller's session while it is away.
            for seq, device in enumerate(("shuffler", "rfid-1", "sensors"), start=1):
                event = FaultEvent(seq=seq, ts=datetime.now(UTC), code="jam", text="backlog")
                await p.publish(p.topics.device_event(device), event.to_json())
            proxy.hold_subacks = True
            mark = len(p.messages)
            start_service(config)

            await p.status("online", after=mark)
            await p.wait_for(lambda m: m.topic == p.topics.alerts and b'"sensors"' in m.payload, after=mark)
            raised = [a.device for a in p.alerts() if a.code == "device_fault" and a.status == "raised"]
            assert raised == ["shuffler", "rfid-1", "sensors"]  # in the order queued
            assert proxy.held, "the SUBACK was still held back: all of it happened before it"

            proxy.release()
            # Served after the SUBACK too, and never reconnected meanwhile.
            mark = len(p.messages)
            event = FaultEvent(seq=1, ts=datetime.now(UTC), code="jam", text="live")
            await p.publish(p.topics.device_event("later"), event.to_json())
            assert (await p.alert("device_fault", after=mark)).device == "later"
        log = (tmp_path / "service.log").read_text()
        assert log.count("connected to") == 2, log
    finally:
        await proxy.stop()


async def test_the_services_socket_keeps_tcp_nodelay_under_the_read_ahead(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    # The intake reads paho's socket ahead through a wrapper; aiomqtt sets TCP_NODELAY only on a
    # plain socket after connecting, so the wrapper must set it itself (without it each alert
    # waited ~40 ms for Nagle's algorithm).
    config = write_config(tmp_path, mosquitto.url)
    async with probe(mosquitto.port, "t1") as p, running_service(config) as service:
        await p.status("online")
        assert service.acks.client is not None
        sock = socket_of(service.acks.client)
        assert sock is not None
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1


async def test_a_restart_owed_hundreds_of_outputs_comes_online_while_the_brokers_pubacks_wait(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    """Behind a backlog the broker's PUBACKs come after the backlog. The status of a restart
    goes after the newest state, behind the outputs the journal says are owed: it waited for
    the first batch's PUBACKs (a batch was 100 publishes), and in paho's queue for PUBACKs
    (paho kept 200 in flight), until the backlog was drained. The proxy holds the PUBACKs for
    as long as the test wants: ``online`` must come all the same."""
    proxy = MqttProxy(mosquitto.port)
    await proxy.start()
    try:
        config = write_config(tmp_path, proxy.url)
        journal = tmp_path / "journal.jsonl"
        async with probe(mosquitto.port, "t1") as p:
            service = start_service(config)
            await p.status("online")
            # 300 alert changes whose PUBACKs never reach the service (a fault raised and
            # resolved, 30 devices five times): not journaled as published, owed at the restart.
            proxy.hold_pubacks = True
            received = journal.read_text().count('"kind":"received"')
            for index in range(150):
                device = f"dev-{index % 30}"
                event = FaultEvent(seq=index // 30 + 1, ts=datetime.now(UTC), code="jam", text="owed")
                await p.publish(p.topics.device_event(device), event.to_json())
                online = Status(state="online", ts=datetime.now(UTC), session=1)
                await p.publish(p.topics.device_status(device), online.to_json())
            await until(
                lambda: journal.read_text().count('"kind":"received"') >= received + 300,
                what="the 300 messages journaled",
            )
            service.kill()
            assert proxy.held, "no PUBACK was held back"
            # Restarted, the broker's PUBACKs still held: online comes all the same.
            mark = len(p.messages)
            start_service(config)
            await p.status("online", after=mark)
            proxy.release()
        log = (tmp_path / "service.log").read_text()
        owed = [int(m) for m in re.findall(r"(\d+) outputs still to publish", log)]
        # More than paho kept in flight (200) and than a batch (100) before the status.
        assert owed, log[-2000:]
        assert owed[-1] > 200, owed
    finally:
        await proxy.stop()


async def test_what_a_lost_connection_left_unacknowledged_is_published_again_once(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    """The service publishes again, in order, what a lost connection left without PUBACK (its
    flights); paho must not send its own copies as well at the next CONNACK (it keeps every
    QoS 1 publish in flight for that): each alert would reach the broker three times, and a
    status of the lost connection (``online``) could come before a new session's SUBACK."""
    proxy = MqttProxy(mosquitto.port)
    await proxy.start()
    try:
        config = write_config(tmp_path, proxy.url)
        async with probe(mosquitto.port, "t1") as p:
            start_service(config)
            await p.status("online")
            # Five alerts that reach the broker, their PUBACKs held: unacknowledged.
            proxy.hold_pubacks = True
            mark = len(p.messages)
            for seq in range(1, 6):
                event = FaultEvent(seq=seq, ts=datetime.now(UTC), code="jam", text="unacknowledged")
                await p.publish(p.topics.device_event(f"dev-{seq}"), event.to_json())
            await p.wait_for(lambda m: m.topic == p.topics.alerts and b'"dev-5"' in m.payload, after=mark)
            assert proxy.held, "no PUBACK was held back"
            await proxy.cut()
            await p.status("online", after=len(p.messages))
            # A later alert: what the reconnection sent again came before it.
            event = FaultEvent(seq=1, ts=datetime.now(UTC), code="jam", text="after")
            await p.publish(p.topics.device_event("later"), event.to_json())
            await p.wait_for(lambda m: m.topic == p.topics.alerts and b'"later"' in m.payload, after=mark)
            copies = Counter(m.payload for m in p.messages[mark:] if m.topic == p.topics.alerts)
        unacknowledged = [copies[payload] for payload in copies if b'"later"' not in payload]
        # Each once before the cut, once again by the service: at least once, never thrice.
        assert len(unacknowledged) == 5, copies
        assert set(unacknowledged) <= {1, 2}, copies
    finally:
        await proxy.stop()
