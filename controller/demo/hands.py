"""The virtual dealer's hands: carry out script steps on the simulators' physical interfaces.

Nothing here publishes on MQTT but the inputs of the table's terminal (a badge held to its
reader, the tournament clock started: :class:`InputApi`). After each physical action the hands
wait until the production driver has reported it on the broker (seen by the
:class:`~controller.demo.monitor.Monitor`): a real dealer cannot deal the next card before the
last one lies on the felt, and the engine must see the cards in the order they were dealt.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from contract.models import DeviceEvent
from controller.demo.monitor import EventPredicate, Monitor, Seen
from simulators.dealer import (
    AwaitShuffle,
    DealerBadge,
    DeviceIds,
    FailDeckCheck,
    LevelStart,
    Marker,
    Move,
    MoveButton,
    MoveChips,
    Place,
    PlaceChips,
    Press,
    Remove,
    SetBlind,
    SetOccupied,
    Shuffle,
    Step,
    TakeChips,
    Wait,
)


def _batch_key(step: Step) -> str | None:
    """Steps with the same key may be carried out together: the engine does not depend on
    their order (cards swept off the table, folded hands pushed to the muck, one street's cards
    turned, the blinds and antes posted, the rake and the pushes). A step that commits a mistake
    stands alone (its alert is awaited)."""
    if step.mistake is not None:
        return None
    if isinstance(step, Remove):
        return "remove"
    if isinstance(step, Move) and step.zone == "muck":
        return "muck"
    if isinstance(step, Place) and step.zone == "board":
        return "board"
    if isinstance(step, PlaceChips | MoveChips) and step.group is not None:
        return step.group  # the posts before the deal; the rake and the pushes
    return None


def same_motion(first: Step, then: Step) -> bool:
    """Whether ``then`` goes on the motion ``first`` began: cards pushed to the muck (a fold's
    two cards), whichever of them commits a mistake."""
    return all(isinstance(step, Move) and step.zone == "muck" for step in (first, then))


def batches(steps: Sequence[Step]) -> list[list[Step]]:
    """``steps`` cut into runs that :meth:`TableHands.do_batch` may carry out at once."""
    out: list[list[Step]] = []
    for step in steps:
        key = _batch_key(step)
        if out and key is not None and _batch_key(out[-1][-1]) == key:
            out[-1].append(step)
        else:
            out.append([step])
    return out


class ZoneReaderApi(Protocol):
    """Cards on the table's zones (the simulated table maps zones to reader antennas)."""

    def place(self, uid: str, zone: str, face: str | None = None) -> Any: ...
    def move(self, uid: str, zone: str, face: str | None = None) -> Any: ...
    def remove(self, uid: str) -> Any: ...
    def place_chips(self, uids: Iterable[str], zone: str) -> Any: ...
    def move_chips(self, uids: Iterable[str], zone: str) -> Any: ...
    def take_chips(self, uids: Iterable[str]) -> Any: ...


class ShufflerApi(Protocol):
    def load_deck(self, deck: str, cards: Sequence[str]) -> Any: ...
    def fail_check(
        self, count: int | None = None, missing: Sequence[str] = (), duplicates: Sequence[str] = ()
    ) -> Any: ...
    def press_start(self) -> Any: ...


class BoardApi(Protocol):
    def press(self, key: str, seat: int | None = None) -> Any: ...
    def move_button(self, seat: int | None) -> Any: ...
    def set_occupied(self, seat: int, occupied: bool) -> Any: ...
    def set_blind(self, seat: int, present: bool) -> Any: ...


class InputApi(Protocol):
    """The table's input terminal (:class:`controller.demo.terminal.InputTerminal`)."""

    def dealer(self, badge: str) -> Any: ...
    def level_start(self) -> Any: ...


