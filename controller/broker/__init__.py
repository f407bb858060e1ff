"""The embedded MQTT broker (amqtt, loopback only): the demo's and ``[mqtt] url = "embedded"``."""
