"""Two tables whose configs sit in one directory (as a tester's tmp dir would hold them).

The journal's default path is relative to the config file, so both services find the same
file: one table's hands must not leak into the other's.
"""

from __future__ import annotations

from pathlib import Path

from testing.mosquitto import Mosquitto
from tests.acceptance.harness import Scenario, run_scenario, write_config
from tests.acceptance.scenarios import DEAL, SENSORS, hand

EXPOSED = Scenario(
    "exposed", hand(SENSORS, "key new_hand", "deal 3 5 7 1 3 5:up"), ["exposed_card 5 warning raised"]
)
CLEAN = Scenario("clean", hand(SENSORS, "key new_hand", DEAL, "key round_complete"), [])


async def test_tables_sharing_a_directory_stay_apart(mosquitto_session: Mosquitto, tmp_path: Path) -> None:
    url, port = mosquitto_session.url, mosquitto_session.port
    first = await run_scenario(EXPOSED, "dir-a", port, write_config(tmp_path, url, "dir-a", "roberts"))
    assert first.lines() == EXPOSED.expect
    second = await run_scenario(CLEAN, "dir-b", port, write_config(tmp_path, url, "dir-b", "roberts"))
    assert second.lines() == [], second.log[-3000:]
    assert all(state["hand"] <= 1 for state in second.states), second.states[-1]
