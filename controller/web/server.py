"""A Starlette app served by uvicorn inside the running event loop, on ``host:port``.

The program that embeds the server (``tablectl run``, ``tablectl floor``, the demo) owns its
signals and its lifetime: uvicorn's own signal capture is turned off, and the server stops when
told. The socket is bound before serving, so a port taken or a bad address is a clear error at
start-up, and port 0 resolves to the port the system picked.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import Final

import uvicorn
from starlette.types import ASGIApp

#: How long open responses (live update streams) get to finish when the server stops.
GRACEFUL_S: Final = 2
STOP_TIMEOUT_S: Final = 5.0


class WebServerError(RuntimeError):
    """The server cannot listen where it was asked to."""


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: the embedding program handles SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def url_of(host: str, port: int) -> str:
    """``http://HOST:PORT/`` (IPv6 addresses in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def bind(host: str, port: int) -> socket.socket:
    """A bound, non-blocking TCP socket for ``host:port`` (``SO_REUSEADDR``: a restart at once
    after a crash finds the port free although old connections linger in TIME_WAIT)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise WebServerError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as error:
        sock.close()
        raise WebServerError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    sock.setblocking(False)
    return sock


class WebServer:
    """One ASGI app on one address; ``await start(host, port)`` returns its URL."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.url = ""
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("the server is not started")
        port: int = self._socket.getsockname()[1]
        return port

    async def start(self, host: str, port: int) -> str:
        """Bind, serve in a task of the running loop, and return ``http://HOST:PORT/``."""
        sock = bind(host, port)
        config = uvicorn.Config(
            self.app,
            log_config=None,  # the program's logging stays as it is
            access_log=False,
            lifespan="off",
            http="h11",
            ws="none",
            server_header=False,
            timeout_graceful_shutdown=GRACEFUL_S,
        )
        server = _EmbeddedServer(config)
        self._server, self._socket = server, sock
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name="web-server")
        while not server.started:
            if self._task.done():
                self._task.result()  # its error, if it failed
                raise WebServerError(f"cannot serve on {host}:{port}")
            await asyncio.sleep(0.005)
        self.url = url_of(host, self.port)
        return self.url

    async def stop(self) -> None:
        """Stop accepting, let open responses finish (briefly), and close."""
        server, task = self._server, self._task
        if server is None or task is None:
            return
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT_S)
        except TimeoutError:
            server.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        finally:
            if self._socket is not None:
                self._socket.close()
            self._server = self._task = None
