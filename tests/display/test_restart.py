"""``tablectl run`` with a display, as a real process: its address, a crash and a restart."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from pathlib import Path

from playwright.async_api import BrowserContext, expect

from testing.browser import artefact, new_page
from testing.mosquitto import Mosquitto, free_port
from tests.display.support import SETUP, display_config, open_display
from tests.engine.scenario import initial_statuses
from tests.service.conftest import StartService
from tests.service.support import new_table, probe, script, until

URL_RE = re.compile(r"dealer display: (http://127\.0\.0\.1:(\d+)/)")


async def test_port_0_is_logged_as_a_url_and_a_taken_port_is_one_clear_error(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService
) -> None:
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir()
    service = start_service(display_config(first_dir, mosquitto.url, table="t5"))
    await until(lambda: URL_RE.search(service.log) is not None, what="the display's URL in the log")
    found = URL_RE.search(service.log)
    assert found is not None
    assert found.group(2) != "0"
    url = found.group(1)

    def get_view() -> dict[str, dict[str, str]]:
        with urllib.request.urlopen(url + "api/view", timeout=5) as response:
            view: dict[str, dict[str, str]] = json.load(response)
            return view

    view = await asyncio.to_thread(get_view)
    assert view["table"]["id"] == "t5"

    taken = int(found.group(2))
    config = display_config(second_dir, mosquitto.url, table="t6", port=taken)
    other = start_service(config)
    assert other.wait() == 1
    errors = [line for line in other.log.splitlines() if "ERROR" in line]
    assert len(errors) == 1
    assert f"dealer display: cannot listen on 127.0.0.1:{taken}" in errors[0]
    assert "Traceback" not in other.log


async def test_the_page_shows_the_controller_offline_then_recovers_with_the_same_alerts(
    mosquitto: Mosquitto, tmp_path: Path, start_service: StartService, chromium: BrowserContext
) -> None:
    port = free_port()
    config = display_config(tmp_path, mosquitto.url, port=port)
    url = f"http://127.0.0.1:{port}/"
    async with probe(mosquitto.port, "t1") as p:
        service = start_service(config)
        await p.status("online")
        page = await new_page(chromium)
        await open_display(page, url)
        await p.play(initial_statuses() + script(new_table(), *SETUP, "deal 2 3:up 4"))
        alert = await p.alert("exposed_card")
        article = page.locator(f'article[data-alert-id="{alert.id}"]')
        await expect(article.locator(".message")).to_have_text(alert.message)
        banners = page.locator("#banners")
        await expect(banners).not_to_contain_text("Controller offline")

        mark = len(p.messages)
        service.kill()
        await p.status("offline", after=mark)
        await expect(banners).to_contain_text("Controller offline")
        await expect(page.locator("#health")).to_contain_text("controller offline")
        await page.screenshot(path=artefact("dealer-controller-offline.png"))

        start_service(config)
        online = await p.status("online", after=mark)
        assert online.session == 2
        await expect(banners).not_to_contain_text("Controller offline", timeout=10_000)
        await expect(page.locator("#health")).to_contain_text("controller online")
        await expect(page.locator("article.alert")).to_have_count(1)
        await expect(article.locator(".message")).to_have_text(alert.message)
        await expect(article).to_have_attribute("data-status", "raised")
        # The reconnected page works: its Acknowledge reaches the restarted controller.
        await article.get_by_role("button", name="Acknowledge").click()
        assert (await p.alert("exposed_card", status="acknowledged", after=mark)).id == alert.id
        await expect(article).to_have_attribute("data-status", "acknowledged")
