"""The embedded broker in a child process of its own (:mod:`controller.demo.child_process`).

Every message of the demo passes through the broker, and amqtt is pure Python: in a child process
it works on the machine's other core instead of taking turns with the simulators and the dealer
(measured: ``docs/demo.md``, "Pace"). It is the same :class:`~controller.broker.embedded.EmbeddedBroker`
(amqtt, 127.0.0.1 only, MQTT 3.1.1), started as ``python -m controller.demo.broker_process``:

- the child prints ``listening <port>`` (or ``error <message>``) on its standard output once;
- it stops when its standard input closes (the parent stopped it, or died);
- it runs in a session of its own, so a Ctrl-C at the terminal reaches only the parent, which
  still needs the broker to publish ``offline`` on its way out.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Final

from controller.broker.embedded import LOOPBACK, BrokerError, EmbeddedBroker
from controller.demo.child_process import ChildProcess, stdin_lines

log = logging.getLogger(__name__)

#: How long the child may take to listen (importing amqtt is most of it).
START_TIMEOUT_S: Final = 20.0
#: How long the child gets to disconnect its clients once told to stop.
STOP_TIMEOUT_S: Final = 5.0


class BrokerProcess(ChildProcess):
    """:class:`~controller.broker.embedded.EmbeddedBroker` in a child process; ``url`` once started."""

    what = "embedded broker"
    stop_timeout_s = STOP_TIMEOUT_S

    def __init__(self, port: int = 0) -> None:
        super().__init__()
        self._requested_port = port
        self.port: int | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise BrokerError("the embedded broker is not running")
        return f"mqtt://{LOOPBACK}:{self.port}"

    async def start(self) -> None:
        """Start the child and wait until it listens; a failure is a :class:`BrokerError`."""
        child = await self.spawn(
            "controller.demo.broker_process", "--port", str(self._requested_port), stdout=True
        )
        assert child.stdout is not None
        try:
            line = await asyncio.wait_for(child.stdout.readline(), START_TIMEOUT_S)
        except TimeoutError:
            await self.stop()
            raise BrokerError(f"embedded broker did not listen within {START_TIMEOUT_S:g} s") from None
        word, _, rest = line.decode("utf-8", "replace").strip().partition(" ")
        if word != "listening" or not rest.isdigit():
            await self.stop()
            raise BrokerError(rest or "embedded broker process exited before listening")
        self.port = int(rest)
        log.info("embedded MQTT broker (process %d) listening on %s", child.pid, self.url)

    async def stop(self) -> None:
        self.port = None
        await super().stop()


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


def main() -> int:
    parser = argparse.ArgumentParser(description="the embedded MQTT broker as a child process")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return asyncio.run(_serve(args.port))


if __name__ == "__main__":
    sys.exit(main())
