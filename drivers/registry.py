"""Open the production driver a device configuration names (its ``driver`` string).

The controller service and the demo start every configured device with::

    driver = open_driver(device, config.mqtt, Topics(config.mqtt.root, config.table.id))
    task = asyncio.create_task(driver.run())        # runs until cancelled

Keyword options go to the driver's constructor (``options=DriverOptions(...)`` for any driver,
``usb_backend=`` for the sensor board, ``min_rssi=`` for the RFID reader).
"""

from __future__ import annotations

from typing import Any

from config.models import (
    DeviceConfig,
    MqttSection,
    RfidReaderDevice,
    SensorBoardDevice,
    ShufflerDevice,
    TableConfig,
)
from contract.topics import Topics
from drivers.driver import Device
from drivers.driver import Driver as NewDriver
from drivers.old_session import Driver


def open_driver(
    device: DeviceConfig, mqtt: MqttSection, topics: Topics, **opts: Any
) -> Driver | NewDriver[Device]:
    """The driver object for ``device``; ``await driver.run()`` runs it until cancelled."""
    # Imported on use: a table without a USB board never loads pyusb, and the reverse.
    if isinstance(device, ShufflerDevice):
        from drivers.shuffler.driver import shuffler_driver

        return shuffler_driver(device, mqtt, topics, **opts)
    if isinstance(device, RfidReaderDevice):
        from drivers.rfid.driver import rfid_driver

        return rfid_driver(device, mqtt, topics, **opts)
    if isinstance(device, SensorBoardDevice):
        from drivers.sensors.driver import sensor_board_driver

        return sensor_board_driver(device, mqtt, topics, **opts)
    raise ValueError(f"device {getattr(device, 'id', '?')!r}: no driver for {device!r}")


def open_drivers(config: TableConfig, **opts: Any) -> list[Driver | NewDriver[Device]]:
    """Drivers of every enabled device of a table configuration."""
    topics = Topics(config.mqtt.root, config.table.id)
    return [
        open_driver(d, config.device_mqtt(d), topics, **opts) for d in config.devices if d.enabled
    ]
