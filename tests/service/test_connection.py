"""Broker connection edge cases: no broker at all, and a TLS broker (``mqtts://`` + ``[mqtt.tls]``)."""

from __future__ import annotations

import asyncio
import shutil
import signal
import ssl
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiomqtt
import pytest

from contract.models import FaultEvent, parse_alert, parse_status
from contract.topics import Topics
from testing.mosquitto import free_port
from tests.service.conftest import StartService
from tests.service.support import now, until, write_config


async def test_sigterm_while_no_broker_answers_exits_cleanly(
    tmp_path: Path, start_service: StartService
) -> None:
    config = write_config(tmp_path, f"mqtt://127.0.0.1:{free_port()}")
    service = start_service(config)
    await until(lambda: "reconnecting in" in service.log, what="a failed connection attempt")
    service.signal(signal.SIGTERM)
    assert await asyncio.to_thread(service.wait) == 0
    assert "Connection refused" in service.log
    assert "Traceback" not in service.log


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


@pytest.fixture
def tls_broker(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A mosquitto with a TLS listener on 127.0.0.1 (its own CA); yields (port, CA file)."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test certificates")
    # mosquitto started as root reads the certificates as its own user after dropping root:
    # they live in a directory anyone may read (pytest's tmp_path is private to its user).
    pki = Path(tempfile.mkdtemp(prefix="tablectl-pki-"))
    pki.chmod(0o755)
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        cwd=pki,
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        cwd=pki,
    )
    (pki / "san.ext").write_text("subjectAltName = IP:127.0.0.1\n")
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "server.pem",
        cwd=pki,
    )
    for file in pki.iterdir():
        file.chmod(0o644)
    port = free_port()
    conf = tmp_path / "tls.conf"
    conf.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\n"
        f"cafile {pki / 'ca.pem'}\ncertfile {pki / 'server.pem'}\nkeyfile {pki / 'server.key'}\n"
    )
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    log = (tmp_path / "tls-mosquitto.log").open("ab")
    broker = subprocess.Popen([binary, "-c", str(conf)], stdout=log, stderr=log)
    try:
        yield port, pki / "ca.pem"
    finally:
        broker.terminate()
        broker.wait(5)
        shutil.rmtree(pki, ignore_errors=True)


async def test_service_over_tls(
    tls_broker: tuple[int, Path], tmp_path: Path, start_service: StartService
) -> None:
    port, ca_file = tls_broker
    config = write_config(tmp_path, f"mqtts://127.0.0.1:{port}")
    config.write_text(config.read_text().replace("[decks]", f'[mqtt.tls]\nca_file = "{ca_file}"\n\n[decks]'))
    topics = Topics("holdem", "t1")
    start_service(config)
    context = ssl.create_default_context(cafile=str(ca_file))
    client = aiomqtt.Client("127.0.0.1", port, tls_context=context, timeout=5)
    for _ in range(100):  # the broker may still be starting
        try:
            await client.__aenter__()
            break
        except aiomqtt.MqttError:
            await asyncio.sleep(0.05)
    else:
        pytest.fail("the TLS broker did not answer")
    try:
        await client.subscribe(f"{topics.base}/#", qos=1)

        async def first(topic: str, wanted: str) -> None:
            async for message in client.messages:
                if str(message.topic) != topic:
                    continue
                assert isinstance(message.payload, bytes)
                if topic == topics.controller_status:
                    if parse_status(topic, message.payload).state == wanted:
                        return
                elif parse_alert(topic, message.payload).code == wanted:
                    return

        await asyncio.wait_for(first(topics.controller_status, "online"), 10)
        fault = FaultEvent(seq=1, ts=now(), code="jam", text="jam")
        await client.publish(topics.device_event("shoe"), fault.to_json(), qos=1)
        await asyncio.wait_for(first(topics.alerts, "device_fault"), 10)
    finally:
        await client.__aexit__(None, None, None)
