"""The floor console on a supervisor's screens (1366x768, 1920x1080), checked as a person would.

500 tables: grouped under their headings, critical first, then warning, then offline, every
critical table on the first screen; filters by group and by table id, kept in the address. A
table's page: no word broken inside (the longest codes), a clicked hand beside the list and in
view, a link that opens it. Screenshots are kept in artifacts/screenshots/ (docs/display.md).
"""

from __future__ import annotations

import re
from datetime import timedelta

import aiomqtt
import pytest
from playwright.async_api import Page, expect

from contract.models import Alert
from controller.floor.console import FloorConsole
from testing.browser import artefact, browser, new_page
from testing.pages import page_problems
from testing.tables import FakeTable, now
from tests.history.support import T0, alert, showdown_hand, uncontested_hand
from tests.service.support import until

SCREENS = [(1366, 768), (1920, 1080)]
TABLES = 500
CRITICAL = 24  # of which every third acknowledged
WARNING = 40
OFFLINE = 8
INFO = 20
#: The longest codes of the catalogue: they must fit their boxes whole.
LONG_CODES = ("uncalled_bet_not_returned", "misdeal_out_of_sequence", "misdeal_exposed_multiple")


def long_alert(table: FakeTable, index: int, severity: str = "critical", status: str = "raised") -> Alert:
    return Alert.model_validate(
        {
            "id": f"{table.hand}-{100 + index}",
            "ts": now(),
            "hand": table.hand,
            "code": LONG_CODES[index % len(LONG_CODES)],
            "severity": severity,
            "seat": 1 + index % 9,
            "status": status,
            "profile": "roberts",
            "message": f"Seat {1 + index % 9} got two cards in a row in the first round: misdeal "
            "(the deal goes on from the seat that was skipped).",
            "remedy": ["Stop the deal.", "Retrieve all cards, reshuffle and cut."],
            "rule": "RR",
        }
    )


def critical(table: FakeTable, index: int, status: str) -> tuple[str, bytes]:
    """A critical alert of a long code on ``table`` (in its next state too)."""
    raised = long_alert(table, index, "critical", status)
    table.alerts[raised.id] = raised
    return table.topics.alerts, raised.to_json()


async def publish(client: aiomqtt.Client, topic: str, payload: bytes, *, retain: bool = False) -> None:
    await client.publish(topic, payload, qos=1, retain=retain)


async def assert_looks_right(page: Page) -> None:
    problems = await page_problems(page, scrolls=True)
    assert problems == [], problems


