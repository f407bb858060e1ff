"""The MQTT link every part of tablectl shares: drivers, the controller, the demo, floor tools.

- :mod:`link.client`: the one client factory (credentials, TLS, ``TCP_NODELAY``, timeouts) and
  client ids;
- :mod:`link.reconnect`: the one reconnect loop of every client (connect, serve, pause, again);
- :mod:`link.backoff`: the one exponential backoff of those loops;
- :mod:`link.outbox`: messages waiting for the broker, bounded, with a last-value slot for the
  retained status that an overflow never drops;
- :mod:`link.commands`: the ordered, bounded queue of device commands received on ``cmd``;
- :mod:`link.device`: a device driver's side of the broker (will, outbox, commands, reconnects);
- :mod:`link.aiomqtt_adapter`: the one place that reaches past aiomqtt's public API, and why.

It imports ``contract`` and ``config`` only (see ``docs/architecture.md``).
"""
