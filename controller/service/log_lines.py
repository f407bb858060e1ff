"""The service's log lines, written to stderr by a thread of their own, in batches.

The event loop never writes a log line itself: when stderr is a file on the journal's disk each
write waited for the journal's fsync, and under systemd a full pipe to journald would stall the
table likewise. Nor does it wake the writing thread at every line (what ``QueueListener`` on a
``queue.SimpleQueue`` did): each wake, and each line's own ``write``, hands the GIL to that thread
and back, and on a busy 2-core table PC the loop then waits for a CPU as well. With a line logged
per hand that cost the loop a third of its time (``benchmarks/service.py --only ingest``: 45 µs of
the loop's CPU a message, 31 µs without the line).

Here a line costs the loop an append to a deque. The thread, idle, is woken by the first line;
having written, it lingers ``PERIOD_S`` and takes what came meanwhile in one batch, one ``write``
for them all, until a linger brings nothing. While it lingers, a line still wakes it at once as
long as lines come no faster than ``RATE`` a second on average (a bucket of ``BURST``): a start-up,
a fault, a hand at a live table are written as they happen, before what the service publishes
next reaches anyone; a backlog's hand after hand waits at most ``PERIOD_S``, and the thread wakes
some ``RATE + 1 / PERIOD_S`` times a second however many lines come. A warning or an error always
wakes it at once, and so do ``WAKE_AT`` lines waiting. The lines keep their order and the time
they were logged at; :meth:`LogLines.stop` writes what is left (registered with ``atexit``).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import deque
from typing import Final, TextIO

__all__ = ["BURST", "PERIOD_S", "RATE", "WAKE_AT", "LogLines"]

#: How long the thread lingers after a write, seconds: the longest an info line waits.
PERIOD_S: Final = 0.05
#: Lines a second, on average, that each wake the lingering thread at once ...
RATE: Final = 20.0
#: ... and how many of them may come together.
BURST: Final = 20
#: Lines waiting that wake the writer before its period is over (a burst is not held in memory).
WAKE_AT: Final = 2_000


class LogLines:
    """Log records held by :attr:`handler` and written to ``stream`` by a thread, in batches."""

    def __init__(
        self,
        stream: TextIO,
        formatter: logging.Formatter,
        *,
        period_s: float = PERIOD_S,
        rate: float = RATE,
        burst: int = BURST,
        wake_at: int = WAKE_AT,
    ) -> None:
        self.stream = stream
        self.formatter = formatter
        self.period_s = period_s
        self.rate = rate
        self.burst = burst
        self.wake_at = wake_at
        #: Wakes at once still allowed (a token bucket, refilled at ``rate``), and when counted.
        self._tokens = float(burst)
        self._counted = time.monotonic()
        self._waiting: deque[logging.LogRecord] = deque()
        self._wake = threading.Event()
        #: The thread waits for a line without a time limit (it is woken by the next line).
        self._idle = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.handler: logging.Handler = _Hold(self)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="log lines", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Write every line waiting and end the thread (idempotent)."""
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._write_waiting()

    def put(self, record: logging.LogRecord) -> None:
        """Called in the logging thread (the event loop): an append, a wake only when it is due."""
        self._waiting.append(record)
        # (the append before the test of _idle: see _run)
        if (
            self._idle
            or record.levelno >= logging.WARNING
            or len(self._waiting) >= self.wake_at
            or self._token()
        ):
            self._idle = False
            self._wake.set()

    def _token(self) -> bool:
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._counted) * self.rate)
        self._counted = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def _run(self) -> None:
        while not self._stopping:
            self._idle = True
            # (_idle set before this test, the append before put's test of _idle: a line put
            # meanwhile either is seen here or wakes the wait)
            if not self._waiting:
                self._wake.wait()
            self._idle = False
            self._wake.clear()
            self._write_waiting()
            # Lingering: the lines that come close behind are written together.
            while not self._stopping:
                self._wake.wait(self.period_s)
                self._wake.clear()
                if not self._waiting:
                    break
                self._write_waiting()

    def _write_waiting(self) -> None:
        lines: list[str] = []
        while True:
            try:
                record = self._waiting.popleft()
            except IndexError:
                break
            try:
                lines.append(self.formatter.format(record))
            except Exception:
                self.handler.handleError(record)
        if not lines:
            return
        try:
            self.stream.write("\n".join(lines) + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            # (stderr closed or its pipe gone: nothing left to tell it to)
            pass


class _Hold(logging.Handler):
    """The handler the loggers call: the record made self-contained, then held in :class:`LogLines`."""

    def __init__(self, lines: LogLines) -> None:
        super().__init__()
        # The message and its traceback only: the time, level and logger are added when written.
        self.setFormatter(logging.Formatter("%(message)s"))
        self._lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        try:
            # Formatted now (the arguments as they are when logged), then written by the thread:
            # the same preparation as logging.handlers.QueueHandler's.
            message = self.format(record)
            held = copy.copy(record)
            held.message = message
            held.msg = message
            held.args = None
            held.exc_info = None
            held.exc_text = None
            held.stack_info = None
            self._lines.put(held)
        except Exception:
            self.handleError(record)
