"""An independent referee for dealer scripts: replays steps and checks the table's rules.

It shares no code with the generator beyond the step types: the seat arithmetic, dealing order,
blinds, streets and showdown are re-derived here from the rules, so a generator bug shows up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from phevaluator import evaluate_cards

from simulators.dealer import (
    AwaitShuffle,
    FailDeckCheck,
    HandScript,
    Marker,
    Move,
    MoveButton,
    Place,
    Press,
    Remove,
    SetBlind,
    SetOccupied,
    Shuffle,
    Step,
)


class RuleBroken(AssertionError):
    """A legal script broke a rule of the game."""


def _next_clockwise(seat: int, seats: int) -> int:
    return seat % seats + 1


@dataclass
class Referee:
    """Follows a session of legal hands and raises :class:`RuleBroken` on the first violation."""

    seats: int
    decks: Mapping[str, Mapping[str, str]]
    occupied: set[int] = field(default_factory=set)
    button: int | None = None
    blinds: set[int] = field(default_factory=set)
    on_table: dict[str, str] = field(default_factory=dict)
    shuffled: set[str] = field(default_factory=set)
    in_shuffler: str | None = None
    last_deck: str | None = None
    hands: int = 0
    showdowns: int = 0  # hands that reached a showdown after the river betting round

    def card(self, uid: str) -> tuple[str, str]:
        for deck, cards in self.decks.items():
            for card, known in cards.items():
                if known == uid:
                    return deck, card
        raise RuleBroken(f"unknown tag {uid} in a legal hand")

    def due_button(self) -> int | None:
        if self.button is None or not self.occupied:  # an empty table (a game over) has none
            return None
        seat = _next_clockwise(self.button, self.seats)
        while seat not in self.occupied:
            seat = _next_clockwise(seat, self.seats)
        return seat

    def play(self, script: HandScript) -> None:
        if script.mistakes:
            raise RuleBroken(f"hand {script.hand} is not meant to be legal: {script.mistakes}")
        self.hands += 1
        _Hand(self, script).run()


@dataclass
class _Hand:
    ref: Referee
    script: HandScript
    deck: str | None = None
    order: list[int] = field(default_factory=list)
    dealt: int = 0
    hole: dict[int, list[str]] = field(default_factory=dict)
    folded: set[int] = field(default_factory=set)
    board: list[str] = field(default_factory=list)
    street_burns: int = 0
    burns: int = 0
    rounds_closed: int = 0
    all_in: bool = False
    started: bool = False
    declared: set[int] = field(default_factory=set)
    mucked_at_showdown: set[int] = field(default_factory=set)

    def fail(self, index: int, step: Step, why: str) -> None:
        raise RuleBroken(f"hand {self.script.hand} step {index} {step}: {why}")

    def run(self) -> None:
        ref = self.ref
        due = ref.due_button()
        for index, step in enumerate(self.script.steps):
            match step:
                case Marker():
                    pass
                case SetOccupied(seat=seat, occupied=occupied):
                    if self.started:
                        self.fail(index, step, "players change seats during a hand")
                    (ref.occupied.add if occupied else ref.occupied.discard)(seat)
                    due = ref.due_button()
                case MoveButton(seat=seat):
                    if self.started:
                        self.fail(index, step, "button moved during the hand")
                    if due is not None and seat != due:
                        self.fail(index, step, f"button must go to seat {due}")
                    ref.button = seat
                case SetBlind(seat=seat, present=present):
                    (ref.blinds.add if present else ref.blinds.discard)(seat)
                case Shuffle(deck=deck) | FailDeckCheck(deck=deck):
                    if any(ref.card(uid)[0] == deck for uid in ref.on_table):
                        self.fail(index, step, "shuffling a deck that is on the table")
                    if isinstance(step, Shuffle):
                        ref.shuffled.add(deck)
                    ref.in_shuffler = deck
                case AwaitShuffle(deck=deck):
                    if deck not in ref.shuffled:
                        self.fail(index, step, f"deck {deck} was never shuffled")
                case Press(key="new_hand"):
                    self.start(index, step, due)
                case Press(key="round_complete") | Press(key="all_in"):
                    self.close_round(index, step)
                case Press(key="declare_board", seat=seat):
                    self.declared.add(seat or 0)
                case Press(key="last_hands"):
                    if self.started:
                        self.fail(index, step, "the end of the game is announced between hands")
                case Press():
                    self.fail(index, step, "a legal hand needs no other key")
                case Place():
                    self.place(index, step)
                case Move():
                    self.move(index, step)
                case Remove(uid=uid):
                    if uid not in ref.on_table:
                        self.fail(index, step, "removing a card that is not on the table")
                    del ref.on_table[uid]
        if ref.on_table:
            raise RuleBroken(f"hand {self.script.hand}: table not cleared: {sorted(ref.on_table.values())}")
        if ref.blinds:
            raise RuleBroken(f"hand {self.script.hand}: blinds left in {sorted(ref.blinds)}")
        if self.dealt != 2 * len(self.order):
            raise RuleBroken(f"hand {self.script.hand}: dealt {self.dealt} cards to {len(self.order)}")
        if ref.last_deck is not None and self.deck == ref.last_deck:
            raise RuleBroken(f"hand {self.script.hand}: deck {self.deck} twice in a row")
        ref.last_deck = self.deck
        ref.shuffled.discard(self.deck or "")

    def start(self, index: int, step: Step, due: int | None) -> None:
        ref = self.ref
        self.started = True
        if ref.button is None or (due is not None and ref.button != due):
            self.fail(index, step, f"button on {ref.button}, due {due}")
        players = sorted(ref.occupied)
        seat = _next_clockwise(ref.button or 0, ref.seats)
        while len(self.order) < len(players):
            if seat in ref.occupied:
                self.order.append(seat)
            seat = _next_clockwise(seat, ref.seats)
        button = ref.button or 0
        blinds = {button, self.order[0]} if len(self.order) == 2 else {self.order[0], self.order[1]}
        if ref.blinds != blinds:
            self.fail(index, step, f"blinds {sorted(ref.blinds)}, expected {sorted(blinds)}")
        self.hole = {seat: [] for seat in self.order}

    def place(self, index: int, step: Place) -> None:
        ref = self.ref
        if not self.started:
            self.fail(index, step, "a card before new_hand")
        if step.uid in ref.on_table:
            self.fail(index, step, "card already on the table")
        deck, card = ref.card(step.uid)
        if self.deck is None:
            if deck not in ref.shuffled:
                self.fail(index, step, f"dealing from deck {deck}, which was not shuffled")
            self.deck = deck
        if deck != self.deck:
            self.fail(index, step, f"card of deck {deck} in a hand of deck {self.deck}")
        if step.card != card:
            self.fail(index, step, f"tag is {card}")
        ref.on_table[step.uid] = step.zone
        total = 2 * len(self.order)
        if step.zone.startswith("seat:"):
            seat = int(step.zone[5:])
            if self.dealt >= total:
                self.fail(index, step, "a hole card after the deal")
            want = self.order[self.dealt % len(self.order)]
            if seat != want:
                self.fail(index, step, f"card {self.dealt + 1} must go to seat {want}")
            if step.face == "up":
                self.fail(index, step, "hole card dealt face up")
            if self.dealt == 0 and not ref.blinds:
                self.fail(index, step, "dealing without blinds")
            self.dealt += 1
            self.hole[seat].append(step.uid)
            return
        if self.dealt < total:
            self.fail(index, step, "board or burn before the deal is complete")
        streets = {0: 3, 3: 1, 4: 1}
        if step.zone == "burn":
            if self.street_burns:
                self.fail(index, step, "second burn for one street")
            if len(self.board) not in streets:
                self.fail(index, step, "burn with a full board")
            closed_needed = {0: 1, 3: 2, 4: 3}[len(self.board)]
            if not self.all_in and self.rounds_closed < closed_needed:
                self.fail(index, step, "burn before the betting round was complete")
            self.street_burns = 1
            self.burns += 1
        elif step.zone == "board":
            if not self.street_burns:
                self.fail(index, step, "board card without a burn")
            if step.face == "down":
                self.fail(index, step, "board card face down")
            self.board.append(card)
            if len(self.board) in (3, 4, 5):
                self.street_burns = 0
        else:
            self.fail(index, step, f"a new card placed on {step.zone}")

    def move(self, index: int, step: Move) -> None:
        ref = self.ref
        old = ref.on_table.get(step.uid)
        if old is None or not old.startswith("seat:") or step.zone != "muck":
            self.fail(index, step, f"only hole cards go to the muck (from {old})")
        seat = int((old or "seat:0")[5:])
        ref.on_table[step.uid] = "muck"
        if len(self.board) == 5 and (self.rounds_closed >= 4 or self.all_in):
            if not self.mucked_at_showdown and not self.all_in:
                ref.showdowns += 1
            if seat not in self.mucked_at_showdown:
                self.mucked_at_showdown.add(seat)
                cards = [ref.card(uid)[1] for uid in self.hole[seat]]
                if evaluate_cards(*self.board, *cards) == evaluate_cards(*self.board) and (
                    seat not in self.declared
                ):
                    self.fail(index, step, "board plays and the seat mucks without declaring")
        else:
            self.folded.add(seat)

    def close_round(self, index: int, step: Press) -> None:
        if self.all_in:
            self.fail(index, step, "betting closed after an all-in")
        expected_board = {0: 0, 1: 3, 2: 4, 3: 5}.get(self.rounds_closed)
        if expected_board is None or len(self.board) != expected_board or self.street_burns:
            self.fail(index, step, f"round closed with a board of {len(self.board)}")
        if self.dealt != 2 * len(self.order):
            self.fail(index, step, "round closed during the deal")
        if len(self.order) - len(self.folded) < 2:
            self.fail(index, step, "round closed with one player left")
        self.rounds_closed += 1
        if step.key == "all_in":
            self.all_in = True


def replay(referee: Referee, scripts: Sequence[HandScript]) -> None:
    for script in scripts:
        referee.play(script)
