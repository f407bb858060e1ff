"""The registry: the ``driver`` string of a configuration picks the driver, options reach it."""

from __future__ import annotations

import logging

import pytest

from config.loader import load_table
from config.models import MqttSection, RfidReaderDevice, SensorBoardDevice, ShufflerDevice
from contract.topics import Topics
from drivers.driver import DriverOptions
from drivers.registry import DRIVERS, open_driver, open_drivers
from drivers.rfid.driver import RfidReader
from drivers.sensors.driver import SensorBoard
from drivers.shuffler.driver import Shuffler
from testing.memory_link import MemoryLink
from tests.conftest import EXAMPLE_CONFIG

TOPICS = Topics("holdem", "treg")
SHUFFLER = ShufflerDevice(id="shuffler", driver="shuffler", port="/dev/ttyUSB7", reconnect_max_s=3.0)
READER = RfidReaderDevice(
    id="rfid-1", driver="rfid", port="socket://127.0.0.1:9", antennas={1: "seat:1"}, fault_crc_errors=4
)
BOARD = SensorBoardDevice(id="sensors", driver="sensors", vendor_id=0x1209, product_id=0x7AB1)


def test_each_driver_string_opens_its_device() -> None:
    assert set(DRIVERS) == {"shuffler", "rfid", "sensors"}
    for config, device_type in ((SHUFFLER, Shuffler), (READER, RfidReader), (BOARD, SensorBoard)):
        driver = open_driver(config, MqttSection(), TOPICS)
        assert isinstance(driver.device, device_type)
        assert (driver.device_id, driver.kind, driver.log.name) == (
            config.id,
            config.driver,
            f"drivers.{config.driver}",
        )


def test_the_configuration_sets_the_default_options() -> None:
    shuffler = open_driver(SHUFFLER, MqttSection(), TOPICS)
    reader = open_driver(READER, MqttSection(), TOPICS)
    assert shuffler.options == DriverOptions(reconnect_max_s=3.0)
    assert (reader.options.fault_errors, reader.options.fault_window_s) == (4, 5.0)


def test_keyword_options_reach_the_driver_and_its_device() -> None:
    link = MemoryLink("rfid-1", log=logging.getLogger("drivers.rfid"))
    options = DriverOptions(resend_buffer=7)
    driver = open_driver(READER, MqttSection(), TOPICS, options=options, link=link, min_rssi=-42)
    assert driver.options is options
    assert driver.link is link
    assert driver.session.recent.maxlen == 7
    assert isinstance(driver.device, RfidReader)
    assert driver.device.tracker.min_rssi == -42
    board = open_driver(BOARD, MqttSection(), TOPICS, silence_s=0.7)
    assert isinstance(board.device, SensorBoard)
    assert board.device.port.silence_s == 0.7
    # An option another kind of driver takes is an error, not silently dropped.
    with pytest.raises(TypeError, match="min_rssi"):
        open_driver(SHUFFLER, MqttSection(), TOPICS, min_rssi=-42)


def test_open_drivers_opens_the_enabled_devices_of_a_table() -> None:
    config, _ = load_table(EXAMPLE_CONFIG)
    disabled = config.devices[0].model_copy(update={"enabled": False})
    config = config.model_copy(update={"devices": [disabled, *config.devices[1:]]})
    drivers = open_drivers(config)
    assert [d.device_id for d in drivers] == [d.id for d in config.devices[1:]]
