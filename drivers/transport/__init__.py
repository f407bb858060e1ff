"""Byte transports of the device drivers."""
