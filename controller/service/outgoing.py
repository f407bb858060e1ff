"""What the controller publishes: one message and the received record that caused it."""

from __future__ import annotations

from dataclasses import dataclass

from controller.journal.records import PublishedWhat


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One message to publish, and the received record (``cause``) whose processing produced it."""

    what: PublishedWhat
    cause: int
    topic: str
    payload: bytes
    retain: bool
