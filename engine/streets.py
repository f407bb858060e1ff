"""The streets of a hand and the phases in which it runs: names and board counts every rule
uses."""

from __future__ import annotations

from typing import Final

RUNNING: Final = frozenset({"dealing", "preflop", "flop", "turn", "river"})
STREET_NAMES: Final = ("preflop", "flop", "turn", "river")
#: Live board cards once a street is complete: flop 3, turn 4, river 5.
BOARD_AT: Final = (0, 3, 4, 5)
CHIP_ACTIONS: Final = frozenset({"bet", "call", "raise", "all_in"})
PLAY_ZONES: Final = ("board", "burn")


def street_of(live: int) -> int:
    """The street a board card belongs to when ``live`` board cards are already out."""
    if live < 3:
        return 1
    if live == 3:
        return 2
    if live == 4:
        return 3
    return 4
