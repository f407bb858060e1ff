"""The virtual dealer: legal Texas Hold'em hands, with catalogue mistakes on demand, as physical steps.

Pure and deterministic: no I/O, no clock; all chance comes from the ``random.Random`` it is given,
so a seed replays the same session. Usage::

    dealer = VirtualDealer(registry.decks, DealerSettings(seats=9, mistake_rate=0.3), seed=1)
    legal = dealer.next_hand(mistake=None)          # a legal hand: no warning or critical alert
    wrong = dealer.next_hand(mistake="premature_flop")  # exactly that code (then the remedy)
    drawn = dealer.next_hand()                      # a mistake at ``mistake_rate``, else legal

What a hand contains (see :mod:`simulators.dealer.steps` for the step types):

- between hands, players sit down and leave (``SetOccupied``); the button moves to the next
  occupied seat clockwise (``MoveButton``; it stays after a misdeal); the blinds are posted
  (``SetBlind``; heads-up the button posts the small blind); the deck collected after the last
  hand goes into the shuffler (``Shuffle``) while this hand is played with the other deck, which
  the shuffler finished earlier (``AwaitShuffle``); then the dealer presses ``new_hand``;
- the deal: one card at a time, face down, clockwise from the first seat left of the button
  (heads-up: the non-button seat), two rounds (``Place`` on ``seat:N``);
- betting rounds: folds (hole cards pushed to the ``muck``) and ``round_complete``, or ``all_in``
  after which the board is run out with no more betting; blinds are pulled in after preflop;
- streets: a burn (``burn`` zone) then 3 / 1 / 1 cards face up on the ``board``;
- showdown: losers muck, first declaring (``declare_board``) when the board is their best hand;
- the table is cleared (``Remove`` of every card) and the deck is collected.

Mistakes: each hand commits at most one primary mistake drawn from the catalogue
(:mod:`simulators.dealer.catalogue`) with probability ``mistake_rate``; codes are drawn from a
shuffled bag so that every code comes up once per cycle. The step that completes the evidence
carries the code in ``mistake``; the dealer then presses ``ack`` and carries out the remedy the
alert asks for. ``remedy_not_followed`` is committed by not following the remedy of a misdeal
(dealing on) or of a premature flop (burning again before the new flop), then correcting it.
A misdeal (or fouled deck) is followed by collecting every card and a redeal with the same button
and blinds from the other, already shuffled, deck; the misdealt deck goes into the shuffler.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

from phevaluator import evaluate_cards

from contract.cards import RANKS, SUITS, seat_zone
from contract.models import KeyName, Profile
from simulators.dealer.catalogue import MISDEAL_CODES, raisable_codes
from simulators.dealer.seating import blind_seats, dealing_order, next_occupied
from simulators.dealer.shoe import Shoe
from simulators.dealer.steps import (
    AwaitShuffle,
    Face,
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

#: Primary codes whose remedy the dealer can fail to follow (``remedy_not_followed``).
IGNORABLE_CODES: Final[tuple[str, ...]] = (
    *sorted(MISDEAL_CODES),
    "premature_flop",
)

#: Codes that need a previous hand (the button's due seat is unknown on the first hand).
_NEEDS_HISTORY: Final = frozenset({"button_misplaced"})
_STREETS: Final[tuple[tuple[str, int], ...]] = (("flop", 3), ("turn", 1), ("river", 1))
_PREMATURE: Final[dict[str, str]] = {
    "premature_flop": "flop",
    "premature_turn": "turn",
    "premature_river": "river",
}


class _DrawMistake:
    """Sentinel: let the dealer draw the hand's mistake at its configured rate."""


DRAW: Final = _DrawMistake()


class InfeasibleMistake(ValueError):
    """The requested mistake cannot happen at this table (e.g. an empty seat at a full 2-seat table)."""


