"""The whole engine against PokerKit: a hand PokerKit played (:mod:`testing.oracle_hand`),
rendered as a table's messages (:mod:`testing.oracle_render`), fed to the pure core; the hand
result it publishes is compared with PokerKit's and no alert may be raised.

Four paths: ``chips`` (card reads and chip movements, the dealer's ``all_in`` key for a seat
whose last chips went in; the engine has the chip registry), ``stacks`` (the same where the
reader covers the players' stacks too: no key, an emptied stack is the all in), ``actions``
(card reads and ``action`` inputs after the keypad's ``new_hand``; no chip registry) and
``keyless`` (the same with no key at all: the posts come before the first hole card, which
starts the hand). In all the engine has the hand's stakes; ``awarded`` is what the chips showed
pushed, so it is empty on the action paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal, TypeAlias

from config.registry import DeckRegistry, load_registry
from contract.models import Alert, HandResult
from engine.api import (
    DeviceEventReceived,
    DeviceStatusReceived,
    EngineSettings,
    InputReceived,
    Received,
)
from engine.betting.terms import Action
from engine.step import Engine
from testing.chipset import chip_registry
from testing.oracle_hand import TABLE_SEATS, Expected, OracleHand
from testing.oracle_render import action_messages, chip_messages
from testing.script import Message

__all__ = ["CHIPS", "PATHS", "Path_", "Played", "disagreements", "feed", "messages", "registry"]

Path_: TypeAlias = Literal["chips", "stacks", "actions", "keyless"]
PATHS: Final[tuple[Path_, ...]] = ("chips", "stacks", "actions", "keyless")
#: Enough chips of every denomination for the busiest hand's pieces.
CHIPS: Final = chip_registry(per_value=600)
_REGISTRY = Path(__file__).resolve().parents[1] / "config" / "decks.example.csv"
_AT = datetime(2026, 11, 30, tzinfo=UTC)
_registry: list[DeckRegistry] = []


def registry() -> DeckRegistry:
    """The example deck registry (loaded once)."""
    if not _registry:
        _registry.append(load_registry(_REGISTRY))
    return _registry[0]


def messages(hand: OracleHand, path: Path_) -> list[Message]:
    if path in ("chips", "stacks"):
        return chip_messages(hand, registry(), CHIPS, stacks=path == "stacks")
    return action_messages(hand, registry(), key=path == "actions")


def _received(message: Message) -> Received:
    if message.kind == "status":
        return DeviceStatusReceived(message.device or "", message.payload, _AT)  # type: ignore[arg-type]
    if message.kind == "input":
        return InputReceived(message.payload, _AT)  # type: ignore[arg-type]
    return DeviceEventReceived(message.device or "", message.payload, _AT)  # type: ignore[arg-type]


class Played:
    """What the engine published for one rendered hand."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []
        self.hands: list[HandResult] = []


def feed(hand: OracleHand, path: Path_, received: Sequence[Received] | None = None) -> Played:
    """Run the rendered hand (or ``received``, already rendered) through a new engine."""
    settings = EngineSettings(
        seats=TABLE_SEATS,
        profile="roberts",
        registry=registry(),
        chips=CHIPS if path in ("chips", "stacks") else None,
        stakes=hand.stakes,
        odd_chip="first_shown",
    )
    engine = Engine(settings)
    played = Played()
    items = received if received is not None else [_received(m) for m in messages(hand, path)]
    for item in items:
        outputs = engine.handle(item)
        if outputs.alerts:
            played.alerts.extend(outputs.alerts)
        if outputs.hands:
            played.hands.extend(outputs.hands)
    return played


def rendered(hand: OracleHand, path: Path_) -> list[Received]:
    return [_received(m) for m in messages(hand, path)]


def _posts_apart(actions: Sequence[Action]) -> tuple[list[Action], list[Action]]:
    """Posts in a fixed order (the engine lists antes, then the blinds small to big; PokerKit
    posts the antes, then the blinds in its own order, heads-up's big blind first), then the
    rest in the order played."""
    posts = sorted((a for a in actions if a.action == "post"), key=lambda a: (a.seat, a.amount))
    return posts, [a for a in actions if a.action != "post"]


def disagreements(hand: OracleHand, path: Path_, played: Played | None = None) -> list[str]:
    """What the engine got different from PokerKit on ``hand`` fed by ``path`` (empty: agreed)."""
    played = played or feed(hand, path)
    problems: list[str] = []
    raised = [f"{a.code} seat {a.seat}: {a.message}" for a in played.alerts if a.status == "raised"]
    if raised:
        problems.append(f"alerts on a legal hand: {raised[:3]}")
    if len(played.hands) != 1:
        problems.append(f"{len(played.hands)} hand results instead of one")
        return problems
    got = played.hands[0]
    want: Expected = hand.expected
    if got.result != want.result:
        problems.append(f"result {got.result} != {want.result}")
    if got.seats != list(hand.seats) or got.button != hand.button:
        problems.append(f"seats/button {got.seats}/{got.button} != {list(hand.seats)}/{hand.button}")
    if tuple(got.board) != want.board:
        problems.append(f"board {got.board} != {want.board}")
    actions = [Action(a.street, a.seat, a.action, a.amount) for a in got.actions]
    if _posts_apart(actions) != _posts_apart(want.actions):
        problems.append(f"actions {_short(actions)} != PokerKit's {_short(want.actions)}")
    pots = [
        (p.amount, tuple(p.eligible), tuple(p.winners), tuple((s.seat, s.amount) for s in p.shares))
        for p in got.pots
    ]
    expected_pots = [(p.amount, p.eligible, p.winners, p.shares) for p in want.pots]
    if pots != expected_pots:
        problems.append(f"pots {pots} != {expected_pots}")
    if got.rake != want.rake:
        problems.append(f"rake {got.rake} != {want.rake}")
    awarded = [(a.seat, a.amount) for a in got.awarded]
    pushed = list(want.pushed) if path in ("chips", "stacks") else []
    if awarded != pushed:
        problems.append(f"awarded {awarded} != {pushed}")
    showdown = [(s.seat, (s.cards[0], s.cards[1]), s.rank) for s in got.showdown]
    if showdown != list(want.showdown):
        problems.append(f"showdown {showdown} != {list(want.showdown)}")
    return problems


def _short(actions: Sequence[Action]) -> str:
    return " ".join(f"{a.street[0]}{a.seat}:{a.action}{a.amount or ''}" for a in actions)
