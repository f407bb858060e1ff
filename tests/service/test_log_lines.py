"""controller.service.log_lines: the service's log lines written by a thread, in batches."""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Iterator

import pytest

from controller.service.log_lines import LogLines

#: A linger far longer than any wait below: what is written before it ends was woken for.
LONG = 60.0
WITHIN = 5.0


class Stream(io.StringIO):
    """A stream that counts its writes and tells when one came."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.written = threading.Condition()

    def write(self, text: str) -> int:
        with self.written:
            self.writes += 1
            count = super().write(text)
            self.written.notify_all()
            return count

    def wait_for(self, text: str) -> str:
        with self.written:
            if not self.written.wait_for(lambda: text in self.getvalue(), WITHIN):
                raise AssertionError(f"{text!r} not written within {WITHIN} s: {self.getvalue()!r}")
            return self.getvalue()


def started(stream: Stream, lines: LogLines) -> logging.Logger:
    """A logger of its own writing through ``lines``, started."""
    logger = logging.getLogger(f"test.log_lines.{id(lines)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(lines.handler)
    lines.start()
    return logger


@pytest.fixture
def logged() -> Iterator[tuple[logging.Logger, Stream, LogLines]]:
    """Lines written only when woken by the idle thread, a warning or three lines waiting (no
    token: ``rate`` and ``burst`` 0; a linger of a minute)."""
    stream = Stream()
    formatter = logging.Formatter("%(levelname)s %(name)s: %(message)s")
    lines = LogLines(stream, formatter, period_s=LONG, rate=0, burst=0, wake_at=3)
    logger = started(stream, lines)
    try:
        yield logger, stream, lines
    finally:
        logger.removeHandler(lines.handler)
        lines.stop()


def test_a_lone_line_is_written_at_once(logged: tuple[logging.Logger, Stream, LogLines]) -> None:
    logger, stream, _ = logged
    logger.info("hand %d ended", 7)
    assert stream.wait_for("ended") == f"INFO {logger.name}: hand 7 ended\n"


def test_a_warning_is_written_at_once_while_the_thread_lingers(
    logged: tuple[logging.Logger, Stream, LogLines],
) -> None:
    logger, stream, _ = logged
    logger.info("first")
    stream.wait_for("first")
    logger.info("second")  # waits for the linger (a minute here) ...
    logger.warning("third")  # ... or for a warning, which comes at once
    text = stream.wait_for("third")
    assert text.splitlines() == [
        f"INFO {logger.name}: first",
        f"INFO {logger.name}: second",
        f"WARNING {logger.name}: third",
    ]
    assert stream.writes == 2  # the second and the third in one write


def test_a_burst_wakes_the_thread_and_is_written_in_one_write(
    logged: tuple[logging.Logger, Stream, LogLines],
) -> None:
    logger, stream, _ = logged
    logger.info("first")
    stream.wait_for("first")
    for number in range(3):  # wake_at=3
        logger.info("line %d", number)
    text = stream.wait_for("line 2")
    assert [line.split(": ")[1] for line in text.splitlines()] == ["first", "line 0", "line 1", "line 2"]
    assert stream.writes == 2


def test_what_waits_is_written_at_stop_with_its_time_and_traceback(
    logged: tuple[logging.Logger, Stream, LogLines],
) -> None:
    logger, stream, lines = logged
    lines.formatter = logging.Formatter("%(created)f %(message)s")
    logger.info("first")
    stream.wait_for("first")
    values = [1]
    logger.info("values %s", values)
    values.append(2)  # formatted as it was when logged
    try:
        raise ValueError("broken frame")
    except ValueError:
        logger.exception("reader failed")
    logged_at = time.time()
    lines.stop()
    text = stream.getvalue()
    assert "values [1]\n" in text
    assert "reader failed\nTraceback (most recent call last):" in text
    assert "ValueError: broken frame" in text
    stamps = [float(line.split()[0]) for line in text.splitlines() if line[:1].isdigit()]
    assert stamps == sorted(stamps)
    assert stamps[-1] <= logged_at  # the time it was logged, not the time it was written


def test_lines_wake_the_lingering_thread_while_they_come_slowly() -> None:
    stream = Stream()
    lines = LogLines(stream, logging.Formatter("%(message)s"), period_s=LONG, rate=0, burst=2)
    logger = started(stream, lines)
    try:
        logger.info("first")  # wakes the idle thread
        stream.wait_for("first")
        logger.info("second")  # the thread lingers: a token
        stream.wait_for("second")
        logger.info("third")  # the last token
        stream.wait_for("third")
        assert stream.writes == 3
        logger.info("fourth")  # none left: waits for the linger (or the stop)
    finally:
        logger.removeHandler(lines.handler)
        lines.stop()
    assert stream.getvalue() == "first\nsecond\nthird\nfourth\n"
