"""Open the production driver a device configuration names (its ``driver`` string).

The controller service and the demo start every configured device with::

    driver = open_driver(device, config.mqtt, Topics(config.mqtt.root, config.table.id))
    task = asyncio.create_task(driver.run())        # runs until cancelled

As python-can picks a bus by its interface name, :data:`DRIVERS` maps the ``driver`` string to
the function making that kind of driver, imported on use: a table without a USB board never loads
pyusb, and the reverse. Keyword options go to that function (``options=DriverOptions(...)`` and
``link=`` for any driver, ``usb_backend=`` and ``silence_s=`` for the sensor board,
``min_rssi=`` for the RFID reader).
"""

from __future__ import annotations

import importlib
from typing import Any, Final

from config.models import DriverConfig, MqttSection, TableConfig
from contract.topics import Topics
from drivers.driver import Device, Driver

#: The ``driver`` string of a device -> (module, function making its :class:`Driver`).
DRIVERS: Final[dict[str, tuple[str, str]]] = {
    "shuffler": ("drivers.shuffler.driver", "shuffler_driver"),
    "rfid": ("drivers.rfid.driver", "rfid_driver"),
    "sensors": ("drivers.sensors.driver", "sensor_board_driver"),
}


def open_driver(device: DriverConfig, mqtt: MqttSection, topics: Topics, **opts: Any) -> Driver[Device]:
    """The driver object for ``device``; ``await driver.run()`` runs it until cancelled."""
    entry = DRIVERS.get(device.driver)
    if entry is None:
        known = ", ".join(sorted(DRIVERS))
        raise ValueError(f"device {device.id!r}: no driver {device.driver!r} (known: {known})")
    module, function = entry
    make = getattr(importlib.import_module(module), function)
    driver: Driver[Device] = make(device, mqtt, topics, **opts)
    return driver


def open_drivers(config: TableConfig, **opts: Any) -> list[Driver[Device]]:
    """Drivers of every enabled device of a table configuration."""
    topics = Topics(config.mqtt.root, config.table.id)
    return [open_driver(d, config.device_mqtt(d), topics, **opts) for d in config.drivers()]
