"""Stop signals (Ctrl-C, SIGTERM, a closed terminal) that reach the event loop however busy it is.

Why not ``loop.add_signal_handler``: asyncio learns of a signal through a byte that Python's C
handler writes to the loop's self-pipe, the same pipe every ``call_soon_threadsafe`` writes a
byte to (the journal writer's thread, aiomqtt asking the loop to watch its socket, ...). A Unix
socket pair takes only a few hundred one-byte writes before it is full, and the signal's byte is
then dropped without a word (``warn_on_full_buffer=False``): the signal is lost. Under load a
demo went on playing after its Ctrl-C, and a later SIGTERM was lost too. Here the signals get a
wake-up pipe of their own, which nothing else writes to, so their bytes always arrive.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any

#: What ``signal.signal`` returned: a handler, ``SIG_DFL``/``SIG_IGN``, or None (set from C).
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


def _noop(signum: int, frame: FrameType | None) -> None:
    """The Python-level handler: the work is done by the loop, on the signal's byte."""


class StopSignals:
    """Calls ``on_signal(signum)`` on the loop for each of ``signals`` received, until
    :meth:`close` (which puts back the handlers and the wake-up fd there were before).

    Must be made in the main thread, with ``loop`` running in it (as for
    ``loop.add_signal_handler``).
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_signal: Callable[[int], None],
        signals: Iterable[int] = (signal.SIGINT, signal.SIGTERM),
    ) -> None:
        self._loop = loop
        self._on_signal = on_signal
        self._signals = frozenset(int(sig) for sig in signals)
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._previous: dict[int, _Handler] = {}
        try:
            for sig in self._signals:
                self._previous[sig] = signal.signal(sig, _noop)
            loop.add_reader(self._reader.fileno(), self._drain)
        except BaseException:
            self.close()
            raise

    def _drain(self) -> None:
        while True:
            try:
                data = self._reader.recv(4096)
            except (BlockingIOError, InterruptedError):
                return
            if not data:
                return
            for signum in data:
                if signum in self._signals:
                    self._on_signal(signum)

    def close(self) -> None:
        """Stop listening: the earlier handlers and wake-up fd are back (once; again: nothing)."""
        if self._reader.fileno() == -1:
            return
        for sig, previous in self._previous.items():
            signal.signal(sig, signal.SIG_DFL if previous is None else previous)
        self._previous.clear()
        current = signal.set_wakeup_fd(self._previous_fd, warn_on_full_buffer=False)
        if current not in (self._writer.fileno(), -1):
            # Someone else set theirs after ours (an ``add_signal_handler``): it stays.
            signal.set_wakeup_fd(current, warn_on_full_buffer=False)
        if not self._loop.is_closed():
            self._loop.remove_reader(self._reader.fileno())
        self._reader.close()
        self._writer.close()

    def __enter__(self) -> StopSignals:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stop_on_signals(
    stop: asyncio.Event, signals: Iterable[int] = (signal.SIGINT, signal.SIGTERM)
) -> StopSignals:
    """Set ``stop`` on any of ``signals`` (on the running loop); close the result when done."""
    return StopSignals(asyncio.get_running_loop(), lambda _signum: stop.set(), signals)
