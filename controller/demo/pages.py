"""The demo's web pages: the dealer's display (served by the engine service) and a floor console.

By default both listen on free loopback ports, printed at start; ``--web`` puts them on fixed
ports (:data:`DEALER_PORT`, :data:`FLOOR_PORT`) and opens them in the desktop's browser.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import webbrowser
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from config.models import MqttSection

log = logging.getLogger(__name__)

HOST: Final = "127.0.0.1"
#: ``tablectl demo --web``: the dealer's display and the floor console on these ports.
DEALER_PORT: Final = 8080
FLOOR_PORT: Final = 8090


class PagesError(RuntimeError):
    """A page cannot be served (its port is taken, ...)."""


@dataclass(frozen=True)
class Pages:
    """Where the demo's pages are."""

    dealer: str
    floor: str
    table: str  # the demo table's page on the floor console


def listen_addresses(web: bool) -> tuple[str, str]:
    """``host:port`` of the dealer's display and of the floor console.

    The dealer's display is served by the table controller in its own process, so its port is
    chosen here, free at the time (the floor console, in this process, binds any free port)."""
    if web:
        return f"{HOST}:{DEALER_PORT}", f"{HOST}:{FLOOR_PORT}"
    return f"{HOST}:{free_port()}", f"{HOST}:0"


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


async def start_floor(
    stack: AsyncExitStack, dealer: str, broker_url: str, workdir: Path, listen: str, table: str
) -> Pages:
    """Start the floor console for the demo's broker; it stops when ``stack`` unwinds."""
    from config.models import parse_listen
    from controller.floor.console import FloorConsole
    from controller.floor.store import StoreError
    from controller.web.server import WebServerError

    host, port = parse_listen(listen)
    console = FloorConsole(MqttSection(url=broker_url), workdir / "floor.sqlite")
    try:
        await console.start(host, port)
    except (WebServerError, StoreError) as error:
        raise PagesError(f"floor console: {error}") from None
    stack.push_async_callback(console.stop)
    return Pages(dealer=dealer, floor=console.url, table=f"{console.url}tables/{table}")


async def open_in_browser(pages: Pages) -> bool:
    """Open both pages in the desktop's browser; False where there is no desktop."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False  # a text browser would take the terminal over
    opened = False
    for url in (pages.dealer, pages.floor):
        opened = await asyncio.to_thread(webbrowser.open_new_tab, url) or opened
    return opened
