"""The one MQTT client factory: credentials, TLS, ``TCP_NODELAY`` and timeouts from ``[mqtt]``.

Drivers, the controller service, the demo and the floor tools all build their clients here::

    client = make_client(config.mqtt, client_id(config.mqtt, "t1", "floor"))
    async with client:
        await client.subscribe(...)

A client built here may be re-entered after a lost connection (aiomqtt allows it), which keeps the
messages it had received but not yet handed out.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import ssl
from typing import Final

import aiomqtt

from config.models import MqttSection
from link.aiomqtt_adapter import SocketWatch

#: Seconds to wait for CONNACK, SUBACK, PUBACK before the connection is considered broken.
BROKER_TIMEOUT_S: Final = 5.0
#: Alerts and device events are small messages that must go out at once: without TCP_NODELAY,
#: Nagle's algorithm and the broker's delayed ACK hold each one back for tens of milliseconds.
NO_DELAY: Final = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.-]")


def client_id(mqtt: MqttSection, table: str, suffix: str | None = None) -> str:
    """``[mqtt] client_id``, or ``tablectl-{root}-{table}``, then ``-{suffix}`` when given.

    Stable across restarts: the controller's session is persistent, and a broker hands a
    restarted controller the events that arrived meanwhile. Each driver, tool or monitor of a
    table takes its own suffix, so that no two clients of one table share an id.
    """
    base = mqtt.client_id or _UNSAFE.sub("-", f"tablectl-{mqtt.root}-{table}")
    return f"{base}-{_UNSAFE.sub('-', suffix)}" if suffix else base


def tls_context(mqtt: MqttSection) -> ssl.SSLContext | None:
    """The TLS context for an ``mqtts://`` URL or a ``[mqtt.tls]`` section, else None."""
    if not mqtt.use_tls:
        return None
    tls = mqtt.tls
    context = ssl.create_default_context(
        cafile=str(tls.ca_file) if tls is not None and tls.ca_file is not None else None
    )
    if tls is not None and tls.cert_file is not None:
        context.load_cert_chain(str(tls.cert_file), str(tls.key_file) if tls.key_file is not None else None)
    if tls is not None and tls.insecure:
        context.check_hostname = False
    return context


class _GivenUpAcknowledgement(logging.Filter):
    """aiomqtt logs a SUBACK or UNSUBACK whose request was given up (its task cancelled: a stop
    or a time limit while the broker was slow) as an error with a traceback. It is expected
    then and harmless (the broker did what was asked; nobody waits for the answer any more):
    told at DEBUG, without the traceback, so that a Ctrl-C in the first moments or a loaded
    machine does not print a traceback to the operator."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.msg
        if (
            isinstance(message, str)
            and message.startswith("Unexpected message ID")
            and "subscribe" in message
        ):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.exc_info, record.exc_text = None, None
            # (handlers do not look at the logger's level again: a record lowered is dropped
            # here unless DEBUG is on)
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


#: aiomqtt's logger (its default name, which the CLIs' log levels set), with the filter above.
MQTT_LOG: Final = logging.getLogger("mqtt")
MQTT_LOG.addFilter(_GivenUpAcknowledgement())


def make_client(
    mqtt: MqttSection,
    identifier: str,
    *,
    will: aiomqtt.Will | None = None,
    persistent: bool = False,
    queue_type: type[asyncio.Queue[aiomqtt.Message]] | None = None,
    max_inflight: int | None = None,
) -> aiomqtt.Client:
    """A client for the configured broker (build it inside the running event loop).

    ``persistent``: a session the broker keeps while the client is away (``clean_session``
    false), for a client that must not miss QoS 1 messages across a restart (the controller).
    ``max_inflight``: QoS 1 publishes sent before their PUBACKs (paho's default: 20; the rest wait
    in paho's queue, in order; 0: no limit).
    """
    context = tls_context(mqtt)
    client = aiomqtt.Client(
        mqtt.host,
        mqtt.port,
        username=mqtt.username,
        password=mqtt.password.get_secret_value() if mqtt.password is not None else None,
        identifier=identifier,
        will=will,
        clean_session=False if persistent else None,
        keepalive=mqtt.keepalive,
        timeout=BROKER_TIMEOUT_S,
        tls_context=context,
        tls_insecure=bool(mqtt.tls is not None and mqtt.tls.insecure) if context else None,
        socket_options=NO_DELAY,
        queue_type=queue_type,
        max_inflight_messages=max_inflight,
        logger=MQTT_LOG,
    )
    SocketWatch(client).install()  # (aiomqtt's own watch of the socket could outlive it)
    return client
