"""The demo's child processes: the embedded broker and the engine service each in their own.

Both must serve like their in-process counterparts, listen on loopback only, stop when told, and
never outlive the demo, however it ends (their standard input closes when the parent dies).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import aiomqtt
import pytest

from controller.broker.embedded import LOOPBACK, BrokerError
from controller.demo.broker_process import BrokerProcess

REPO = Path(__file__).resolve().parents[2]


def _gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its parent counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state


def _wait_gone(pid: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not _gone(pid):
        assert time.monotonic() < deadline, f"process {pid} is still running"
        time.sleep(0.05)


def _listening_addresses(port: int) -> set[str]:
    """The local addresses (dotted quads) of the IPv4 sockets listening on ``port``."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
            found.add(".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return found


async def test_the_broker_process_relays_retained_messages_on_loopback_only() -> None:
    async with BrokerProcess() as broker:
        assert broker.port is not None
        assert broker.pid is not None
        assert broker.url == f"mqtt://{LOOPBACK}:{broker.port}"
        assert _listening_addresses(broker.port) == {LOOPBACK}
        async with aiomqtt.Client(
            LOOPBACK, broker.port, protocol=aiomqtt.ProtocolVersion.V311, identifier="pub"
        ) as publisher:
            await publisher.publish("holdem/t1/state", b'{"phase":"idle"}', qos=1, retain=True)
        async with aiomqtt.Client(
            LOOPBACK, broker.port, protocol=aiomqtt.ProtocolVersion.V311, identifier="sub"
        ) as subscriber:
            await subscriber.subscribe("holdem/t1/#", qos=1)
            async with asyncio.timeout(5):
                async for message in subscriber.messages:
                    assert message.payload == b'{"phase":"idle"}'
                    assert message.retain
                    break
        pid = broker.pid
    assert _gone(pid)  # stop() waited for it
    with pytest.raises(BrokerError, match="not running"):
        _ = broker.url


async def test_a_busy_port_is_a_clear_error_from_the_broker_process() -> None:
    async with BrokerProcess() as first:
        taken = first.port or 0
        with pytest.raises(BrokerError, match=f"{LOOPBACK}:{taken}"):
            await BrokerProcess(taken).start()


PARENT = textwrap.dedent(
    """
    import asyncio, os, sys
    from controller.demo.broker_process import BrokerProcess
    from controller.demo.service_process import ServiceProcess
    from controller.demo.setup import demo_config
    from pathlib import Path

    async def main():
        broker = BrokerProcess()
        await broker.start()
        config = demo_config(seats=6, profile="roberts", broker_url=broker.url,
                             workdir=Path(sys.argv[1]))
        config = config.model_copy(update={"devices": []})
        service = ServiceProcess(config)
        await service.start()
        drivers = ServiceProcess(config, role="drivers")
        await drivers.start()
        print(broker.pid, service.pid, drivers.pid, flush=True)
        sys.stdin.readline()
        os._exit(0)  # dies without stopping its children

    asyncio.run(main())
    """
)


def test_the_children_do_not_outlive_a_parent_that_dies(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdin is not None
    assert parent.stdout is not None
    pids = [int(x) for x in parent.stdout.readline().split()]
    assert len(pids) == 3
    for pid in pids:
        assert not _gone(pid)
    parent.stdin.write("\n")
    parent.stdin.flush()
    assert parent.wait(timeout=10) == 0
    for pid in pids:
        _wait_gone(pid)


def test_the_service_process_refuses_a_broken_configuration(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "controller.demo.service_process"],
        cwd=REPO,
        input='{"table": {"id": "t1"}}\n',
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ},
    )
    assert result.returncode == 1
    assert "the demo's configuration:" in result.stderr
    assert "Traceback" not in result.stderr