@dataclass(frozen=True, slots=True)
class DealerSettings:
    """How the virtual dealer and the players behave."""

    seats: int = 9
    min_players: int = 2
    max_players: int | None = None
    profile: Profile = "roberts"
    mistake_rate: float = 0.0
    codes: tuple[str, ...] | None = None
    join_leave_rate: float = 0.25
    fold_rate: float = 0.25
    all_in_rate: float = 0.08
    reader_reports_face: bool = True

    def __post_init__(self) -> None:
        if not 2 <= self.seats <= 10:
            raise ValueError(f"seats must be 2..10, not {self.seats}")
        top = self.max_players if self.max_players is not None else self.seats
        if not 2 <= self.min_players <= top <= self.seats:
            raise ValueError(
                f"players must satisfy 2 <= min ({self.min_players}) <= max ({top}) <= seats"
            )
        if not 0.0 <= self.mistake_rate <= 1.0:
            raise ValueError(f"mistake rate must be within 0..1, not {self.mistake_rate}")
        allowed = raisable_codes(self.profile)
        for code in self.codes or ():
            if code not in allowed:
                raise ValueError(f"code {code!r} cannot be raised under profile {self.profile}")

    @property
    def most_players(self) -> int:
        return self.max_players if self.max_players is not None else self.seats


@dataclass
class _Hand:
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


