"""The hand being built: where every card lies, and the dealer's physical actions on it.

:class:`HandPlay` is what both the legal dealer (:mod:`simulators.dealer.dealer`) and the mistake
injectors (:mod:`simulators.dealer.mistakes`) act through: place, move and remove cards, press
keys, deal a street, run a betting round, the showdown, clearing the table. Every action appends
the physical steps a real dealer's hands would make. Pure: all chance comes from ``rng``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from phevaluator import evaluate_cards

from contract.models import KeyName
from simulators.dealer.shoe import Shoe
from simulators.dealer.steps import Face, Move, Place, Press, Remove, SetBlind, Step, Wait

if TYPE_CHECKING:
    from simulators.dealer.dealer import DealerSettings
    from simulators.dealer.mistakes.base import Mistake
    from simulators.dealer.money import TableMoney

#: Seconds a real dealer takes before each kind of step, at ``--speed 1``.
PACE: Final[dict[str, float]] = {
    "sit": 1.0,
    "button": 1.5,
    "blind": 1.0,
    "shuffle": 1.0,
    "new_hand": 1.0,
    "hole": 0.4,
    "burn": 1.0,
    "board": 0.5,
    "fold": 2.5,
    "round": 5.0,
    "ack": 2.0,
    "fix": 1.5,
    "muck": 1.0,
    "clear_first": 3.0,
    "clear": 0.05,
}


@dataclass
class Hand:
    """The hand being built: its steps and where every card lies."""

    number: int
    shoe: Shoe
    order: list[int]
    button: int
    steps: list[Step] = field(default_factory=list)
    mistakes: list[str] = field(default_factory=list)
    on_table: dict[str, str] = field(default_factory=dict)  # uid -> zone
    card_of: dict[str, str | None] = field(default_factory=dict)  # uid -> card
    hole: dict[int, list[str]] = field(default_factory=dict)  # seat -> uids
    active: list[int] = field(default_factory=list)
    board: list[str] = field(default_factory=list)  # card codes
    blinds: set[int] = field(default_factory=set)
    all_in: bool = False
    next_burn: str | None = None  # a card set back to be the next burn (extra card, extra burn)
    flop_burn_done: bool = False  # the exposed card already lies as the flop's burn
    exposed: set[str] = field(default_factory=set)  # uids of hole cards dealt face up
    board_done: bool = False  # every street and betting round is behind (remedy flows)
    over: bool = False  # one seat left


class HandPlay:
    """The dealer's hands on one :class:`Hand` (see the module docstring)."""

    def __init__(
        self, hand: Hand, settings: DealerSettings, rng: random.Random, known_uids: set[str]
    ) -> None:
        self.hand = hand
        self.settings = settings
        self.rng = rng
        self._known_uids = known_uids
        #: The hand's chips, on a table that reads them (None: betting shown by keys only).
        self.money: TableMoney | None = None
        #: The mistake being played (its betting hooks are called from the rounds).
        self.mistake: Mistake | None = None
        #: How the open betting round is played: (seats kept in, protected seat, cautious).
        self._round_options: tuple[int, int | None, bool] = (1, None, False)

    # ------------------------------------------------------------------ physical primitives

    def emit(self, step: Step) -> None:
        self.hand.steps.append(step)
        if step.mistake is not None:
            self.hand.mistakes.append(step.mistake)

    def face(self, face: Face) -> Face:
        """What the reader reports of a card's face (nothing, on a reader blind to faces)."""
        return face if self.settings.reader_reports_face else None

    def place(self, card: str, zone: str, face: Face, pause: float, mistake: str | None = None) -> str:
        """A card of the deck in play put on ``zone``; returns its tag UID."""
        uid = self.hand.shoe.uid(card)
        self.place_uid(uid, card, zone, self.face(face), pause, mistake)
        return uid

    def place_uid(
        self, uid: str, card: str | None, zone: str, face: Face, pause: float, mistake: str | None
    ) -> None:
        hand = self.hand
        hand.on_table[uid] = zone
        hand.card_of[uid] = card
        self.emit(Place(uid=uid, zone=zone, face=face, card=card, pause_s=pause, mistake=mistake))

    def move(self, uid: str, zone: str, face: Face, pause: float, mistake: str | None = None) -> None:
        hand = self.hand
        hand.on_table[uid] = zone
        self.emit(
            Move(
                uid=uid,
                zone=zone,
                face=self.face(face),
                card=hand.card_of.get(uid),
                pause_s=pause,
                mistake=mistake,
            ),
        )

    def remove(self, uid: str, pause: float) -> None:
        del self.hand.on_table[uid]
        self.emit(Remove(uid=uid, card=self.hand.card_of.get(uid), pause_s=pause))

    def press(
        self,
        key: KeyName,
        *,
        seat: int | None = None,
        mistake: str | None = None,
        pause: float | None = None,
    ) -> None:
        pace = PACE.get(key, PACE["ack"]) if pause is None else pause
        self.emit(Press(key=key, seat=seat, mistake=mistake, pause_s=pace))

    def ack(self) -> None:
        """The dealer acknowledges an alert on the keypad."""
        self.press("ack", pause=PACE["ack"])

    def deal_on(self, seat_zone: str) -> None:
        """``remedy_not_followed`` after a misdeal: the dealer deals one more card, after the
        reaction time (cards dealt sooner are part of the same mistake), also flat out."""
        self.emit(Wait(seconds=self.settings.reaction_s + 0.5, pause_s=0.0))
        self.hole(seat_zone, "remedy_not_followed")

    def hole(self, seat_zone: str, mistake: str | None = None) -> str:
        """The top card face down to a seat zone."""
        return self.place(self.hand.shoe.draw(), seat_zone, "down", PACE["hole"], mistake)

    def foreign_uid(self, prefix: str = "E0040150") -> str:
        """A tag that is in no deck of the registry (a card from another table)."""
        while True:
            uid = prefix + "".join(self.rng.choice("0123456789ABCDEF") for _ in range(8))
            if uid not in self._known_uids:
                return uid

    # ------------------------------------------------------------------ board and burns

    def burn(self, mistake: str | None = None) -> str:
        hand = self.hand
        if hand.flop_burn_done and not hand.board:
            hand.flop_burn_done = False
            return ""
        card = hand.next_burn or hand.shoe.draw()
        hand.next_burn = None
        return self.place(card, "burn", "down", PACE["burn"], mistake)

    def board(self, card: str, mistake: str | None = None) -> str:
        self.hand.board.append(card)
        return self.place(card, "board", "up", PACE["board"], mistake)

    def unboard(self, uids: list[str]) -> list[str]:
        """Board cards taken back off the table; returns their card codes."""
        cards = []
        for uid in uids:
            card = self.hand.card_of[uid]
            assert card is not None
            self.hand.board.remove(card)
            cards.append(card)
            self.remove(uid, PACE["fix"])
        return cards

    def street(self, count: int, *, burn: bool = True) -> None:
        if burn:
            self.burn()
        for _ in range(count):
            self.board(self.hand.shoe.draw())

    # ------------------------------------------------------------------ betting

    def complete_round(self, street: str) -> None:
        if self.money is not None:
            keep, protect, cautious = self._round_options
            assert self.mistake is not None
            self.money.play_round(self.mistake, keep=keep, protect=protect, cautious=cautious)
            self._close_round(street)
            return
        self.press("round_complete", pause=PACE["round"])
        if street == "preflop":
            self.pull_blinds()

    def _chip_betting(
        self, street: str, *, complete: bool, keep: int, protect: int | None, cautious: bool
    ) -> None:
        """A betting round read from the chips: the round ends at the sweep (no key)."""
        money, mistake = self.money, self.mistake
        assert money is not None
        assert mistake is not None
        ledger = money.ledger
        if ledger.street != street:
            ledger.next_street(street)
        keep = max(keep, mistake.keep)
        self._round_options = (keep, protect, cautious)
        if not complete:
            # The next street comes early: preflop nobody has acted yet; later a seat faces a bet.
            if street != "preflop":
                money.play_round(mistake, keep=keep, protect=protect, cautious=cautious, until_bet=True)
            return
        money.play_round(mistake, keep=keep, protect=protect, cautious=cautious)
        self._close_round(street)

    def _close_round(self, street: str) -> None:
        money, hand = self.money, self.hand
        assert money is not None
        assert self.mistake is not None
        money.end_round(self.mistake)
        if street == "preflop":
            self.pull_blinds()
        if len(money.ledger.live) == 1:
            hand.over = True
        elif money.ledger.betting_over:
            hand.all_in = True

    def betting(
        self,
        street: str,
        *,
        complete: bool,
        keep_two: bool,
        allow_all_in: bool,
        protect: int | None = None,
    ) -> None:
        """Players fold; then the dealer closes the round (or the hand is over)."""
        hand, rng = self.hand, self.rng
        if hand.over or hand.all_in:
            return
        floor = 2 if keep_two else 1
        if self.money is not None:
            self._chip_betting(
                street, complete=complete, keep=floor, protect=protect, cautious=not allow_all_in
            )
            return
        for seat in list(hand.active):
            if seat == protect or len(hand.active) <= floor:
                continue
            if rng.random() < self.settings.fold_rate:
                self.fold(seat)
        if len(hand.active) == 1:
            hand.over = True
            self.pull_blinds()
            return
        if not complete:
            return
        if allow_all_in and rng.random() < self.settings.all_in_rate:
            self.press("all_in", pause=PACE["round"])
            hand.all_in = True
            if street == "preflop":
                self.pull_blinds()
        else:
            self.complete_round(street)

    def fold(self, seat: int, mistake: str | None = None) -> None:
        """The seat's hole cards pushed to the muck (``mistake`` tags the last card: the fold is
        complete, and what it settles is judged, once both are there)."""
        self.hand.active.remove(seat)
        cards = self.hand.hole[seat]
        for i, uid in enumerate(cards):
            last = i == len(cards) - 1
            self.move(
                uid, "muck", "down", PACE["fold"] if i == 0 else PACE["muck"], mistake if last else None
            )

    def pull_blinds(self) -> None:
        for seat in sorted(self.hand.blinds):
            self.emit(SetBlind(seat=seat, present=False, pause_s=PACE["clear"]))
        self.hand.blinds.clear()

    # ------------------------------------------------------------------ the end of the hand

    def ranks(self) -> tuple[dict[int, int], int]:
        """Each active seat's hand rank (lower is better), and the board's own."""
        hand = self.hand
        board = hand.board
        assert len(board) == 5, f"showdown with a board of {len(board)} cards"
        ranks = {
            seat: evaluate_cards(*board, *(hand.card_of[uid] or "" for uid in hand.hole[seat]))
            for seat in hand.active
        }
        return ranks, evaluate_cards(*board)

    def hole_cards(self, seat: int) -> list[str]:
        """The card codes of a seat's hole cards (for the dealer's own showdown)."""
        return [self.hand.card_of[uid] or "" for uid in self.hand.hole[seat]]

    def table_hand(self, seat: int, pause: float = 1.0) -> None:
        """The seat's hole cards turned face up where they lie, one after the other."""
        for uid in self.hand.hole[seat]:
            self.move(uid, self.hand.on_table[uid], "up", pause)

    def muck(self, seat: int, mistake: str | None = None) -> None:
        self.hand.active.remove(seat)
        for i, uid in enumerate(self.hand.hole[seat]):
            self.move(uid, "muck", "down", PACE["muck"], mistake if i == 0 else None)

    def clear_table(self) -> None:
        """Every card off the table, seats first, then board, burns, muck and set-aside cards."""
        hand = self.hand

        def rank(item: tuple[str, str]) -> tuple[int, str]:
            zone = item[1]
            return (0 if zone.startswith("seat:") else 1, zone)

        for i, (uid, _) in enumerate(sorted(hand.on_table.items(), key=rank)):
            self.remove(uid, PACE["clear_first"] if i == 0 else PACE["clear"])
        hand.board.clear()
        hand.next_burn = None
        hand.flop_burn_done = False
        hand.all_in = False
        hand.over = False
