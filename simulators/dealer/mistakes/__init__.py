"""The virtual dealer's mistakes as plug-ins: one small injector per catalogue code.

``MISTAKES[code]`` is the :class:`~simulators.dealer.mistakes.base.Mistake` subclass that commits
``code`` (and then its remedy); the legal dealer calls its hooks as it plays. A test checks that
every dealing and chip code of the engine's catalogue has one, and says which session codes do.
"""

from simulators.dealer.mistakes import (
    betting,
    board,
    deal,
    handling,
    pushes,
    remedy,
    session,
    table,
)
from simulators.dealer.mistakes.base import DealPlan, Mistake
from simulators.dealer.mistakes.registry import MISTAKES, register
from simulators.dealer.mistakes.remedy import ignorable_codes

__all__ = [
    "MISTAKES",
    "DealPlan",
    "Mistake",
    "betting",
    "board",
    "deal",
    "handling",
    "ignorable_codes",
    "pushes",
    "register",
    "remedy",
    "session",
    "table",
]