@dataclass
class HandsReport:
    """What went wrong on the physical side (never card identities)."""

    unseen: dict[str, int] = field(default_factory=dict)  # step kind -> events never reported
    spent_s: dict[str, float] = field(default_factory=dict)  # step kind -> time until reported
    counts: dict[str, int] = field(default_factory=dict)

    def note(self, kind: str) -> None:
        self.unseen[kind] = self.unseen.get(kind, 0) + 1

    def spent(self, kind: str, seconds: float) -> None:
        self.spent_s[kind] = self.spent_s.get(kind, 0.0) + seconds
        self.counts[kind] = self.counts.get(kind, 0) + 1


async def _call(result: Any) -> None:
    if inspect.isawaitable(result):
        await result


class TableHands:
    """Executes :mod:`simulators.dealer.steps` on the simulators; see the module docstring."""

    def __init__(
        self,
        *,
        cards: ZoneReaderApi,
        shuffler: ShufflerApi,
        board: BoardApi,
        monitor: Monitor,
        decks: Mapping[str, Mapping[str, str]],
        ids: DeviceIds,
        event_timeout_s: float = 3.0,
        shuffle_timeout_s: float = 30.0,
        inputs: InputApi | None = None,
    ) -> None:
        self.cards = cards
        #: The input terminal (None: a table without one: no badge is read, the tournament
        #: clock starts with the first hand).
        self.inputs = inputs
        self.shuffler = shuffler
        self.board = board
        self.monitor = monitor
        self.decks = decks
        self.ids = ids
        self.event_timeout_s = event_timeout_s
        self.shuffle_timeout_s = shuffle_timeout_s
        self.report = HandsReport()
        self._shuffles: dict[str, asyncio.Future[Seen]] = {}

    async def do_batch(self, steps: Sequence[Step]) -> float:
        """Carry out steps whose order does not matter (see :func:`batches`) all at once, as a
        dealer sweeps the cards off the table; return the time of the physical act."""
        if len(steps) == 1:
            return await self.do(steps[0])
        waits = []
        for step in steps:
            expected = self._expectation(step)
            if expected is not None:
                waits.append(self.monitor.expect(expected))
        acted = time.monotonic()
        for step in steps:
            await self._act(step)
        kind = type(steps[0]).__name__
        if waits:
            _done, pending = await asyncio.wait(waits, timeout=self.event_timeout_s)
            for future in pending:
                future.cancel()
                self.report.note(kind)
        self.report.spent(f"{kind} x{len(steps)}", time.monotonic() - acted)
        return acted

    async def do(self, step: Step) -> float:
        """Carry out ``step``; return the monotonic time of the physical act (the moment the
        evidence appeared: for ``AwaitShuffle`` when the shuffler reported its verdict)."""
        if isinstance(step, Marker):
            return time.monotonic()
        if isinstance(step, AwaitShuffle):
            return await self._await_shuffle(step.deck)
        if isinstance(step, Wait):
            # Real time even flat out: the engine's timers run on the events' time.
            acted = time.monotonic()
            await asyncio.sleep(step.seconds)
            return acted
        expected = self._expectation(step)
        seen = self.monitor.expect(expected) if expected is not None else None
        acted = time.monotonic()
        await self._act(step)
        if seen is not None:
            try:
                await asyncio.wait_for(seen, self.event_timeout_s)
            except TimeoutError:
                self.report.note(type(step).__name__)
        self.report.spent(type(step).__name__, time.monotonic() - acted)
        return acted

    async def _act(self, step: Step) -> None:
        match step:
            case Place(uid=uid, zone=zone, face=face):
                await _call(self.cards.place(uid, zone, face))
            case Move(uid=uid, zone=zone, face=face):
                # The card leaves one antenna's field for another's: the reader sees it arrive at
                # once and, after its hold time, no longer sees it where it was.
                await _call(self.cards.move(uid, zone, face))
            case Remove(uid=uid):
                await _call(self.cards.remove(uid))
            case PlaceChips(uids=uids, zone=zone):
                await _call(self.cards.place_chips(uids, zone))
            case MoveChips(uids=uids, zone=zone):
                await _call(self.cards.move_chips(uids, zone))
            case TakeChips(uids=uids):
                await _call(self.cards.take_chips(uids))
            case Press(key=key, seat=seat):
                await _call(self.board.press(key, seat))
            case MoveButton(seat=seat):
                await _call(self.board.move_button(seat))
            case SetBlind(seat=seat, present=present):
                await _call(self.board.set_blind(seat, present))
            case SetOccupied(seat=seat, occupied=occupied):
                await _call(self.board.set_occupied(seat, occupied))
            case DealerBadge(badge=badge):
                if self.inputs is not None:
                    await _call(self.inputs.dealer(badge))
            case LevelStart():
                if self.inputs is not None:
                    await _call(self.inputs.level_start())
            case Shuffle(deck=deck) | FailDeckCheck(deck=deck):
                self._shuffles[deck] = self.monitor.expect(self._shuffled(deck))
                if isinstance(step, FailDeckCheck):
                    await _call(
                        self.shuffler.fail_check(
                            count=step.count, missing=step.missing, duplicates=step.duplicates
                        )
                    )
                await _call(self.shuffler.load_deck(deck, sorted(self.decks[deck])))
                await _call(self.shuffler.press_start())

    def _shuffled(self, deck: str) -> EventPredicate:
        def match(device: str, event: DeviceEvent) -> bool:
            return device == self.ids.shuffler and event.type == "shuffle_complete" and event.deck == deck

        return match

    async def _await_shuffle(self, deck: str) -> float:
        future = self._shuffles.get(deck)
        if future is None:
            return time.monotonic()
        try:
            seen = await asyncio.wait_for(asyncio.shield(future), self.shuffle_timeout_s)
        except TimeoutError:
            self.report.note("AwaitShuffle")
            return time.monotonic()
        # The shuffler's verdict is the physical event: when the device observed it.
        return seen.observed()

    def _expectation(self, step: Step) -> EventPredicate | None:
        ids = self.ids

        def tag(uid: str, present: bool, zone: str | None) -> EventPredicate:
            def match(device: str, event: DeviceEvent) -> bool:
                return (
                    ids.reads(device)
                    and event.type == "tag"
                    and event.uid == uid
                    and event.present == present
                    and (zone is None or event.zone == zone)
                )

            return match

        def chips(uids: Sequence[str], present: bool, zone: str | None) -> EventPredicate:
            """Every chip of a handful reported (arrived in ``zone``, or gone)."""
            waiting = {uid.upper() for uid in uids}

            def match(device: str, event: DeviceEvent) -> bool:
                if (
                    ids.reads(device)
                    and event.type == "tag"
                    and event.present == present
                    and (zone is None or event.zone == zone)
                ):
                    waiting.discard(event.uid)
                return not waiting

            return match

        match step:
            case Place(uid=uid, zone=zone) | Move(uid=uid, zone=zone):
                return tag(uid, True, zone)
            case PlaceChips(uids=uids, zone=zone) | MoveChips(uids=uids, zone=zone):
                return chips(uids, True, zone)
            case TakeChips():
                # Not awaited: chips taken off the table are counted gone only after the
                # reader's hold time, and nothing the dealer does next depends on it (the rack
                # hands out the chips that have been off the table longest).
                return None
            case Remove(uid=uid):
                return tag(uid, False, None)
            case Press(key=key, seat=seat):
                return lambda d, e: d == ids.sensors and e.type == "key" and e.key == key and e.seat == seat
            case MoveButton(seat=seat):
                return lambda d, e: d == ids.sensors and e.type == "button" and e.seat == seat
            case SetBlind(seat=seat, present=present):
                return lambda d, e: (
                    d == ids.sensors and e.type == "blind" and e.seat == seat and e.present == present
                )
            case SetOccupied(seat=seat, occupied=occupied):
                return lambda d, e: (
                    d == ids.sensors and e.type == "seat" and e.seat == seat and e.occupied == occupied
                )
            case Shuffle(deck=deck) | FailDeckCheck(deck=deck):
                return lambda d, e: d == ids.shuffler and e.type == "shuffling" and e.deck in (deck, None)
        return None
