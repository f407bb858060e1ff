"""``tablectl demo`` serves the dealer's display and a floor console for its table; Ctrl-C stops it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from playwright.async_api import expect

from controller.demo.pages import DEALER_PORT
from testing.browser import artefact, browser, new_page
from tests.support.terminal import AS_FROM_A_TERMINAL

REPO = Path(__file__).resolve().parents[2]
ADDRESS_RE = re.compile(r"^(dealer display|floor console): +(http://127\.0\.0\.1:\d+/)", re.MULTILINE)


def _gone(pid: int) -> bool:
    """The process has exited (no longer there, or a zombie its parent has not reaped)."""
    return not Path(f"/proc/{pid}").exists() or "\nState:\tZ" in Path(f"/proc/{pid}/status").read_text()


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


async def test_the_demo_serves_its_table_then_ctrl_c_stops_everything_cleanly(tmp_path: Path) -> None:
    """One demo for two questions: it prints both addresses and serves its table while the
    dealer plays; then a Ctrl-C stops it and its child processes cleanly, with a summary."""
    out, err = tmp_path / "demo.out", tmp_path / "demo.err"
    with out.open("wb") as sink, err.open("wb") as log:
        demo = subprocess.Popen(  # noqa: ASYNC220 - one process, waited for in a thread
            [
                *AS_FROM_A_TERMINAL,
                sys.executable,
                "-m",
                "controller.cli",
                "demo",
                "--no-view",
                "--speed",
                "0",
                "--seed",
                "4",
                "--mistake-rate",
                "0.5",
                "--json",
                "--log-level",
                "INFO",
            ],
            cwd=REPO,
            stdout=sink,
            stderr=log,
        )
    try:
        addresses: dict[str, str] = {}
        for _ in range(600):
            addresses = dict(ADDRESS_RE.findall(out.read_text()))
            if len(addresses) == 2 or demo.poll() is not None:
                break
            await asyncio.sleep(0.05)
        assert len(addresses) == 2, out.read_text() + err.read_text()[-3000:]
        dealer, floor = addresses["dealer display"], addresses["floor console"]
        view = await asyncio.to_thread(get_json, dealer + "api/view")
        assert view["table"]["id"] == "demo"
        async with browser(1024, 600) as context:
            page = await new_page(context)
            await page.goto(dealer)
            await expect(page.locator("#table-name")).to_contain_text("demo")
            await expect(page.locator("#health")).to_contain_text("controller online")
            await expect(page.locator("#seats > li")).to_have_count(9)
            await page.goto(floor)
            await expect(page.locator('#grid li[data-table="demo"]')).to_have_count(1)
            await page.screenshot(path=artefact("demo-floor.png"))
        tables = await asyncio.to_thread(get_json, floor + "api/tables")
        assert [t["id"] for t in tables["tables"]] == ["demo"]
        # Once the dealer is at work, interrupt it. The service's "hand 2 ended" says so, and
        # that the dealer has counted hand 1 (it counts a hand before dealing the next).
        for _ in range(2400):
            if "hand 2 ended" in err.read_text() or demo.poll() is not None:
                break
            await asyncio.sleep(0.05)
        assert "hand 2 ended" in err.read_text(), err.read_text()[-3000:]
        demo.send_signal(signal.SIGINT)
        assert await asyncio.to_thread(demo.wait, 30) == 130, err.read_text()[-3000:]
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    stdout, stderr = out.read_text(), err.read_text()
    assert "Traceback" not in stdout + stderr, stderr[-3000:]
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["hands"] >= 1
    assert summary["precision"] in (1.0, None)
    # Its child processes (the broker, the drivers, the engine service) went with it.
    children = [
        int(pid) for pid in re.findall(r"\(process (\d+)\)|: process (\d+)", stderr) for pid in pid if pid
    ]
    assert len(children) == 3, stderr[-3000:]
    for pid in children:
        assert _gone(pid), pid


def test_web_on_a_taken_port_is_a_clear_error() -> None:
    holder = socket.socket()
    with contextlib.suppress(OSError):  # someone may hold it already: taken either way
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", DEALER_PORT))
        holder.listen()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "controller.cli", "demo", "--no-view", "--web", "--hands", "1"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
    finally:
        holder.close()
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"cannot listen on 127.0.0.1:{DEALER_PORT}" in result.stderr
    assert "error: the engine service stopped during start-up" in result.stderr
    assert "Traceback" not in result.stderr
