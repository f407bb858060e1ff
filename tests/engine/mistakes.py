"""One dealing mistake from the catalogue, injected into a random legal hand.

Each builder returns the script lines of the hand up to and including the mistake, and the set
of warning/critical codes the engine must raise for it (nothing else).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from contract.models import Profile


@dataclass(frozen=True)
class Hand:
    """The hand the mistake goes into: who plays, where the button is, which deck is dealt."""

    players: list[int]
    button: int
    table_seats: int
    deck: str
    other_deck: str
    profile: Profile

    @property
    def order(self) -> list[int]:
        return sorted(self.players, key=lambda s: (s - self.button - 1) % self.table_seats)

    @property
    def sequence(self) -> list[int]:
        return self.order * 2

    @property
    def empty_seats(self) -> list[int]:
        return [s for s in range(1, self.table_seats + 1) if s not in self.players]


Lines = list[str]
Builder = Callable[[random.Random, Hand], tuple[Lines, set[str]] | None]


def _deal(seats: list[int], rng: random.Random) -> Lines:
    lines = []
    for seat in seats:
        lines.append(f"deal {seat}")
        if rng.random() < 0.15:
            lines.append("dup")  # the reader reports the same tag again
    return lines


def _full_deal(rng: random.Random, hand: Hand) -> Lines:
    return _deal(hand.sequence, rng)


def exposed_early(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    limit = 2 if hand.profile == "tda" else 1
    k = rng.randrange(limit)
    seq = hand.sequence
    return [*_deal(seq[:k], rng), f"deal {seq[k]}:up"], {"misdeal_exposed_early"}


def exposed_card(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    limit = 2 if hand.profile == "tda" else 1
    seq = hand.sequence
    k = rng.randrange(limit, len(seq))
    return [*_deal(seq[:k], rng), f"deal {seq[k]}:up", *_deal(seq[k + 1 :], rng)], {"exposed_card"}


def exposed_multiple(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    limit = 2 if hand.profile == "tda" else 1
    seq = hand.sequence
    first, second = sorted(rng.sample(range(limit, len(seq)), 2))
    lines = [*_deal(seq[:first], rng), f"deal {seq[first]}:up"]
    lines += [*_deal(seq[first + 1 : second], rng), f"deal {seq[second]}:up"]
    return lines, {"exposed_card", "misdeal_exposed_multiple"}


def extra_card(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    expected = {"misdeal_wrong_count"} if hand.profile == "tda" else {"extra_card"}
    return [*_full_deal(rng, hand), f"deal {hand.order[0]}"], expected


def extra_cards(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]] | None:
    if hand.profile == "tda":
        return None  # the first extra card is already a misdeal under TDA
    second = rng.choice(hand.order)
    lines = [*_full_deal(rng, hand), f"deal {hand.order[0]}", f"deal {second}"]
    return lines, {"extra_card", "misdeal_extra_cards"}


def wrong_count(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    ending = rng.choice(["round", "burn"])
    return [*_deal(hand.sequence[:-2], rng), ending], {"misdeal_wrong_count"}


def wrong_first_seat(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    return [f"deal {rng.choice(hand.order[1:])}"], {"misdeal_wrong_first_seat"}


def empty_seat(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]] | None:
    if not hand.empty_seats:
        return None
    k = rng.randrange(len(hand.sequence))
    lines = [*_deal(hand.sequence[:k], rng), f"deal {rng.choice(hand.empty_seats)}"]
    return lines, {"misdeal_empty_seat"}


def seat_skipped(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]] | None:
    n = len(hand.order)
    choices = [i for i in range(1, 2 * n) if i % n < n - 1]
    if hand.profile == "tda" and n == 2:
        return None  # the button's consecutive cards are allowed (TDA 35-B)
    if not choices:
        return None
    i = rng.choice(choices)
    target = hand.order[i % n + 1]
    return [*_deal(hand.sequence[:i], rng), f"deal {target}"], {"misdeal_seat_skipped"}


def out_of_sequence(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]] | None:
    n = len(hand.order)
    choices = [i for i in range(1, 2 * n) if i != n]
    if not choices:
        return None
    i = rng.choice(choices)
    seq = hand.sequence
    return [*_deal(seq[:i], rng), f"deal {seq[i - 1]}"], {"misdeal_out_of_sequence"}


def blinds_missing(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    order = hand.order
    small, big = (hand.button, order[0]) if len(order) == 2 else (order[0], order[1])
    missing = rng.choice([small, big])
    return [f"blind {missing} off", f"deal {order[0]}"], {"blinds_missing"}


def premature_flop(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    return [*_full_deal(rng, hand), "burn", "board"], {"premature_flop"}


def premature_turn(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    return [*_full_deal(rng, hand), "round", "burn", "flop", "burn", "turn"], {"premature_turn"}


def premature_river(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    lines = [*_full_deal(rng, hand), "round", "burn", "flop", "round", "burn", "turn"]
    return [*lines, "burn", "river"], {"premature_river"}


def too_many(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    lines = [*_full_deal(rng, hand), "round", "burn", "flop"]
    if rng.random() < 0.5:
        lines += ["round", "burn", "turn"]
    return [*lines, "board"], {"board_too_many_cards"}


def missing_burn(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    lines = [*_full_deal(rng, hand), "round"]
    if rng.random() < 0.5:
        lines += ["burn", "flop", "round", "turn"]
    else:
        lines += ["flop"]
    return lines, {"missing_burn"}


def extra_burn(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    return [*_full_deal(rng, hand), "round", "burn", "burn"], {"extra_burn"}


def fouled_deck(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    seq = hand.sequence
    k = rng.randrange(1, len(seq))  # the first card tells which deck the hand is dealt from
    card = rng.choice(["As", "Kd", "7c", "2h", "Tc"])
    return [*_deal(seq[:k], rng), f"deal {seq[k]}={hand.other_deck}:{card}"], {"fouled_deck"}


def deck_check_failed(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    k = rng.randrange(len(hand.sequence))
    lines = [*_deal(hand.sequence[:k], rng), f"shuffle {hand.other_deck} fail count=51 missing=9d"]
    return lines, {"deck_check_failed"}


def exposed_not_burned(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    lines, _ = exposed_card(rng, hand)
    # another card burned: the flop shows the exposed card was not the burn
    return [*lines, "round", "burn", "flop"], {"exposed_card", "remedy_not_followed"}


def premature_flop_burned(rng: random.Random, hand: Hand) -> tuple[Lines, set[str]]:
    lines = [*_full_deal(rng, hand), "burn", "flop", "take board all", "round", "burn"]
    return lines, {"premature_flop", "remedy_not_followed"}


MISTAKES: dict[str, Builder] = {
    "misdeal_exposed_early": exposed_early,
    "exposed_card": exposed_card,
    "misdeal_exposed_multiple": exposed_multiple,
    "extra_card": extra_card,
    "misdeal_extra_cards": extra_cards,
    "misdeal_wrong_count": wrong_count,
    "misdeal_wrong_first_seat": wrong_first_seat,
    "misdeal_empty_seat": empty_seat,
    "misdeal_seat_skipped": seat_skipped,
    "misdeal_out_of_sequence": out_of_sequence,
    "blinds_missing": blinds_missing,
    "premature_flop": premature_flop,
    "premature_turn": premature_turn,
    "premature_river": premature_river,
    "board_too_many_cards": too_many,
    "missing_burn": missing_burn,
    "extra_burn": extra_burn,
    "fouled_deck": fouled_deck,
    "deck_check_failed": deck_check_failed,
    "remedy_not_followed (exposed card kept)": exposed_not_burned,
    "remedy_not_followed (burn after premature flop)": premature_flop_burned,
}
