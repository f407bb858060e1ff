"""The hand's money from start to result: the betting core begun at the deal, told the streets
and the hands tabled, and the hand result built when the hand ends.

A hand ends (contract, "Chips, betting and hand results") when its pots have been pushed (the
``pot`` zone is empty) and its cards have left the seats and the board, or at the latest when
the next hand starts; its result is published then. A push the engine found wrong keeps the
hand open until it is put right (its alert resolved) or the next hand starts, so the result
shows what was finally pushed.
"""

from __future__ import annotations

from typing import Final

from contract.cards import zone_bet_seat, zone_stack_seat
from contract.models import (
    ActionInput,
    HandAction,
    HandOutcome,
    HandResult,
    PotResult,
    SeatAmount,
    ShownHand,
)
from contract.pydantic_adapter import construct_valid
from engine.betting.api import Clear, Verdicts
from engine.betting.hand import Money
from engine.chips import chip_seat
from engine.hands import HandRules
from engine.memory import STREET_NAMES

#: Push findings: while one is active the hand stays open for the dealer to put it right.
PUSH_CODES: Final = frozenset({"pot_awarded_wrong", "split_wrong", "odd_chip_wrong", "rake_wrong"})
#: What each push finding left wrong, for the remedy not followed when the next hand starts.
PUSH_WRONG: Final = {
    "pot_awarded_wrong": "a pot awarded to the wrong seat",
    "split_wrong": "a pot split wrong",
    "odd_chip_wrong": "the odd chip on the wrong seat",
    "rake_wrong": "a wrong rake",
}


