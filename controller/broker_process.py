"""The embedded broker in a child process of its own: the demo's second core.

``tablectl demo`` runs the simulators, the drivers, the engine service and the virtual dealer in
one process; the broker relays every message of all of them, and amqtt is pure Python. In a child
process it works on the machine's other core instead of taking turns with everything else
(measured: ``docs/demo.md``, "How fast"). It is the same :class:`~controller.broker.EmbeddedBroker`
(amqtt, 127.0.0.1 only, MQTT 3.1.1), started as ``python -m controller.broker_process``:

- the child prints ``listening <port>`` (or ``error <message>``) on its standard output once;
- it stops when its standard input closes: when :meth:`BrokerProcess.stop` closes it, and also
  when the parent dies in any way (the kernel closes the pipe), so no broker outlives the demo;
- it runs in a session of its own, so a Ctrl-C at the terminal reaches only the parent, which
  still needs the broker to publish ``offline`` on its way out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Final

from controller.broker import LOOPBACK, BrokerError, EmbeddedBroker

log = logging.getLogger(__name__)

#: How long the child may take to listen (importing amqtt is most of it).
START_TIMEOUT_S: Final = 20.0
#: How long the child gets to disconnect its clients once told to stop.
STOP_TIMEOUT_S: Final = 5.0


class BrokerProcess:
    """:class:`~controller.broker.EmbeddedBroker` in a child process; ``url`` once started."""

    def __init__(self, port: int = 0) -> None:
        self._requested_port = port
        self._child: asyncio.subprocess.Process | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise BrokerError("the embedded broker is not running")
        return f"mqtt://{LOOPBACK}:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._child is None else self._child.pid

    async def start(self) -> None:
        """Start the child and wait until it listens; a failure is a :class:`BrokerError`."""
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "controller.broker_process", "--port", str(self._requested_port),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        self._child = child
        assert child.stdout is not None
        try:
            line = await asyncio.wait_for(child.stdout.readline(), START_TIMEOUT_S)
        except TimeoutError:
            await self.stop()
            raise BrokerError(
                f"embedded broker did not listen within {START_TIMEOUT_S:g} s"
            ) from None
        word, _, rest = line.decode("utf-8", "replace").strip().partition(" ")
        if word != "listening" or not rest.isdigit():
            await self.stop()
            raise BrokerError(rest or "embedded broker process exited before listening")
        self.port = int(rest)
        log.info("embedded MQTT broker (process %d) listening on %s", child.pid, self.url)

    async def stop(self) -> None:
        """Close the child's standard input (it shuts down), then make sure it is gone."""
        child, self._child = self._child, None
        self.port = None
        if child is None:
            return
        if child.stdin is not None:
            child.stdin.close()
        try:
            await asyncio.wait_for(child.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            log.warning("embedded broker process %d did not stop; killing it", child.pid)
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()

    async def __aenter__(self) -> BrokerProcess:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


async def _serve(port: int) -> int:
    """The child: listen, say where, run until standard input closes."""
    broker = EmbeddedBroker(port)
    try:
        await broker.start()
    except BrokerError as error:
        print(f"error {error}", flush=True)
        return 1
    print(f"listening {broker.port}", flush=True)
    async for _ in await stdin_lines():
        pass  # nothing is said to the broker: it runs until standard input closes
    await broker.stop()
    return 0


async def stdin_lines() -> AsyncIterator[bytes]:
    """Standard input attached to the running loop, line by line; the iteration ends once it
    closes (the parent closed its end, or died)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def lines() -> AsyncIterator[bytes]:
        while line := await reader.readline():
            yield line

    return lines()


def main() -> int:
    parser = argparse.ArgumentParser(description="the embedded MQTT broker as a child process")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return asyncio.run(_serve(args.port))


if __name__ == "__main__":
    sys.exit(main())
