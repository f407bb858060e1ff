"""The table PC's bridge to the floor: one mosquitto ``connection`` section, to one floor broker
or to every node of a floor cluster.

Both renderings write it with this function: the table's (``tablectl deploy --config``, from
``[deploy.floor]``) and the floor's (``tablectl deploy --floor``, one per table), so that what a
floor administrator hands over is what the table PC runs.

The bridge is an ordinary MQTT 3.1.1 client of the floor (NATS's MQTT gateway speaks nothing
else; ``try_private false``: no mosquitto-only bridge handshake) with a persistent session
(``cleansession false``) at QoS 1, so that what the table publishes while the floor link is down
waits in the table PC's broker and follows once it is back. With several nodes the bridge takes
them in turn (``round_robin true``: they are equals; each table lists them from a different
first node, so that the tables spread over the cluster).

The public state alone crosses at QoS 0 (``BRIDGE_QOS``): it is a retained snapshot, superseded
at the table's next change, and mosquitto sends a bridge the retained messages of its ``out``
topics each time it connects, so the floor always gets the newest state after a lost
connection; what QoS 1 would add is a backlog of superseded states after every outage, and, on a
NATS floor, a JetStream store (and its wait for the stream's leader) for every state on the
floor's busiest topic, although no session subscribes to it (the recorder takes hands, alerts
and statuses; consoles follow the state at QoS 0). Alerts, hand results and statuses stay QoS 1:
they are history, stored once each.

Retained messages: to one floor broker the state and the status cross retained (the console's
first picture of every table). To a NATS cluster they cross without the retain flag
(``bridge_outgoing_retain false``): NATS 2.9 stores a retained message in a JetStream stream
before it routes it, so every state on the floor would wait (4 s at a time) for that stream's new
leader when its node dies. Plain messages are core NATS routing and wait for nothing; a console
takes its first picture from the floor's store instead (the latest state and status of every
table, ``controller.floor.store``). mosquitto still sends the bridge its retained messages at
every connection (the newest state and status), only without the flag.

The state's own paths (a cluster only): the table's state crosses on two connections of its
own (``connection tablectl-T-floor-state`` and ``-state-2``, no session, QoS 0), starting on
the second and the third node, and not on the session's connection, which carries the history
(alerts, hand results, statuses: QoS 1, stored once). When a node dies, the state goes on
through the connection on a node left while the other is taken up again — which on NATS 2.9
takes 4-9 s more when the dead node led the stream of the MQTT sessions (no node accepts a
connection meanwhile). The state is kept off the session's connection because that connection
stalls whenever the dead node led the stream of the QoS 1 messages: NATS 2.9 reads a client's
messages in order and holds the next until the QoS 1 one before it is stored (up to 4 s, then
it closes the connection), so a state behind an alert waited with it; with the state on that
connection and one other, a table whose other connection was on the dead node went 5-9 s
without a state (``benchmarks/floor_cluster.py --state-paths main+1``). The consoles take each
state once (the copies are alike, byte for byte).

The alerts and the hand results take the fast paths too: the session's connection carries them
at QoS 1 for the recorders (stored once each, as before), and the state's two connections carry
a copy at QoS 0 for the pages. When the dead node led the sessions' stream, the session's
connection of a third of the tables is away 8-17 s (the stream's election, then a connection
held 4 s, then mosquitto's backoff), and their alert changes and hands waited with it although
the pages are to show them within a second; on the state's paths they come at once. A QoS 0
copy lost with a node costs nothing: the session's copy follows. The consoles show each alert
change and hand result once (``controller.floor.console``: by the keys the store uses), and
the recorders store it once (the same keys), whichever copy comes first. Statuses stay on the
session alone: each table's newest one is sent again at every connection anyway.

Reconnecting is tuned so that losing a node costs seconds: the next node is tried after
``RESTART_BASE_S`` (mosquitto's default is 5 s rising to 30 s, and a 55 s gap was measured with
it), backing off to ``RESTART_CAP_S`` at most. The cap is short because a NATS node refuses
connections (after holding each for 4 s) while the stream of the MQTT sessions elects a leader,
which takes 4-9 s after its leader's node died: a bridge that backed off further would come
back seconds after the cluster does. A node that stops answering without closing the connection
is found dead after 1.5 x ``KEEPALIVE_S``.

The state's own connections take a lost connection up later, and each table at its own time
(``state_restart_s``: 10 to 19 s, by the table's name): while one is away the other carries the
state, so nothing waits for it, and a node's death no longer sends a third of every table's
connections to the nodes left in the same two seconds. When the dead node led the stream of the
MQTT sessions, every connection attempt before its new leader (4-9 s) is held 4 s and closed;
with ``restart_timeout 1 2`` the state's connections made two thirds of those attempts and of the
burst that followed the election (about 500 TLS handshakes and session records in 2 s at 500
tables), and the consoles' lag rose to p50 0.3 s in those seconds. A state's connection first
tried after 10 s finds the new leader at its first attempt. ``restart_timeout`` with one value is
a constant delay (mosquitto resets its backoff once a CONNECT is sent, so a cap would not spread
the attempts a NATS node holds and closes).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from contract.topics import Topics

#: First delay before reconnecting (seconds), and the most it backs off to (see above).
RESTART_BASE_S: Final = 1
RESTART_CAP_S: Final = 2
#: The range of the state's connections' ``restart_timeout`` (seconds), a table's own by its name
#: (see above): from after NATS's longest election (9 s).
STATE_RESTART_S: Final = (10, 19)
#: The bridge's keepalive at the floor (seconds).
KEEPALIVE_S: Final = 10


@dataclass(frozen=True)
class BridgeSpec:
    """What one table's bridge needs."""

    table: str
    root: str
    #: (host, port) of the floor broker or of each node, in the order to try them.
    addresses: tuple[tuple[str, int], ...]
    ca_file: Path
    password: str
    allow_input: bool = False
    cert_file: Path | None = None
    key_file: Path | None = None
    #: Whether retained messages cross retained: yes to one floor broker (its console's first
    #: picture), no to a cluster (see above, "Retained messages").
    retained: bool = True

    @property
    def username(self) -> str:
        return bridge_user(self.table)


