"""Fixtures of the display tests: a headless Chromium per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import BrowserContext

from testing.browser import browser


@pytest.fixture(params=[(1024, 600), (800, 480)], ids=lambda size: f"{size[0]}x{size[1]}")
def screen(request: pytest.FixtureRequest) -> tuple[int, int]:
    """The dealer's touchscreens: (width, height) of a 7-10" and of a 5" one."""
    size: tuple[int, int] = request.param
    return size


@pytest.fixture
async def chromium() -> AsyncIterator[BrowserContext]:
    """Debian's Chromium, headless, 1024x600 (the 7-10" touchscreen)."""
    async with browser(1024, 600) as context:
        yield context


# ``tablectl run`` as a real process, stopped at the end of the test (the service tests' fixture).
from tests.service.conftest import start_service  # noqa: E402, F401
