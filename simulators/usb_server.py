"""Serve a simulated USB device on a unix socket, for a driver in another process (``sim:PATH``).

The driver's side is :class:`drivers.transport.usb_sim.RemoteDevice`; the socket carries one JSON
request per line (``identity``, ``read``, ``write``, and ``control`` for the device's physical side)
and one JSON answer per line.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import socketserver
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from drivers.transport.usb_sim import DeviceGone, TransferTimeout, UsbDeviceModel

log = logging.getLogger(__name__)


def _answer(model: UsbDeviceModel, request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    try:
        if op == "identity":
            ident = model.identity()
            return {"ok": True, "identity": None if ident is None else asdict(ident)}
        if op == "read":
            data = model.read_in(int(request["address"]), int(request["size"]), int(request["timeout_ms"]))
            return {"ok": True, "data": data.hex()}
        if op == "write":
            written = model.write_out(
                int(request["address"]), bytes.fromhex(request["data"]), int(request["timeout_ms"])
            )
            return {"ok": True, "written": written}
        if op == "control":
            # The physical side of the simulated device (a bench operator's key press), if any.
            control = getattr(model, "control", None)
            if control is None:
                return {"ok": False, "error": "bad request: this device has no control op"}
            answer: dict[str, Any] = control(request.get("args"))
            return answer
    except DeviceGone:
        return {"ok": False, "error": "gone"}
    except TransferTimeout:
        return {"ok": False, "error": "timeout"}
    except (KeyError, ValueError, TypeError) as error:
        return {"ok": False, "error": f"bad request: {error}"}
    return {"ok": False, "error": f"bad request: unknown op {op!r}"}


class UnixDeviceServer:
    """Serves a :class:`UsbDeviceModel` on a unix socket until :meth:`close`."""

    def __init__(self, model: UsbDeviceModel, path: Path) -> None:
        self.model = model
        self.path = path
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        server_self = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                with server_self._lock:
                    server_self._connections.add(self.connection)
                try:
                    for line in self.rfile:
                        try:
                            request = json.loads(line)
                            if not isinstance(request, dict):
                                raise TypeError("request is not an object")
                            answer = _answer(server_self.model, request)
                        except (ValueError, TypeError) as error:
                            log.error("%s: bad request line: %s", server_self.path, error)
                            answer = {"ok": False, "error": f"bad request: {error}"}
                        self.wfile.write(json.dumps(answer).encode() + b"\n")
                        self.wfile.flush()
                except OSError:
                    pass  # the client went away
                finally:
                    with server_self._lock:
                        server_self._connections.discard(self.connection)

        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        self._server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},  # close() waits for the next poll
            name=f"usb-sim {path.name}",
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        self._thread.join(2)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def serve_unix(model: UsbDeviceModel, path: str | os.PathLike[str]) -> UnixDeviceServer:
    """Publish ``model`` on the unix socket ``path`` for a :class:`RemoteDevice` to reach."""
    return UnixDeviceServer(model, Path(path))
