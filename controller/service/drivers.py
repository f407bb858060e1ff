"""The ``[[devices]]`` drivers run inside ``tablectl run``.

Drivers publish their events on the broker like any outside driver would; the service reads them
back from there, so a driver in this process and one on another machine look the same to the
engine. Each driver runs as its own task (``drivers.registry.open_driver``); one that fails is
logged and does not take the service or the other drivers down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Final

from config.models import DriverConfig, TableConfig
from contract.topics import Topics

log = logging.getLogger(__name__)

STOP_TIMEOUT_S: Final = 5.0


class DeviceRunner:
    """Starts and stops the enabled drivers of the configuration."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        self.devices = config.drivers()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        if not self.devices:
            log.info("no [[devices]]: engine only, fed by drivers that publish to the broker")
            return
        # Imported on use: an engine-only controller never loads serial or USB libraries.
        from drivers.registry import open_driver

        topics = Topics(self.config.mqtt.root, self.config.table.id)
        for device in self.devices:
            # Each driver under its own broker identity, where it has one: the ACL confines it.
            driver = open_driver(device, self.config.device_mqtt(device), topics)
            self._tasks.append(
                asyncio.create_task(self._run(device, driver.run()), name=f"driver-{device.id}")
            )
            log.info("driver %s (%s) started", device.id, device.driver)

    async def _run(self, device: DriverConfig, running: Awaitable[None]) -> None:
        try:
            await running
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("driver %s (%s) failed; the service goes on without it", device.id, device.driver)

    async def stop(self) -> None:
        """Cancel the drivers (each publishes its own ``offline``) and wait for them a while.

        ``asyncio.wait`` rather than ``wait_for``: a driver slow to honour its cancellation is
        reported and left behind, it cannot hold the shutdown up.
        """
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=STOP_TIMEOUT_S)
            for task in pending:
                log.warning("%s did not stop within %g s", task.get_name(), STOP_TIMEOUT_S)
        self._tasks.clear()
