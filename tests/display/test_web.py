"""The web stack's parts: the live update channel and the embedded server."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.error
import urllib.request

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from controller.web.channel import MAX_PENDING, Channel, event_stream
from controller.web.server import WebServer, WebServerError, bind, url_of


async def test_a_subscriber_gets_the_first_picture_then_only_the_latest_text_per_key() -> None:
    channel = Channel()
    sub = channel.subscribe(first=[("view", "1")])
    channel.publish("view", "2")
    channel.publish("t:a", "a1")
    channel.publish("view", "3")
    assert await sub.next(1.0) == ["a1", "3"]
    assert await sub.next(0.01) == []  # nothing new: a heartbeat turn
    channel.close()
    assert await sub.next(1.0) is None
    assert len(channel) == 0


async def test_a_filtered_subscriber_and_one_that_falls_too_far_behind() -> None:
    channel = Channel()
    only_a = channel.subscribe(accepts=lambda key: key.startswith("a:"))
    slow = channel.subscribe()
    channel.publish("a:1", "x")
    channel.publish("b:1", "y")
    assert await only_a.next(1.0) == ["x"]
    for n in range(MAX_PENDING + 1):
        channel.publish(f"k{n}", "z")
    assert slow.closed
    assert await slow.next(1.0) is None
    assert len(channel) == 1


async def _get(url: str) -> tuple[int, str]:
    def get() -> tuple[int, str]:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, ""

    return await asyncio.to_thread(get)


async def test_port_0_serves_on_the_port_picked_and_a_taken_port_is_an_error() -> None:
    async def hello(request: Request) -> Response:
        return PlainTextResponse("hello")

    server = WebServer(Starlette(routes=[Route("/", hello)]))
    url = await server.start("127.0.0.1", 0)
    try:
        assert url == f"http://127.0.0.1:{server.port}/"
        assert await _get(url) == (200, "hello")
        with pytest.raises(WebServerError, match=f"cannot listen on 127.0.0.1:{server.port}"):
            bind("127.0.0.1", server.port)
    finally:
        await server.stop()
    with pytest.raises(WebServerError, match=r"cannot listen on no\.such\.host\.invalid:80"):
        bind("no.such.host.invalid", 80)
    assert url_of("::1", 8080) == "http://[::1]:8080/"


async def test_stopping_the_server_ends_open_live_streams_at_once() -> None:
    channel = Channel()

    async def events(request: Request) -> Response:
        return event_stream(channel.subscribe(first=[("view", '{"n":1}')]))

    server = WebServer(Starlette(routes=[Route("/events", events)]))
    url = await server.start("127.0.0.1", 0)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    received = b""
    while b'data: [{"n":1}]' not in received:
        received += await asyncio.wait_for(reader.read(4096), 5)
    assert b"text/event-stream" in received
    assert b"retry: 1000" in received
    loop = asyncio.get_running_loop()
    started = loop.time()
    channel.close()
    await server.stop()
    assert loop.time() - started < 1.5
    assert url
    with contextlib.suppress(ConnectionError):
        rest = await asyncio.wait_for(reader.read(), 5)
        assert b"update" not in rest
    writer.close()
