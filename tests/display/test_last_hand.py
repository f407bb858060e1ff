"""The dealer's "last hand" view in a real Chromium, fed by the real service: for a dispute at the
table, the board, the actions street by street, the showdown (only the hands tabled face up), the
pots and the award, and the hand's alerts."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import BrowserContext, expect

from contract.models import HandResult
from controller.display.server import DealerDisplay
from controller.service.table import Outgoing
from testing.browser import artefact, new_page
from testing.mosquitto import Mosquitto
from tests.display.support import RECORD_TEXTS, SETUP, display_config, faces_to_codes, open_display
from tests.engine.scenario import initial_statuses, registry
from tests.service.support import new_table, probe, running_service, script


def action(street: str, seat: int, verb: str, amount: int = 0) -> dict[str, object]:
    return {"street": street, "seat": seat, "action": verb, "amount": amount}


def _result(hand: int, board: list[str], shown: list[str]) -> HandResult:
    """Hand ``hand`` on this board: seat 2 bets the flop, seat 4 calls, shows and wins."""
    return HandResult.model_validate(
        {
            "ts": "2026-11-30T20:05:00Z",
            "hand": hand,
            "button": 1,
            "seats": [1, 2, 3, 4],
            "board": board,
            "result": "showdown",
            "actions": [
                action("preflop", 2, "post", 1),
                action("preflop", 3, "post", 2),
                action("preflop", 4, "raise", 6),
                action("preflop", 1, "fold"),
                action("preflop", 2, "call", 5),
                action("preflop", 3, "fold"),
                action("flop", 2, "bet", 10),
                action("flop", 4, "call", 10),
                action("turn", 2, "check"),
                action("turn", 4, "check"),
                action("river", 2, "check"),
                action("river", 4, "check"),
            ],
            "pots": [
                {"amount": 34, "eligible": [2, 4], "winners": [4], "shares": [{"seat": 4, "amount": 34}]}
            ],
            "awarded": [{"seat": 4, "amount": 34}],
            "showdown": [{"seat": 4, "cards": shown, "rank": "pair"}],
        }
    )


async def test_the_last_hand_opens_street_by_street_with_its_alerts(
    mosquitto: Mosquitto, tmp_path: Path, chromium: BrowserContext
) -> None:
    config = display_config(tmp_path, mosquitto.url)
    table = new_table()
    errors: list[str] = []
    async with running_service(config) as service, probe(mosquitto.port, "t1") as p:
        await p.status("online")
        display = service.display
        assert isinstance(display, DealerDisplay)
        page = await new_page(chromium, errors)
        await open_display(page, display.url)
        await page.evaluate(RECORD_TEXTS)
        await expect(page.locator("#last-hand-view")).to_be_hidden()

        # A real hand: seat 3's first card dealt face up (an alert of this hand, remedied: seat 3
        # gets the top card and the exposed one becomes the burn), then the board.
        await p.play(initial_statuses() + script(table, *SETUP, "new_hand", "deal 2 3:up 4 1 2 3 4 1"))
        exposed = await p.alert("exposed_card")
        exposed_card = registry().by_uid[table.seats[3][0]].card
        await p.play(
            script(
                table,
                "deal 3",
                "move seat:3#0 burn",
                "round",
                "flop",
                "round",
                "burn",
                "turn",
                "round",
                "burn",
                "river",
            )
        )
        await p.alert("exposed_card", status="resolved")
        board = [registry().by_uid[uid].card for uid in table.zones["board"]]
        seat_cards = {s: [registry().by_uid[u].card for u in uids] for s, uids in table.seats.items()}
        # The hand's end as the service hands it to its display (the engine's result).
        result = _result(exposed.hand, board, seat_cards[4])
        display.produced([Outgoing("hand", 0, display.topics.hands, result.to_json(), retain=False)])

        summary = page.locator("#last-hand")
        await expect(summary).to_have_text(f"Last hand {exposed.hand}: showdown — seat 4 wins 34")
        await summary.click()
        detail = page.locator("#last-hand-detail article.hand")
        await expect(detail).to_be_visible()
        flop = detail.locator('section[data-street="flop"]')
        await expect(flop.locator("li.action")).to_have_text(["Seat 2 bets 10", "Seat 4 calls 10"])
        assert faces_to_codes(await flop.locator("h4").inner_text()) == set(board[:3])
        await expect(detail.locator('section[data-street="preflop"] li.action').nth(2)).to_have_text(
            "Seat 4 raises to 6"
        )
        shown = detail.locator('section[data-street="showdown"] li')
        await expect(shown).to_have_count(1)
        assert faces_to_codes(await shown.inner_text()) == set(seat_cards[4])
        await expect(detail.locator(".pots li.pot")).to_have_text(
            "Main pot 34 (seats 2, 4 eligible): seat 4 wins 34"
        )
        await expect(detail.locator('.alert-changes li[data-code="exposed_card"]').first).to_contain_text(
            "exposed_card seat 3 raised"
        )
        await expect(detail.locator('.alert-changes li[data-code="exposed_card"]').last).to_contain_text(
            "exposed_card seat 3 resolved"
        )
        # Opened, it scrolls down, never sideways (the dealer's 1024 px screen).
        assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        await page.screenshot(path=artefact("dealer-last-hand.png"), full_page=True)
        texts = "\n".join(await page.evaluate("window.shownTexts")) + await page.content()
    assert errors == []
    # Hole cards on the page: only seat 4's, tabled face up, and seat 3's card dealt face up.
    hidden = {card for seat, cards in seat_cards.items() if seat != 4 for card in cards} - {exposed_card}
    assert len(hidden) >= 5
    assert faces_to_codes(texts) <= set(board) | set(seat_cards[4]) | {exposed_card}
    assert not {card for card in hidden if re.search(rf"\b{card}\b", texts)}
