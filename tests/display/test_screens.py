"""The dealer's display as the dealer sees it, at 1024x600 and 800x480, checked as a person would.

Three active alerts (a misdeal, the remedy not followed after it, a device fault): the misdeal
leads with its follow-up under it, its message, remedy and button fully on the screen; nothing
scrolls, no word is broken inside, the alerts that do not fit are counted. Screenshots are kept
in artifacts/screenshots/ (docs/display.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Page, expect

from contract.models import HandResult, PotResult, Status
from controller.service.table import Outgoing
from testing.browser import artefact
from testing.mosquitto import Mosquitto
from testing.pages import page_problems
from tests.display.support import SETUP, dealer_screen, display_config
from tests.service.support import new_table, now, script


async def shot(page: Page, name: str) -> None:
    """A screenshot once the arriving alerts have stopped flashing (under two seconds)."""
    await expect(page.locator(".alert.arrived")).to_have_count(0)
    await page.screenshot(path=artefact(name))


async def assert_looks_right(page: Page) -> None:
    problems = await page_problems(page)
    assert problems == [], problems


async def test_three_alerts_the_headline_with_its_follow_up_and_its_remedy_in_full(
    mosquitto: Mosquitto, tmp_path: Path, screen: tuple[int, int]
) -> None:
    table = new_table()
    size = "x".join(map(str, screen))
    errors: list[str] = []
    config = display_config(tmp_path, mosquitto.url)
    async with dealer_screen(config, mosquitto, *screen, errors) as (_, p, page):
        await p.play(script(table, *SETUP, "new_hand", "deal 3"))
        misdeal = await p.alert("misdeal_wrong_first_seat")
        await p.play(script(table, "wait 3", "deal 4", "deal 1"))
        follow_up = await p.alert("remedy_not_followed")
        await p.play(script(table, "fault shuffler jam"))
        fault = await p.alert("device_fault")
        lead = page.locator(f'article[data-alert-id="{misdeal.id}"]')
        await expect(lead).to_have_attribute("data-role", "lead")
        under = page.locator(f'#headline > #follow-ups > article[data-alert-id="{follow_up.id}"]')
        await expect(under).to_have_attribute("data-role", "follow-up")
        await expect(page.locator("body")).to_have_class("takeover")
        await shot(page, f"dealer-three-alerts-{size}.png")
        for part in (
            lead.locator(".message"),
            lead.locator("ol.remedy"),
            lead.get_by_role("button", name="Acknowledge"),
            under.locator(".message"),
        ):
            await expect(part).to_be_in_viewport(ratio=1)
        await assert_looks_right(page)
        shown = page.locator(f'article[data-alert-id="{fault.id}"]')
        hidden = await page.evaluate("window.dealerDisplay.hiddenAlerts")
        if hidden:
            await expect(page.locator("#more")).to_have_text("+1 more alert")
        else:
            await expect(shown).to_be_in_viewport(ratio=1)

        await lead.get_by_role("button", name="Acknowledge").click()
        await expect(lead).to_have_attribute("data-status", "acknowledged")
        await expect(page.locator("body")).not_to_have_class("takeover")
        await shot(page, f"dealer-three-alerts-acknowledged-{size}.png")
        await expect(lead.locator("ol.remedy")).to_be_in_viewport(ratio=1)
        await expect(page.locator("#seats")).to_be_in_viewport(ratio=1)
        await assert_looks_right(page)

        # Many more alerts than fit: counted, never a scroll bar.
        for n in range(1, 7):
            await p.send(p.topics.device_status(f"shoe-{n}"), Status(state="fault", ts=now(), session=1))
        await expect(page.locator("#more")).to_be_visible()
        await shot(page, f"dealer-many-alerts-{size}.png")
        await expect(page.locator("#more")).to_have_text(
            f"+{await page.evaluate('window.dealerDisplay.hiddenAlerts')} more alerts"
        )
        await expect(lead.locator("ol.remedy")).to_be_in_viewport(ratio=1)
        await assert_looks_right(page)
    assert errors == []


async def test_a_long_table_name_whole_and_a_seat_without_cards_at_showdown_not_green(
    mosquitto: Mosquitto, tmp_path: Path, screen: tuple[int, int]
) -> None:
    config = display_config(tmp_path, mosquitto.url)
    named = config.read_text().replace('id = "t1"', 'id = "t1"\nname = "Table 12, high-limit room"')
    config.write_text(named)
    table = new_table()
    size = "x".join(map(str, screen))
    async with dealer_screen(config, mosquitto, *screen) as (_, p, page):
        await p.play(
            script(
                table,
                *SETUP,
                "new_hand",
                "deal all",
                "round",
                "burn",
                "flop",
                "round",
                "burn",
                "turn",
                "round",
                "burn",
                "river",
                "round",
                "show 3 4",
                "fold 2",
            )
        )
        await expect(page.locator("#phase")).to_have_text("Showdown")
        name = page.locator("#table-name")
        await expect(name).to_have_text("Table 12, high-limit room (t1)")
        assert await name.evaluate("(e) => e.scrollWidth <= e.clientWidth")
        await expect(name).to_be_in_viewport(ratio=1)
        seat = page.locator('#seats > li[data-seat="2"]')
        await expect(seat).to_have_attribute("data-cards", "0")
        await expect(seat).not_to_have_class(re.compile(r"\bin-hand\b"))
        await expect(seat.locator(".count")).to_have_text(re.compile("no cards|not in hand"))
        await expect(page.locator('#seats > li[data-seat="3"]')).to_have_class(re.compile(r"\bin-hand\b"))
        # The board and the facts beside it on one line.
        tops = await page.locator("#board .card, #burns").evaluate_all(
            "(items) => items.map((i) => { const r = i.getBoundingClientRect();"
            " return Math.round(r.top + r.height / 2); })"
        )
        assert max(tops) - min(tops) <= 4, tops
        await shot(page, f"dealer-showdown-{size}.png")
        await assert_looks_right(page)


async def test_a_hand_over_with_its_cards_still_on_the_table_is_not_called_idle(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    """The engine's public state is ``idle`` once a hand's result is out, while its cards still
    lie on the table until the dealer clears it: the page says "Hand over" then."""
    config = display_config(tmp_path, mosquitto.url)
    table = new_table()
    async with dealer_screen(config, mosquitto) as (display, p, page):
        await p.play(script(table, *SETUP, "new_hand", "deal all", "round", "burn", "flop"))
        await expect(page.locator("#phase")).to_have_text("Flop")
        state = display.view.state
        assert state is not None
        result = HandResult(
            ts=now(),
            hand=state.hand,
            button=1,
            seats=[1, 2, 3, 4],
            result="uncontested",
            pots=[PotResult(amount=3, eligible=[2], winners=[2], shares=[])],
        )
        idle = state.model_copy(update={"phase": "idle"})
        display.produced(
            [
                Outgoing("hand", 0, display.topics.hands, result.to_json(), retain=False),
                Outgoing("state", 0, display.topics.state, idle.to_json(), retain=True),
            ]
        )
        await expect(page.locator("#phase")).to_have_text("Hand over")
        empty = [seat.model_copy(update={"cards": 0}) for seat in idle.seats]
        cleared = idle.model_copy(update={"board": [], "seats": empty})
        display.produced([Outgoing("state", 0, display.topics.state, cleared.to_json(), retain=True)])
        await expect(page.locator("#phase")).to_have_text("Idle")