def bridge_user(table: str) -> str:
    """The bridge's user name at the floor."""
    return f"{table}-bridge"


def public_topics(topics: Topics) -> list[str]:
    """What may leave the table PC: never a tag UID, never a hole card not tabled face up."""
    return [topics.alerts, topics.state, topics.hands, topics.controller_status]


#: The QoS of each public topic on the bridge (see above: the state is a retained snapshot).
BRIDGE_QOS: Final = {"state": 0, "alerts": 1, "hands": 1, "controller/status": 1}


def bridge_qos(topics: Topics, topic: str) -> int:
    """The QoS ``topic`` (one of ``public_topics(topics)``) crosses the bridge with."""
    return BRIDGE_QOS[topic.removeprefix(f"{topics.base}/")]


def _connect_lines(spec: BridgeSpec, addresses: tuple[tuple[str, int], ...], client_id: str) -> list[str]:
    """The lines both connections of a bridge share: where, how, who."""
    lines = ["addresses " + " ".join(f"{host}:{port}" for host, port in addresses)]
    if len(addresses) > 1:
        lines += [
            "# The nodes of one cluster are equals: on a lost connection the next one is tried, and",
            "# the bridge stays there (the session is the cluster's, any node resumes it).",
            "round_robin true",
        ]
    lines += [
        "bridge_protocol_version mqttv311",
        "try_private false",
        f"bridge_cafile {spec.ca_file}",
        "bridge_insecure false",
        "bridge_tls_version tlsv1.2",
    ]
    if spec.cert_file is not None and spec.key_file is not None:
        lines += [f"bridge_certfile {spec.cert_file}", f"bridge_keyfile {spec.key_file}"]
    lines += [
        f"remote_clientid {client_id}",
        f"remote_username {spec.username}",
        f"remote_password {spec.password}",
    ]
    return lines


def _reconnect_lines() -> list[str]:
    return [
        f"# Losing the floor (a node) costs seconds: retry after {RESTART_BASE_S} s, backing off to "
        f"{RESTART_CAP_S} s",
        "# (a NATS node refuses connections for the 4-9 s its session stream elects a leader);",
        f"# a node that stops answering is found dead within {KEEPALIVE_S * 3 // 2} s.",
        f"restart_timeout {RESTART_BASE_S} {RESTART_CAP_S}",
        f"keepalive_interval {KEEPALIVE_S}",
    ]


