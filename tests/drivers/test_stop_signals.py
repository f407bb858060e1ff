"""link/stop_signals.py: a stop signal reaches the loop even when its self-pipe is full."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from link.stop_signals import StopSignals, stop_on_signals

#: More wake-ups than a Unix socket pair holds (a few hundred one-byte writes).
FLOOD = 5_000


async def _signal_after_flood(install: str, within_s: float) -> bool:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    if install == "ours":
        handle: StopSignals | None = stop_on_signals(stop, (signal.SIGUSR1,))
    else:
        handle = None
        loop.add_signal_handler(signal.SIGUSR1, stop.set)
    try:
        # What a busy service does between two turns of its loop: threads (and aiomqtt) waking it.
        for _ in range(FLOOD):
            loop.call_soon_threadsafe(lambda: None)
        os.kill(os.getpid(), signal.SIGUSR1)
        try:
            await asyncio.wait_for(stop.wait(), within_s)
        except TimeoutError:
            return False
        return True
    finally:
        if handle is not None:
            handle.close()
        else:
            loop.remove_signal_handler(signal.SIGUSR1)


def test_a_signal_behind_a_full_self_pipe_still_stops() -> None:
    assert asyncio.run(_signal_after_flood("ours", within_s=10.0))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # asyncio's full pipe
def test_asyncio_s_own_handler_loses_it_there() -> None:
    """Why the module exists: with ``loop.add_signal_handler`` the same signal is lost (if this
    starts to pass, asyncio was fixed and the module can go)."""
    previous = signal.getsignal(signal.SIGUSR1)
    # Lost, the signal must not end the test process either (asyncio's handler is gone by then).
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    try:
        assert not asyncio.run(_signal_after_flood("asyncio", within_s=1.0))
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_close_puts_back_the_earlier_handler_and_wakeup_fd() -> None:
    def earlier(signum: int, frame: object) -> None:
        pass

    previous = signal.signal(signal.SIGUSR2, earlier)
    try:

        async def run() -> tuple[int, object]:
            with stop_on_signals(asyncio.Event(), (signal.SIGUSR2,)) as handle:
                assert signal.getsignal(signal.SIGUSR2) is not earlier
                handle.close()  # twice: nothing more
            fd = signal.set_wakeup_fd(-1)
            signal.set_wakeup_fd(fd)
            return fd, signal.getsignal(signal.SIGUSR2)

        fd, handler = asyncio.run(run())
        assert fd == -1
        assert handler is earlier
    finally:
        signal.signal(signal.SIGUSR2, previous)
