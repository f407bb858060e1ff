"""The session on the floor console (real Chromium, real mosquitto): each table's tournament level
with its time left, the hands left after the end of the game was announced, the seats away."""

from __future__ import annotations

import re
from datetime import timedelta

import aiomqtt
from playwright.async_api import expect

from contract.models import LevelState, PublicState, SeatAway
from controller.floor.console import FloorConsole
from testing.browser import browser, new_page
from testing.tables import FakeTable, now


async def test_a_tile_shows_the_level_counting_down_the_hands_left_and_the_seats_away(
    console: FloorConsole, publisher: aiomqtt.Client
) -> None:
    table = FakeTable("tour-1")
    plain = FakeTable("cash-1")
    for each in (table, plain):
        topic, payload = each.status("online")
        await publisher.publish(topic, payload, qos=1, retain=True)
        topic, payload = each.state()
        await publisher.publish(topic, payload, qos=1, retain=True)
    base = PublicState.model_validate_json(table.state()[1])
    state = base.model_copy(
        update={
            "level": LevelState(
                level=3, small_blind=50, big_blind=100, ante=10, ends=now() + timedelta(minutes=12)
            ),
            "hands_left": 2,
            "away": [SeatAway(seat=4, since=now())],
        }
    )
    await publisher.publish(table.topics.state, state.to_json(), qos=1, retain=True)
    errors: list[str] = []
    async with browser(1280, 800) as context:
        page = await new_page(context, errors)
        await page.goto(console.url)
        facts = page.locator('#grid li[data-table="tour-1"] .facts')
        await expect(facts).to_contain_text(re.compile(r"Level 3 50/100 1[12]:[0-5]\d left"))
        await expect(facts).to_contain_text("2 hands left")
        await expect(facts).to_contain_text("away: seat 4")
        shown = await facts.text_content()
        await expect(facts).not_to_have_text(shown or "", timeout=3000)  # it counts down
        await expect(page.locator('#grid li[data-table="cash-1"] .facts')).not_to_contain_text("Level")
    assert errors == []
