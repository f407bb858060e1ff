"""A simulated sensor board in a process of its own (for the cross-process driver test).

Usage: ``python -m tests.drivers.sensors_board_process SOCKET VID PID``. It serves the board on the
unix socket, prints ``ready`` and then obeys one command per stdin line: ``press KEY [SEAT]``,
``button SEAT|none``, ``lamp?`` (prints ``lamp COLOUR BLINK``), ``unplug``, ``replug``, ``quit``.
"""

from __future__ import annotations

import asyncio
import sys

from simulators.sensors import SensorBoardSimulator


def main(argv: list[str]) -> int:
    path, vendor_id, product_id = argv[0], int(argv[1], 0), int(argv[2], 0)
    board = SensorBoardSimulator(vendor_id, product_id)
    board.serve(path)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "press":
            board.press(words[1], int(words[2]) if len(words) > 2 else None)
        elif words[0] == "button":
            board.move_button(None if words[1] == "none" else int(words[1]))
        elif words[0] == "lamp?":
            print(f"lamp {board.lamp.colour} {board.lamp.blink}", flush=True)
        elif words[0] == "unplug":
            board.unplug()
        elif words[0] == "replug":
            board.replug()
        elif words[0] == "quit":
            break
        print("ok", flush=True)
    asyncio.run(board.close())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
