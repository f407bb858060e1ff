"""What aiomqtt 2.x does not offer publicly, in one place: manual acknowledgements, the socket.

aiomqtt has no public API for paho's application-controlled acknowledgements (aiomqtt issue
#345, "manual acknowledgement"); paho has had one since 2.0 (``manual_ack_set``, ``ack``). The
controller needs it to acknowledge a message only once it is journaled, so its paho client is
reached the way that issue describes; :func:`acknowledge_all` queues the PUBACKs of a group commit
as one write of paho's. Nothing else in tablectl touches aiomqtt's internals.

A message id is valid only on the connection it arrived on, so messages are also tagged with the
connection they came from: the intake's :class:`Received` carries it, and
:func:`connection_tagged_queue` sets it as a public attribute on aiomqtt's own message objects.

:func:`socket_of` gives a connected client's socket (paho's public ``socket()``, behind aiomqtt),
for diagnostics and the tests that check its options (TCP_NODELAY).

:class:`SocketWatch` keeps the event loop's watch of paho's socket to the socket paho has now
(aiomqtt's could outlive it and leave the next connection unread); :func:`tolerate_socket_race`
logs a watch asked for a socket already closed as one line, not a traceback.

:func:`fail_connect_when_closed` makes a connection the broker closes before its CONNACK fail
at once: aiomqtt ignores a disconnection before CONNACK and waits out its whole timeout.

:func:`publish_now` hands a message to paho and writes it to the socket in the same call (aiomqtt's
``publish`` does so only a few turns of the event loop later); :func:`drop_unacknowledged` makes
paho forget what a lost connection left unacknowledged, for a caller that publishes it again itself.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, NamedTuple, Protocol

import aiomqtt
from paho.mqtt import client as paho_client
from paho.mqtt.enums import MQTTErrorCode

log = logging.getLogger(__name__)


def enable_manual_acks(client: aiomqtt.Client) -> None:
    """Send PUBACK only when told (see :func:`acknowledge`)."""
    client._client.manual_ack_set(True)


class Acknowledgeable(Protocol):
    """A received message as far as its acknowledgement goes (aiomqtt's, or :class:`Received`)."""

    @property
    def mid(self) -> int: ...

    @property
    def qos(self) -> int: ...


def acknowledge(client: aiomqtt.Client, message: Acknowledgeable) -> None:
    """Acknowledge a QoS 1 message (a no-op for QoS 0) on the current connection."""
    if message.qos > 0:
        client._client.ack(message.mid, message.qos)


#: MQTT's PUBACK packet type (its first byte).
_PUBACK = 0x40
#: MQTT's PUBLISH packet type (the high 4 bits of its first byte).
_PUBLISH = 0x30


def acknowledge_all(client: aiomqtt.Client, messages: Sequence[Acknowledgeable]) -> None:
    """Acknowledge messages in order with one write (:func:`acknowledge` for each, in effect).

    paho queues every PUBACK as a packet of its own and writes each with a system call of its
    own: after a group commit that is dozens of sends, 5 µs or more a message. The same bytes
    (``40 02`` and the message id, each) go out as one packet of paho's queue.
    """
    packets = b"".join(struct.pack("!BBH", _PUBACK, 2, m.mid) for m in messages if m.qos == 1)
    if packets:
        # Queued: written at the loop's next turn with every other PUBACK queued by then. (Not
        # written at once as a publish is: a flood's messages, each acknowledged alone, then
        # cost a write and a watch's bookkeeping each, 5 µs of CPU a message more.)
        client._client._packet_queue(_PUBACK, packets, 0, 1)
    for message in messages:
        if message.qos > 1:
            acknowledge(client, message)


def publish_now(
    client: aiomqtt.Client, topic: str, payload: bytes, *, qos: int, retain: bool
) -> Coroutine[Any, Any, None]:
    """Publish ``payload`` and write it to the socket before returning; the coroutine returned
    waits for the broker's acknowledgement (PUBACK at QoS 1), as aiomqtt's ``publish`` does.

    aiomqtt's ``publish`` is a coroutine: its packet is made only once its task runs, and paho
    then asks for the socket's writability (``call_soon_threadsafe(add_writer)``), written at
    the loop's next ``select``: three turns of the loop, about 0.2 ms of an alert's latency.
    Here paho queues the packet now and its own writer (``_packet_write``, what its
    ``loop_write`` calls) sends what is queued, in order, at once. Every write of this
    connection's packets happens on the event loop's thread (aiomqtt's writer callback and this),
    so the packets are never interleaved; whatever the socket does not take now (a full send
    buffer) stays queued at its place, for the writer paho asked the loop for. A failed send is
    not handled here: paho keeps the packet queued and the socket's reader finds the connection
    lost (paho's ``loop_write`` would handle the disconnection itself, inside this call).

    Raises aiomqtt's ``MqttCodeError`` when paho refuses the message (no connection).
    """
    paho = client._client
    info = paho.publish(topic, payload, qos, retain)
    if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
        raise aiomqtt.MqttCodeError(info.rc, "Could not publish message")
    confirmation = asyncio.Event()
    if info.is_published():
        confirmation.set()
    else:
        # (before the write: aiomqtt's on_publish callback sets it, from the PUBACK read later)
        client._pending_publishes[info.mid] = confirmation
    _write_queued(paho)
    return _confirmed(client, info.mid, confirmation)


def _write_queued(paho: paho_client.Client) -> None:
    """Write what paho has queued now (its ``_packet_write``, what ``loop_write`` calls), and,
    once all of it is written, withdraw the wish to write that queueing it registered, as
    ``loop_write`` does after writing: otherwise the loop watched the socket for writing at its
    next turn, only to find nothing to write and stop watching (two ``epoll_ctl`` calls and a
    turn of the loop a publish). A failed or partial send leaves the wish, and the rest queued,
    for aiomqtt's writer."""
    if paho._out_packet and paho._sock is not None:
        paho._packet_write()
        if not paho._out_packet:
            paho._call_socket_unregister_write()


async def _confirmed(client: aiomqtt.Client, mid: int, confirmation: asyncio.Event) -> None:
    try:
        await confirmation.wait()
    finally:
        if client._pending_publishes.get(mid) is confirmation:
            del client._pending_publishes[mid]


def drop_unacknowledged(client: aiomqtt.Client) -> int:
    """Forget the publishes paho holds unacknowledged (paho's ``drop_out_messages``); how many.

    paho sends them again at the next CONNACK, before anything else: for a caller that publishes
    again itself what a lost connection left unacknowledged (the service's flights) each would
    reach the broker twice more, and a retained status of the lost connection could come
    before a new session's SUBACK."""
    return len(client._client.drop_out_messages())


def fail_connect_when_closed(client: aiomqtt.Client) -> None:
    """Fail ``async with client`` as soon as the broker closes the connection before CONNACK.

    aiomqtt's ``_on_disconnect`` returns early while the connection is not yet acknowledged, so a
    broker that accepts the TCP connection and then drops it (a NATS node whose MQTT sessions'
    stream has no leader does so after 4 s) costs the caller its whole timeout instead."""
    paho = client._client
    original = paho.on_disconnect

    def on_disconnect(*args: Any) -> None:
        connected = client._connected
        if not connected.done():
            reason = args[3] if len(args) > 3 else None
            connected.set_exception(
                aiomqtt.MqttError(f"the broker closed the connection before its CONNACK ({reason})")
            )
        if original is not None:
            original(*args)

    paho.on_disconnect = on_disconnect


def connection_tagged_queue(
    connection: Callable[[], int],
) -> type[asyncio.Queue[aiomqtt.Message]]:
    """A message queue class that tags each message with the connection it arrived on.

    A message received before a lost connection and handed out after the reconnection must not
    be acknowledged on the new one (:func:`arrived_on` says which one it came from).
    """

    class ConnectionTaggedQueue(asyncio.Queue[aiomqtt.Message]):
        def put_nowait(self, item: aiomqtt.Message) -> None:
            item.connection = connection()  # type: ignore[attr-defined]
            super().put_nowait(item)

    return ConnectionTaggedQueue


def arrived_on(message: aiomqtt.Message) -> int:
    """The connection number ``connection_tagged_queue`` gave ``message`` (0: untagged)."""
    number: int = getattr(message, "connection", 0)
    return number


def socket_of(client: aiomqtt.Client) -> socket.socket | None:
    """The TCP socket of a connected client (None while it is not connected)."""
    sock = client._client.socket()
    if isinstance(sock, _ReadAhead):
        sock = sock.socket
    return sock if isinstance(sock, socket.socket) else None


class _ReadAhead:
    """paho's socket, read up to 64 KiB at a time.

    paho reads a packet in pieces (its type byte, each byte of its length, then the rest), one
    system call each: four or more per message, most of a small message's cost. This reads
    ahead and hands paho the pieces from memory. ``pending()`` counts what is read ahead, so that
    the event loop's reader (aiomqtt's, and :class:`Intake`'s) goes on reading while any is left
    (the socket will not signal those bytes again) — but not while the intake is paused: the
    reader would then read a whole backlog in one go (each piece read ahead asks for the next).
    What is left is read when the intake resumes. Everything else is the socket's.
    """

    def __init__(self, sock: Any, paused: Callable[[], bool] = lambda: False) -> None:
        self.socket = sock
        self._paused = paused
        #: A read gave b"": the broker closed the connection (paho's own reading then finds it).
        self.closed = False
        self._data = b""
        self._at = 0

    def recv(self, size: int) -> bytes:
        if self._at >= len(self._data):
            data: bytes = self.socket.recv(max(size, 65536))
            if len(data) <= size:
                return data  # nothing left over (and b"": the broker closed the connection)
            self._data, self._at = data, 0
        piece = self._data[self._at : self._at + size]
        self._at += len(piece)
        return piece

    def holds_incomplete(self) -> bool:
        """What is read ahead is the first bytes of a PUBLISH packet (QoS 0 or 1) not yet whole."""
        data, at = self._data, self._at
        end = len(data)
        if at >= end:
            return False
        header = data[at]
        if header & 0xF0 != _PUBLISH or header & 0x06 > 0x02:
            return False
        length, multiplier, i = 0, 1, at + 1
        for _ in range(4):
            if i >= end:
                return True  # (its remaining length not yet whole)
            byte = data[i]
            i += 1
            length += (byte & 0x7F) * multiplier
            multiplier *= 128
            if not byte & 0x80:
                return i + length > end
        return False  # (a remaining length over 4 bytes: malformed, paho's to refuse)

    def read_more(self) -> bool:
        """One read of the socket when nothing is read ahead, or only the first bytes of a
        PUBLISH packet (kept, the read appended): whether it brought bytes. Nothing when the
        socket has none or fails (paho's own reading then meets that as it would).

        Without, each read of the socket that ended within a packet (most do: the broker's
        writes are not cut at packets) left that packet to paho's reading, about a dozen times
        as costly as :meth:`take_publish`: 16 % of the messages of the ingest benchmark."""
        if self._at < len(self._data) and not self.holds_incomplete():
            return False
        try:
            data: bytes = self.socket.recv(65536)
        except OSError:  # (BlockingIOError, ssl.SSLWantReadError: nothing to read yet)
            return False
        if not data:
            self.closed = True  # (paho's next read says so)
            return False
        rest = self._data[self._at :]
        self._data, self._at = (rest + data if rest else data), 0
        return True

    def take_publish(self) -> tuple[int, bytes, int, bytes] | None:
        """The first PUBLISH packet of what is read ahead (MQTT 3.1.1, QoS 0 or 1), taken off it:
        its first byte, topic, message id (0 at QoS 0) and payload; None when what comes next is
        anything else, incomplete, or not well formed (paho's own reading then takes it, and says
        what is wrong)."""
        data, at = self._data, self._at
        end = len(data)
        if at >= end:
            return None
        header = data[at]
        if header & 0xF0 != _PUBLISH or header & 0x06 > 0x02:  # (QoS 2 and 3: paho's)
            return None
        length, multiplier, i = 0, 1, at + 1
        for _ in range(4):  # the remaining length: at most 4 bytes
            if i >= end:
                return None
            byte = data[i]
            i += 1
            length += (byte & 0x7F) * multiplier
            multiplier *= 128
            if not byte & 0x80:
                break
        else:
            return None
        stop = i + length
        if stop > end or length < 2:
            return None
        topic_end = i + 2 + ((data[i] << 8) | data[i + 1])
        qos = (header >> 1) & 0x03
        body = topic_end + (2 if qos else 0)
        if topic_end == i + 2 or body > stop:
            return None
        mid = ((data[topic_end] << 8) | data[topic_end + 1]) if qos else 0
        self._at = stop
        return header, data[i + 2 : topic_end], mid, data[body:stop]

    def pending(self) -> int:
        if self._paused():
            return 0
        tls = getattr(self.socket, "pending", None)
        # The first bytes of a packet are not counted: the rest comes with the socket's next
        # readiness (a reader that went on reading for them would spin).
        held = 0 if self.holds_incomplete() else len(self._data) - self._at
        return held + (tls() if tls is not None else 0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.socket, name)


class SocketWatch:
    """The event loop's watch of paho's socket, kept to exactly the socket paho has now.

    aiomqtt asks the loop to watch the socket (``add_reader``, ``add_writer``) through
    ``call_soon_threadsafe`` (paho calls it from the thread of aiomqtt's connect too), and stops
    watching at once. A request that runs after its stop (paho wanted to write, then did not,
    within one turn of the loop; or the socket was closed meanwhile) left the loop watching a
    socket paho had given up: a writer called for nothing at every turn, and at the socket's
    close a watch of a descriptor no longer open. The next connection's socket, given the same
    descriptor, could then not be watched at all (``add_reader``: ENOENT): a connection nobody
    reads, its PUBACKs and messages never seen (the demo's broker-crash test, once in CI).

    Here each request runs only if the socket is still paho's (and, for writing, paho still
    wants to write), and the socket's close removes both watches; requests and removals take
    one lock, so a removal on the connect's thread never comes between a request's check and
    its watch. Installed by :func:`link.client.make_client` on every client; the intake installs
    its own, whose reader stops while the intake is paused.
    """

    def __init__(self, client: aiomqtt.Client, paused: Callable[[], bool] = lambda: False) -> None:
        self._client = client
        self._paho = client._client
        self._loop = client._loop
        self._paused = paused
        self._lock = threading.Lock()

    def install(self) -> SocketWatch:
        """Take over paho's socket callbacks from aiomqtt's (before connecting)."""
        paho = self._paho
        paho.on_socket_open = self._opened
        paho.on_socket_close = self._closed
        paho.on_socket_register_write = self._write_wanted
        paho.on_socket_unregister_write = self._write_done
        return self

    def _is_current(self, sock: Any) -> bool:
        now = self._paho._sock
        return now is not None and _raw_socket(now) is _raw_socket(sock)

    def _opened(self, _paho: Any, _userdata: Any, sock: Any) -> None:
        self._loop.call_soon_threadsafe(self._watch_reading, sock)

    def _watch_reading(self, sock: Any) -> None:
        with self._lock:
            if not self._is_current(sock):
                return  # closed meanwhile (a newer socket has a watch of its own)
            self._loop.add_reader(sock.fileno(), self.read)
        # aiomqtt's keepalive task (paho's ``loop_misc`` once a second), as aiomqtt starts it
        client = self._client
        client._misc_task = self._loop.create_task(client._misc_loop())

    def _closed(self, _paho: Any, _userdata: Any, sock: Any) -> None:
        with self._lock:
            fd = sock.fileno()
            if fd >= 0:
                self._loop.remove_writer(fd)
                self._loop.remove_reader(fd)
        task = self._client._misc_task
        if task is not None and not task.done():
            self._loop.call_soon_threadsafe(task.cancel)

    def _write_wanted(self, _paho: Any, _userdata: Any, sock: Any) -> None:
        # Nearly always called on the loop's own thread (a publish, an acknowledgement): queued
        # without the self-pipe's write and wake-up, which ``call_soon_threadsafe`` spends for
        # a call from another thread (paho's connect, in aiomqtt's executor).
        if _running_loop() is self._loop:
            self._loop.call_soon(self._watch_writing, sock)
        else:
            self._loop.call_soon_threadsafe(self._watch_writing, sock)

    def _watch_writing(self, sock: Any) -> None:
        with self._lock:
            if self._is_current(sock) and self._paho._registered_write:
                self._loop.add_writer(sock.fileno(), self._write)

    def _write_done(self, _paho: Any, _userdata: Any, sock: Any) -> None:
        with self._lock:
            fd = sock.fileno()
            if fd >= 0:
                self._loop.remove_writer(fd)

    def read(self) -> None:
        """Read what the socket brings (aiomqtt's reader: a failed read is a lost connection),
        and what is read ahead (:class:`_ReadAhead`'s ``pending``, an SSL socket's), unless
        paused."""
        paho = self._paho
        try:
            while True:
                paho.loop_read()
                pending = getattr(paho._sock, "pending", None)
                if pending is None or pending() <= 0 or self._paused():
                    break
        except Exception as error:
            if not self._client._disconnected.done():
                self._client._disconnected.set_exception(error)

    def _write(self) -> None:
        try:
            self._paho.loop_write()
        except Exception as error:  # (aiomqtt's writer: a failed write is a lost connection)
            if not self._client._disconnected.done():
                self._client._disconnected.set_exception(error)

    def stop_reading(self) -> int | None:
        """Stop reading the current socket (the intake is full): its descriptor, or None."""
        with self._lock:
            sock = self._paho._sock
            fd = -1 if sock is None else sock.fileno()
            if fd < 0:
                return None
            self._loop.remove_reader(fd)
            return fd

    def read_again(self, fd: int) -> bool:
        """Read the socket ``fd`` again, if it is still paho's current one."""
        with self._lock:
            sock = self._paho._sock
            if sock is None or sock.fileno() != fd:
                return False  # (a new socket has its own watch)
            self._loop.add_reader(fd, self.read)
        # What arrived meanwhile may be in paho's buffer already: read it now, not at the next
        # byte the socket brings.
        self._loop.call_soon(self.read)
        return True


def _raw_socket(sock: Any) -> Any:
    return sock.socket if isinstance(sock, _ReadAhead) else sock


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running on this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Received(NamedTuple):
    """A message as the intake hands it out: what the service reads of it, and the connection it
    arrived on (its ``mid`` is valid only there)."""

    topic: str
    payload: bytes
    qos: int
    mid: int
    connection: int


class Intake:
    """A client's received messages, bounded: beyond ``high`` waiting, the socket is not read.

    aiomqtt's own queue takes whatever paho reads, so a broker's backlog (a persistent session
    after an outage, a flood) ends up in the heap. Here the socket's reader is removed from the
    event loop once ``high`` messages wait and put back once they are down to ``low``: the rest
    waits in the kernel's socket buffer and in the broker, which is where a backlog belongs (TCP
    flow control). The consumer must never wait for the network while it holds the intake
    paused (it would wait for a PUBACK that is not read): the service publishes from a task of
    its own.

    The intake holds the messages itself, in order, as :class:`Received` tuples (topic text,
    payload bytes, QoS, message id, connection): the PUBLISH packets read ahead are taken into it
    directly (see :meth:`bind`), and the messages paho reads itself come through aiomqtt's
    callback into the queue of :meth:`queue_type`, which hands them over to the intake at once.
    (An aiomqtt ``Message``, its ``Topic``, the connection set as an attribute and an
    ``asyncio.Queue``'s bookkeeping cost about 1.3 us a message, and the service read them back.)
    aiomqtt's own message iterator is not served: the consumer calls :meth:`get`.

    Also: the CONNACK's *session present* flag is kept (:attr:`session_present`), :meth:`get`
    takes a waiting message without the task and ``asyncio.wait`` that aiomqtt's iterator spends
    on each one, and paho hands each message straight to aiomqtt's callback (see :meth:`bind`).
    """

    def __init__(self, connection: Callable[[], int], *, high: int = 1_000, low: int = 250) -> None:
        self.connection = connection
        self.high = high
        self.low = low
        #: The CONNACK of the current connection said the broker kept our session.
        self.session_present = False
        #: How often reading was paused (diagnostics, tests).
        self.pauses = 0
        self._client: aiomqtt.Client | None = None
        self._watch: SocketWatch | None = None
        self._paused_fd: int | None = None
        #: The consumer waiting in :meth:`get` for a message (done when one is queued).
        self._waiter: asyncio.Future[None] | None = None
        #: The messages received and not yet taken, in order.
        self._messages: deque[Received] = deque()

    def queue_type(self) -> type[asyncio.Queue[aiomqtt.Message]]:
        """The queue class to build the client with (``make_client(queue_type=...)``): what
        aiomqtt puts into it goes into the intake."""
        intake = self

        class IntakeQueue(asyncio.Queue[aiomqtt.Message]):
            def put_nowait(self, item: aiomqtt.Message) -> None:
                # (aiomqtt's payload is paho's bytes: ``bytes()`` makes no copy of them)
                payload = bytes(item.payload)
                intake.put(Received(str(item.topic), payload, item.qos, item.mid, intake.connection()))

        return IntakeQueue

    def put(self, message: Received) -> None:
        """Queue a message: wake the consumer, pause reading at ``high``."""
        messages = self._messages
        messages.append(message)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if len(messages) >= self.high:
            self._pause()

    def bind(self, client: aiomqtt.Client) -> None:
        """Attach to the client built with :meth:`queue_type` (before connecting)."""
        self._client = client
        # the socket's watch, its reader stopped while the intake is paused
        self._watch = SocketWatch(client, lambda: self._paused_fd is not None).install()
        paho = client._client
        # paho builds a DEBUG line for every packet it reads or writes (two per message) for
        # aiomqtt's logger, which the service never shows: a cost per message for nothing.
        paho.disable_logger()
        # paho hands each message to its callbacks by matching the topic against the filters of
        # ``message_callback_add`` (none here) under two locks: 10 µs a message, about what the
        # engine spends on it. aiomqtt's own callback is the only one: it is called directly.
        on_message: Callable[..., None] = paho.on_message  # type: ignore[assignment]
        userdata = paho.user_data_get()

        def handle_message(message: Any) -> None:
            on_message(paho, userdata, message)

        paho._handle_on_message = handle_message  # type: ignore[method-assign]
        # paho reads a packet through a dozen dictionary updates, three reads of the socket (its
        # first byte, its length, the rest), a generic decoder and two lock round trips: about as
        # much as the engine spends on the message. The PUBLISH packets already read ahead are
        # taken here, all of them at once, straight into the intake; anything else (another
        # packet type, QoS 2, a packet not yet whole, MQTT 5) is left to paho.
        packet_read = paho._packet_read
        v5 = paho._protocol == paho_client.MQTTv5

        def read_publishes() -> MQTTErrorCode:
            sock = paho._sock
            if v5 or not isinstance(sock, _ReadAhead) or paho._in_packet["command"] != 0:
                return packet_read()
            if self._paused_fd is not None:
                # Paused: nothing is read, paho's reading neither. paho's ``loop_read`` reads
                # once for each message in flight: after a pause, each of those reads took a
                # message through paho's reading (and past the bound).
                return MQTTErrorCode.MQTT_ERR_AGAIN
            taken = 0
            connection = self.connection()  # (one connection for the whole read)
            while self._paused_fd is None:
                packet = sock.take_publish()
                if packet is None:
                    if sock.read_more():
                        continue
                    if not taken and not sock.closed and sock.holds_incomplete():
                        taken = -1  # (the first bytes of a packet read: the rest comes later)
                    break
                header, topic, mid, payload = packet
                taken += 1
                qos, retain = (header >> 1) & 0x03, bool(header & 0x01)
                try:
                    name = topic.decode()
                except UnicodeDecodeError:
                    # paho's message, which fails in aiomqtt's callback as it always did
                    message = paho_client.MQTTMessage(mid=mid, topic=topic)
                    message.dup, message.qos, message.retain = bool(header & 0x08), qos, retain
                    message.payload = payload
                    handle_message(message)
                    continue
                # taken here, not through paho's message: paho's constructor builds a
                # threading.Condition for every message (2.5 of the 3 us from packet to queue)
                self.put(Received(name, payload, qos, mid, connection))
            if not taken:
                return packet_read()  # (another packet, or a connection closed: paho's)
            with paho._msgtime_mutex:
                paho._last_bytes_received = time.monotonic()  # (the keepalive's clock)
            return MQTTErrorCode.MQTT_ERR_SUCCESS

        paho._packet_read = read_publishes  # type: ignore[method-assign]
        on_connect: Callable[..., None] = paho.on_connect  # type: ignore[assignment]

        def connected(*args: Any) -> None:
            flags = args[2]
            self.session_present = bool(getattr(flags, "session_present", False))
            on_connect(*args)

        paho.on_connect = connected
        on_socket_close: Callable[..., None] = paho.on_socket_close  # type: ignore[assignment]

        def socket_closed(*args: Any) -> None:
            # The socket is gone: a pause of it ends with it (the next one is read anew).
            self._paused_fd = None
            on_socket_close(*args)

        paho.on_socket_close = socket_closed
        on_socket_open: Callable[..., None] = paho.on_socket_open  # type: ignore[assignment]

        def socket_opened(paho_client: Any, userdata: Any, sock: Any) -> None:
            # aiomqtt sets its socket options (TCP_NODELAY) after connecting, on paho's socket
            # only if it is a plain socket: set them here, on the socket itself, before wrapping
            # it (without, Nagle's algorithm holds each alert back some 40 ms).
            if isinstance(sock, socket.socket):
                for option in client._socket_options:
                    sock.setsockopt(*option)
            paho_client._sock = _ReadAhead(sock, lambda: self._paused_fd is not None)
            on_socket_open(paho_client, userdata, sock)

        paho.on_socket_open = socket_opened

    @property
    def waiting(self) -> int:
        return len(self._messages)

    def get_nowait(self) -> Received | None:
        """A waiting message, or None."""
        messages = self._messages
        if not messages:
            return None
        message = messages.popleft()
        if self._paused_fd is not None and len(messages) <= self.low:
            self._resume()
        return message

    async def get(self) -> Received:
        """The next message; raises ``MqttError`` when the connection is lost meanwhile.

        The consumer waits on a future of its own, done by :meth:`put`: the task
        runs at the next turn of the loop. aiomqtt's iterator waits for a task of the queue's
        ``get`` through ``asyncio.wait``: two turns more for every message that finds the
        consumer idle (an alert's message, on a quiet table).
        """
        while True:
            message = self.get_nowait()
            if message is not None:
                return message
            client = self._client
            assert client is not None
            lost = client._disconnected
            if lost.done():
                raise aiomqtt.MqttError("Disconnected during message iteration") from (
                    None if lost.cancelled() else lost.exception()
                )
            waiter = asyncio.get_running_loop().create_future()

            def wake(_: object, waiter: asyncio.Future[None] = waiter) -> None:
                if not waiter.done():
                    waiter.set_result(None)

            self._waiter = waiter
            lost.add_done_callback(wake)
            try:
                await waiter
            finally:
                self._waiter = None
                lost.remove_done_callback(wake)

    def _pause(self) -> None:
        if self._watch is None or self._paused_fd is not None:
            return
        fd = self._watch.stop_reading()
        if fd is None:
            return
        self._paused_fd = fd
        self.pauses += 1

    def _resume(self) -> None:
        fd = self._paused_fd
        self._paused_fd = None
        if self._watch is not None and fd is not None:
            self._watch.read_again(fd)


def tolerate_socket_race(loop: asyncio.AbstractEventLoop) -> None:
    """Log aiomqtt's socket race on a lost connection as one WARNING line, not a traceback.

    aiomqtt asks the loop to watch its socket through ``call_soon_threadsafe`` (paho calls it
    from another thread); when the broker goes away in between, the socket is closed before the
    callback runs, and asyncio's default handler logs "Exception in callback ...add_writer" with
    an ``EBADF`` traceback. Nothing is lost (the connection is gone, the client's own loop sees
    it and reconnects). Any other exception goes to the handler the loop had.
    """
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        handle = repr(context.get("handle"))
        if (
            isinstance(error, OSError)
            and error.errno == errno.EBADF
            and ("add_writer" in handle or "add_reader" in handle)
        ):
            log.warning("MQTT socket closed before the loop watched it (connection lost): %s", error)
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
