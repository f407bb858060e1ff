"""A dealing mistake followed by the remedy the rules prescribe, as the dealer would carry it out.

Each builder returns the script lines of the hand (mistake, remedy and some play after it) and
the codes raised (warning/critical). The engine must raise exactly those, nothing more, and every
alert must be resolved once the remedy is carried out.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from tests.engine.mistakes import Hand, _deal, _full_deal

Flow = Callable[[random.Random, Hand], tuple[list[str], set[str]] | None]
REDEAL = ["clear", "shuffle {deck}", "deal all", "round", "burn", "flop"]


def _redeal(hand: Hand) -> list[str]:
    return [line.format(deck=hand.deck) for line in REDEAL]


def exposed_card(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    limit = 2 if hand.profile == "tda" else 1
    seq = hand.sequence
    k = rng.randrange(limit, len(seq))
    seat = seq[k]
    index = 0 if k < len(hand.order) else 1  # the exposed card's place at its seat
    lines = [*_deal(seq[:k], rng), f"deal {seat}:up", *_deal(seq[k + 1 :], rng)]
    remedy = [f"deal {seat}", f"move seat:{seat}#{index} burn"]
    if rng.random() < 0.5:
        remedy.reverse()
    return [*lines, *remedy, "round", "flop", "round", "burn", "turn"], {"exposed_card"}


def extra_card(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]] | None:
    if hand.profile == "tda":
        return None
    first = hand.order[0]
    lines = [*_full_deal(rng, hand), f"deal {first}", f"move seat:{first} burn", "round", "flop"]
    return lines, {"extra_card"}


def misdeal(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    wrong = rng.choice(hand.order[1:])
    return [f"deal {wrong}", *_redeal(hand)], {"misdeal_wrong_first_seat"}


def exposed_early(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    return [f"deal {hand.order[0]}:up", *_redeal(hand)], {"misdeal_exposed_early"}


def fouled(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    seq = hand.sequence
    k = rng.randrange(1, len(seq))
    lines = [*_deal(seq[:k], rng), f"deal {seq[k]}={hand.other_deck}:Qh"]
    return [*lines, "clear", f"use {hand.other_deck}", f"shuffle {hand.other_deck}", "deal all"], {
        "fouled_deck"
    }


def blinds(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    order = hand.order
    small, big = (hand.button, order[0]) if len(order) == 2 else (order[0], order[1])
    missing = rng.choice([small, big])
    lines = [f"blind {missing} off", f"deal {order[0]}", f"blind {missing}"]
    return [*lines, *_deal(hand.sequence[1:], rng), "round"], {"blinds_missing"}


def premature_flop(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    lines = [*_full_deal(rng, hand), "burn", "flop", "take board all", "round", "flop"]
    return [*lines, "round", "burn", "turn"], {"premature_flop"}


def premature_turn(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    lines = [*_full_deal(rng, hand), "round", "burn", "flop", "burn", "turn"]
    if hand.profile == "tda":
        lines += ["take board", "round", "turn", "round", "burn", "river", "round"]
    else:
        # the set-aside card is reshuffled into the stub before the river
        lines += ["move board#3 aside", "round", "burn", "turn", "round", "take aside"]
        lines += ["river", "round"]
    return lines, {"premature_turn"}


def premature_river(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    lines = [*_full_deal(rng, hand), "round", "burn", "flop", "round", "burn", "turn"]
    return [*lines, "burn", "river", "take board", "round", "river", "round"], {"premature_river"}


def too_many(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    lines = [*_full_deal(rng, hand), "round", "burn", "flop", "board"]
    if hand.profile == "tda":
        lines += [f"move board#{rng.randrange(4)} burn"]
    else:
        lines += ["take board all", "flop"]
    return [*lines, "round", "burn", "turn"], {"board_too_many_cards"}


def missing_burn(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    lines = [*_full_deal(rng, hand), "round", "burn", "flop", "round", "turn"]
    return [*lines, "take board", "burn", "turn", "round", "burn", "river"], {"missing_burn"}


def extra_burn(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    lines = [*_full_deal(rng, hand), "round", "burn", "burn", "take burn", "flop", "round"]
    return [*lines, "burn again", "turn"], {"extra_burn"}


def deck_check(rng: random.Random, hand: Hand) -> tuple[list[str], set[str]]:
    lines = [f"shuffle {hand.other_deck} fail count=51 missing=Jc", *_full_deal(rng, hand)]
    return [*lines, f"shuffle {hand.other_deck}", "round"], {"deck_check_failed"}


FLOWS: dict[str, Flow] = {
    "exposed_card": exposed_card,
    "extra_card": extra_card,
    "misdeal_wrong_first_seat": misdeal,
    "misdeal_exposed_early": exposed_early,
    "fouled_deck": fouled,
    "blinds_missing": blinds,
    "premature_flop": premature_flop,
    "premature_turn": premature_turn,
    "premature_river": premature_river,
    "board_too_many_cards": too_many,
    "missing_burn": missing_burn,
    "extra_burn": extra_burn,
    "deck_check_failed": deck_check,
}
