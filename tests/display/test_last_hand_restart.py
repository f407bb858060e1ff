"""The dealer's last hand survives a restart of ``tablectl run`` ("last-hand recall": a dispute
right after a crash). A real hand to its result, the controller stopped (SIGTERM) or killed
(SIGKILL) and started again on the same journal: the page, reconnected or opened afresh in a real
Chromium, shows the same last hand at once, with its alerts and no hole card that was not tabled.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import BrowserContext, expect

from contract.models import parse_hand
from testing.browser import new_page
from testing.mosquitto import Mosquitto, free_port
from tests.display.support import RECORD_TEXTS, display_config, faces_to_codes, open_display
from tests.engine.scenario import registry
from tests.service.conftest import StartService
from tests.service.support import new_table, probe, script, until
from tests.service.test_hands_e2e import BLINDS_POSTED, STAKES

URL_RE = re.compile(r"dealer display: (http://127\.0\.0\.1:\d+/)")

#: Button 1, betting from ``action`` inputs: seat 1's first card is dealt face up (an alert of
#: this hand, public from then on).
DEAL = (*BLINDS_POSTED, "deal 2 3 1:up 2 3 1")
#: Seat 1 folds; seats 2 and 3 check it down; seat 3 tables its hand, seat 2 mucks.
PLAY = (
    "action 1 fold",
    "fold 1",
    "action 2 call 1",
    "action 3 check",
    *("burn", "flop", "action 2 check", "action 3 check"),
    *("burn", "turn", "action 2 check", "action 3 check"),
    *("burn", "river", "action 2 check", "action 3 check"),
    "show 3",
    "muck 2",
    "clear",
)


def get_view(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "api/view", timeout=5) as response:
        view: dict[str, Any] = json.load(response)
        return view


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_the_restarted_controller_shows_the_same_last_hand(
    how: str,
    mosquitto: Mosquitto,
    tmp_path: Path,
    start_service: StartService,
    chromium: BrowserContext,
) -> None:
    port = free_port()  # fixed: the page reconnects to the same address
    config = display_config(tmp_path, mosquitto.url, port=port, action_feed=True, extra=STAKES)
    url = f"http://127.0.0.1:{port}/"
    table = new_table()
    errors: list[str] = []
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        page = await new_page(chromium, errors)
        await open_display(page, url)
        await page.evaluate(RECORD_TEXTS)
        await p.play(script(table, *DEAL))
        dealt = {s: [registry().by_uid[u].card for u in uids] for s, uids in table.seats.items()}
        await p.play(script(table, *PLAY))
        message = await p.wait_for(lambda m: m.topic == p.topics.hands)
        result = parse_hand(message.topic, message.payload)
        assert (result.result, [s.seat for s in result.showdown]) == ("showdown", [3])
        summary = page.locator("#last-hand")
        line = f"Last hand {result.hand}: showdown"
        await expect(summary).to_have_text(line)

        mark = len(p.messages)
        if how == "kill":
            service.kill()
        else:
            service.stop()
        await p.status("offline", after=mark)
        banners = page.locator("#banners")
        await expect(banners).to_contain_text("Controller offline")

        restarted = start_service(config)
        await p.status("online", after=mark)
        # The page reconnects by itself; once it shows the controller online, it shows the
        # restarted controller's picture, which has the last hand (no hand has ended since).
        await expect(banners).not_to_contain_text("Controller offline", timeout=10_000)
        await expect(summary).to_have_text(line)
        assert f"dealer display: last hand {result.hand} (" in restarted.log

        # A page opened after the restart: the same hand, in full.
        fresh = await new_page(chromium, errors)
        await open_display(fresh, url)
        await fresh.evaluate(RECORD_TEXTS)
        await expect(fresh.locator("#last-hand")).to_have_text(line)
        await fresh.locator("#last-hand").click()
        detail = fresh.locator("#last-hand-detail article.hand")
        await expect(detail).to_be_visible()
        await expect(detail.locator('section[data-street="river"] li.action')).to_have_text(
            ["Seat 2 checks", "Seat 3 checks"]
        )
        shown = detail.locator('section[data-street="showdown"] li')
        await expect(shown).to_have_count(1)
        assert faces_to_codes(await shown.inner_text()) == set(dealt[3])
        changes = detail.locator('.alert-changes li[data-code="exposed_card"]')
        await expect(changes.first).to_contain_text("exposed_card seat 1 raised")
        await expect(changes.last).to_contain_text("exposed_card seat 1 resolved")
        texts = "\n".join(
            [*await page.evaluate("window.shownTexts"), *await fresh.evaluate("window.shownTexts")]
        )
        texts += await page.content() + await fresh.content()
    # The stream the stopped controller broke is a network error (a killed one breaks it mid-chunk).
    assert [e for e in errors if "Failed to load resource: net::ERR_" not in e] == []
    # Hole cards on the pages: only seat 3's, tabled, and seat 1's first, dealt face up.
    exposed = dealt[1][0]
    hidden = {card for seat, cards in dealt.items() if seat != 3 for card in cards} - {exposed}
    assert len(hidden) == 3
    assert faces_to_codes(texts) <= set(result.board) | set(dealt[3]) | {exposed}
    assert not {card for card in hidden if re.search(rf"\b{card}\b", texts)}


async def test_a_corrupt_hand_record_is_logged_with_its_place_and_the_table_starts(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    """The journal's record of the published result is damaged while the controller is down: the
    start-up names the line and goes on; the replay still has the result (owed to the broker
    again, since no readable record shows it published), so the display still shows it."""
    config = display_config(tmp_path, mosquitto.url, action_feed=True, extra=STAKES)
    table = new_table()
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        await p.play(script(table, *DEAL, *PLAY))
        await p.wait_for(lambda m: m.topic == p.topics.hands)
        journal = tmp_path / "journal.jsonl"
        # Journaled as published once the broker's acknowledgement is in (else it is owed anyway).
        await until(lambda: b'"what":"hand"' in journal.read_bytes(), what="the hand's record")
        service.stop()
        lines = journal.read_bytes().splitlines(keepends=True)
        number = next(i for i, line in enumerate(lines, 1) if b'"what":"hand"' in line)
        lines[number - 1] = lines[number - 1][:120] + b"\n"
        journal.write_bytes(b"".join(lines))

        mark = len(p.messages)
        restarted = start_service(config)
        await p.status("online", after=mark)
        url = URL_RE.findall(restarted.log)[-1]  # the log has both processes' (port 0)
        view = await asyncio.to_thread(get_view, url)
    assert f"last hand: journal {journal}:{number}: unreadable record" in restarted.log
    assert "Traceback" not in restarted.log
    assert view["last_hand"] is not None
    assert view["last_hand"]["hand"] == 1


async def test_a_hand_in_progress_at_a_crash_keeps_its_alerts_in_its_last_hand_view(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService, chromium: BrowserContext
) -> None:
    """Killed mid-hand after an alert was raised, restarted, the hand played to its end: its
    "last hand" view has the alert's changes from before the crash too."""
    port = free_port()
    config = display_config(tmp_path, mosquitto.url, port=port, action_feed=True, extra=STAKES)
    table = new_table()
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        await p.play(script(table, *DEAL))
        raised = await p.alert("exposed_card")
        journal = tmp_path / "journal.jsonl"
        # Published and journaled as such (the restarted controller does not owe it).
        await until(lambda: b'"what":"alert"' in journal.read_bytes(), what="the alert's record")
        mark = len(p.messages)
        service.kill()
        await p.status("offline", after=mark)
        start_service(config)
        await p.status("online", after=mark)
        await p.play(script(table, *PLAY))
        await p.wait_for(lambda m: m.topic == p.topics.hands, after=mark)

        page = await new_page(chromium)
        await open_display(page, f"http://127.0.0.1:{port}/")
        await expect(page.locator("#last-hand")).to_have_text(f"Last hand {raised.hand}: showdown")
        await page.locator("#last-hand").click()
        changes = page.locator('#last-hand-detail .alert-changes li[data-code="exposed_card"]')
        await expect(changes).to_have_count(2)
        await expect(changes.first).to_contain_text("exposed_card seat 1 raised")
        await expect(changes.last).to_contain_text("exposed_card seat 1 resolved")