class ResultRules(HandRules):
    """Begin, feed and finish the betting core; the hand result."""

    # -- when the betting is followed ---------------------------------------------------------

    def _betting_followed(self) -> bool:
        """The engine knows the betting of this hand: chips are read, or actions arrived."""
        return self.money is not None and (self.chips_read or self.actions_seen)

    def _money_begin(self) -> None:
        """The deal is complete: the betting core starts with what lies in the betting areas
        (the blinds and antes posted before the deal) and the action inputs already received."""
        stakes = self.settings.stakes
        if stakes is None or self.money is not None or self.money_done:
            return
        stakes = self.session.hand_stakes(stakes)  # a tournament: the level's blinds and ante
        seats = tuple(sorted(self.in_hand or set(self.dealt_seats)))
        if len(seats) < 2:
            return
        money = Money.begin(
            stakes=stakes,
            seats=seats,
            button=self.hand_button,
            table_seats=self.settings.seats,
            profile=self.profile,
            odd_chip=self.settings.odd_chip,
            no_bet_shows_first=self.settings.no_bet_shows_first,
        )
        chips = self.settings.chips
        verdicts: list[object] = []
        if chips is not None:
            for uid, zone in sorted(self.chip_state.at.items(), key=lambda item: item[1]):
                # the betting areas (blinds and antes) and, where read, the stacks (an all in
                # is a stack emptied)
                if uid in self.award_chips or uid in self.session.state.rebuy_chips or (
                        zone_bet_seat(zone) is None
                                               and zone_stack_seat(zone) is None):
                    continue
                value = chips.value(uid)
                if value is None:
                    continue
                self.chips_read = True
                money, found = money.move(value, None, zone)
                verdicts.extend(found)
            for uid, seat in sorted(self.gathered.items()):
                value = chips.value(uid)
                if value is None or self.chip_state.at.get(uid) != "pot":
                    continue
                # an ante gathered before the deal: put in by its seat, then into the pot
                self.chips_read = True
                for src, dst in ((None, f"bet:{seat}"), (f"bet:{seat}", "pot")):
                    money, found = money.move(value, src, dst)
                    verdicts.extend(found)
            self.gathered = {}
        self.money = money
        self._verdicts(tuple(verdicts))  # type: ignore[arg-type]
        for item in self.early_inputs:
            self._money_action(item)
        self.early_inputs = ()
        money, found = self.money.dealt()
        self.money = money
        self._verdicts(found)
        self._money_progress()

    def _money_action(self, item: ActionInput) -> None:
        """An ``action`` input for the betting core (kept until the deal is complete)."""
        if self.settings.stakes is None or self.money_done:
            return
        if self.money is None:
            self.early_inputs = (*self.early_inputs, item)
            return
        self.actions_seen = True
        money, verdicts = self.money.action(item.seat, item.action, item.amount)
        self.money = money
        self._verdicts(verdicts)
        self._money_progress()

    def _money_fold(self, seat: int) -> None:
        if self.money is None or self.money_done or seat in self.money_folded:
            return
        self.money_folded |= {seat}
        money, verdicts = self.money.fold(seat)
        self.money = money
        self._verdicts(verdicts)
        self._money_progress()

    def _money_muck(self, seat: int) -> None:
        if self.money is None or self.money_done:
            return
        self.money = self.money.muck(seat)

    def _money_all_in(self, seat: int, *, tabled: bool = False) -> None:
        if self.money is None or self.money_done:
            return
        money, verdicts = self.money.all_in(seat, tabled=tabled)
        self.money = money
        self._verdicts(verdicts)
        self._money_progress()

    def _money_street(self, street: int) -> bool:
        """The first card of ``street`` (1 flop, 2 turn, 3 river): True when the betting core
        saw the previous round complete (a check moves nothing: checks are inferred), and then
        tells it the round is over. A premature street is not told: its betting goes on."""
        money = self.money
        if money is None or self.money_done or not self._betting_followed():
            return False
        if street <= self.money_street:
            return True
        if not (money.round_complete or money.run_out):
            return False
        money, verdicts = money.street(street)
        self.money = money
        self.money_street = street
        self._verdicts(verdicts)
        return True

    def _money_table(self, seat: int) -> None:
        """A hand tabled face up at showdown, in the order shown."""
        money = self.money
        if money is None or self.money_done or seat in self.tabled:
            return
        cards = self._card_codes(self.seat_cards.get(seat, ()))
        board = self._card_codes(self._live_board())
        if len(cards) != 2:
            return
        self.tabled = (*self.tabled, seat)
        money, verdicts = money.table(seat, (cards[0], cards[1]), board)
        self.money = money
        self._verdicts(verdicts)

    def _card_codes(self, uids: tuple[str, ...]) -> tuple[str, ...]:
        registry = self.settings.registry
        codes = []
        for uid in uids:
            card = registry.lookup(uid)
            if card is not None:
                codes.append(card.card)
        return tuple(codes)

    def _card_face_up(self, seat: int) -> None:
        """Both hole cards of a seat face up: tabled at showdown (the river's betting done, or
        all in for the run-out)."""
        cards = self.seat_cards.get(seat, ())
        if len(cards) != 2 or not all(uid in self.face_up for uid in cards):
            return
        if seat not in self.face_up_seats:
            self.face_up_seats = (*self.face_up_seats, seat)
        money = self.money
        if money is None or self.money_done:
            return
        if self.phase == "river" and self._betting_followed() and money.round_complete:
            self._showdown()  # the hands are tabled: the river's betting is over
        elif self.phase == "showdown":
            self._money_table(seat)
        elif self.phase in ("preflop", "flop", "turn") and self._betting_followed() \
                and not money.run_out and money.live <= set(self.face_up_seats):
            self._tabled_run_out(money)

    def _tabled_run_out(self, money: Money) -> None:
        """Every hand still in is tabled face up before the river: the players are all in
        (nobody tables a live hand with betting to come), which the chips alone cannot show where
        no stack is read and no all-in key was pressed. The seat that put in the most, and of
        those the last to act, may have chips left; the others are all in, a seat that did not
        match the highest bet (a short all in, taken for a short raise or a premature sweep until
        now) included."""
        put: dict[int, int] = {}
        last: dict[int, int] = {}
        for index, action in enumerate(money.actions):
            put[action.seat] = put.get(action.seat, 0) + action.amount
            last[action.seat] = index
        covering = max(money.live, key=lambda s: (put.get(s, 0), last.get(s, -1)))
        for seat in sorted(money.live - {covering}):
            self._money_all_in(seat, tabled=True)

    # -- chips moved (engine.chips) and the betting core's verdicts --------------------------------

    def chips_gone(self, gone: list[tuple[str, str]]) -> None:
        """Chips read nowhere have left the table (engine.chips: each with the zone it left)."""
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
            self.chip_move(uid, value, left, None)
        self._collect(run_from, run_total)

    def _collected(self, uid: str, left: str) -> bool:
        """Whether a chip gone off the table from ``left`` is collected after the betting (a
        move the betting core takes in a total, see :meth:`chips_gone`)."""
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

    def chip_move(self, uid: str, value: int, src: str | None, dst: str | None) -> None:
        """One chip moved (engine.chips): the betting core interprets it, if a hand is followed."""
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
            alert = self.raise_alert(code, message, verdict.seat, scope="money",
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

    # -- overrides of the hand rules -----------------------------------------------------------

    def _open_round(self) -> None:
        if self.settings.stakes is None:
            super()._open_round()
        elif self.rounds_done == 0 and self.deal_done and self.money is None:
            self._money_begin()

    def _showdown(self) -> None:
        self.showdown_reached = True
        super()._showdown()
        for seat in self.face_up_seats:
            self._money_table(seat)

    def _start_hand(self, *, by_key: bool) -> None:
        # a push found wrong must be put right before the next hand (pot_awarded_wrong: "do not
        # start the next hand"); what the dealer does within his reaction time is not judged
        left_wrong = sorted({self.book.active[a].code for a in self.money_alerts.values()
                             if a in self.book.active and self.book.active[a].code in PUSH_CODES})
        reacting = self.reacting()
        self._finish_hand()  # at the latest when the next hand starts
        self.book.resolve_scope("money", self.ts)
        redeal = self.phase == "misdeal"
        super()._start_hand(by_key=by_key)
        self._session_out(self.session.on_hand_start(self.ts, self.in_hand, redeal=redeal))
        if left_wrong and not reacting:
            self.not_followed(
                "push-put-right",
                "The next hand was started before the last hand's pots were put right "
                f"({'; '.join(PUSH_WRONG[code] for code in left_wrong)}).",
                ("Stop: put the last hand's pots right before dealing the next hand.",),
                of=left_wrong[0],
            )

    def _resume(self) -> None:
        # Events of the hand were lost: its result is what the evidence showed, marked so; the
        # money is left out (a bet or a push may be among what was lost: nothing is made up).
        self.money_done = True
        self._finish_hand()
        # what its pushes were found to be is forgotten with it (no remedy is judged at the next
        # hand's start)
        self.book.resolve_scope("money", self.ts)
        super()._resume()
        self.result_sent = True  # (the hand's reset would let the next hand's start make another)

    # -- the hand's end ------------------------------------------------------------------------

    def _cards_out(self) -> bool:
        """Cards of this hand still read at a seat or on the board."""
        present = self.present
        for uids in self.seat_cards.values():
            for uid in uids:
                if present.get(uid):
                    return True
        return any(present.get(uid) for uid in self.board)

    def _maybe_finish(self) -> None:
        """Publish the result once the hand is over, its cards gone and its pots pushed."""
        if self.result_sent or self.hand == 0 or self.phase == "misdeal" or not self.hand_over:
            return
        money = self.money
        followed = money is not None and not self.money_done and self.chips_read
        if money is not None and followed and not money.settled:  # (remembered: the cheap test
            return  # first, asked after every chip)
        if self._cards_out():
            return
        if followed and any(self.book.active[a].code in PUSH_CODES for a in self.money_alerts.values()
                            if a in self.book.active):
            return  # a wrong push: the hand stays open until it is put right
        self._finish_hand()

    def _finish_hand(self) -> None:
        """The hand's result, from the betting core where it followed the hand."""
        if self.result_sent or self.hand == 0:
            return
        if self.handling_state.half_folds:
            self.handling.half_folds_due(None)
        self.result_sent = True
        left = [s for s in self.in_hand if s not in self.folded]
        outcome_result: HandOutcome
        if self.phase == "misdeal":
            outcome_result = "fouled" if self.book.find("fouled_deck") else "misdeal"
        elif len(left) > 1 or self.showdown_reached:
            outcome_result = "showdown"
        else:
            outcome_result = "uncontested"
        fields: dict[str, object] = {
            "v": 1,
            "ts": self.ts,
            "hand": self.hand,
            "button": self.hand_button,
            "seats": list(self.in_hand or sorted(set(self.dealt_seats))),
            "board": list(self._card_codes(self._live_board() if self.phase != "misdeal" else ())),
            "result": outcome_result,
            "actions": [],
            "pots": [],
            "rake": 0,
            "awarded": [],
            "showdown": [],
            "profile": self.profile,
            "evidence_missing": self.evidence_missing,
        }
        money = self.money
        if money is not None and not self.money_done and self.phase != "misdeal":
            self.chips.settle_lifted(everything=True)
            money, verdicts, outcome = money.finish(self._card_codes(self._live_board()))
            self.money = money
            self._verdicts(verdicts)
            fields["result"] = "showdown" if self.showdown_reached else outcome.result
            fields["board"] = list(self._card_codes(self._live_board()))
            fields["actions"] = [_action(a.street, a.seat, a.action, a.amount) for a in outcome.actions]
            fields["pots"] = [
                construct_valid(
                    PotResult,
                    {
                        "amount": p.amount,
                        "eligible": list(p.eligible),
                        "winners": list(p.winners),
                        "shares": [_seat_amount(s, a) for s, a in p.shares],
                    },
                )
                for p in outcome.pots
            ]
            fields["rake"] = outcome.rake
            fields["awarded"] = [_seat_amount(s, a) for s, a in outcome.awarded]
            fields["showdown"] = [
                construct_valid(ShownHand, {"seat": s.seat, "cards": list(s.cards), "rank": s.rank})
                for s in outcome.showdown
            ]
        elif money is not None:
            fields["actions"] = [_action(a.street, a.seat, a.action, a.amount) for a in money.actions]
        self.money_done = True
        # the chips pushed this hand still in front of the winner (those already taken off, or
        # stacked in a stack zone, are the player's again)
        chips = self.chip_state
        self.award_chips |= {
            u for u in self.hand_awards
            if u in chips.lifted or (u in chips.at and zone_stack_seat(chips.at[u]) is None)
        }
        self.hand_awards = frozenset()
        fields["dealer"] = self.session.hand_dealer  # (off the wire when unknown)
        self.hands_out.append(construct_valid(HandResult, fields))
        self._session_out(self.session.on_hand_end(self.ts))


def _seat_amount(seat: int, amount: int) -> SeatAmount:
    return construct_valid(SeatAmount, {"seat": seat, "amount": amount})


def _action(street: str, seat: int, action: str, amount: int) -> HandAction:
    key = (street, seat, action, amount)
    found = _ACTIONS.get(key)
    if found is None:
        if len(_ACTIONS) >= _ACTIONS_KEPT:
            _ACTIONS.clear()
        found = _ACTIONS[key] = construct_valid(
            HandAction, {"street": street, "seat": seat, "action": action, "amount": amount}
        )
    return found


# A hand's actions in its result (immutable): most recur from hand to hand (the posts, the
# checks, the calls of a blind), each is built once and shared. Bounded: amounts vary without end.
_ACTIONS: dict[tuple[str, int, str, int], HandAction] = {}
_ACTIONS_KEPT: Final = 4096


__all__ = ["STREET_NAMES", "ResultRules"]
