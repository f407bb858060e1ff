"""Who may say what: the kind of each device and the events of each kind (pure helpers, no
rules; docs/engine.md, "Who may say what").

Every device has a kind: a reader (``rfid``: ``tag``), a sensor board (``sensors``: ``button``,
``blind``, ``seat``, ``key``) or a shuffler (``shuffler``: ``shuffling``, ``shuffle_complete``);
``fault`` comes from any. A device the configuration declares has the kind it declares; any other
takes the kind of the first event accepted from it in its session.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from config.models import DRIVER_EVENTS

#: Event type -> the kind of device that sends it (None: ``fault``, from any kind).
EVENT_KIND: Final[dict[str, str | None]] = {
    event_type: (None if event_type == "fault" else kind)
    for kind, types in DRIVER_EVENTS.items()
    for event_type in types
}

#: How the dealer's screen names each kind.
KIND_NAMES: Final[dict[str, str]] = {"rfid": "reader", "sensors": "sensor board", "shuffler": "shuffler"}


class Learnt(NamedTuple):
    """The kind an undeclared device showed by its first event accepted in a session."""

    session: int | None  # None: events that name no session (and no status named one)
    kind: str


def learns(learnt: Learnt | None, session: int | None) -> bool:
    """Whether an event of ``session`` is the first of a session the kind is not known for (a
    new session, or the device's first event): its kind becomes the device's."""
    if learnt is None:
        return True
    if session is None:
        return False
    return learnt.session is None or session > learnt.session
