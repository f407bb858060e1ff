"""The table's last hand at start-up, for the dealer's display ("last-hand recall" after a restart).

The last hand is the newest hand result of the table: the newest one the journal shows published,
or a newer one the replay produced that the broker has not had yet (a crash between the two). The
alert changes of the hand in progress come back too: when it ends, its view has them all.
The journal is read with ``tablectl history``'s reader (:mod:`controller.history.query`), from its
newest segments only; :func:`last_hand` is the pure part.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Final

from contract.models import Alert
from controller.history.query import HandEntry, History, add, latest_segments, read_history
from controller.journal.files import JournalFiles
from controller.service.outgoing import Outgoing

log = logging.getLogger(__name__)

#: Unreadable lines logged one by one (then counted): a torn journal may have many.
LOGGED_PROBLEMS: Final = 10


def read_recent(files: JournalFiles) -> History:
    """The hands of the journal's newest segments; what cannot be read is logged, never raised.

    Called before the journal is opened for appending, so that no line is read half written.
    """
    try:
        history = read_history(files, latest_segments(files))
    except OSError as error:
        log.warning(
            "last hand: journal %s cannot be read (%s): no last hand until the next one ends",
            files.active,
            error.strerror or error,
        )
        return History()
    for problem in history.problems[:LOGGED_PROBLEMS]:
        log.warning("last hand: journal %s; skipped", problem)
    more = len(history.problems) - LOGGED_PROBLEMS
    if more > 0:
        log.warning("last hand: %d more unreadable journal lines skipped", more)
    return history


def last_hand(history: History, owed: Iterable[Outgoing]) -> HandEntry | None:
    """The newest hand with a result, once the outputs still owed to the broker (in the order
    produced) are added to ``history`` (which this changes); None: no hand has ended."""
    for out in owed:
        if out.what in ("hand", "alert"):
            add(history, out.what, out.topic, out.payload, where=f"output of journal record {out.cause}")
    played = history.played()
    return played[-1] if played else None


def alerts_from(history: History, hand: int) -> list[Alert]:
    """The alert changes of hand ``hand`` and of the hands after it (one in progress at the
    restart), hand by hand, each hand's in the order published: what the display had of them."""
    entries = sorted((e for e in history.hands.values() if e.hand >= hand), key=lambda e: e.hand)
    return [alert for entry in entries for alert in entry.alerts]
