"""The dealer's display in a real Chromium, against the real service and a real mosquitto."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from playwright.async_api import BrowserContext, expect

from config.registry import load_registry
from contract.models import Status, TagEvent
from controller.journal import read_journal
from testing.browser import artefact, new_page
from testing.mosquitto import Mosquitto
from testing.sessions import dealer_session
from tests.conftest import EXAMPLE_REGISTRY
from tests.display.support import RECORD_TEXTS, SETUP, display_config, faces_to_codes, open_display
from tests.engine.scenario import initial_statuses
from tests.service.support import new_table, now, probe, running_service, script


async def test_an_irregularity_shows_its_remedy_is_acknowledged_and_leaves_when_resolved(
    mosquitto: Mosquitto, tmp_path: Path, chromium: BrowserContext
) -> None:
    config = display_config(tmp_path, mosquitto.url)
    table = new_table()
    errors: list[str] = []
    async with running_service(config) as service, probe(mosquitto.port, "t1") as p:
        await p.status("online")
        assert service.display is not None
        page = await new_page(chromium, errors)
        await open_display(page, service.display.url)

        await p.play(initial_statuses() + script(table, *SETUP, "deal 2 3:up 4 1 2 3 4 1"))
        raised = await p.alert("exposed_card")
        article = page.locator(f'article[data-alert-id="{raised.id}"]')
        await expect(article).to_be_visible()
        await expect(article.locator(".message")).to_have_text(raised.message)
        await expect(article.locator("ol.remedy > li")).to_have_text(raised.remedy)
        await expect(article).to_have_attribute("data-status", "raised")
        # It arrived while the page was open: it flashed and sounded.
        assert await page.evaluate("window.dealerDisplay.flashes") == 1
        assert await page.evaluate("window.dealerDisplay.beeps") == 1
        await page.screenshot(path=artefact("dealer-raised.png"))

        mark = len(p.messages)
        await article.get_by_role("button", name="Acknowledge").click()
        acknowledged = await p.alert("exposed_card", status="acknowledged", after=mark)
        assert acknowledged.id == raised.id
        await expect(article).to_have_attribute("data-status", "acknowledged")
        await expect(article.get_by_text("Acknowledged", exact=True)).to_be_visible()
        await expect(article.get_by_role("button", name="Acknowledge")).to_have_count(0)

        await p.play(script(table, "deal 3", "move seat:3#0 burn"))
        await p.alert("exposed_card", status="resolved", after=mark)
        await expect(article).to_have_count(0)
        await page.screenshot(path=artefact("dealer-resolved.png"))
    assert errors == []
    # The acknowledge went the journaled way of every input: on the input topic, with the id.
    inputs = [r for r in read_journal(tmp_path / "journal.jsonl").received if r.topic.endswith("/input")]
    assert [json.loads(r.payload)["alert"] for r in inputs] == [raised.id]


async def test_acknowledge_names_one_alert_and_leaves_the_others(
    mosquitto: Mosquitto, tmp_path: Path, chromium: BrowserContext
) -> None:
    config = display_config(tmp_path, mosquitto.url)
    async with running_service(config) as service, probe(mosquitto.port, "t1") as p:
        await p.status("online")
        assert service.display is not None
        page = await new_page(chromium)
        await open_display(page, service.display.url)
        for device in ("shoe-1", "shoe-2"):
            await p.send(p.topics.device_status(device), Status(state="fault", ts=now(), session=1))
        first = await p.alert("device_fault")
        second = await p.wait_for(lambda m: m.topic == p.topics.alerts and b"shoe-2" in m.payload)
        second_id = json.loads(second.payload)["id"]
        await expect(page.locator("article.alert")).to_have_count(2)

        await (
            page.locator(f'article[data-alert-id="{second_id}"]')
            .get_by_role("button", name="Acknowledge")
            .click()
        )
        acknowledged = await p.alert("device_fault", status="acknowledged")
        assert acknowledged.id == second_id
        first_article = page.locator(f'article[data-alert-id="{first.id}"]')
        await expect(page.locator(f'article[data-alert-id="{second_id}"]')).to_have_attribute(
            "data-status", "acknowledged"
        )
        await expect(first_article).to_have_attribute("data-status", "raised")
        # The unacknowledged alert stays on top (same severity).
        await expect(page.locator("article.alert").first).to_have_attribute("data-alert-id", first.id)


async def test_the_page_never_shows_a_hole_card(
    mosquitto: Mosquitto, tmp_path: Path, chromium: BrowserContext
) -> None:
    """Two whole legal hands are played; every text the page ever showed is checked."""
    config = display_config(tmp_path, mosquitto.url)
    registry = load_registry(EXAMPLE_REGISTRY)
    messages, _ = dealer_session(registry, seats=9, hands=2, seed=12)
    hole_cards: set[str] = set()
    boards: set[str] = set()
    for message in messages:
        event = message.payload
        if isinstance(event, TagEvent) and event.present:
            found = registry.lookup(event.uid)
            assert found is not None
            if event.zone.startswith("seat:"):
                hole_cards.add(found.card)
            elif event.zone == "board":
                boards.add(found.card)
    async with running_service(config) as service, probe(mosquitto.port, "t1") as p:
        await p.status("online")
        assert service.display is not None
        page = await new_page(chromium)
        await open_display(page, service.display.url)
        await page.evaluate(RECORD_TEXTS)
        await p.play(messages)
        # A marker after the hands: once its alert is on the page, the page has seen them all.
        await p.send(p.topics.device_status("marker"), Status(state="fault", ts=now(), session=1))
        marker = await p.alert("device_fault")
        await expect(page.locator(f'article[data-alert-id="{marker.id}"]')).to_be_visible()
        await expect(page.locator("#hand")).to_have_text("Hand 2")
        shown = "\n".join(await page.evaluate("window.shownTexts"))
        shown += await page.content() + await page.evaluate("document.body.innerText")
        view = await page.evaluate("fetch('/api/view').then((r) => r.text())")
    hidden = hole_cards - boards
    assert len(hidden) >= 4
    assert faces_to_codes(shown) <= boards
    # As codes too ("Ac" as a word: "Acknowledge" is no ace of clubs).
    assert not {card for card in hidden if re.search(rf"\b{card}\b", shown + view)}


async def test_device_health_banner_and_every_asset_from_the_controller(
    mosquitto: Mosquitto, tmp_path: Path, chromium: BrowserContext
) -> None:
    config = display_config(tmp_path, mosquitto.url)
    requests: list[str] = []
    async with running_service(config) as service, probe(mosquitto.port, "t1") as p:
        await p.status("online")
        assert service.display is not None
        page = await new_page(chromium)
        page.on("request", lambda request: requests.append(request.url))
        await open_display(page, service.display.url)
        await p.play(initial_statuses())
        await expect(page.locator("#health")).to_contain_text("rfid-1 online")
        await p.play(script(new_table(), *SETUP, "deal 2 3 4"))
        await p.send(p.topics.device_status("rfid-1"), Status(state="offline", ts=now(), session=1))
        banners = page.locator("#banners")
        await expect(banners).to_contain_text("Device rfid-1 offline")
        await expect(banners).to_contain_text("not being tracked")
        await expect(page.locator("#health")).to_contain_text("rfid-1 offline")
        await p.send(p.topics.device_status("rfid-1"), Status(state="online", ts=now(), session=2))
        await expect(banners).not_to_contain_text("rfid-1")
        await expect(banners.locator(".banner")).to_have_count(0)
        assert requests
        assert all(url.startswith(service.display.url) for url in requests), requests


async def test_acknowledge_without_a_broker_says_so_and_the_page_follows_the_controller(
    mosquitto: Mosquitto, tmp_path: Path, chromium: BrowserContext
) -> None:
    config = display_config(tmp_path, mosquitto.url)
    async with running_service(config) as service, probe(mosquitto.port, "t1") as p:
        await p.status("online")
        assert service.display is not None
        page = await new_page(chromium)
        await open_display(page, service.display.url)
        await p.send(p.topics.device_status("shoe-1"), Status(state="fault", ts=now(), session=1))
        alert = await p.alert("device_fault")
        article = page.locator(f'article[data-alert-id="{alert.id}"]')
        await expect(article).to_be_visible()
        await asyncio.to_thread(mosquitto.stop)
        banners = page.locator("#banners")
        await expect(banners).to_contain_text("no broker connection", timeout=10_000)
        await article.get_by_role("button", name="Acknowledge").click()
        await expect(article.locator(".error")).to_contain_text("Not acknowledged")
        await expect(article).to_have_attribute("data-status", "raised")
        await asyncio.to_thread(mosquitto.start)
        await expect(page.locator("#health")).to_contain_text("controller online", timeout=15_000)
        await expect(banners).not_to_contain_text("Controller")
        await expect(banners).to_contain_text("Device shoe-1 fault")  # as far as anyone knows
