"""What the service handed to the broker and awaits the acknowledgements of, in order: flights.

A flush takes the outbox into a :class:`Flight` and hands its first batch to paho at once (the
service's ``_take_off``); the lander (:meth:`Flights.land`) awaits the PUBACKs of the flights in
the order they took off, a batch at a time, hands a flight's next batch once its previous one is
acknowledged, and journals each item as published. A new flight may take off while earlier ones
await their PUBACKs (an alert does not wait a round trip behind the state before it), but never
while one still holds items not handed (order), nor beyond ``limit`` publishes awaited (behind a
broker's backlog the PUBACKs come late: the outbox then waits, and its states are coalesced).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

from contract.models import Status
from controller.service.outgoing import Outgoing


@dataclass(slots=True)
class Flight:
    """One flush: the items still to hand to paho (``pending``), the batch handed and its
    publishes awaiting their PUBACKs, and the status to announce after the newest state
    (``status``, once ``sent`` reaches ``status_after``; ``announced`` once handed)."""

    pending: list[Outgoing]
    status_after: int
    status: Status | None = None
    sent: int = 0
    batch: list[Outgoing] = field(default_factory=list)
    publishes: list[asyncio.Future[None]] = field(default_factory=list)
    announced: Status | None = None

    @classmethod
    def from_outbox(cls, outbox: deque[Outgoing], written: int | None = None) -> Flight:
        """The flight of what ``outbox`` holds, taken off it in order: with ``written``, only up
        to the first output caused by a later record (the rest stays, in order, for the next
        flight: a prefix, so nothing is reordered). A state followed by a newer one is left out
        (the newest says it all); the status, if one is owed, goes after the newest state
        (``status_after``: a client that sees ``online`` finds that state retained)."""
        taken = len(outbox)
        if written is not None:
            taken = next((i for i, o in enumerate(outbox) if o.cause > written), taken)
        boarding = [outbox.popleft() for _ in range(taken)]
        last_state = max((i for i, o in enumerate(boarding) if o.what == "state"), default=-1)
        pending = [o for i, o in enumerate(boarding) if not (o.what == "state" and i < last_state)]
        status_after = 1 + max((i for i, o in enumerate(pending) if o.what == "state"), default=-1)
        return cls(pending, status_after)

    @property
    def boarding(self) -> bool:
        """Items (or the status) not yet handed to paho."""
        return bool(self.pending) or self.status is not None


class Flights:
    """The flights of one connection, in order (see the module docstring)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._flights: deque[Flight] = deque()
        self._changed = asyncio.Event()
        #: Publishes handed and not landed, over every flight (kept as they change: the receiver
        #: asks :meth:`may_take_off` at every alert, behind a backlog with hundreds in flight).
        self._awaited = 0

    def __len__(self) -> int:
        """Items in flight, handed or still to hand."""
        return sum(len(f.batch) + len(f.pending) for f in self._flights)

    def may_take_off(self) -> bool:
        """Whether a new flight may take off now (see the module docstring). Only the newest
        flight may be boarding: none takes off while one is, and none boards again."""
        if self._flights and self._flights[-1].boarding:
            return False
        return self._awaited < self.limit

    async def room(self) -> None:
        """Return once a new flight may take off."""
        while not self.may_take_off():
            self._changed.clear()
            await self._changed.wait()

    async def empty(self) -> None:
        """Return once every flight has landed."""
        while self._flights:
            self._changed.clear()
            await self._changed.wait()

    def add(self, flight: Flight) -> None:
        """A flight that took off (its first batch handed)."""
        self._flights.append(flight)
        self._awaited += len(flight.publishes)
        self._changed.set()

    async def land(self, hand: Callable[[Flight], None], published: Callable[[Outgoing], None]) -> NoReturn:
        """Await the flights' acknowledgements in order, for ever; ``hand`` hands a flight's
        next batch, ``published`` journals an acknowledged item. Raises the first failed
        publish's error (a lost connection), the failed items left in their flight for
        :meth:`abandon`."""
        while True:
            while not self._flights:
                self._changed.clear()
                await self._changed.wait()
            flight = self._flights[0]
            if all(publish.done() for publish in flight.publishes):
                # Landed already (the PUBACKs of several flights come in one read): taken now,
                # not a turn of the loop per flight.
                results: list[BaseException | None] = [_outcome(p) for p in flight.publishes]
            else:
                # No time limit on a PUBACK: behind a backlog it comes after every message the
                # broker sent before it (which the intake reads at the engine's pace); a broken
                # connection is found by the keepalive and the socket, not by a guess.
                results = await asyncio.gather(*flight.publishes, return_exceptions=True)
            self._awaited -= len(flight.publishes)
            failed: list[Outgoing] = []
            for out, result in zip(flight.batch, results, strict=False):
                if isinstance(result, BaseException):
                    failed.append(out)
                else:
                    published(out)
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:
                flight.batch, flight.publishes = failed, []
                self._changed.set()
                raise errors[0]
            if flight.boarding:
                hand(flight)
                self._awaited += len(flight.publishes)
            else:
                self._flights.popleft()
            self._changed.set()

    def abandon(self) -> tuple[list[Outgoing], bool]:
        """Every flight cut short (a lost connection, a stop): the items not acknowledged, in
        order, and whether a status handed may not have reached the broker."""
        items: list[Outgoing] = []
        announced = False
        for flight in self._flights:
            for publish in flight.publishes:
                publish.cancel()
            items += flight.batch + flight.pending
            announced = announced or flight.announced is not None or flight.status is not None
        self._flights.clear()
        self._awaited = 0
        self._changed.set()
        return items, announced


def _outcome(publish: asyncio.Future[None]) -> BaseException | None:
    """A done publish's outcome as ``gather(..., return_exceptions=True)`` gives it."""
    if publish.cancelled():
        return asyncio.CancelledError()
    return publish.exception()
