"""Debian's Chromium driven by Playwright, for the page tests and the display benchmark.

``playwright install`` cannot download a browser on these machines: the system's
``/usr/bin/chromium`` (apt-get install chromium) is launched instead, headless, with a fresh
profile, and without the sandbox when running as root (which Chromium refuses otherwise).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

from playwright.async_api import BrowserContext, Page, async_playwright

CHROMIUM_PATHS: Final = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
ARGS: Final = (
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
    "--autoplay-policy=no-user-gesture-required",  # as on the kiosk: the alert sound plays
)
REPO: Final = Path(__file__).resolve().parents[1]
#: Screenshots the tests keep, CI artefacts (ignored by git; docs/display.md, "Tests").
ARTEFACTS: Final = REPO / "artifacts" / "screenshots"


def chromium_path() -> str:
    """The system Chromium, or a clear error naming the package to install."""
    for path in (os.environ.get("TABLECTL_CHROMIUM"), *CHROMIUM_PATHS):
        if path and Path(path).exists():
            return path
    found = shutil.which("chromium")
    if found:
        return found
    raise RuntimeError("Chromium is not installed: apt-get install -y chromium (scripts/bootstrap does)")


@contextlib.asynccontextmanager
async def browser(width: int = 1024, height: int = 600) -> AsyncIterator[BrowserContext]:
    """A headless Chromium with a fresh profile and a ``width`` x ``height`` viewport."""
    args = list(ARGS)
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    with tempfile.TemporaryDirectory(prefix="tablectl-chromium-") as profile:
        async with async_playwright() as playwright:
            context = await playwright.chromium.launch_persistent_context(
                profile,
                executable_path=chromium_path(),
                headless=True,
                args=args,
                viewport={"width": width, "height": height},
            )
            try:
                yield context
            finally:
                await context.close()


async def new_page(context: BrowserContext, errors: list[str] | None = None) -> Page:
    """A page that records its JavaScript errors and console errors into ``errors``."""
    page = await context.new_page()
    if errors is not None:
        page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
        page.on(
            "console",
            lambda message: errors.append(f"console: {message.text}") if message.type == "error" else None,
        )
    return page


def artefact(name: str) -> Path:
    """Where a test keeps a screenshot (the directory is created)."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    return ARTEFACTS / name
