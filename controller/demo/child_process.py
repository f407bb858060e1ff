"""A part of the product in a child process of its own, tied to its parent by a pipe.

Both ends of the demo's children (:mod:`controller.demo.broker_process`,
:mod:`controller.demo.service_process`):

- the parent's :class:`ChildProcess` starts ``python -m MODULE ARGS`` in a session of its own (a
  Ctrl-C at the terminal reaches only the parent, which then stops its children in its own
  order) with a pipe on the child's standard input;
- the child watches that pipe (:func:`stdin_lines`, :func:`sigterm_at_eof`) and stops when it
  closes: when :meth:`ChildProcess.stop` closes it, and also when the parent dies in any way
  (the kernel closes it), so no child outlives its parent.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Self

log = logging.getLogger(__name__)


class ChildProcess(abc.ABC):
    """A started child (:meth:`spawn`), stopped by closing its standard input (:meth:`stop`)."""

    #: What the child is, for the log.
    what = "child process"
    #: How long the child gets to stop cleanly before it is killed.
    stop_timeout_s = 5.0

    def __init__(self) -> None:
        self._child: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return None if self._child is None else self._child.pid

    @property
    def exited(self) -> int | None:
        """The child's exit status once it has stopped (None while it runs or before it started)."""
        return None if self._child is None else self._child.returncode

    async def spawn(self, module: str, *args: str, stdout: bool = False) -> asyncio.subprocess.Process:
        """``python -P -m module args`` in a session of its own, its standard input a pipe from
        here (and its standard output too, with ``stdout``). ``-P``: the folder the program was
        started from is not put on the child's import path, so a ``click.py`` lying there is not
        imported in place of the library."""
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",
            "-m",
            module,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE if stdout else None,
            start_new_session=True,
        )
        self._child = child
        return child

    async def say(self, line: str) -> None:
        """One line to the child's standard input."""
        child = self._child
        if child is None or child.stdin is None:
            raise RuntimeError(f"{self.what} is not running")
        child.stdin.write(line.encode() + b"\n")
        await child.stdin.drain()

    @abc.abstractmethod
    async def start(self) -> None:
        """Spawn the child and wait until it is ready (each kind says how)."""

    async def stop(self) -> None:
        """Close the child's standard input (it stops cleanly), then make sure it is gone."""
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            child.stdin.close()
        try:
            await asyncio.wait_for(child.wait(), self.stop_timeout_s)
        except TimeoutError:
            log.warning("%s (process %d) did not stop; killing it", self.what, child.pid)
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


async def stdin_lines() -> AsyncIterator[bytes]:
    """The child's end: standard input attached to the running loop, line by line; the
    iteration ends once it closes (the parent closed its end, or died)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def lines() -> AsyncIterator[bytes]:
        while line := await reader.readline():
            yield line

    return lines()


def sigterm_at_eof() -> asyncio.Task[None]:
    """The child's end, for a child that stops on SIGTERM (``tablectl run``'s parts): SIGTERM
    to itself once standard input closes. Cancel the task when done."""

    async def watch() -> None:
        async for _ in await stdin_lines():
            pass  # nothing more is said: the child runs until its standard input closes

    watcher = asyncio.create_task(watch(), name="stdin")
    watcher.add_done_callback(_sigterm_unless_cancelled)
    return watcher


def _sigterm_unless_cancelled(watcher: asyncio.Task[None]) -> None:
    if not watcher.cancelled():
        os.kill(os.getpid(), signal.SIGTERM)  # the child's own handler: a clean stop
