"""The dealer's page on the touchscreens it is made for: 1024x600 and 800x480.

Nothing may be wider than the screen (no horizontal scrolling on a touchscreen), and a critical
alert must be legible from the dealer's seat. The screenshots are kept in var/artefacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from testing.browser import artefact
from testing.mosquitto import Mosquitto
from tests.display.support import SETUP, dealer_screen, display_config
from tests.service.support import new_table, script

SCREENS = [(1024, 600), (800, 480)]


async def _fits(page: Page) -> None:
    widths = await page.evaluate(
        "[document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]"
    )
    assert widths[0] <= widths[2], widths
    assert widths[1] <= widths[2], widths


async def _font_px(page: Page, selector: str) -> float:
    size: str = await page.locator(selector).first.evaluate("(e) => getComputedStyle(e).fontSize")
    return float(size.removesuffix("px"))


@pytest.mark.parametrize(("width", "height"), SCREENS, ids=str)
async def test_critical_alert_fills_the_screen_legibly_and_nothing_overflows(
    mosquitto: Mosquitto, tmp_path: Path, width: int, height: int
) -> None:
    config = display_config(tmp_path, mosquitto.url)
    table = new_table()
    size = f"{width}x{height}"
    errors: list[str] = []
    async with dealer_screen(config, mosquitto, width, height, errors) as (_, p, page):
        await p.play(script(table, *SETUP, "deal all", "round"))
        # The widest board there is: tens ("10♦") first, from what is left in the stub.
        stub = table.stubs[table.deck]
        wide = sorted(stub[6:], key=lambda card: card[0] != "T")[:5]  # the burns come off the top
        flop, turn, river = " ".join(f"={c}" for c in wide[:3]), f"={wide[3]}", f"={wide[4]}"
        await p.play(
            script(
                table,
                "burn",
                f"flop {flop}",
                "round",
                "burn",
                f"turn {turn}",
                "round",
                "burn",
                f"river {river}",
            )
        )
        await expect(page.locator("#board .card")).to_have_count(5)
        tops = await page.locator("#board .card").evaluate_all(
            "(cards) => cards.map((c) => Math.round(c.getBoundingClientRect().top))"
        )
        assert len(set(tops)) == 1, tops  # the board on one line
        seat = page.locator('#seats > li[data-seat="1"]')
        await expect(seat).to_have_attribute("aria-label", "Seat 1, in the hand, 2 cards, dealer button")
        await _fits(page)
        await page.screenshot(path=artefact(f"dealer-board-{size}.png"))

        await p.play(script(table, "shuffle B fail count=51 missing=Ah", "fault shuffler jam"))
        critical = await p.alert("deck_check_failed")
        await p.alert("device_fault")
        article = page.locator(f'article[data-alert-id="{critical.id}"]')
        await expect(page.locator("article.alert")).to_have_count(2)
        await expect(page.locator("body")).to_have_class("takeover")
        # Most severe on top, and it covers the screen.
        await expect(page.locator("article.alert").first).to_have_attribute("data-alert-id", critical.id)
        box = await page.locator("#alerts").bounding_box()
        assert box is not None
        assert box["width"] >= width - 1
        assert box["height"] >= height - 1
        assert await _font_px(page, f'article[data-alert-id="{critical.id}"] .message') >= 32
        await expect(article.locator(".message")).to_be_in_viewport()
        await expect(article.get_by_role("button", name="Acknowledge")).to_be_in_viewport()
        assert await page.evaluate("window.dealerDisplay.flashes") == 2  # both flashed
        await expect(page.locator(".alert.arrived")).to_have_count(0)  # and stopped
        await _fits(page)
        await page.screenshot(path=artefact(f"dealer-critical-{size}.png"))

        await article.get_by_role("button", name="Acknowledge").click()
        await expect(article).to_have_attribute("data-status", "acknowledged")
        await expect(page.locator("body")).not_to_have_class("takeover")
        assert await _font_px(page, f'article[data-alert-id="{critical.id}"] .message') >= 32
        await _fits(page)
        await page.screenshot(path=artefact(f"dealer-acknowledged-{size}.png"), full_page=True)
    assert errors == []
