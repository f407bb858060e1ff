"""A table's hands on the floor console, in a real Chromium reading a real mosquitto: the list
(newest first, live), one hand in full on a click, kept in the console's SQLite."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import aiomqtt
from playwright.async_api import expect

from config.models import MqttSection
from contract.topics import Topics
from controller.floor.console import FloorConsole
from testing.browser import artefact, browser, new_page
from testing.mosquitto import Mosquitto
from testing.tables import FakeTable
from tests.history.support import HIDDEN, T0, alert, misdeal_hand, showdown_hand, uncontested_hand
from tests.service.support import until

TOPICS = Topics("holdem", "t1")


def _get(url: str) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def test_a_table_s_hands_listed_and_one_opened_in_full(
    console: FloorConsole, publisher: aiomqtt.Client
) -> None:
    # Subscribed first: alerts and hand results are not retained, one published before is missed.
    await until(lambda: console.health.connected, what="the console subscribed")
    table = FakeTable("t1")
    await publisher.publish(*table.status("online"), qos=1, retain=True)
    s = timedelta(seconds=1)
    for item in (
        alert(7, "exposed_card", T0 + 2 * s, seat=2),
        alert(7, "exposed_card", T0 + 6 * s, seat=2, status="resolved"),
    ):
        await publisher.publish(TOPICS.alerts, item.to_json(), qos=1)
    for result in (showdown_hand(7, T0 + 30 * s), uncontested_hand(8, T0 + 70 * s)):
        await publisher.publish(TOPICS.hands, result.to_json(), qos=1)
    misdeal = alert(9, "misdeal_extra_cards", T0 + 123 * s, seat=3)
    await publisher.publish(TOPICS.alerts, misdeal.to_json(), qos=1)
    await publisher.publish(TOPICS.hands, misdeal_hand(9, T0 + 125 * s).to_json(), qos=1)

    errors: list[str] = []
    async with browser(1280, 900) as context:
        page = await new_page(context, errors)
        await page.goto(console.url + "tables/t1")
        hands = page.locator("#hands > li")
        await expect(hands).to_have_count(3)
        await expect(hands.first).to_have_attribute("data-hand", "9")  # newest first
        await expect(hands.first).to_have_class("voided")
        await expect(hands.nth(2)).to_contain_text("Hand 7: showdown — seat 3 wins 78")
        await expect(hands.nth(2)).to_contain_text("alerts exposed_card")
        await expect(page.locator("#last-hand")).to_have_text("Hand 9: voided (misdeal)")

        await hands.nth(2).get_by_role("button").click()
        detail = page.locator('#hand-detail article.hand[data-hand="7"]')
        await expect(detail).to_be_visible()
        await expect(detail.locator('section[data-street="flop"] li.action')).to_have_text(
            ["Seat 2 checks", "Seat 3 bets 10", "Seat 1 calls 10", "Seat 2 folds"]
        )
        await expect(detail.locator('section[data-street="showdown"] li')).to_have_count(1)
        await expect(detail.locator(".alert-changes li")).to_have_count(2)
        await expect(detail.locator(".alert-changes li").last).to_contain_text("exposed_card seat 2 resolved")

        await hands.first.get_by_role("button").click()
        voided = page.locator('#hand-detail article.hand[data-hand="9"]')
        await expect(voided).to_contain_text("The hand was voided: no award.")
        await expect(voided.locator(".alert-changes li")).to_have_text(
            re.compile("misdeal_extra_cards seat 3")
        )
        await expect(voided.locator("section.award")).to_have_count(0)

        # A new hand arrives: the list follows by itself.
        await publisher.publish(TOPICS.hands, uncontested_hand(10, T0 + 200 * s).to_json(), qos=1)
        await expect(hands).to_have_count(4)
        await expect(hands.first).to_have_attribute("data-hand", "10")
        await page.screenshot(path=artefact("floor-hands.png"), full_page=True)
        text = await page.content()
    assert errors == []
    for card in HIDDEN:
        assert not re.search(rf"\b{card}\b", text)

    # The API (the console serves in this loop: asked from a thread).
    status, body = await asyncio.to_thread(_get, console.url + "api/tables/t1/hands/8")
    assert status == 200
    assert (body["hand"], body["result"], body["winners"]) == (8, "uncontested", [4])
    assert (await asyncio.to_thread(_get, console.url + "api/tables/t1/hands/80"))[0] == 404
    assert (await asyncio.to_thread(_get, console.url + "api/tables/t1/hands?limit=0"))[0] == 400


async def test_a_restarted_console_shows_the_table_s_last_hand_at_once(
    mosquitto: Mosquitto, tmp_path: Path, publisher: aiomqtt.Client
) -> None:
    """The hands are in the console's SQLite: a restarted console shows each table's last hand
    from there, not only once the table's next hand ends."""
    database = tmp_path / "floor.sqlite"
    first = FloorConsole(MqttSection(url=mosquitto.url), database)
    await first.start("127.0.0.1", 0)
    try:
        # Subscribed (hand results are not retained: one published before would be missed).
        await until(lambda: first.health.connected, what="the first console subscribed")
        await publisher.publish(*FakeTable("t1").status("online"), qos=1, retain=True)
        s = timedelta(seconds=1)
        for result in (showdown_hand(7, T0), uncontested_hand(8, T0 + 60 * s)):
            await publisher.publish(TOPICS.hands, result.to_json(), qos=1)

        def heard_hand_8() -> bool:
            summary = first.board.tables.get("t1")
            return summary is not None and summary.last_hand is not None and summary.last_hand.hand == 8

        await until(heard_hand_8, what="hand 8 on the first console")
    finally:
        await first.stop()  # writes what is queued

    second = FloorConsole(MqttSection(url=mosquitto.url), database)
    await second.start("127.0.0.1", 0)
    errors: list[str] = []
    try:
        async with browser(1280, 900) as context:
            page = await new_page(context, errors)
            await page.goto(second.url + "tables/t1")
            await expect(page.locator("#hands > li")).to_have_count(2)
            await expect(page.locator("#last-hand")).to_have_text("Hand 8: uncontested — seat 4 wins 8")
    finally:
        await second.stop()
    assert errors == []
