"""The embedded MQTT broker: amqtt in this process, on loopback only.

``tablectl demo`` runs it, and so does ``tablectl run`` with ``[mqtt] url = "embedded"``. Anonymous
clients are allowed because the broker listens on 127.0.0.1 alone (never 0.0.0.0, amqtt's
default); it speaks MQTT 3.1.1. Production tables use their own broker (mosquitto); this one
exists so that the demo needs no broker installed (amqtt comes with ``tablectl[demo]``).
"""

from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from typing import Any, Final

from amqtt.broker import Broker

from controller.broker.amqtt_adapter import bound_port, iterate_subscriptions_safely

log = logging.getLogger(__name__)

LOOPBACK: Final = "127.0.0.1"
#: amqtt logs every connection and packet at INFO, and harmless protocol oddities at WARNING.
_AMQTT_LOGGERS: Final = ("amqtt", "transitions")


class BrokerError(RuntimeError):
    """The embedded broker could not start."""


def _broker_config(port: int) -> dict[str, Any]:
    return {
        "listeners": {"default": {"type": "tcp", "bind": f"{LOOPBACK}:{port}", "max_connections": 0}},
        "timeout_disconnect_delay": 0,
        # Anonymous access is safe only because the listener is bound to loopback.
        "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
    }


class EmbeddedBroker:
    """An amqtt broker on ``127.0.0.1`` and a free port (or ``port``); ``url`` once started.

    Use as ``async with EmbeddedBroker() as broker: ... broker.url``.
    """

    def __init__(self, port: int = 0, *, quiet: bool = True) -> None:
        self._requested_port = port
        self._broker: Broker | None = None
        self.port: int | None = None
        if quiet:
            for name in _AMQTT_LOGGERS:
                logging.getLogger(name).setLevel(logging.ERROR)

    @property
    def url(self) -> str:
        if self.port is None:
            raise BrokerError("the embedded broker is not running")
        return f"mqtt://{LOOPBACK}:{self.port}"

    async def start(self) -> None:
        """Start listening; with port 0 the system picks a free port (no race with other users)."""
        broker = Broker(_broker_config(self._requested_port))
        iterate_subscriptions_safely(broker)
        try:
            await broker.start()
        except Exception as error:  # amqtt wraps bind errors in its own BrokerError
            raise BrokerError(
                f"embedded broker could not listen on {LOOPBACK}:{self._requested_port}: {error}"
            ) from None
        self._broker = broker
        self.port = self._bound_port(broker)
        log.info("embedded MQTT broker listening on %s", self.url)

    @staticmethod
    def _bound_port(broker: Broker) -> int:
        port = bound_port(broker, "default", LOOPBACK)
        if port is None:
            raise BrokerError("embedded broker started but its listening port is unknown")
        return port

    async def stop(self) -> None:
        """Disconnect every client and close the listener."""
        broker, self._broker = self._broker, None
        if broker is None:
            return
        try:
            await asyncio.wait_for(broker.shutdown(), 5.0)
        except (TimeoutError, Exception) as error:  # shutting down: report, never raise
            log.warning("embedded broker did not shut down cleanly: %s", error)
        self.port = None

    async def __aenter__(self) -> EmbeddedBroker:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