@pytest.mark.parametrize(("width", "height"), SCREENS, ids=str)
async def test_500_tables_grouped_critical_first_on_the_first_screen_with_filters(
    console: FloorConsole, publisher: aiomqtt.Client, width: int, height: int
) -> None:
    tables = [FakeTable(f"t{index:03d}") for index in range(TABLES)]
    criticals = {tables[i].id for i in range(7, TABLES, TABLES // CRITICAL)[:CRITICAL]}
    rest = [t for t in tables if t.id not in criticals]
    warnings = {t.id for t in rest[3::9][:WARNING]}
    rest = [t for t in rest if t.id not in warnings]
    offline = {t.id for t in rest[5::40][:OFFLINE]}
    rest = [t for t in rest if t.id not in offline]
    infos = {t.id for t in rest[1::17][:INFO]}
    for index, table in enumerate(tables):
        state = "offline" if table.id in offline else "online"
        await publish(publisher, *table.status(state), retain=True)
        if table.id in criticals:
            status = "acknowledged" if index % 3 == 0 else "raised"
            await publish(publisher, *critical(table, index, status))
        elif table.id in warnings:
            await publish(publisher, *table.alert("warning"))
        elif table.id in infos:
            await publish(publisher, *table.alert("info"))
        await publish(publisher, *table.state(), retain=True)
    await until(lambda: len(console.board.tables) == TABLES, what="500 tables on the console")
    size = f"{width}x{height}"
    errors: list[str] = []
    async with browser(width, height) as context:
        page = await new_page(context, errors)
        await page.goto(console.url)
        tiles = page.locator("#grid li[data-table]")
        await expect(tiles).to_have_count(TABLES)
        await expect(page.locator("#summary")).to_contain_text(f"{TABLES} tables")
        quiet = TABLES - CRITICAL - WARNING - OFFLINE - INFO
        headings = page.locator("#grid section.group:not([hidden]) h2")
        await expect(headings).to_have_text(
            [
                f"Critical {CRITICAL} tables",
                f"Warning {WARNING} tables",
                f"Offline {OFFLINE} tables",
                f"Acknowledged or information {INFO} tables",
                f"Quiet {quiet} tables",
            ]
        )
        # What needs him first: every critical table on the first screen, unacknowledged first.
        first = page.locator('#grid section[data-group="critical"] li[data-table]')
        await expect(first).to_have_count(CRITICAL)
        boxes = await first.evaluate_all(
            "(items) => items.map((i) => { const r = i.getBoundingClientRect();"
            " return [i.dataset.attention, r.bottom, r.right]; })"
        )
        assert all(bottom <= height and right <= width for _, bottom, right in boxes), boxes
        attention = [a for a, _, _ in boxes]
        assert attention == sorted(attention, key=lambda a: a != "critical"), attention
        await expect(first.first.locator(".code")).to_have_text(re.compile("|".join(LONG_CODES)))
        await page.screenshot(path=artefact(f"floor-500-{size}.png"))
        await assert_looks_right(page)

        # Filters: a group off, a table id; kept in the address across a reload.
        await page.locator('#group-filters button[data-group="quiet"]').click()
        await expect(page.locator('#grid section[data-group="quiet"]')).to_be_hidden()
        await expect(page.locator('#group-filters button[data-group="quiet"]')).to_have_attribute(
            "aria-pressed", "false"
        )
        await page.fill("#search", "t00")
        visible = page.locator("#grid section.group:not([hidden]) li[data-table]:not([hidden])")
        # t000 to t009 but the quiet ones (their group is off), the most urgent first.
        noisy = criticals | warnings | offline | infos
        expected = [t.id for t in tables[:10] if t.id in noisy]
        assert expected
        await expect(visible).to_have_count(len(expected))
        shown = await visible.evaluate_all("(items) => items.map((i) => i.dataset.table)")
        assert sorted(shown) == expected
        await expect(page).to_have_url(re.compile(r"\?hide=quiet&table=t00$"))
        await page.reload()
        await expect(page.locator("#search")).to_have_value("t00")
        await expect(page.locator('#grid section[data-group="quiet"]')).to_be_hidden()
        await page.screenshot(path=artefact(f"floor-500-filtered-{size}.png"))
    assert errors == []


@pytest.mark.parametrize(("width", "height"), SCREENS, ids=str)
async def test_a_table_page_whole_words_and_a_clicked_hand_in_view_and_linkable(
    console: FloorConsole, publisher: aiomqtt.Client, width: int, height: int
) -> None:
    await until(lambda: console.health.connected, what="the console subscribed")
    table = FakeTable("t1")
    await publish(publisher, *table.status("online"), retain=True)
    s = timedelta(seconds=1)
    for index in range(3):
        raised = long_alert(table, index, "warning")
        table.alerts[raised.id] = raised
        await publish(publisher, table.topics.alerts, raised.to_json())
    await publish(publisher, table.topics.alerts, alert(7, "exposed_card", T0 + 2 * s, seat=2).to_json())
    for hand in range(1, 31):
        ended = T0 + 30 * hand * s
        result = showdown_hand(hand, ended) if hand % 2 else uncontested_hand(hand, ended)
        await publish(publisher, table.topics.hands, result.to_json())
    await publish(publisher, *table.state(), retain=True)
    await until(
        lambda: (
            "t1" in console.board.tables
            and console.board.tables["t1"].last_hand is not None
            and console.board.tables["t1"].last_hand.hand == 30
        ),
        what="hand 30",
    )
    size = f"{width}x{height}"
    errors: list[str] = []
    async with browser(width, height) as context:
        page = await new_page(context, errors)
        await page.goto(console.url + "tables/t1")
        hands = page.locator("#hands > li")
        await expect(hands).to_have_count(30)
        await expect(page.locator("#history tbody tr")).to_have_count(4)
        await expect(page.locator("#history-note")).to_have_text("4 changes, newest first.")
        # The board in the list drawn as cards, as on every page (never "Ah Kd 7c").
        await expect(hands.nth(1).locator(".card")).to_have_count(5)
        assert "Ah Kd" not in await page.locator("#hands").inner_text()
        await page.screenshot(path=artefact(f"floor-table-{size}.png"))
        await assert_looks_right(page)

        # The 24th hand, far down the list: its detail opens beside it, in view.
        target = hands.nth(23)
        number = await target.get_attribute("data-hand")
        await target.get_by_role("button").click()
        panel = page.locator("#hand-panel")
        detail = panel.locator(f'article.hand[data-hand="{number}"]')
        await expect(detail).to_be_visible()
        await expect(detail.locator("h3")).to_be_in_viewport(ratio=1)
        await expect(panel).to_be_in_viewport()
        box = await panel.bounding_box()
        assert box is not None
        assert box["y"] >= 0
        assert box["x"] + box["width"] <= width
        assert box["y"] < height / 2
        await expect(target).to_be_in_viewport()  # the list stays in view beside it
        await expect(page).to_have_url(console.url + f"tables/t1#hand-{number}")
        await expect(page.locator("#hand-link")).to_have_attribute("href", f"#hand-{number}")
        await page.screenshot(path=artefact(f"floor-hand-open-{size}.png"))
        await assert_looks_right(page)
        await page.get_by_role("button", name="Close").click()
        await expect(panel).to_be_hidden()
        await expect(page).to_have_url(console.url + "tables/t1")

        # The link opens that hand at once, in a page of its own.
        linked = await new_page(context, errors)
        await linked.goto(console.url + "tables/t1#hand-8")
        await expect(linked.locator('#hand-panel article.hand[data-hand="8"]')).to_be_visible()
        await expect(linked.locator("#hand-panel")).to_be_in_viewport()
        await expect(linked.locator('#hands > li[data-hand="8"]')).to_have_class(re.compile("selected"))
    assert errors == []
