"""Broker connection helpers of the service: the aiomqtt client from ``[mqtt]``, and the backoff."""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass
from typing import Final

import aiomqtt

from config.models import MqttSection

#: Seconds to wait for CONNACK, SUBACK, PUBACK before the connection is considered broken.
BROKER_TIMEOUT_S: Final = 5.0


def client_id(mqtt: MqttSection, table: str) -> str:
    """The configured client id, or one derived from the root and table (stable across restarts).

    Stable, because the session is persistent: after a crash the broker hands the restarted
    controller the events that arrived meanwhile.
    """
    if mqtt.client_id:
        return mqtt.client_id
    return re.sub(r"[^A-Za-z0-9_.-]", "-", f"tablectl-{mqtt.root}-{table}")


def tls_context(mqtt: MqttSection) -> ssl.SSLContext | None:
    """The TLS context for an ``mqtts://`` URL or a ``[mqtt.tls]`` section, else None."""
    if not mqtt.use_tls:
        return None
    tls = mqtt.tls
    context = ssl.create_default_context(
        cafile=str(tls.ca_file) if tls is not None and tls.ca_file is not None else None
    )
    if tls is not None and tls.cert_file is not None:
        context.load_cert_chain(
            str(tls.cert_file), str(tls.key_file) if tls.key_file is not None else None
        )
    if tls is not None and tls.insecure:
        context.check_hostname = False
    return context


def make_client(mqtt: MqttSection, identifier: str, will: aiomqtt.Will) -> aiomqtt.Client:
    """A client for the configured broker (call inside the running event loop).

    The same client is re-entered after every lost connection, so that messages it had already
    received but not yet handed out are kept.
    """
    context = tls_context(mqtt)
    return aiomqtt.Client(
        mqtt.host,
        mqtt.port,
        username=mqtt.username,
        password=mqtt.password.get_secret_value() if mqtt.password is not None else None,
        identifier=identifier,
        will=will,
        clean_session=False,
        keepalive=mqtt.keepalive,
        timeout=BROKER_TIMEOUT_S,
        tls_context=context,
        tls_insecure=bool(mqtt.tls is not None and mqtt.tls.insecure) if context else None,
    )


@dataclass
class Backoff:
    """Exponential backoff: ``first``, doubling up to ``ceiling``; ``reset()`` after a success."""

    first: float = 0.1
    ceiling: float = 5.0
    _next: float = 0.0

    def __post_init__(self) -> None:
        self._next = self.first

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.ceiling)
        return delay

    def reset(self) -> None:
        self._next = self.first
