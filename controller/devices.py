"""The ``[[devices]]`` drivers run inside ``tablectl run``.

Drivers publish their events on the broker like any outside driver would; the service reads them
back from there, so a driver in this process and one on another machine look the same to the
engine.
"""

from __future__ import annotations

import logging

from config.models import TableConfig

log = logging.getLogger(__name__)


class DeviceRunner:
    """Starts and stops the enabled drivers of the configuration."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        self.devices = [d for d in config.devices if d.enabled]

    async def start(self) -> None:
        if not self.devices:
            log.info("no [[devices]]: engine only, fed by drivers that publish to the broker")
            return
        names = ", ".join(f"{d.id} ({d.driver})" for d in self.devices)
        log.warning(
            "in-process drivers are not yet available in this build: [[devices]] %s are not "
            "started here; run the drivers separately against the same broker",
            names,
        )

    async def stop(self) -> None:
        return None
