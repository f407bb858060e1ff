"""Chips as evidence: tag reads in the chip zones turned into chip moves for the betting core.

The machine is a physical tracker here too: a chip is where it was last read present (a chip
read in a second zone while still read in the first has moved there; an absence from the new zone
before the old one means the second read was crosstalk, and it moves back). A chip read nowhere
is *lifted*: it has moved where its next read says, or off the table if no read comes within
:data:`LIFT_S` of event time (a sweep is read in the pot well within that; the reader's hold time
is 1.5 s). The betting core (:class:`engine.betting.hand.Money`) is told every move once; it
decides what the move means (a bet, a sweep, a push, chips taken back) and returns verdicts,
which become alerts here, one per finding key.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from contract.cards import is_chip_zone, zone_bet_seat, zone_stack_seat
from engine.betting.api import Clear, Verdicts
from engine.hands import HandRules

#: How long (event time) a chip read nowhere may take to be read elsewhere before it counts as
#: taken off the table.
LIFT_S: Final = timedelta(seconds=3)


def chip_seat(zone: str) -> int | None:
    """The seat a chip zone belongs to (``bet:N``, ``stack:N``), or None (pot, rake)."""
    return zone_bet_seat(zone) or zone_stack_seat(zone)


class ChipRules(HandRules):
    """Chip tags, lifted chips, and the betting core's verdicts as alerts."""

    # -- tags --------------------------------------------------------------------------------

    def _chip_or_unknown(self, uid: str, zone: str, present: bool) -> bool:
        """Handle ``uid`` if it is a chip, or a tag in a chip zone; True when handled (the card
        rules then do not see it)."""
        chips = self.settings.chips
        value = chips.value(uid) if chips is not None else None
        if value is not None:
            self._chip_tag(uid, zone, present, value)
            return True
        if not is_chip_zone(zone):
            return False
        if not present and uid in self.unknown_chips:
            # the remedy followed: the foreign tag was removed from the chip zone
            self.unknown_chips -= {uid}
            alert = self.money_alerts.get(f"unknown:{uid}")
            if alert is not None:
                self.book.resolve(alert, self.ts)
                self.money_alerts = {k: a for k, a in self.money_alerts.items() if k != f"unknown:{uid}"}
            return True
        if present and self.settings.registry.lookup(uid) is None and uid not in self.unknown_chips:
            # A tag in a chip zone that is neither a chip nor a card of this table. The UID stays
            # out of the message (tag identities never reach the alerts topic).
            self.unknown_chips |= {uid}
            seat = chip_seat(zone)
            where = f"the betting area of seat {seat}" if zone_bet_seat(zone) else zone
            alert = self._raise(
                "unknown_chip",
                f"A tag that is not a chip of this table was read in {where}.",
                seat,
                scope="money",
            )
            self.money_alerts = {**self.money_alerts, f"unknown:{uid}": alert}
        return True  # a card on a betting area or in the pot moves no card

    def _chip_tag(self, uid: str, zone: str, present: bool, value: int) -> None:
        seen = self.chip_seen.get(uid, ())
        if present:
            if zone in seen:
                return
            self.chip_seen[uid] = (*seen, zone)
            if not is_chip_zone(zone):
                return  # a chip read at a seat or the board is nowhere for the betting
            current = self.chip_at.get(uid)
            # this read's own time: with several readers (the betting areas on one, the stacks
            # on another) a chip lifted after it was seen arriving here, on the other reader's
            # clock, did not leave before this one moved
            left_at = self.ts
            if current is None:
                lifted = self.chip_lift.get(uid)
                if lifted is not None:
                    current, left_at = lifted
                    del self.chip_lift[uid]
            if self.chip_lift and (current is None or current != zone):
                # chips that left before this one and were read nowhere since have gone: a
                # chip from off the table is a new action, a chip moving from a zone follows
                # those taken off it earlier; a chip into the pot (a sweep) or out of it (the
                # dealer's push or rake): every chip lifted before it has gone (an uncalled bet
                # handed back before the push is not the push's first chips); chips that left
                # the zone this one lands in went elsewhere
                self._settle_lifted(
                    zone=None if "pot" in (zone, current) else current, before=left_at
                )
                if self.chip_lift and zone != "pot" and current is not None:
                    self._settle_lifted(zone=zone, before=left_at)
            if self.phase == "dealing" and self.dealt and zone_bet_seat(zone) is not None:
                self._deal_end()  # chips into a betting area: the deal is over, betting began
            self.chip_at[uid] = zone
            if current != zone:
                self._chip_move(uid, value, current, zone)
            return
        if zone not in seen:
            return
        rest = tuple(z for z in seen if z != zone)
        if rest:
            self.chip_seen[uid] = rest
        else:
            del self.chip_seen[uid]
        if self.chip_at.get(uid) != zone:
            return  # a crosstalk read ended: the chip never left
        places = [z for z in rest if is_chip_zone(z)]
        if places:
            self.chip_at[uid] = places[-1]
            self._chip_move(uid, value, zone, places[-1])
            return
        del self.chip_at[uid]
        self.chip_lift[uid] = (zone, self.read_ts)

    def _settle_lifted(
        self, *, everything: bool = False, zone: str | None = None, before: datetime | None = None
    ) -> None:
        """Chips read nowhere have left the table: those lifted :data:`LIFT_S` ago, or all of
        them (``everything``), or those lifted strictly ``before`` a time (from ``zone`` only,
        when given)."""
        if not self.chip_lift:
            return
        if not everything:
            # Chips are lifted at the reader's time, which never goes back, and leave this dict
            # before they can be lifted again: the first is the oldest. If it is too recent,
            # so is every other one (this runs after most chip reads, with tens lifted).
            _, oldest = next(iter(self.chip_lift.values()))
            if (oldest >= before) if before is not None else (oldest > self.read_ts - LIFT_S):
                return
        if before is not None:
            gone = [
                (u, z)
                for u, (z, at) in self.chip_lift.items()
                if at < before and (zone is None or z == zone)
            ]
        else:
            limit = self.read_ts - LIFT_S
            gone = [(u, z) for u, (z, at) in self.chip_lift.items() if everything or at <= limit]
        if not gone:
            return
        for uid, _ in gone:
            del self.chip_lift[uid]
        chips = self.settings.chips
        # A winner collecting the chips pushed to him (out of a betting area after the betting)
        # moves them one by one; their moves add up, so a run of them from one betting area is
        # told to the betting core once, with their total: a collection is tens of chips.
        run_from: str | None = None
        run_total = 0
        for uid, left in gone:
            value = chips.value(uid) if chips is not None else None
            if value is None:
                continue
            if self._collected(uid, left):
                if left != run_from:
                    self._collect(run_from, run_total)
                    run_from, run_total = left, 0
                run_total += value
                if uid in self.hand_awards:
                    self.hand_awards -= {uid}  # collected by the winner: in play again once bet
                continue
            self._collect(run_from, run_total)
            run_from, run_total = None, 0
            self._chip_move(uid, value, left, None)
        self._collect(run_from, run_total)

    def _collected(self, uid: str, left: str) -> bool:
        """Whether a chip gone off the table from ``left`` is collected after the betting (a
        move the betting core takes in a total, see :meth:`_settle_lifted`)."""
        money = self.money
        return (
            money is not None
            and not self.money_done
            and uid not in self.award_chips
            and zone_bet_seat(left) is not None
            and money.decided
        )

    def _collect(self, src: str | None, total: int) -> None:
        """Chips worth ``total`` collected off the table from betting area ``src`` (none: no run)."""
        if src is not None:
            self._tell_money(total, src, None)

    def _chip_move(self, uid: str, value: int, src: str | None, dst: str | None) -> None:
        """One chip moved: the betting core interprets it, if a hand is followed."""
        if self._session_chip(uid, value, src, dst):
            return  # added to a stack during the hand: it plays no part in it
        if uid in self.award_chips:
            # pushed to a winner at the end of an earlier hand: not in play until it has left
            # the table (a winner collecting his chips)
            if dst is None or zone_stack_seat(dst) is not None:
                self.award_chips -= {uid}
            return
        if (
            self.hand_over
            and not self.result_sent
            and src is None
            and dst is not None
            and zone_bet_seat(dst) is not None
        ):
            # chips from a player's side into a betting area after the hand was decided: the
            # next hand's blinds; the last hand is over even with a wrong push left standing
            self._finish_hand()
        money = self.money
        if money is None or self.money_done:
            # between hands: what lies in the betting areas is read at the next deal, and the
            # antes gathered into the pot with the seat that put them in
            seat = zone_bet_seat(src) if src is not None else None
            if dst == "pot" and seat is not None:
                self.gathered = {**self.gathered, uid: seat}
            elif uid in self.gathered:
                self.gathered = {u: s for u, s in self.gathered.items() if u != uid}
            return
        if src == "pot" and dst is not None and chip_seat(dst) is not None:
            self.hand_awards |= {uid}
        elif uid in self.hand_awards and (dst is None or zone_stack_seat(dst) is not None):
            self.hand_awards -= {uid}  # collected by the winner: in play again once bet
        self._tell_money(value, src, dst)

    def _tell_money(self, value: int, src: str | None, dst: str | None) -> None:
        """Chips worth ``value`` moved: the betting core's verdicts as alerts, and what follows."""
        money = self.money
        if money is None:
            return
        self.chips_read = True
        money, verdicts = money.move(value, src, dst)
        self.money = money
        self._verdicts(verdicts)
        self._money_progress()

    # -- verdicts ------------------------------------------------------------------------------

    def _verdicts(self, verdicts: Verdicts) -> None:
        for verdict in verdicts:
            if isinstance(verdict, Clear):
                alert = self.money_alerts.get(verdict.key)
                if alert is not None:
                    self.book.resolve(alert, self.ts)
                    self.money_alerts = {k: a for k, a in self.money_alerts.items() if k != verdict.key}
                continue
            existing = self.money_alerts.get(verdict.key)
            remedy = verdict.remedy or None  # None: the catalogue's
            if existing is not None and existing in self.book.active:
                if self.book.active[existing].message != verdict.message:
                    fields: dict[str, object] = {"message": verdict.message}
                    if remedy is not None:
                        fields["remedy"] = list(remedy)
                    self.book.update(existing, self.ts, **fields)
                continue
            code, message = self.session.blind_code(verdict.code, verdict.message)  # a level's
            # a wrong blind judged against a tournament level keeps the level's own remedy
            alert = self._raise(code, message, verdict.seat, scope="money",
                                remedy=remedy if code == verdict.code else None)
            self.money_alerts = {**self.money_alerts, verdict.key: alert}

    def _money_progress(self) -> None:
        """After the betting core moved on: an all-in run-out, a hand won uncontested."""
        money = self.money
        if money is None:
            return
        if not self.all_in and self.running and money.run_out:  # (the cheap tests first)
            self.all_in = True
        if self.hand_over and not self.result_sent:
            self._maybe_finish()
