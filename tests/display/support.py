"""Helpers of the display tests: a table configuration with a display, hands to play, the DOM."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

from playwright.async_api import Page

from controller.display.server import DealerDisplay
from testing.browser import browser, new_page
from testing.mosquitto import Mosquitto
from tests.engine.scenario import initial_statuses
from tests.service.support import Probe, probe, running_service, write_config

#: A card as the pages draw it (rank, suit symbol) or as a code.
CARD_FACE_RE: Final = re.compile(r"(10|[AKQJ2-9])([♠♥♦♣])")
SYMBOL_TO_SUIT: Final = {"♠": "s", "♥": "h", "♦": "d", "♣": "c"}
#: The first hand of a four-handed table, button on seat 1, up to the first card.
SETUP: Final = ("sit 1 2 3 4", "shuffle A", "shuffle B", "button 1", "blinds")


def display_config(
    directory: Path,
    broker_url: str,
    *,
    port: int = 0,
    table: str = "t1",
    seats: int = 9,
    action_feed: bool = False,
    extra: str = "",
) -> Path:
    """A ``tablectl run`` configuration with ``[display] listen = "127.0.0.1:PORT"`` (``extra``:
    more sections, TOML lines)."""
    path = write_config(directory, broker_url, table=table, seats=seats, action_feed=action_feed)
    path.write_text(path.read_text() + f'\n[display]\nlisten = "127.0.0.1:{port}"\n{extra}')
    return path


def faces_to_codes(text: str) -> set[str]:
    """Every card drawn in ``text`` ("10♦" -> "Td")."""
    return {
        ("T" if rank == "10" else rank) + SYMBOL_TO_SUIT[suit] for rank, suit in CARD_FACE_RE.findall(text)
    }


async def open_display(page: Page, url: str) -> None:
    """Load the dealer's page and wait for its first picture of the table."""
    await page.goto(url)
    await page.wait_for_function("window.dealerDisplay && window.dealerDisplay.views > 0")


@contextlib.asynccontextmanager
async def dealer_screen(
    config: Path, broker: Mosquitto, width: int = 1024, height: int = 600, errors: list[str] | None = None
) -> AsyncIterator[tuple[DealerDisplay, Probe, Page]]:
    """``tablectl run``'s service on ``config`` with its dealer's page open in Chromium at
    ``width`` x ``height``, the devices online: (the display, a probe on the broker, the page)."""
    async with (
        running_service(config) as service,
        probe(broker.port, "t1") as p,
        browser(width, height) as context,
    ):
        await p.status("online")
        assert isinstance(service.display, DealerDisplay)
        page = await new_page(context, errors)
        await open_display(page, service.display.url)
        await p.play(initial_statuses())
        yield service.display, p, page


# Every text the page ever showed, recorded from the first paint (a MutationObserver), so that
# a hole card shown for a moment and replaced is caught too.
RECORD_TEXTS: Final = """
() => {
  window.shownTexts = [];
  const record = (node) => {
    if (node.nodeType === Node.TEXT_NODE) window.shownTexts.push(node.textContent);
    else if (node.nodeType === Node.ELEMENT_NODE) {
      window.shownTexts.push(node.outerHTML);
    }
  };
  record(document.documentElement);
  new MutationObserver((mutations) => {
    for (const mutation of mutations) {
      if (mutation.type === "characterData") record(mutation.target);
      for (const node of mutation.addedNodes) record(node);
      if (mutation.type === "attributes") record(mutation.target);
    }
  }).observe(document.documentElement,
    { subtree: true, childList: true, characterData: true, attributes: true });
}
"""
