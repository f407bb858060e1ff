"""The session on the dealer's page (real Chromium, real service, real mosquitto): the last hands
announced and a tournament's level with its time left, counted down by the page."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import BrowserContext, expect

from contract.models import KeyInput, LevelStartInput
from testing.browser import new_page
from testing.mosquitto import Mosquitto
from tests.display.support import display_config, open_display
from tests.service.support import now, probe, running_service

LEVELS = """
[stakes]
small_blind = 1
big_blind = 2

[[stakes.levels]]
small_blind = 1
big_blind = 2
minutes = 20

[[stakes.levels]]
small_blind = 2
big_blind = 4
ante = 1
minutes = 20
"""


async def test_the_bar_shows_the_hands_left_and_the_level_counting_down(
    mosquitto: Mosquitto, tmp_path: Path, chromium: BrowserContext
) -> None:
    config = display_config(tmp_path, mosquitto.url, extra=LEVELS)
    errors: list[str] = []
    async with running_service(config) as service, probe(mosquitto.port, "t1") as p:
        await p.status("online")
        assert service.display is not None
        page = await new_page(chromium, errors)
        await open_display(page, service.display.url)
        await expect(page.locator("#level")).to_be_hidden()  # no clock yet: nothing shown
        await expect(page.locator("#hands-left")).to_be_hidden()

        await p.send(p.topics.input, LevelStartInput(ts=now()))
        level = page.locator("#level")
        await expect(level).to_have_text(re.compile(r"^Level 1 · 1/2 · (19:[0-5]\d|20:00) left$"))
        first = await level.text_content()
        # the page counts down between pictures (the engine publishes no state per second)
        await expect(level).not_to_have_text(first or "", timeout=3000)

        await p.send(p.topics.input, KeyInput(ts=now(), key="last_hands"))
        await expect(page.locator("#hands-left")).to_have_text("Last hands: 3 left")
    assert errors == []
