"""The demo's table rig: the simulated table, and the table controller on it in a child process.

:class:`simulators.table.SimulatedTable` stands where the hardware would (the shuffler and the
RFID readers on pseudo-terminals, the sensor board behind a pyusb backend served on a unix socket)
and rewrites the configuration to point each device at its simulator. The drivers the
configuration names are then opened exactly as at a table (``controller.service.drivers.DeviceRunner``,
which uses :func:`drivers.registry.open_driver`), and the engine service of ``tablectl run``
runs: each in a child process of its own
(:class:`controller.demo.service_process.ServiceProcess`), so the two cores share the work.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Final

from config.models import TableConfig
from controller.demo.hands import BoardApi, ShufflerApi, ZoneReaderApi
from controller.demo.service_process import ServiceProcess

log = logging.getLogger(__name__)

#: A shuffle at a real pace; ``--speed`` divides it, ``--speed 0`` makes it near instant.
SHUFFLE_S: Final = 8.0
FLAT_OUT_SPEED: Final = 1000.0


class RigError(RuntimeError):
    """The table rig cannot be built (a component is missing from this build)."""


@dataclass
class Rig:
    """What the dealer's hands need from the running table."""

    cards: ZoneReaderApi
    shuffler: ShufflerApi
    board: BoardApi
    device_ids: tuple[str, ...]
    config: TableConfig
    #: The drivers' child process (the demo fails when it dies).
    drivers: ServiceProcess


async def start_rig(
    stack: AsyncExitStack,
    config: TableConfig,
    *,
    speed: float,
    seed: int,
    noise: float = 0.0,
    log_level: str = "WARNING",
) -> Rig:
    """Start the simulators, and the drivers in a child process; they are stopped when ``stack``
    closes."""
    try:
        from simulators.table import SimulatedTable
    except ImportError as error:  # a partial build: say what is missing, no traceback
        raise RigError(f"the demo needs {error.name}, which is not in this build") from None

    table = SimulatedTable(
        config,
        speed=speed if speed > 0 else FLAT_OUT_SPEED,
        shuffle_s=SHUFFLE_S,
        seed=seed,
        reader_options={"miss_rate": noise},
    )
    config = await table.start()
    stack.push_async_callback(_close_table, table)
    drivers = ServiceProcess(config, role="drivers", log_level=log_level)
    await drivers.start()
    stack.push_async_callback(drivers.stop)
    return Rig(
        cards=table,
        shuffler=table.shuffler,
        board=table.sensors,
        device_ids=tuple(d.id for d in config.devices if d.enabled),
        config=config,
        drivers=drivers,
    )


async def start_controller(stack: AsyncExitStack, config: TableConfig, *, log_level: str) -> ServiceProcess:
    """Start the engine service of ``tablectl run`` (and its dealer's display, when the
    configuration has one) in a child process. It is stopped before the drivers when ``stack``
    unwinds (it is pushed after them), so the engine never sees the drivers leave."""
    controller = ServiceProcess(config, log_level=log_level)
    await controller.start()
    stack.push_async_callback(controller.stop)
    return controller


async def _close_table(table: Any) -> None:
    log.info("closing the simulated table")
    await table.close()
