"""The transport registry and the null-modem cable: URLs, splitting, delays, drops, corruption."""

from __future__ import annotations

import asyncio

import pytest

from drivers.errors import DeviceLost, DeviceUnavailable
from drivers.transport import Transport, open_transport, scheme_of
from drivers.transport.nullmodem import LineNoise, NullModemPort, null_modem_pair


def test_a_url_names_its_transport() -> None:
    assert scheme_of("/dev/ttyUSB0") == "serial"
    assert scheme_of("serial:///dev/ttyUSB0") == "serial"
    assert scheme_of("socket://host:4000") == "socket"
    assert scheme_of("usb:1209:7ab1") == "usb"
    assert scheme_of("nullmodem:shuffler-1") == "nullmodem"


async def test_unknown_schemes_and_missing_devices_are_unavailable_with_the_url_named() -> None:
    with pytest.raises(DeviceUnavailable, match="gopher://x: no transport for scheme 'gopher'"):
        await open_transport("gopher://x")
    with pytest.raises(DeviceUnavailable, match="nullmodem:nobody: nothing plugged in"):
        await open_transport("nullmodem:nobody")
    with pytest.raises(DeviceUnavailable, match="vendor and product ids"):
        await open_transport("sim:/run/board.sock")
    with pytest.raises(DeviceUnavailable, match="cannot open /nonexistent/tty"):
        await open_transport("/nonexistent/tty")


async def read_all(end: Transport, count: int) -> bytes:
    data = b""
    while len(data) < count:
        data += await asyncio.wait_for(end.read(), 2)
    return data


async def test_a_perfect_line_carries_every_byte_both_ways() -> None:
    a, b = null_modem_pair()
    await a.write(b"hello")
    await b.write(b"world")
    assert await read_all(b, 5) == b"hello"
    assert await read_all(a, 5) == b"world"


async def test_a_line_splits_and_delays_in_order() -> None:
    a, b = null_modem_pair(LineNoise(chunk=3, delay_s=0.01))
    await a.write(b"0123456789")
    first = await asyncio.wait_for(b.read(), 2)
    assert first == b"012"  # three bytes at a time
    assert first + await read_all(b, 7) == b"0123456789"


async def test_a_line_drops_and_corrupts_chunks_from_a_seeded_rng() -> None:
    a, b = null_modem_pair(LineNoise(chunk=1, drop_rate=0.2, corrupt_rate=0.2, seed=5))
    sent = bytes(range(200))
    await a.write(sent)
    await a.close()
    received = b""

    async def until_hung_up() -> None:
        nonlocal received
        while True:
            received += await asyncio.wait_for(b.read(), 2)

    with pytest.raises(DeviceLost, match="hung up"):
        await until_hung_up()
    assert 100 < len(received) < 200  # about a fifth dropped
    assert received != sent[: len(received)]  # and some of the rest damaged


async def test_a_port_is_opened_by_url_and_unplugging_hangs_up() -> None:
    heard: list[bytes] = []
    port = NullModemPort("test-port", heard.append)
    port.plug()
    try:
        host = await open_transport(port.url)
        assert not host.packets
        assert port.write(b"status")
        assert await read_all(host, 6) == b"status"
        await host.write(b"cmd")
        for _ in range(100):
            if heard:
                break
            await asyncio.sleep(0.01)
        assert heard == [b"cmd"]
        port.unplug()
        with pytest.raises(DeviceLost):
            await asyncio.wait_for(host.read(), 2)
        with pytest.raises(DeviceUnavailable):
            await open_transport(port.url)
        assert not port.write(b"to nobody")
        assert port.bytes_dropped == len(b"to nobody")
    finally:
        port.close()
