"""Two brokers bridged with the rendered files: the table PC's and the floor's, over TLS.

The floor broker runs the rendered floor share (the bridge's password line and ACL block) with a
TLS listener whose certificate a test CA signed; an administrator account of the test reads
everything there. The table's bridge trusts the CA named by ``[deploy.floor] ca_file``.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path

from contract.models import parse_alert
from controller.deploy.passwords import password_file
from tests.deploy.certs import Authority, make_ca, make_server_cert
from tests.deploy.support import (
    TABLE,
    BrokerProcess,
    Deployment,
    Seen,
    client,
    deployment,
    free_port,
    install,
    install_dir,
    listening,
    publish_as_devices,
    until,
)
from tests.service.support import new_table, running_service, script

BASE = f"holdem/{TABLE}"
PUBLIC = {f"{BASE}/{t}" for t in ("alerts", "state", "hands", "controller/status")}
ADMIN, ADMIN_SECRET = "floor-admin", "admin-secret-of-the-test"
HAND = ("sit 1 2 3", "shuffle A", "shuffle B", "button 1", "blinds", "new_hand", "deal 2 3:up 1 2 3 1")


@contextlib.contextmanager
def floor_broker(tmp_path: Path, ca: Authority, table: Deployment, port: int) -> Iterator[BrokerProcess]:
    """The floor's mosquitto: TLS listener, the rendered floor files plus a test administrator."""
    with install_dir() as etc:
        cert, key = make_server_cert(tmp_path, ca, "floor")
        rendered = table.out / "floor"
        passwd = etc / "passwd.src"
        passwd.write_text(
            (rendered / f"tablectl-{TABLE}.passwd").read_text() + password_file({ADMIN: ADMIN_SECRET})
        )
        acl = etc / "acl.src"
        acl.write_text(
            (rendered / f"tablectl-{TABLE}.acl").read_text()
            + f"\nuser {ADMIN}\ntopic read #\ntopic write {BASE}/input\n"
        )
        conf = etc / "floor.conf.src"
        conf.write_text(
            "per_listener_settings false\nallow_anonymous false\n"
            f"password_file {install(passwd, etc / 'passwd')}\nacl_file {install(acl, etc / 'acl')}\n"
            f"listener {port} 127.0.0.1\ncertfile {install(cert, etc / 'floor.crt')}\n"
            f"keyfile {install(key, etc / 'floor.key')}\n"
            "log_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\n"
            "log_type information\n"
        )
        broker = BrokerProcess(install(conf, etc / "floor.conf"), port, tmp_path / "floor.log")
        broker.start()
        try:
            yield broker
        finally:
            broker.stop()


def floor_section(port: int, ca_cert: Path) -> Callable[[Path], str]:
    def extra(etc: Path) -> str:
        return (
            f'\n[deploy.floor]\nurl = "mqtts://127.0.0.1:{port}"\n'
            f'ca_file = "{install(ca_cert, etc / "floor-ca.crt")}"\nallow_input = true\n'
        )

    return extra


def trusting(ca: Authority) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca.cert))


ACK = b'{"v":1,"ts":"2026-11-30T20:00:00Z","type":"key","key":"ack","seat":null}'


def acknowledged(seen: Seen, alert_id: str) -> bool:
    alerts = [parse_alert(f"{BASE}/alerts", p) for p in seen.on(f"{BASE}/alerts")]
    return any(a.id == alert_id and a.status == "acknowledged" for a in alerts)


async def test_public_topics_reach_the_floor_and_dev_never_does(tmp_path: Path) -> None:
    ca = make_ca(tmp_path, "floor-ca")
    floor_port = free_port()
    with (
        deployment(tmp_path, extra=floor_section(floor_port, ca.cert), start=False) as table,
        floor_broker(tmp_path, ca, table, floor_port) as floor,
    ):
        table.start_broker()
        async with (
            listening(floor.port, ADMIN, ADMIN_SECRET, "#", tls=trusting(ca)) as (_, seen),
            running_service(table.config),
        ):
            await until(
                lambda: f"{BASE}/controller/status" in seen.topics(),
                within=20,
                what="the controller's status on the floor, over the bridge",
            )
            await publish_as_devices(table, script(new_table(), *HAND))
            await until(
                lambda: any(b'"exposed_card"' in p for p in seen.on(f"{BASE}/alerts")),
                what="the exposure alert on the floor",
            )
            alert = parse_alert(f"{BASE}/alerts", seen.on(f"{BASE}/alerts")[0])
            # Acknowledged from the floor: the input crosses the bridge the other way.
            async with client(floor.port, ADMIN, ADMIN_SECRET, tls_context=trusting(ca)) as admin:
                await admin.publish(f"{BASE}/input", ACK, qos=1)
            await until(lambda: acknowledged(seen, alert.id), what="the floor's acknowledgement")
        assert set(seen.topics()) <= PUBLIC | {f"{BASE}/input"}
        assert f"{BASE}/state" in seen.topics()
        assert not any("/dev/" in topic for topic in seen.topics())


async def test_a_bridge_that_does_not_trust_the_floor_certificate_is_refused(tmp_path: Path) -> None:
    ca = make_ca(tmp_path, "floor-ca")
    stranger = make_ca(tmp_path, "some-other-ca")
    floor_port = free_port()
    with (
        deployment(tmp_path, extra=floor_section(floor_port, stranger.cert), start=False) as table,
        floor_broker(tmp_path, ca, table, floor_port) as floor,
    ):
        broker = table.start_broker()
        async with (
            listening(floor.port, ADMIN, ADMIN_SECRET, "#", tls=trusting(ca)) as (_, seen),
            listening(
                table.port, f"{TABLE}-floor", table.secret(f"{TABLE}-floor"), f"{BASE}/controller/status"
            ) as (_, local),
            running_service(table.config),
        ):
            await until(lambda: bool(local.messages), what="the controller online on the table PC")
            failures = broker.log.count("certificate verify failed")
            # The next attempt comes after the controller's retained `online`: had the bridge
            # connected, the floor would have it.
            await until(
                lambda: broker.log.count("certificate verify failed") > failures,
                within=70,
                what="another refused TLS handshake of the bridge",
            )
        assert seen.messages == []