def state_restart_s(table: str) -> int:
    """The ``restart_timeout`` of ``table``'s state connections: one of ``STATE_RESTART_S``, the
    same for the table at every rendering, spread evenly over the tables (see above)."""
    low, high = STATE_RESTART_S
    return low + zlib.crc32(table.encode()) % (high - low + 1)


def _state_reconnect_lines(table: str) -> list[str]:
    delay = state_restart_s(table)
    return [
        f"# A lost connection is taken up after {delay} s (each table its own, {STATE_RESTART_S[0]}-"
        f"{STATE_RESTART_S[1]} s): the other path",
        "# carries the state meanwhile, and the nodes left are not sent every table's connections",
        "# at once while they elect new leaders (4-9 s).",
        f"restart_timeout {delay}",
        f"keepalive_interval {KEEPALIVE_S}",
    ]


#: The state's own connections to a cluster (see the module docstring).
STATE_PATHS: Final = 2


def fast_path_topics(topics: Topics) -> list[str]:
    """The topics on the state's own connections, all at QoS 0: the state, and a copy for the
    pages of the alerts and hand results the session's connection carries at QoS 1 (see the
    module docstring)."""
    return [topics.state, topics.alerts, topics.hands]


def state_path_section(spec: BridgeSpec, number: int = 1) -> str:
    """The state's connection ``number`` (1 or 2) to a cluster (see the module docstring),
    starting ``number`` nodes after the session's."""
    topics = Topics(spec.root, spec.table)
    shift = number % len(spec.addresses)
    addresses = spec.addresses[shift:] + spec.addresses[:shift]
    suffix = "" if number == 1 else f"-{number}"
    lines = [
        "",
        f"# --- The state's path {number} to the floor " + "-" * 52,
        "# The state, on a connection of its own starting on another node than the others: when a",
        "# node dies, the state goes on through the other path (the consoles take each state once),",
        "# and no QoS 1 message held up by the cluster ever holds a state up. The alerts and hand",
        "# results too, a copy at QoS 0 for the pages (the session's connection carries them at",
        "# QoS 1 for the history, and may be away seconds longer when a node dies).",
        f"connection tablectl-{spec.table}-floor-state{suffix}",
        *_connect_lines(spec, addresses, f"tablectl-{spec.table}-bridge-state{suffix}"),
        "cleansession true",
        "start_type automatic",
        *_state_reconnect_lines(spec.table),
        "notifications false",
        "bridge_outgoing_retain false",
        *(f"topic {topic} out 0" for topic in fast_path_topics(topics)),
    ]
    return "\n".join(lines) + "\n"


def bridge_section(spec: BridgeSpec) -> str:
    """The ``connection`` section(s) of the table PC's mosquitto.conf (they hold the password):
    to a cluster (several nodes, nothing retained), the state on paths of its own instead."""
    topics = Topics(spec.root, spec.table)
    state_paths = len(spec.addresses) > 1 and not spec.retained
    lines = [
        "",
        "# --- The bridge to the floor --------------------------------------------------------------",
        "# Out: the public topics only (dev/# never leaves this PC); in: nothing, or the floor's",
        "# dealer inputs when the house allows acknowledgement from the floor.",
        f"connection tablectl-{spec.table}-floor",
        *_connect_lines(spec, spec.addresses, f"tablectl-{spec.table}-bridge"),
        "cleansession false",
        "start_type automatic",
        *_reconnect_lines(),
        "notifications true",
        "notifications_local_only true",
    ]
    if not spec.retained:
        lines += [
            "# Nothing crosses retained: the cluster would store each retained message in JetStream",
            "# before routing it (a wait for a new stream leader when a node dies); the consoles take",
            "# their first picture from the floor's store.",
            "bridge_outgoing_retain false",
        ]
    if state_paths:
        lines.append("# The history (QoS 1); the state crosses on paths of its own (below).")
    else:
        lines.append("# The state at QoS 0: the newest one is sent again at every (re)connection.")
    lines += [
        f"topic {topic} out {bridge_qos(topics, topic)}"
        for topic in public_topics(topics)
        if not (state_paths and topic == topics.state)
    ]
    if spec.allow_input:
        lines.append(f"topic {topics.input} in 1")
    section = "\n".join(lines) + "\n"
    if state_paths:
        section += "".join(state_path_section(spec, n) for n in range(1, STATE_PATHS + 1))
    return section
