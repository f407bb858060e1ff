"""The private mosquitto of the tests now lives in ``testing/mosquitto.py`` (the benchmarks start
it too); this name stays for tests written against the old place."""

from testing.mosquitto import Mosquitto, free_port, running_mosquitto

__all__ = ["Mosquitto", "free_port", "running_mosquitto"]