class VirtualDealer:
    """Plays a session hand after hand; see the module docstring."""

    def __init__(
        self,
        decks: Mapping[str, Mapping[str, str]],
        settings: DealerSettings | None = None,
        *,
        seed: int | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if len(decks) < 2:
            raise ValueError("the dealer needs two decks to alternate through the shuffler")
        self.settings = settings or DealerSettings()
        self.rng = rng if rng is not None else random.Random(seed)
        self.decks = {deck: dict(cards) for deck, cards in decks.items()}
        first, second = sorted(self.decks)[:2]
        self.deck_ids: tuple[str, str] = (first, second)
        self.hand_number = 0
        self.occupied: set[int] = set()
        self.button: int | None = None
        self.ready: str | None = None  # shuffled, waiting to be dealt
        self.collected: str | None = None  # off the table, waiting for the shuffler
        self._bag: list[str] = []
        known = {uid for cards in self.decks.values() for uid in cards.values()}
        self._known_uids = known

    # ------------------------------------------------------------------ public API

    def hands(self, count: int) -> Iterator[HandScript]:
        """``count`` hands, each with a mistake drawn at the configured rate."""
        for _ in range(count):
            yield self.next_hand()

    def next_hand(self, mistake: str | _DrawMistake | None = DRAW) -> HandScript:
        """The script of the next hand.

        ``mistake``: ``DRAW`` (default) draws at ``mistake_rate``; None plays a legal hand; a
        catalogue code forces that mistake (``remedy_not_followed`` forces a primary mistake whose
        remedy is then not followed). Raises :class:`InfeasibleMistake` when the code cannot be
        committed at this table (the dealer's state is then unchanged).
        """
        code = self._draw() if isinstance(mistake, _DrawMistake) else mistake
        primary, ignore = self._resolve(code)
        self._check_feasible(primary)
        return self._play(primary, ignore)

    # ------------------------------------------------------------------ choosing mistakes

    def _draw(self) -> str | None:
        if self.rng.random() >= self.settings.mistake_rate:
            return None
        codes = self.settings.codes or raisable_codes(self.settings.profile)
        for _ in range(2 * len(codes) + 2):
            if not self._bag:
                self._bag = list(codes)
                self.rng.shuffle(self._bag)
            candidate = self._bag.pop()
            if self._feasible(self._resolve(candidate, probe=True)[0]):
                return candidate
            self._bag.insert(0, candidate)  # retry it in a later hand
        return None

    def _resolve(self, code: str | None, *, probe: bool = False) -> tuple[str | None, bool]:
        if code is None:
            return None, False
        allowed = raisable_codes(self.settings.profile)
        if code not in allowed:
            raise InfeasibleMistake(f"{code!r} cannot be raised under profile {self.settings.profile}")
        if code != "remedy_not_followed":
            return code, False
        options = [c for c in IGNORABLE_CODES if c in allowed and self._feasible(c)]
        if not options:
            return None, True
        return (options[0] if probe else self.rng.choice(options)), True

    def _feasible(self, code: str | None) -> bool:
        try:
            self._check_feasible(code)
        except InfeasibleMistake:
            return False
        return True

    def _check_feasible(self, code: str | None) -> None:
        settings = self.settings
        if code is None:
            return
        if code in _NEEDS_HISTORY and self.button is None:
            raise InfeasibleMistake(f"{code}: the first hand has no due button seat; deal a hand first")
        if code == "misdeal_empty_seat" and settings.min_players >= settings.seats:
            raise InfeasibleMistake(f"{code}: every seat must be occupied at this table")
        if code == "misdeal_seat_skipped" and settings.most_players < 3:
            raise InfeasibleMistake(f"{code}: needs at least three players")

    # ------------------------------------------------------------------ the hand

    def _play(self, primary: str | None, ignore: bool) -> HandScript:
        rng, settings = self.rng, self.settings
        self.hand_number += 1
        steps: list[Step] = [Marker(kind="hand_start", hand=self.hand_number)]
        if self.button is None:
            steps += self._open_table()
        else:
            steps += self._seat_changes(primary)
        due = (
            next_occupied(self.button, self.occupied, settings.seats)
            if self.button is not None
            else rng.choice(sorted(self.occupied))
        )
        if primary == "button_misplaced":
            old = self.button
            assert old is not None
            others = sorted(self.occupied - {due})
            wrong = old if old in others else rng.choice(others)
            if wrong != old:
                steps.append(MoveButton(seat=wrong, pause_s=PACE["button"]))
        elif due != self.button:
            steps.append(MoveButton(seat=due, pause_s=PACE["button"]))
        self.button = due
        players = sorted(self.occupied)
        order = dealing_order(due, players, settings.seats)

        deck = self.ready
        assert deck is not None
        self.ready = None
        hand = _Hand(
            number=self.hand_number,
            shoe=Shoe(deck, self.decks[deck], rng),
            order=order,
            button=due,
            steps=steps,
        )
        small, big = blind_seats(due, players, settings.seats)
        unposted = rng.choice((small, big)) if primary == "blinds_missing" else None
        for seat in (small, big):
            if seat != unposted:
                self._emit(hand, SetBlind(seat=seat, present=True, pause_s=PACE["blind"]))
                hand.blinds.add(seat)

        # The deck for this hand comes out of the shuffler before the other one goes in.
        self._emit(hand, AwaitShuffle(deck=deck, pause_s=0.0))
        next_deck = self._shuffle_collected(hand, primary == "deck_check_failed")
        self._press(hand, "new_hand", mistake="button_misplaced" if primary == "button_misplaced" else None)
        if primary == "button_misplaced":
            self._ack(hand)
            self._emit(hand, MoveButton(seat=due, pause_s=PACE["fix"]))

        forfeit = self._rig_board(hand) if primary == "board_claim_forfeited" else None

        attempt_code = primary
        while not self._deal(hand, attempt_code, ignore, unposted):
            # Misdeal: everything back, the other deck (shuffled meanwhile) for the redeal.
            self._clear_table(hand)
            if next_deck is None:
                raise RuntimeError("no shuffled deck for the redeal")
            misdealt = hand.shoe.deck
            self._emit(hand, Marker(kind="redeal", hand=self.hand_number))
            self._emit(hand, AwaitShuffle(deck=next_deck, pause_s=PACE["shuffle"]))
            hand.shoe = Shoe(next_deck, self.decks[next_deck], rng)
            self._emit(hand, Shuffle(deck=misdealt, pause_s=PACE["shuffle"]))
            next_deck = misdealt
            self._press(hand, "new_hand")
            attempt_code, ignore, unposted = None, False, None

        post_deal = attempt_code if attempt_code not in MISDEAL_CODES else None
        self._play_streets(hand, post_deal, ignore, forfeit)
        self._showdown(hand, forfeit)
        self._clear_table(hand)
        for seat in sorted(hand.blinds):
            self._emit(hand, SetBlind(seat=seat, present=False, pause_s=PACE["clear"]))
        self._emit(hand, Marker(kind="hand_end", hand=self.hand_number))
        self.ready = next_deck
        self.collected = hand.shoe.deck
        return HandScript(
            hand=self.hand_number,
            deck=hand.shoe.deck,
            button=due,
            players=tuple(order),
            steps=tuple(hand.steps),
            mistakes=tuple(hand.mistakes),
        )

    # ------------------------------------------------------------------ before the deal

    def _open_table(self) -> list[Step]:
        """The first hand: players sit down, the first deck is shuffled, the button placed."""
        rng, settings = self.rng, self.settings
        count = rng.randint(settings.min_players, settings.most_players)
        self.occupied = set(rng.sample(range(1, settings.seats + 1), count))
        steps: list[Step] = [
            SetOccupied(seat=seat, occupied=True, pause_s=PACE["sit"]) for seat in sorted(self.occupied)
        ]
        first, second = self.deck_ids
        steps += [Shuffle(deck=first, pause_s=PACE["shuffle"]), AwaitShuffle(deck=first, pause_s=0.0)]
        self.ready, self.collected = first, second
        return steps

    def _seat_changes(self, primary: str | None) -> list[Step]:
        """Players leaving and joining between hands, and what the hand's mistake needs."""
        rng, settings = self.rng, self.settings
        steps: list[Step] = []

        def leave() -> None:
            seat = rng.choice(sorted(self.occupied))
            self.occupied.discard(seat)
            steps.append(SetOccupied(seat=seat, occupied=False, pause_s=PACE["sit"]))

        def join() -> None:
            free = [s for s in range(1, settings.seats + 1) if s not in self.occupied]
            seat = rng.choice(free)
            self.occupied.add(seat)
            steps.append(SetOccupied(seat=seat, occupied=True, pause_s=PACE["sit"]))

        if rng.random() < settings.join_leave_rate:
            can_leave = len(self.occupied) > settings.min_players
            can_join = len(self.occupied) < settings.most_players
            if can_leave and (not can_join or rng.random() < 0.5):
                leave()
            elif can_join:
                join()
        if primary == "misdeal_empty_seat" and len(self.occupied) >= settings.seats:
            leave()
        if primary == "misdeal_seat_skipped" and len(self.occupied) < 3:
            join()
        if primary == "button_misplaced" and len(self.occupied) < 2:
            join()
        return steps

    def _shuffle_collected(self, hand: _Hand, fail: bool) -> str | None:
        """Put the deck collected after the last hand into the shuffler; return it (next deck)."""
        deck = self.collected
        if deck is None:
            return None
        self.collected = None
        if not fail:
            self._emit(hand, Shuffle(deck=deck, pause_s=PACE["shuffle"]))
            return deck
        lost = self.rng.choice(sorted(self.decks[deck]))
        self._emit(hand, FailDeckCheck(deck=deck, count=51, missing=(lost,), pause_s=PACE["shuffle"]))
        self._emit(hand, AwaitShuffle(deck=deck, pause_s=0.0, mistake="deck_check_failed"))
        self._ack(hand)
        # The floor finds the card; the deck runs through the shuffler again and passes.
        self._emit(hand, Shuffle(deck=deck, pause_s=PACE["fix"]))
        return deck

    def _rig_board(self, hand: _Hand) -> int:
        """Arrange the deck so that the board is one seat's best hand; return that seat.

        The shuffler never reports the order, so any order is a fair shuffle; the dealer picks
        one in which a straight on the board plays for someone (``board_claim_forfeited``).
        """
        rng, shoe = self.rng, hand.shoe
        n = len(hand.order)
        board_at = (2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7)
        while True:
            rng.shuffle(shoe.order)
            top = rng.randint(0, len(RANKS) - 5)
            ranks = RANKS[top : top + 5]
            suits = [s for s in SUITS for _ in range(2)]
            rng.shuffle(suits)
            wanted = [rank + suit for rank, suit in zip(ranks, suits, strict=False)]
            for position, card in zip(board_at, wanted, strict=True):
                here = shoe.order.index(card)
                shoe.order[here], shoe.order[position] = shoe.order[position], shoe.order[here]
            board = [shoe.order[i] for i in board_at]
            board_rank = evaluate_cards(*board)
            players = [
                seat
                for i, seat in enumerate(hand.order)
                if evaluate_cards(*board, shoe.order[i], shoe.order[i + n]) == board_rank
            ]
            if players:
                return rng.choice(players)

    # ------------------------------------------------------------------ the deal

    def _deal(self, hand: _Hand, code: str | None, ignore: bool, unposted: int | None) -> bool:
        """Deal two rounds; False when a misdeal was called (the remedy then needs a redeal)."""
        rng, settings = self.rng, self.settings
        order = hand.order
        n = len(order)
        hand.hole = {seat: [] for seat in order}
        hand.active = list(order)
        targets = [order[k % n] for k in range(2 * n)]
        exposed_at: dict[int, str] = {}
        early = 2 if settings.profile == "tda" else 1
        misdeal_at: int | None = None
        if code == "misdeal_exposed_early":
            exposed_at[rng.randrange(early)] = code
        elif code == "exposed_card":
            exposed_at[rng.randrange(early, 2 * n)] = code
        elif code == "misdeal_exposed_multiple":
            first = rng.randrange(early, 2 * n - 1)
            exposed_at[first] = "exposed_card"
            exposed_at[rng.randrange(first + 1, 2 * n)] = code
        elif code == "misdeal_wrong_first_seat":
            targets[0] = rng.choice(order[1:])
            misdeal_at = 0
        elif code == "misdeal_empty_seat":
            misdeal_at = rng.randrange(1, 2 * n)
            free = [s for s in range(1, settings.seats + 1) if s not in order]
            targets[misdeal_at] = rng.choice(free)
        elif code == "misdeal_seat_skipped":
            misdeal_at = rng.choice([k for k in range(1, 2 * n - 1) if k % n != n - 1])
            targets[misdeal_at] = order[misdeal_at % n + 1]
        elif code == "misdeal_out_of_sequence":
            misdeal_at = rng.randrange(1, n)
            targets[misdeal_at] = order[misdeal_at - 1]
        foul_at = rng.randrange(1, 2 * n) if code == "fouled_deck" else None
        if foul_at is not None:
            misdeal_at = foul_at

        for k, seat in enumerate(targets):
            zone = seat_zone(seat)
            mistake = code if k == misdeal_at else None
            if k == foul_at:
                uid = self._foreign_uid()
                self._place_uid(hand, uid, None, zone, self._face("down"), PACE["hole"], mistake)
            elif k in exposed_at:
                uid = self._deal_exposed(hand, seat, exposed_at[k])
            else:
                blind_mistake = "blinds_missing" if k == 0 and unposted is not None else None
                uid = self._place(hand, hand.shoe.draw(), zone, "down", PACE["hole"],
                                  mistake or blind_mistake)
                if unposted is not None and blind_mistake:
                    self._ack(hand)
                    self._emit(hand, SetBlind(seat=unposted, present=True, pause_s=PACE["fix"]))
                    hand.blinds.add(unposted)
            if seat in hand.hole:
                hand.hole[seat].append(uid)
            if mistake in MISDEAL_CODES or exposed_at.get(k) in MISDEAL_CODES:
                self._ack(hand)
                if ignore:
                    self._deal_on(hand, targets, k)
                return False

        return self._after_deal(hand, code, ignore)

    def _deal_exposed(self, hand: _Hand, seat: int, code: str) -> str:
        """A hole card dealt face up (seen by the reader, or reported on the keypad)."""
        card = hand.shoe.draw()
        zone = seat_zone(seat)
        if self.settings.reader_reports_face:
            uid = self._place(hand, card, zone, "up", PACE["hole"], code)
        else:
            uid = self._place(hand, card, zone, None, PACE["hole"])
            self._press(hand, "exposed", seat=seat, mistake=code)
        hand.exposed.add(uid)
        if code == "exposed_card":
            self._ack(hand)
        return uid

    def _deal_on(self, hand: _Hand, targets: list[int], k: int) -> None:
        """``remedy_not_followed``: after a misdeal is called the dealer deals one more card."""
        seat = targets[(k + 1) % len(targets)]
        self._place(hand, hand.shoe.draw(), seat_zone(seat), "down", PACE["hole"], "remedy_not_followed")
        self._ack(hand)

    def _after_deal(self, hand: _Hand, code: str | None, ignore: bool) -> bool:
        """Mistakes right after the deal, and the exposed-card remedy; False on a misdeal."""
        order = hand.order
        if code in ("extra_card", "misdeal_extra_cards") or (
            code == "misdeal_wrong_count" and self.settings.profile == "tda"
        ):
            first_code = "misdeal_wrong_count" if self.settings.profile == "tda" else "extra_card"
            extra = hand.shoe.draw()
            uid = self._place(hand, extra, seat_zone(order[0]), "down", PACE["hole"], first_code)
            self._ack(hand)
            if first_code == "misdeal_wrong_count":
                if ignore:
                    self._place(hand, hand.shoe.draw(), seat_zone(order[1]), "down", PACE["hole"],
                                "remedy_not_followed")
                    self._ack(hand)
                return False
            if code == "misdeal_extra_cards":
                self._place(hand, hand.shoe.draw(), seat_zone(order[0]), "down", PACE["hole"], code)
                self._ack(hand)
                if ignore:
                    self._place(hand, hand.shoe.draw(), seat_zone(order[1]), "down", PACE["hole"],
                                "remedy_not_followed")
                    self._ack(hand)
                return False
            # The extra card goes back on the deck and becomes the flop's burn.
            self._remove(hand, uid, PACE["fix"])
            hand.next_burn = extra
        elif code == "misdeal_wrong_count":
            seat = self.rng.choice(order[1:])
            self._place(hand, hand.shoe.draw(), seat_zone(seat), "down", PACE["hole"], code)
            self._ack(hand)
            if ignore:
                self._place(hand, hand.shoe.draw(), seat_zone(order[0]), "down", PACE["hole"],
                            "remedy_not_followed")
                self._ack(hand)
            return False
        for seat, uids in hand.hole.items():
            for uid in list(uids):
                if uid in hand.exposed:
                    # The exposed card may not be kept: it becomes the flop's burn, and the seat
                    # gets the top card of the deck.
                    self._move(hand, uid, "burn", "down", PACE["fix"])
                    uids.remove(uid)
                    replacement = self._place(hand, hand.shoe.draw(), seat_zone(seat), "down",
                                              PACE["fix"])
                    uids.append(replacement)
                    hand.flop_burn_done = True
        return True

    # ------------------------------------------------------------------ betting and streets

    def _play_streets(self, hand: _Hand, code: str | None, ignore: bool, forfeit: int | None) -> None:
        """Preflop betting, then flop, turn and river with their betting rounds."""
        keep_two = code is not None or forfeit is not None
        all_in_ok = code is None and forfeit is None
        premature = _PREMATURE.get(code or "")
        board_street = None
        if code in ("board_too_many_cards", "missing_burn", "extra_burn"):
            choices = ["flop", "turn"] if code != "missing_burn" else ["flop", "turn", "river"]
            board_street = self.rng.choice(choices)
        self._betting(hand, "preflop", complete=premature != "flop", keep_two=keep_two,
                      protect=forfeit, allow_all_in=all_in_ok)
        following = {"flop": "turn", "turn": "river", "river": None}
        for street, count in _STREETS:
            if hand.over or hand.board_done:
                return
            if street == premature:
                self._premature(hand, street, count, code or "", ignore)
            elif street == board_street:
                self._street_mistake(hand, street, count, code or "")
            else:
                self._street(hand, street, count)
            if hand.board_done:
                return
            # The round is left open only when the next street is turned prematurely.
            opens_early = following[street] is not None and following[street] == premature
            self._betting(hand, street, complete=not opens_early,
                          keep_two=keep_two, protect=forfeit, allow_all_in=all_in_ok)

    def _street(self, hand: _Hand, street: str, count: int, *, burn: bool = True) -> None:
        if burn:
            self._burn(hand)
        for _ in range(count):
            self._board(hand, hand.shoe.draw())

    def _burn(self, hand: _Hand, mistake: str | None = None) -> str:
        if hand.flop_burn_done and not hand.board:
            hand.flop_burn_done = False
            return ""
        card = hand.next_burn or hand.shoe.draw()
        hand.next_burn = None
        return self._place(hand, card, "burn", "down", PACE["burn"], mistake)

    def _board(self, hand: _Hand, card: str, mistake: str | None = None) -> str:
        hand.board.append(card)
        return self._place(hand, card, "board", "up", PACE["board"], mistake)

    def _unboard(self, hand: _Hand, uids: list[str]) -> list[str]:
        cards = []
        for uid in uids:
            card = hand.card_of[uid]
            assert card is not None
            hand.board.remove(card)
            cards.append(card)
            self._remove(hand, uid, PACE["fix"])
        return cards

    def _premature(self, hand: _Hand, street: str, count: int, code: str, ignore: bool) -> None:
        """A street turned before the betting round before it was complete, and the remedy."""
        profile = self.settings.profile
        self._burn(hand)
        uids = [self._board(hand, hand.shoe.draw(), code if i == 0 else None) for i in range(count)]
        self._ack(hand)
        if street == "turn" and profile == "roberts":
            # Out of play for that round; what would have been the river becomes the turn.
            aside = uids[0]
            card = hand.card_of[aside]
            assert card is not None
            hand.board.remove(card)
            self._move(hand, aside, "aside", "down", PACE["fix"])
            self._complete_round(hand, "flop")
            self._street(hand, "turn", 1)
            self._betting(hand, "turn", complete=True, keep_two=True, allow_all_in=False)
            self._remove(hand, aside, PACE["fix"])
            hand.shoe.reshuffle_with([card])
            self._board(hand, hand.shoe.draw())  # the river, without a burn
            self._betting(hand, "river", complete=True, keep_two=True, allow_all_in=False)
            hand.board_done = True
            return
        cards = self._unboard(hand, uids)
        hand.shoe.reshuffle_with(cards)
        previous = {"flop": "preflop", "turn": "flop", "river": "turn"}[street]
        self._complete_round(hand, previous)
        if ignore and street == "flop":
            burn = self._place(hand, hand.shoe.draw(), "burn", "down", PACE["burn"],
                               "remedy_not_followed")
            self._ack(hand)
            card = hand.card_of[burn]
            assert card is not None
            self._remove(hand, burn, PACE["fix"])
            hand.shoe.reshuffle_with([card])
        self._street(hand, street, count, burn=False)

    def _street_mistake(self, hand: _Hand, street: str, count: int, code: str) -> None:
        """Board and burn mistakes on one street, and their remedies."""
        rng, profile = self.rng, self.settings.profile
        if code == "missing_burn":
            # The first card lands face down with no burn under it; it becomes the burn.
            uid = self._place(hand, hand.shoe.draw(), "board", "down", PACE["board"], code)
            self._ack(hand)
            self._move(hand, uid, "burn", "down", PACE["fix"])
            self._street(hand, street, count, burn=False)
        elif code == "extra_burn":
            self._burn(hand)
            spare = hand.shoe.draw()
            uid = self._place(hand, spare, "burn", "down", PACE["burn"], code)
            self._ack(hand)
            # One burn goes back on the deck to be the next burn.
            self._remove(hand, uid, PACE["fix"])
            hand.next_burn = spare
            self._street(hand, street, count, burn=False)
        elif code == "board_too_many_cards":
            self._burn(hand)
            uids = [
                self._board(hand, hand.shoe.draw(), code if i == count else None)
                for i in range(count + 1)
            ]
            self._ack(hand)
            if profile == "tda" and street == "flop":
                # TDA 39-A: the four are scrambled face down where they lie; one chosen at random
                # goes to the burn, the other three are the flop.
                chosen = rng.choice(uids)
                card = hand.card_of[chosen]
                assert card is not None
                hand.board.remove(card)
                self._move(hand, chosen, "burn", "down", PACE["fix"])
            else:
                hand.shoe.reshuffle_with(self._unboard(hand, uids))
                self._street(hand, street, count, burn=False)

    def _complete_round(self, hand: _Hand, street: str) -> None:
        self._press(hand, "round_complete", pause=PACE["round"])
        if street == "preflop":
            self._pull_blinds(hand)

    def _betting(
        self,
        hand: _Hand,
        street: str,
        *,
        complete: bool,
        keep_two: bool,
        allow_all_in: bool,
        protect: int | None = None,
    ) -> None:
        """Players fold; then the dealer closes the round (or the hand is over)."""
        if hand.over or hand.all_in:
            return
        rng = self.rng
        floor = 2 if keep_two else 1
        for seat in list(hand.active):
            if seat == protect or len(hand.active) <= floor:
                continue
            if rng.random() < self.settings.fold_rate:
                self._fold(hand, seat)
        if len(hand.active) == 1:
            hand.over = True
            self._pull_blinds(hand)
            return
        if not complete:
            return
        if allow_all_in and rng.random() < self.settings.all_in_rate:
            self._press(hand, "all_in", pause=PACE["round"])
            hand.all_in = True
            if street == "preflop":
                self._pull_blinds(hand)
        else:
            self._complete_round(hand, street)

    def _fold(self, hand: _Hand, seat: int) -> None:
        hand.active.remove(seat)
        for i, uid in enumerate(hand.hole[seat]):
            self._move(hand, uid, "muck", "down", PACE["fold"] if i == 0 else PACE["muck"])

    def _pull_blinds(self, hand: _Hand) -> None:
        for seat in sorted(hand.blinds):
            self._emit(hand, SetBlind(seat=seat, present=False, pause_s=PACE["clear"]))
        hand.blinds.clear()

    def _showdown(self, hand: _Hand, forfeit: int | None) -> None:
        """Losers muck (declaring when the board plays for them); winners keep their cards."""
        if len(hand.active) < 2:
            return
        board = hand.board
        assert len(board) == 5, f"showdown with a board of {len(board)} cards"
        ranks: dict[int, int] = {}
        for seat in hand.active:
            cards = [hand.card_of[uid] or "" for uid in hand.hole[seat]]
            ranks[seat] = evaluate_cards(*board, *cards)
        board_rank = evaluate_cards(*board)
        best = min(ranks.values())
        for seat in list(hand.active):
            if seat == forfeit:
                self._muck(hand, seat, "board_claim_forfeited")
                self._ack(hand)
            elif ranks[seat] != best:
                if ranks[seat] == board_rank:
                    self._press(hand, "declare_board", seat=seat)
                self._muck(hand, seat, None)

    def _muck(self, hand: _Hand, seat: int, mistake: str | None) -> None:
        hand.active.remove(seat)
        for i, uid in enumerate(hand.hole[seat]):
            self._move(hand, uid, "muck", "down", PACE["muck"], mistake if i == 0 else None)

    def _clear_table(self, hand: _Hand) -> None:
        """Every card off the table, seats first, then board, burns, muck and set-aside cards."""
        def rank(item: tuple[str, str]) -> tuple[int, str]:
            zone = item[1]
            return (0 if zone.startswith("seat:") else 1, zone)

        for i, (uid, _) in enumerate(sorted(hand.on_table.items(), key=rank)):
            self._remove(hand, uid, PACE["clear_first"] if i == 0 else PACE["clear"])
        hand.board.clear()
        hand.next_burn = None
        hand.flop_burn_done = False
        hand.all_in = False
        hand.over = False

    # ------------------------------------------------------------------ physical primitives

    def _emit(self, hand: _Hand, step: Step) -> None:
        hand.steps.append(step)
        if step.mistake is not None:
            hand.mistakes.append(step.mistake)

    def _face(self, face: Face) -> Face:
        return face if self.settings.reader_reports_face else None

    def _place(
        self,
        hand: _Hand,
        card: str,
        zone: str,
        face: Face,
        pause: float,
        mistake: str | None = None,
    ) -> str:
        uid = hand.shoe.uid(card)
        self._place_uid(hand, uid, card, zone, self._face(face), pause, mistake)
        return uid

    def _place_uid(
        self,
        hand: _Hand,
        uid: str,
        card: str | None,
        zone: str,
        face: Face,
        pause: float,
        mistake: str | None,
    ) -> None:
        hand.on_table[uid] = zone
        hand.card_of[uid] = card
        self._emit(hand, Place(uid=uid, zone=zone, face=face, card=card, pause_s=pause, mistake=mistake))

    def _move(
        self, hand: _Hand, uid: str, zone: str, face: Face, pause: float, mistake: str | None = None
    ) -> None:
        hand.on_table[uid] = zone
        self._emit(
            hand,
            Move(uid=uid, zone=zone, face=self._face(face), card=hand.card_of.get(uid),
                 pause_s=pause, mistake=mistake),
        )

    def _remove(self, hand: _Hand, uid: str, pause: float) -> None:
        del hand.on_table[uid]
        self._emit(hand, Remove(uid=uid, card=hand.card_of.get(uid), pause_s=pause))

    def _press(
        self,
        hand: _Hand,
        key: KeyName,
        *,
        seat: int | None = None,
        mistake: str | None = None,
        pause: float | None = None,
    ) -> None:
        pace = PACE.get(key, PACE["ack"]) if pause is None else pause
        self._emit(hand, Press(key=key, seat=seat, mistake=mistake, pause_s=pace))

    def _ack(self, hand: _Hand) -> None:
        self._press(hand, "ack", pause=PACE["ack"])

    def _foreign_uid(self) -> str:
        """A tag that is in no deck of the registry (a card from another table)."""
        while True:
            uid = "E0040150" + "".join(self.rng.choice("0123456789ABCDEF") for _ in range(8))
            if uid not in self._known_uids:
                return uid

