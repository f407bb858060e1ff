"""The virtual dealer: legal Texas Hold'em hands as physical steps, with catalogue mistakes on demand.

Pure and deterministic: no I/O, no clock; all chance comes from the ``random.Random`` it is given,
so a seed replays the same session. It is the one generator of legal play: the demo, the tests
and the benchmarks all deal with it. Usage::

    dealer = VirtualDealer(registry.decks, DealerSettings(seats=9, mistake_rate=0.3), seed=1)
    legal = dealer.next_hand(mistake=None)          # a legal hand: no warning or critical alert
    wrong = dealer.next_hand(mistake="premature_flop")  # exactly that code (then the remedy)
    drawn = dealer.next_hand()                      # a mistake at ``mistake_rate``, else legal

What a hand contains (see :mod:`simulators.dealer.steps` for the step types):

- at the first hand the dealer badges in (``DealerBadge``: the ``dealer`` input) and, in a
  tournament, the floor starts the clock (``LevelStart``);
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

Mistakes are plug-ins (:mod:`simulators.dealer.mistakes`): each hand commits at most one primary
mistake, drawn with probability ``mistake_rate`` from a shuffled bag of codes so that every code
comes up once per cycle; its injector's hooks replace the legal play where the mistake happens,
tag the step that completes the evidence with the code, and carry out the remedy. A misdeal is
followed by collecting every card and a redeal with the same button and blinds from the other,
already shuffled, deck; the misdealt deck goes into the shuffler.

Slightly over the project's 450-line guide: the hand's order of play (seating, blinds, deal,
betting rounds, board, showdown, the money at the end) reads as one sequence here; the mistakes
(``mistakes/``), the money (``money.py``, ``betting.py``, ``award.py``) and the steps live apart.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from contract.cards import seat_zone
from contract.models import Profile
from simulators.dealer.betting import Ledger, Tendencies
from simulators.dealer.catalogue import HouseRule, raisable_codes
from simulators.dealer.chips import Rack, TableStakes, chip_registry
from simulators.dealer.hand import PACE, Hand, HandPlay
from simulators.dealer.mistakes import MISTAKES, DealPlan, Mistake, ignorable_codes
from simulators.dealer.money import TableMoney
from simulators.dealer.seating import blind_seats, dealing_order, next_occupied
from simulators.dealer.shoe import Shoe
from simulators.dealer.steps import (
    AwaitShuffle,
    DealerBadge,
    HandScript,
    LevelStart,
    Marker,
    Press,
    SetBlind,
    SetOccupied,
    Shuffle,
    Step,
    Wait,
)

__all__ = ["DRAW", "IGNORABLE_CODES", "PACE", "DealerSettings", "InfeasibleMistake", "VirtualDealer"]

#: Primary codes whose remedy the dealer can fail to follow (``remedy_not_followed``).
IGNORABLE_CODES: Final[tuple[str, ...]] = ignorable_codes()
_STREETS: Final[tuple[tuple[str, int], ...]] = (("flop", 3), ("turn", 1), ("river", 1))
_FOLLOWING: Final[dict[str, str | None]] = {"flop": "turn", "turn": "river", "river": None}
#: The badges of the demo's dealers: the first badges in at the first hand, the others relieve.
BADGES: Final[tuple[str, ...]] = ("D-1041", "D-2208", "D-3175")


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
    fold_rate: float = 0.25  # without chips; with chips see betting.Tendencies
    all_in_rate: float = 0.08  # without chips (the all_in key's run-out)
    reader_reports_face: bool = True
    #: The game's stakes on a table that reads chips (None: no chips, betting shown by keys).
    stakes: TableStakes | None = None
    #: The chip registry (UID -> value); None: the demo's generated one.
    chip_values: Mapping[str, int] | None = None
    #: Seconds (event time) the engine waits before it judges a card read nowhere: the house
    #: limit for a hole card off the table, and the dealer's reaction time (a half fold; cards
    #: dealt after a misdeal).
    hole_card_off_s: float = 1.0
    reaction_s: float = 2.0
    #: The reader's hold time: how long after a tag left its field the driver reports it gone.
    hold_s: float = 0.05
    #: The house's session rules the table is configured with (docs/engine.md, "The session"):
    #: the maximum rebuy between hands (0: none) and the longest absence (None: not followed).
    max_rebuy: int = 0
    max_absence_s: float | None = None
    #: Tournament: a hand begun less than this before its level ends waits for the next level
    #: (the script is written before it is carried out: its blinds must be those of the level in
    #: force when ``new_hand`` is pressed).
    level_guard_s: float = 3.0

    def __post_init__(self) -> None:
        if not 2 <= self.seats <= 10:
            raise ValueError(f"seats must be 2..10, not {self.seats}")
        top = self.max_players if self.max_players is not None else self.seats
        if not 2 <= self.min_players <= top <= self.seats:
            raise ValueError(f"players must satisfy 2 <= min ({self.min_players}) <= max ({top}) <= seats")
        if not 0.0 <= self.mistake_rate <= 1.0:
            raise ValueError(f"mistake rate must be within 0..1, not {self.mistake_rate}")
        allowed = raisable_codes(self.profile, chips=self.stakes is not None, house=self.house)
        for code in self.codes or ():
            if code not in allowed:
                game = (
                    "no chips"
                    if self.stakes is None
                    else ("a tournament" if self.stakes.levels else "a cash game with chips")
                )
                rules = ", ".join(sorted(self.house)) or "none"
                raise ValueError(
                    f"code {code!r} cannot be raised at this table (profile "
                    f"{self.profile}, {game}, house rules: {rules})"
                )

    @property
    def most_players(self) -> int:
        return self.max_players if self.max_players is not None else self.seats

    @property
    def house(self) -> frozenset[HouseRule]:
        """The house rules set (``simulators.dealer.catalogue.HOUSE_RULES``) that mistakes need."""
        rules: set[HouseRule] = set()
        if self.max_rebuy > 0:
            rules.add("max_rebuy")
        if self.max_absence_s is not None:
            rules.add("max_absence_s")
        if self.stakes is not None and self.stakes.levels:
            rules.add("levels")
        return frozenset(rules)


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
        self._known_uids = {uid for cards in self.decks.values() for uid in cards.values()}
        stakes = self.settings.stakes
        #: Each seated player's stack (chips behind, off the table), on a table with chips.
        self.stacks: dict[int, int] = {}
        self.rack: Rack | None = None
        if stakes is not None:
            values = self.settings.chip_values or chip_registry()
            self.rack = Rack(values)
            self._known_uids |= set(values)
        self.tendencies = Tendencies()
        #: After the dealer pressed ``last_hands``: the hands that may still begin (the engine's
        #: ``hands_left``, mirrored); None: no end of the game announced.
        self.hands_left: int | None = None
        self._announce = False  # press ``last_hands`` before the next hand
        self._last_pending = False  # a drawn ``hand_after_last`` waits for the count to run out
        #: The badge of the dealer at the table (from the first hand on; a relief announced
        #: during a hand counts here at once).
        self.badge: str | None = None
        #: Tournament: seconds on the clock when the next hand's script begins, told by whoever
        #: carries the scripts out (the dealer reads no clock); None: as at the clock's start.
        self.clock_s: float | None = None
        #: Tournament: the level (index) of the hand being dealt (None: a cash game).
        self.level: int | None = None
        #: The players dealt in at the last hand (their first stack has been judged).
        self.last_players: tuple[int, ...] = ()

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
        reason = self._infeasible(primary)
        if reason is not None:
            raise InfeasibleMistake(reason)
        injector = MISTAKES[primary](ignore_remedy=ignore) if primary is not None else Mistake()
        return self._play(injector)

    def announce_last_hands(self) -> None:
        """The dealer announces the end of the game before the next hand: three hands are left
        (``hand_after_last`` can be forced once they are dealt)."""
        if self.hands_left is None:
            self._announce = True

    def allowed_codes(self) -> tuple[str, ...]:
        """The codes a hand can raise under the configured profile (and stakes, house rules)."""
        settings = self.settings
        return raisable_codes(settings.profile, chips=settings.stakes is not None, house=settings.house)

    def relief_badge(self) -> str:
        """The badge of the dealer who relieves the one at the table."""
        at = BADGES.index(self.badge) if self.badge in BADGES else -1
        return BADGES[(at + 1) % len(BADGES)]

    @property
    def stakes(self) -> TableStakes | None:
        """The stakes of the hand being dealt: a tournament's those of its level."""
        stakes = self.settings.stakes
        return None if stakes is None else stakes.for_level(self.level)

    # ------------------------------------------------------------------ choosing mistakes

    def _draw(self) -> str | None:
        if self._last_pending and self.hands_left == 0:
            return "hand_after_last"  # the hand after the announced three, drawn earlier
        if self.rng.random() >= self.settings.mistake_rate:
            return None
        codes = self.settings.codes or self.allowed_codes()
        for _ in range(2 * len(codes) + 2):
            if not self._bag:
                self._bag = list(codes)
                self.rng.shuffle(self._bag)
            candidate = self._bag.pop()
            if candidate == "hand_after_last" and self.hands_left is None and not self._announce:
                # It spans hands: this hand announces the last three (legally), the one after
                # them is the mistake.
                self._announce = self._last_pending = True
                return None
            if self._infeasible(self._resolve(candidate, probe=True)[0]) is None:
                return candidate
            self._bag.insert(0, candidate)  # retry it in a later hand
        return None

    def _resolve(self, code: str | None, *, probe: bool = False) -> tuple[str | None, bool]:
        if code is None:
            return None, False
        if code not in self.allowed_codes():
            raise InfeasibleMistake(f"{code!r} cannot be raised under profile {self.settings.profile}")
        return MISTAKES[code].resolve(self, probe=probe)

    def _infeasible(self, code: str | None) -> str | None:
        return None if code is None else MISTAKES[code].infeasible(self)

    # ------------------------------------------------------------------ seats between hands

    def leave(self, steps: list[Step], seat: int | None = None) -> None:
        """A player (at ``seat``, else one drawn) leaves the table."""
        if seat is None:
            seat = self.rng.choice(sorted(self.occupied))
        self.occupied.discard(seat)
        steps.append(SetOccupied(seat=seat, occupied=False, pause_s=PACE["sit"]))

    def join(self, steps: list[Step]) -> None:
        """A player sits down at a free seat."""
        free = [s for s in range(1, self.settings.seats + 1) if s not in self.occupied]
        seat = self.rng.choice(free)
        self.occupied.add(seat)
        steps.append(SetOccupied(seat=seat, occupied=True, pause_s=PACE["sit"]))

    def _open_table(self) -> list[Step]:
        """The first hand: players sit down, the first deck is shuffled, the button placed."""
        rng, settings = self.rng, self.settings
        count = rng.randint(settings.min_players, settings.most_players)
        self.occupied = set(rng.sample(range(1, settings.seats + 1), count))
        steps: list[Step] = [
            SetOccupied(seat=seat, occupied=True, pause_s=PACE["sit"]) for seat in sorted(self.occupied)
        ]
        self.badge = BADGES[0]
        steps.append(DealerBadge(badge=self.badge, pause_s=PACE["ack"]))
        stakes = settings.stakes
        if stakes is not None and stakes.levels:
            steps.append(LevelStart(pause_s=PACE["ack"]))
            self.clock_s = 0.0
        first, second = self.deck_ids
        steps += [Shuffle(deck=first, pause_s=PACE["shuffle"]), AwaitShuffle(deck=first, pause_s=0.0)]
        self.ready, self.collected = first, second
        return steps

    def _seat_changes(self, mistake: Mistake) -> list[Step]:
        """Players leaving and joining between hands, and what the hand's mistake needs."""
        rng, settings = self.rng, self.settings
        steps: list[Step] = []
        if rng.random() < settings.join_leave_rate:
            can_leave = len(self.occupied) > settings.min_players
            can_join = len(self.occupied) < settings.most_players
            if can_leave and (not can_join or rng.random() < 0.5):
                self.leave(steps)
            elif can_join:
                self.join(steps)
        mistake.seat_changes(self, steps)
        return steps

    def _end_game(self, steps: list[Step]) -> None:
        """The announced game is over: every player stands up (the table is empty, the engine
        forgets the announcement), then sits down again for a new game."""
        seated = sorted(self.occupied)
        steps += [SetOccupied(seat=s, occupied=False, pause_s=PACE["sit"]) for s in seated]
        steps += [SetOccupied(seat=s, occupied=True, pause_s=PACE["sit"]) for s in seated]
        self.hands_left = None
        self._last_pending = False

    def _count_last_hands(self, steps: list[Step], mistake: Mistake) -> None:
        """The ``last_hands`` key before this hand, where due; this hand counts as one of them."""
        if self._announce and self.hands_left is None:
            steps.append(Press(key="last_hands", pause_s=PACE["ack"]))
            self.hands_left = 3
        self._announce = False
        if mistake.code == "hand_after_last":
            self._last_pending = False  # stays at 0: the next hand ends the game first
        elif self.hands_left is not None:
            self.hands_left -= 1

    # ------------------------------------------------------------------ the hand

    def _play(self, mistake: Mistake) -> HandScript:
        rng, settings = self.rng, self.settings
        self.hand_number += 1
        steps: list[Step] = [Marker(kind="hand_start", hand=self.hand_number)]
        if self.button is None:
            steps += self._open_table()
            # The first hand's mistake may need its seats too (chips on a vacant seat: a full
            # table seated at the opening had no vacant seat for them).
            mistake.seat_changes(self, steps)
        else:
            if self.hands_left == 0 and mistake.code != "hand_after_last":
                self._end_game(steps)
            steps += self._seat_changes(mistake)
        self._count_last_hands(steps, mistake)
        self._level_for(steps)
        due = (
            next_occupied(self.button, self.occupied, settings.seats)
            if self.button is not None
            else rng.choice(sorted(self.occupied))
        )
        mistake.place_button(self, steps, due)
        self.button = due
        players = sorted(self.occupied)
        order = dealing_order(due, players, settings.seats)

        deck = self.ready
        assert deck is not None
        self.ready = None
        hand = Hand(
            number=self.hand_number,
            shoe=Shoe(deck, self.decks[deck], rng),
            order=order,
            button=due,
            steps=steps,
            # (a mistake committed before the hand's steps are built: an absence)
            mistakes=[step.mistake for step in steps if step.mistake is not None],
        )
        play = HandPlay(hand, settings, rng, self._known_uids)
        play.mistake = mistake
        small, big = blind_seats(due, players, settings.seats)
        unposted = mistake.unposted_blind(self, small, big)
        for seat in (small, big):
            if seat != unposted:
                play.emit(SetBlind(seat=seat, present=True, pause_s=PACE["blind"]))
                hand.blinds.add(seat)
        if settings.stakes is not None:
            self._post(play, mistake, order)

        # The deck for this hand comes out of the shuffler before the other one goes in.
        play.emit(AwaitShuffle(deck=deck, pause_s=0.0))
        next_deck, self.collected = self.collected, None
        if next_deck is not None:
            mistake.shuffle(play, self, next_deck)
        mistake.new_hand(play, due)
        mistake.rig_board(play)

        attempt = mistake
        while not self._deal(play, attempt):
            # Misdeal: everything back, the other deck (shuffled meanwhile) for the redeal.
            play.clear_table()
            if next_deck is None:
                raise RuntimeError("no shuffled deck for the redeal")
            misdealt = hand.shoe.deck
            play.emit(Marker(kind="redeal", hand=self.hand_number))
            play.emit(AwaitShuffle(deck=next_deck, pause_s=PACE["shuffle"]))
            hand.shoe = Shoe(next_deck, self.decks[next_deck], rng)
            play.emit(Shuffle(deck=misdealt, pause_s=PACE["shuffle"]))
            next_deck = misdealt
            play.press("new_hand")
            attempt = Mistake()  # the redeal is legal
            play.mistake = attempt

        self._play_streets(play, attempt, mistake.protected)
        if play.money is not None:
            play.money.settle(attempt)
        else:
            self._showdown(play, mistake)
        play.clear_table()
        for seat in sorted(hand.blinds):
            play.emit(SetBlind(seat=seat, present=False, pause_s=PACE["clear"]))
        if play.money is not None:
            play.money.collect()
            self.stacks.update(play.money.final_stacks())
        play.emit(Marker(kind="hand_end", hand=self.hand_number))
        self.ready = next_deck
        self.collected = hand.shoe.deck
        self.last_players = tuple(order)
        self.clock_s = None  # told again before the next hand
        return HandScript(
            hand=self.hand_number,
            deck=hand.shoe.deck,
            button=due,
            players=tuple(order),
            steps=tuple(hand.steps),
            mistakes=tuple(hand.mistakes),
        )

    def _level_for(self, steps: list[Step]) -> None:
        """Tournament: the level in force when this hand begins (its blinds and ante). Close to
        a level's end the dealer waits for the next level: the script is carried out later."""
        stakes = self.settings.stakes
        if stakes is None or not stakes.levels:
            return
        now = self.clock_s or 0.0
        for step in steps:
            if isinstance(step, Wait):  # an absence waited out before this hand
                now += step.seconds
        index, left = stakes.level_at(now)
        if left is not None and left < self.settings.level_guard_s:
            steps.append(Wait(seconds=left + 0.25, pause_s=0.0))
            index, _ = stakes.level_at(now + left + 0.25)
        self.level = index

    # ------------------------------------------------------------------ chips before the deal

    def _post(self, play: HandPlay, mistake: Mistake, order: list[int]) -> None:
        """Stacks for the seated players, then the antes and blinds in the betting areas."""
        stakes, rack = self.stakes, self.rack
        assert stakes is not None
        assert rack is not None
        for seat in list(self.stacks):
            if seat not in self.occupied:
                del self.stacks[seat]
        for seat in self.occupied:
            if self.stacks.get(seat, 0) < 10 * stakes.big_blind:
                self.stacks[seat] = stakes.buy_in  # sits down, or buys in again (off the table)
        mistake.stacks(self, self.stacks)
        ledger = Ledger(stakes, list(order), {seat: self.stacks[seat] for seat in order})
        money = TableMoney(play, ledger, rack, self.tendencies)
        play.money = money
        if stakes.ante:
            for seat in order:
                ledger.ante(seat, stakes.ante)
        ledger.post_blinds()
        blinds = {ledger.small_blind: stakes.small_blind, ledger.big_blind: stakes.big_blind}
        for seat in order:
            due = stakes.ante + blinds.get(seat, 0)
            posted = mistake.blind_amount(play, seat, due)
            if posted != due:  # booked as it lies: the bet is what is in front
                extra = posted - due
                ledger.stack[seat] -= extra
                ledger.bet[seat] = ledger.bet.get(seat, 0) + extra
                ledger.contributed[seat] = ledger.contributed.get(seat, 0) + extra
            money.post(seat, posted)

    # ------------------------------------------------------------------ the deal

    def _deal(self, play: HandPlay, mistake: Mistake) -> bool:
        """Deal two rounds; False when a misdeal was called (the remedy then needs a redeal)."""
        hand = play.hand
        order = hand.order
        n = len(order)
        hand.hole = {seat: [] for seat in order}
        hand.active = list(order)
        plan: DealPlan = mistake.plan_deal(play, [order[k % n] for k in range(2 * n)])
        for k, seat in enumerate(plan.targets):
            zone = seat_zone(seat)
            tag = plan.tags.get(k)
            if k == plan.foreign:
                uid = play.foreign_uid()
                play.place_uid(uid, None, zone, play.face("down"), PACE["hole"], tag)
            elif k in plan.exposed:
                uid = self._deal_exposed(play, seat, plan.exposed[k])
            else:
                uid = play.place(hand.shoe.draw(), zone, "down", PACE["hole"], tag)
            mistake.after_card(play, k)
            if seat in hand.hole:
                hand.hole[seat].append(uid)
            if k == plan.misdeal_after:
                play.ack()
                if mistake.ignore_remedy:
                    # remedy_not_followed: after the misdeal is called, one more card.
                    next_seat = plan.targets[(k + 1) % len(plan.targets)]
                    play.deal_on(seat_zone(next_seat))
                    play.ack()
                return False
        if not mistake.after_deal(play):
            return False
        self._replace_exposed(play)
        return True

    def _deal_exposed(self, play: HandPlay, seat: int, code: str) -> str:
        """A hole card dealt face up (seen by the reader, or reported on the keypad)."""
        hand = play.hand
        card = hand.shoe.draw()
        zone = seat_zone(seat)
        if self.settings.reader_reports_face:
            uid = play.place(card, zone, "up", PACE["hole"], code)
        else:
            uid = play.place(card, zone, None, PACE["hole"])
            play.press("exposed", seat=seat, mistake=code)
        hand.exposed.add(uid)
        if code == "exposed_card":  # a misdeal is acknowledged when the dealer calls it
            play.ack()
        return uid

    @staticmethod
    def _replace_exposed(play: HandPlay) -> None:
        """The exposed-card remedy: the card may not be kept; it becomes the flop's burn, and the
        seat gets the top card of the deck."""
        hand = play.hand
        for seat, uids in hand.hole.items():
            for uid in list(uids):
                if uid in hand.exposed:
                    play.move(uid, "burn", "down", PACE["fix"])
                    uids.remove(uid)
                    uids.append(play.place(hand.shoe.draw(), seat_zone(seat), "down", PACE["fix"]))
                    hand.flop_burn_done = True

    # ------------------------------------------------------------------ streets and showdown

    def _play_streets(self, play: HandPlay, mistake: Mistake, protected: int | None) -> None:
        """Preflop betting, then flop, turn and river with their betting rounds."""
        hand = play.hand
        # A hand with a mistake after the deal keeps two players to its end (the remedy flows
        # need the board dealt); no all-in then either.
        keep_two = mistake.code is not None or protected is not None
        all_in_ok = mistake.code is None and protected is None
        mistake.plan_streets(play)
        early = mistake.street if mistake.premature else None
        play.betting(
            "preflop", complete=early != "flop", keep_two=keep_two, protect=protected, allow_all_in=all_in_ok
        )
        for street, count in _STREETS:
            if hand.over or hand.board_done:
                return
            if street == mistake.street:
                mistake.deal_street(play, street, count)
            else:
                play.street(count)
            if hand.board_done:
                return
            # The round is left open only when the next street is turned prematurely.
            opens_early = _FOLLOWING[street] is not None and _FOLLOWING[street] == early
            play.betting(
                street, complete=not opens_early, keep_two=keep_two, protect=protected, allow_all_in=all_in_ok
            )

    @staticmethod
    def _showdown(play: HandPlay, mistake: Mistake) -> None:
        """Losers muck (declaring when the board plays for them); winners keep their cards."""
        hand = play.hand
        if len(hand.active) < 2:
            return
        ranks, board_rank = play.ranks()
        best = min(ranks.values())
        for seat in list(hand.active):
            if mistake.showdown_muck(play, seat):
                continue
            if ranks[seat] != best:
                if ranks[seat] == board_rank:
                    play.press("declare_board", seat=seat)
                play.muck(seat)
