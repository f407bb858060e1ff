"""A pseudo-terminal that plays a serial device's cable: the simulator holds the master side.

The driver opens :attr:`PtyPort.path`, a stable symbolic link to the current ``/dev/pts/N``, so it
finds the device again after :meth:`unplug` / :meth:`plug` (a new pty each time, as when a USB
serial adapter is pulled and put back). Both sides are put in raw mode at once: a pty is cooked
by default and would echo and translate bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import tty
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("simulators.pty")


class PtyPort:
    """The device end of a simulated serial cable, driven from an asyncio loop."""

    def __init__(self, name: str, on_data: Callable[[bytes], None], directory: Path | None = None):
        self.name = name
        self._on_data = on_data
        self._own_directory = directory is None
        self.directory = directory or Path(tempfile.mkdtemp(prefix="tablectl-sim-"))
        #: What the driver opens (a symlink to the current pty slave).
        self.path = self.directory / name
        self._master: int | None = None
        self._slave: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.bytes_dropped = 0

    @property
    def plugged(self) -> bool:
        return self._master is not None

    @property
    def slave_name(self) -> str | None:
        """The current ``/dev/pts/N`` (None while unplugged)."""
        return os.ttyname(self._slave) if self._slave is not None else None

    def plug(self) -> None:
        """Create a new pty and point :attr:`path` at it."""
        if self._master is not None:
            return
        self._loop = asyncio.get_running_loop()
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        # The simulator keeps the slave open too, so the pty survives the driver closing it.
        tmp = self.path.with_name(self.path.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(os.ttyname(slave))
        tmp.replace(self.path)
        self._loop.add_reader(master, self._readable)
        log.debug("%s: plugged at %s -> %s", self.name, self.path, os.ttyname(slave))

    def unplug(self) -> None:
        """Close the pty: the driver's reads fail (end of file) and the path dangles."""
        if self._master is None:
            return
        if self._loop is not None:
            self._loop.remove_reader(self._master)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None
        log.debug("%s: unplugged", self.name)

    def write(self, data: bytes) -> bool:
        """Send bytes to the driver; False (and counted) when unplugged or the buffer is full.

        Like a real device with nobody listening, the simulator never blocks on a full line.
        """
        if self._master is None:
            return False
        try:
            written = os.write(self._master, data)
        except BlockingIOError:
            written = 0
        except OSError as error:
            log.debug("%s: write failed: %s", self.name, error)
            written = 0
        if written < len(data):
            self.bytes_dropped += len(data) - written
            return False
        return True

    def _readable(self) -> None:
        if self._master is None:
            return
        try:
            data = os.read(self._master, 4096)
        except BlockingIOError:
            return
        except OSError as error:
            # EIO: no slave open (cannot happen while we hold one); treat as nothing to read.
            log.debug("%s: read failed: %s", self.name, error)
            return
        if data:
            self._on_data(data)

    def close(self) -> None:
        """Unplug and remove the link directory when we created it."""
        self.unplug()
        if self._own_directory:
            with contextlib.suppress(OSError):
                self.directory.rmdir()
