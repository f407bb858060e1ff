"""The demo's table rig: the simulated table, the production drivers on it, the engine service.

:class:`simulators.table.SimulatedTable` stands where the hardware would (the shuffler and the
RFID reader on pseudo-terminals, the sensor board behind a pyusb backend served on a unix socket)
and rewrites the configuration to point each device at its simulator. The drivers the
configuration names are then opened exactly as at a table (``controller.devices.DeviceRunner``,
which uses :func:`drivers.registry.open_driver`), and the engine service
(``controller.serving.Service``) runs in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from config.models import TableConfig
from config.registry import DeckRegistry
from controller.demo.hands import BoardApi, ShufflerApi, ZoneReaderApi

if TYPE_CHECKING:
    from controller.serving import Service

log = logging.getLogger(__name__)

#: A shuffle at a real pace; ``--speed`` divides it, ``--speed 0`` makes it near instant.
SHUFFLE_S: Final = 8.0
FLAT_OUT_SPEED: Final = 1000.0
#: How long the service gets to publish ``offline`` and close its journal.
STOP_TIMEOUT_S: Final = 5.0


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


async def start_rig(
    stack: AsyncExitStack,
    config: TableConfig,
    *,
    speed: float,
    seed: int,
    noise: float = 0.0,
) -> Rig:
    """Start the simulators and the drivers; they are stopped when ``stack`` closes."""
    try:
        from controller.devices import DeviceRunner
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
    devices = DeviceRunner(config)
    await devices.start()
    stack.push_async_callback(_stop_drivers, devices)
    # Unplug the serial devices before the drivers are cancelled (the stack unwinds in reverse):
    # a serial driver then finds its port gone instead of tearing down a live stream, which can
    # stall; the USB board stays until its driver has let go of it.
    stack.push_async_callback(_unplug_serial, table)
    return Rig(
        cards=table,
        shuffler=table.shuffler,
        board=table.sensors,
        device_ids=tuple(d.id for d in config.devices if d.enabled),
        config=config,
    )


async def start_service(
    stack: AsyncExitStack, config: TableConfig, registry: DeckRegistry
) -> tuple[Service, asyncio.Task[int]]:
    """Start the engine service (and its dealer's display, when the configuration has one). It is
    stopped before the drivers when ``stack`` unwinds (it is pushed after them), so the engine
    never sees the drivers leave."""
    from controller.serving import Service

    stop = asyncio.Event()
    service = Service(config, registry, stop=stop)
    task = asyncio.create_task(service.run(), name="service")
    stack.push_async_callback(_stop_service, stop, task)
    return service, task


async def _close_table(table: Any) -> None:
    log.info("closing the simulated table")
    await table.close()


async def _unplug_serial(table: Any) -> None:
    log.info("unplugging the serial devices")
    table.shuffler.unplug()
    for reader in table.readers.values():
        reader.unplug()


async def _stop_drivers(devices: Any) -> None:
    log.info("stopping the drivers")
    stopping = asyncio.ensure_future(devices.stop())
    _done, pending = await asyncio.wait({stopping}, timeout=STOP_TIMEOUT_S + 1)
    if pending:
        for task in asyncio.all_tasks():
            if task.get_name().startswith("driver-") and not task.done():
                log.warning(
                    "driver task %s did not stop within %g s (at %s)",
                    task.get_name(), STOP_TIMEOUT_S + 1, _where(task),
                )


def _where(task: asyncio.Task[Any]) -> str:
    frames = task.get_stack()
    return " <- ".join(f"{f.f_code.co_name}:{f.f_lineno}" for f in frames) or "?"


async def _stop_service(stop: asyncio.Event, task: asyncio.Task[int]) -> None:
    """Let the service publish ``offline`` and close its journal, then make sure it is gone."""
    stop.set()
    log.info("stopping the engine service")
    try:
        await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT_S)
    except TimeoutError:
        log.warning("the engine service did not stop within %g s; cancelling it", STOP_TIMEOUT_S)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    except Exception as error:  # its failure is reported, the demo still shuts down
        log.warning("the engine service failed: %s", error)
