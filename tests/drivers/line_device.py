"""A scripted device at the far end of a null-modem cable, for the tests of the driver's parts.

It decodes what the host writes (shuffler frames), keeps it, and answers as the test says; the
host opens it as ``nullmodem:NAME`` like any simulated device.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable

from drivers.framing import Frame, Message
from drivers.session import DeviceSession
from drivers.shuffler.protocol import CODEC
from drivers.transport.nullmodem import LineNoise, NullModemPort
from testing.memory_link import MemoryLink

_NAMES = itertools.count(1)


class LineDevice:
    """The device's end: ``received`` holds the host's frames, ``answer`` makes the replies."""

    def __init__(
        self,
        answer: Callable[[Frame], list[Message]] | None = None,
        *,
        to_host: LineNoise | None = None,
        awaiting: Callable[[int], bool] | None = None,
    ) -> None:
        self.name = f"line-device-{next(_NAMES)}"
        self.answer = answer or (lambda frame: [])
        #: Asked, for each frame that arrives, whether the host already waits for its reply.
        self.awaiting = awaiting
        self.received: list[Frame] = []
        self.awaited_on_arrival: list[bool] = []
        self._stream = CODEC.stream()
        self._seq = 0
        self.port = NullModemPort(self.name, self._on_data, to_host=to_host)
        self.port.plug()

    @property
    def url(self) -> str:
        return self.port.url

    def send(self, *messages: Message) -> None:
        """Send messages to the host, each in a frame of its own, in one write."""
        data = b""
        for message in messages:
            self._seq = (self._seq + 1) & 0xFF
            data += CODEC.encode(self._seq, message)
        self.port.write(data)

    def send_bytes(self, data: bytes) -> None:
        self.port.write(data)

    def _on_data(self, data: bytes) -> None:
        for frame in self._stream.feed(data):
            if self.awaiting is not None:
                self.awaited_on_arrival.append(self.awaiting(frame.seq))
            self.received.append(frame)
            replies = self.answer(frame)
            if replies:
                self.send(*replies)

    def close(self) -> None:
        self.port.close()


def online_session(device_id: str = "dev", **settings: object) -> tuple[DeviceSession, MemoryLink]:
    """An open session whose link keeps what it publishes (logger ``drivers.testdev``)."""
    log = logging.getLogger("drivers.testdev")
    link = MemoryLink(device_id, log=log)
    session = DeviceSession(device_id, link, log, **settings)  # type: ignore[arg-type]
    session.begin()
    session.publish_status()
    return session, link
