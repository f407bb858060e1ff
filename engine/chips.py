"""Chips as evidence: tag reads in the chip zones turned into chip moves for the betting core.

The machine is a physical tracker here too: a chip is where it was last read present (a chip
read in a second zone while still read in the first has moved there; an absence from the new zone
before the old one means the second read was crosstalk, and it moves back). A chip read nowhere
is *lifted*: it has moved where its next read says, or off the table if no read comes within
:data:`LIFT_S` of event time (a sweep is read in the pot well within that; the reader's hold time
is 1.5 s). The betting core (:class:`engine.betting.hand.Money`) is told every move once; it
decides what the move means (a bet, a sweep, a push, chips taken back) and returns verdicts,
which become alerts, one per finding key (:mod:`engine.results`, which holds the betting core).

The concern is :class:`Chips`, over its part :class:`ChipState`: where each chip is read and
where it is, the chips lifted, and the foreign tags in chip zones. It tells the hand's money
(:mod:`engine.results`) each move through the table it is attached to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from contract.cards import is_chip_zone, zone_bet_seat, zone_stack_seat

if TYPE_CHECKING:
    from engine.dispatcher import Machine
    from engine.table import Table

#: How long (event time) a chip read nowhere may take to be read elsewhere before it counts as
#: taken off the table.
LIFT_S: Final = timedelta(seconds=3)


def chip_seat(zone: str) -> int | None:
    """The seat a chip zone belongs to (``bet:N``, ``stack:N``), or None (pot, rake)."""
    return zone_bet_seat(zone) or zone_stack_seat(zone)


@dataclass(slots=True)
class ChipState:
    """Where the chips are. ``seen``, ``at`` and ``lifted`` are updated in place (a copy copies
    them); ``unknown`` is replaced when it changes."""

    #: The zones each chip tag is read in now.
    seen: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The chip zone each chip is in (the last it was read present in).
    at: dict[str, str] = field(default_factory=dict)
    #: Chips read nowhere since (the zone they left, the reader's time), oldest first.
    lifted: dict[str, tuple[str, datetime]] = field(default_factory=dict)
    #: Tags in chip zones that are neither chips nor cards of this table, this hand: their
    #: ``unknown_chip`` alert.
    unknown: dict[str, str] = field(default_factory=dict)

    def copy(self) -> ChipState:
        return ChipState(self.seen.copy(), self.at.copy(), self.lifted.copy(), self.unknown)


class Chips:
    """Chip tags to chip moves, lifted chips settled, foreign tags (see the module docstring)."""

    __slots__ = ("machine", "state", "table")

    def __init__(self, state: ChipState, table: Table, machine: Machine) -> None:
        self.state = state
        self.table = table  # the time, the settings, the alerts
        self.machine = machine  # the hand's money (results), the deal, the session

    def chip_or_unknown(self, uid: str, zone: str, present: bool) -> bool:
        """Handle ``uid`` if it is a chip, or a tag in a chip zone; True when handled (the card
        rules then do not see it)."""
        table = self.table
        chips = table.settings.chips
        value = chips.value(uid) if chips is not None else None
        if value is not None:
            self.tag(uid, zone, present, value)
            return True
        if not is_chip_zone(zone):
            return False
        unknown = self.state.unknown
        if not present and uid in unknown:
            # the remedy followed: the foreign tag was removed from the chip zone
            table.book.resolve(unknown[uid], table.ts)
            self.state.unknown = {u: a for u, a in unknown.items() if u != uid}
            return True
        if present and table.settings.registry.lookup(uid) is None and uid not in unknown:
            # A tag in a chip zone that is neither a chip nor a card of this table. The UID stays
            # out of the message (tag identities never reach the alerts topic).
            seat = chip_seat(zone)
            where = f"the betting area of seat {seat}" if zone_bet_seat(zone) else zone
            alert = table.raise_alert(
                "unknown_chip",
                f"A tag that is not a chip of this table was read in {where}.",
                seat,
                scope="money",
            )
            self.state.unknown = {**unknown, uid: alert}
        return True  # a card on a betting area or in the pot moves no card

    def tag(self, uid: str, zone: str, present: bool, value: int) -> None:
        """A chip's tag read present or absent in ``zone``."""
        state, table = self.state, self.table
        machine = self.machine
        seen = state.seen.get(uid, ())
        if present:
            if zone in seen:
                return
            state.seen[uid] = (*seen, zone)
            if not is_chip_zone(zone):
                return  # a chip read at a seat or the board is nowhere for the betting
            current = state.at.get(uid)
            # this read's own time: with several readers (the betting areas on one, the stacks
            # on another) a chip lifted after it was seen arriving here, on the other reader's
            # clock, did not leave before this one moved
            left_at = table.ts
            lifted = state.lifted
            if current is None:
                was = lifted.get(uid)
                if was is not None:
                    current, left_at = was
                    del lifted[uid]
            if lifted and (current is None or current != zone):
                # chips that left before this one and were read nowhere since have gone: a
                # chip from off the table is a new action, a chip moving from a zone follows
                # those taken off it earlier; a chip into the pot (a sweep) or out of it (the
                # dealer's push or rake): every chip lifted before it has gone (an uncalled bet
                # handed back before the push is not the push's first chips); chips that left
                # the zone this one lands in went elsewhere
                self.settle_lifted(zone=None if "pot" in (zone, current) else current, before=left_at)
                if lifted and zone != "pot" and current is not None:
                    self.settle_lifted(zone=zone, before=left_at)
            phase = machine.hand_part.phase
            if phase == "dealing" and machine.deal_state.dealt and zone_bet_seat(zone) is not None:
                machine.dealing.deal_end()  # chips into a betting area: the deal is over, betting began
            state.at[uid] = zone
            if current != zone:
                machine.results.chip_move(uid, value, current, zone)
            return
        if zone not in seen:
            return
        rest = tuple(z for z in seen if z != zone)
        if rest:
            state.seen[uid] = rest
        else:
            del state.seen[uid]
        if state.at.get(uid) != zone:
            return  # a crosstalk read ended: the chip never left
        places = [z for z in rest if is_chip_zone(z)]
        if places:
            state.at[uid] = places[-1]
            machine.results.chip_move(uid, value, zone, places[-1])
            return
        del state.at[uid]
        state.lifted[uid] = (zone, table.read_ts)

    def settle_lifted(
        self, *, everything: bool = False, zone: str | None = None, before: datetime | None = None
    ) -> None:
        """Chips read nowhere have left the table: those lifted :data:`LIFT_S` ago, or all of
        them (``everything``), or those lifted strictly ``before`` a time (from ``zone`` only,
        when given). The hand's money is told what left, and from where."""
        lifted = self.state.lifted
        if not lifted:
            return
        read_ts = self.table.read_ts
        if not everything:
            # Chips are lifted at the reader's time, which never goes back, and leave this dict
            # before they can be lifted again: the first is the oldest. If it is too recent,
            # so is every other one (this runs after most chip reads, with tens lifted).
            _, oldest = next(iter(lifted.values()))
            if (oldest >= before) if before is not None else (oldest > read_ts - LIFT_S):
                return
        # (oldest first, as above: the scan stops at the first chip lifted too recently, where
        # it went through every chip lifted, tens of them, to find the few due)
        gone: list[tuple[str, str]] = []
        if before is not None:
            for u, (z, at) in lifted.items():
                if at >= before:
                    break
                if zone is None or z == zone:
                    gone.append((u, z))
        elif everything:
            gone = [(u, z) for u, (z, _) in lifted.items()]
        else:
            limit = read_ts - LIFT_S
            for u, (z, at) in lifted.items():
                if at > limit:
                    break
                gone.append((u, z))
        if not gone:
            return
        for uid, _ in gone:
            del lifted[uid]
        self.machine.results.chips_gone(gone)
