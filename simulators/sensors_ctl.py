"""Operate a simulated sensor board that runs elsewhere (``tablectl simulate``), from a shell.

    python -m simulators.sensors_ctl SOCKET press exposed 3
    python -m simulators.sensors_ctl SOCKET button 5
    python -m simulators.sensors_ctl SOCKET seat 2 on
    python -m simulators.sensors_ctl SOCKET blind 2 off
    python -m simulators.sensors_ctl SOCKET unplug | replug | state

SOCKET is the path after ``sim:`` that ``tablectl simulate`` prints for the board. The board's
state (after the action) is printed as JSON.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

USAGE = __doc__ or ""


def control(path: str, words: list[str], timeout_s: float = 2.0) -> dict[str, Any]:
    """Send one control request to the board served at ``path``; its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(path)
        sock.sendall(json.dumps({"op": "control", "args": words}).encode() + b"\n")
        with sock.makefile("rb") as reader:
            line = reader.readline()
    if not line:
        raise ConnectionError(f"{path}: the simulator closed the connection")
    answer: dict[str, Any] = json.loads(line)
    return answer


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        answer = control(argv[0], argv[1:])
    except OSError as error:
        print(f"error: {argv[0]}: {error}", file=sys.stderr)
        return 1
    if not answer.get("ok"):
        print(f"error: {answer.get('error')}", file=sys.stderr)
        return 1
    print(json.dumps(answer["state"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
