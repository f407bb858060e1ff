"""A shuffler driver in a process of its own, to be killed by a test (crash recovery).

Usage: ``python -m tests.drivers.shuffler_driver_process PORT MQTT_URL TABLE``; runs until killed.
"""

from __future__ import annotations

import asyncio
import sys

from config.models import MqttSection, ShufflerDevice
from contract.topics import Topics
from drivers.shuffler.driver import shuffler_driver


def main(argv: list[str]) -> int:
    port, url, table = argv
    device = ShufflerDevice(id="shuffler", driver="shuffler", port=port, reconnect_max_s=0.2)
    driver = shuffler_driver(device, MqttSection(url=url), Topics("holdem", table))
    asyncio.run(driver.run())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
