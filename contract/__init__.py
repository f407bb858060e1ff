"""The table contract: MQTT topics and payloads, as code.

Everything that reads or writes MQTT (drivers, engine service, simulators, tests, docs) uses these
models and the topic builder, so there is exactly one schema for the wire.
"""
