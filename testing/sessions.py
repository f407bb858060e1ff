"""Sessions of legal hands from the virtual dealer, as the messages a table's devices publish.

The virtual dealer (:mod:`simulators.dealer`) is the one generator of legal play; this renders
its hands for the engine tests and benchmarks, and hands a table script (:mod:`testing.script`)
the table as the dealer left it, so that a test can carry on with a scripted mistake::

    messages, dealer = dealer_session(registry, seats=9, hands=3, seed=7)
    table = continue_table(registry, dealer, messages)
    messages += table.run_all(["next_button", "blinds", f"use {dealer.ready}", "deal 1:up"])
"""

from __future__ import annotations

import random
from datetime import datetime

from config.registry import DeckRegistry
from contract.models import Profile
from simulators.dealer import DealerSettings, VirtualDealer
from testing.events import DEFAULT_START, to_events
from testing.script import Message, Table


def dealer_session(
    registry: DeckRegistry,
    *,
    seats: int,
    hands: int,
    seed: int,
    profile: Profile = "roberts",
    players: tuple[int, int] | None = None,
    noise: bool = False,
    start: datetime = DEFAULT_START,
) -> tuple[list[Message], VirtualDealer]:
    """``hands`` legal hands (players join and leave between them; folds, all-ins, showdowns),
    rendered as device messages; with ``noise`` the reader misreads now and then, harmlessly."""
    low, high = players or (2, seats)
    dealer = VirtualDealer(
        registry.decks,
        DealerSettings(seats=seats, min_players=low, max_players=high, profile=profile),
        seed=seed,
    )
    steps = [step for _ in range(hands) for step in dealer.next_hand(mistake=None).steps]
    rng = random.Random(seed) if noise else None
    events = to_events(steps, start=start, noise=rng)
    return [Message("event", e.device, e.event) for e in events], dealer


def continue_table(
    registry: DeckRegistry, dealer: VirtualDealer, messages: list[Message], *, seed: int = 0
) -> Table:
    """A table script that carries on where the dealer left the table (cleared, between hands):
    the same seats and button, every device's ``seq`` continued; it deals from the deck the
    shuffler has ready."""
    seq: dict[str, int] = {}
    for message in messages:
        seq[message.device or ""] = max(seq.get(message.device or "", 0), message.seq())
    return Table(
        registry,
        table_seats=dealer.settings.seats,
        seed=seed,
        players=set(dealer.occupied),
        button=dealer.button,
        deck=dealer.ready or "",
        seq=seq,
    )
