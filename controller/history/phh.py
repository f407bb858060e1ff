"""Hand results as PHH, the poker hand history format PokerKit reads (``HandHistory``).

Players: ``p1`` is the first seat dealt in left of the button, the button is the last (PHH's
order, the order of the blinds); heads-up that makes ``p1`` the big blind and ``p2`` the button,
who posts the small blind, as PHH (and PokerKit) read a two-player ``blinds_or_straddles``.

What a result does not say is chosen so that a replay is exact:

- ``starting_stacks``: the table does not know the players' stacks. A seat that went all in
  starts with exactly what it put in; every other seat with :data:`DEEP` (more than any bet).
  So a replay's final stack minus its starting stack is what the seat won minus what it put in.
- ``antes`` and ``blinds_or_straddles``: from the ``post`` actions (an ante first, when the stakes
  have one, the rest the blind), posted by PHH itself, so no ``post`` appears among the actions.
- Hole cards are dealt unknown (``d dh p1 ????``); a hand tabled face up at showdown is shown
  with its cards (``p2 sm AsKd``), every other hand at showdown is mucked (``p3 sm``).
- The rake is written as the user-defined field ``_rake`` (PHH has no field for it; a reader
  passes it to its own rake function).

A voided hand (misdeal, fouled deck) was never played: it is written as a plain-text note
(:func:`voided_note`, ``.txt``), not as a PHH file.

PHH cannot carry a hand without blinds (or antes): PokerKit refuses such a file ("No antes,
blinds, straddles..."). A table without ``[stakes]`` follows no betting, so its results have no
posts: the export refuses it as a whole (:data:`NO_STAKES`), and skips, naming it, any other hand
whose result shows no post (:func:`unwritable`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from contract.models import Alert, HandAction, HandResult

#: The starting stack of a seat that did not go all in (more chips than any hand moves).
DEEP: Final = 1_000_000_000
#: PHH variants: no-limit hold'em (also the closest for pot-limit: PHH has no pot-limit hold'em)
#: and fixed-limit hold'em.
NO_LIMIT: Final = "NT"
FIXED_LIMIT: Final = "FT"
_STREETS: Final = ("preflop", "flop", "turn", "river")
#: Why a table without ``[stakes]`` cannot be exported as PHH (``{table}``: its id).
NO_STAKES: Final = (
    "table {table} has no [stakes]: its hands carry no blinds and no bets, which every PHH file "
    "needs (PokerKit refuses one without them); nothing written. Add [stakes] to follow the "
    "betting (docs/game.md); tablectl history show HAND prints a hand as it is"
)
_BOARD_OF_STREET: Final = {"flop": (0, 3), "turn": (3, 4), "river": (4, 5)}


@dataclass(frozen=True)
class Stakes:
    """What the table's configuration says about the money that the result does not."""

    ante: int = 0
    small_blind: int = 1
    big_blind: int = 2
    structure: str = "no_limit"


def player_order(result: HandResult) -> list[int]:
    """The seats dealt in, PHH's order: from the first seat left of the button, button last."""
    seats = sorted(result.seats)
    if result.button is None:
        return seats
    after = [s for s in seats if s > result.button]
    before = [s for s in seats if s <= result.button]
    return after + before


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


@dataclass
class _Betting:
    """What each player has in front of them this street, for PHH's "raise to" amounts."""

    players: list[int]
    bets: dict[int, int]

    def street(self) -> None:
        self.bets = dict.fromkeys(self.players, 0)

    def act(self, action: HandAction, label: str) -> str | None:
        """The PHH line of one action (None: a post, which PHH posts itself)."""
        if action.action == "post":
            return None
        before = max(self.bets.values(), default=0)
        self.bets[action.seat] = self.bets.get(action.seat, 0) + action.amount
        total = self.bets[action.seat]
        if action.action == "fold":
            return f"{label} f"
        if action.action in ("check", "call"):
            return f"{label} cc"
        if action.action == "all_in" and total <= before:
            return f"{label} cc"  # all in for a call (or less)
        return f"{label} cbr {total}"


def _posts(result: HandResult, players: list[int], stakes: Stakes) -> tuple[dict[int, int], dict[int, int]]:
    """Each seat's ante and blind, from the ``post`` actions (an ante first, when there is one)."""
    posted = dict.fromkeys(players, 0)
    for action in result.actions:
        if action.action == "post" and action.seat in posted:
            posted[action.seat] += action.amount
    antes = {seat: min(stakes.ante, amount) for seat, amount in posted.items()}
    return antes, {seat: amount - antes[seat] for seat, amount in posted.items()}


def _phh_order(values: dict[int, int], players: list[int]) -> list[int]:
    """Per-player values in PHH's order; heads-up PHH reads them reversed (p2, the button,
    posts the first: the small blind)."""
    ordered = [values[seat] for seat in players]
    return ordered[::-1] if len(players) == 2 else ordered


def _showdown_order(players: list[int], folded: set[int], opener: int | None) -> list[int]:
    """Who shows or mucks, in order: from the last street's last aggressor (else p1) around."""
    start = players.index(opener) if opener in players else 0
    turned = players[start:] + players[:start]
    return [s for s in turned if s not in folded]


def unwritable(result: HandResult) -> str | None:
    """Why a played hand cannot be a PHH file (no blind or ante was posted), or None."""
    if any(action.action == "post" and action.amount > 0 for action in result.actions):
        return None
    return f"hand {result.hand}: no blind or ante was posted, which PHH needs"


def to_phh(result: HandResult, stakes: Stakes | None = None, *, table: str | None = None) -> str:
    """The PHH text of a played hand (not of a voided one)."""
    stakes = stakes or Stakes()
    players = player_order(result)
    label = {seat: f"p{index}" for index, seat in enumerate(players, start=1)}
    antes, blinds = _posts(result, players, stakes)
    put_in: dict[int, int] = dict.fromkeys(players, 0)
    for action in result.actions:
        put_in[action.seat] = put_in.get(action.seat, 0) + action.amount
    all_in = {a.seat for a in result.actions if a.action == "all_in"}
    stacks = [put_in[s] if s in all_in else DEEP for s in players]

    lines = [f"d dh {label[s]} ????" for s in players]
    betting = _Betting(players, {})
    betting.street()
    # Blinds count as the preflop bets they are (antes do not: they go straight to the pot).
    betting.bets.update(blinds)
    folded: set[int] = set()
    opener: int | None = None
    for street in _STREETS:
        if street != "preflop":
            first, end = _BOARD_OF_STREET[street]
            cards = result.board[first:end]
            if len(cards) < end - first:
                break
            lines.append(f"d db {''.join(cards)}")
            betting.street()
            opener = None
        # (An action of a seat not dealt in cannot be a PHH player's: left out.)
        for action in (a for a in result.actions if a.street == street and a.seat in label):
            line = betting.act(action, label[action.seat])
            if line is None:
                continue
            if action.action == "fold":
                folded.add(action.seat)
            elif line.split()[1] == "cbr":
                opener = action.seat
            lines.append(line)
    if result.result == "showdown":
        # Every street's betting opens at p1 (an all-in run-out's too): the opener is the last
        # street's last aggressor, if any.
        shown = {hand.seat: "".join(hand.cards) for hand in result.showdown}
        for seat in _showdown_order(players, folded, opener):
            tabled = shown.get(seat)
            lines.append(f"{label[seat]} sm {tabled}" if tabled else f"{label[seat]} sm")

    fields: list[tuple[str, object]] = [
        ("variant", FIXED_LIMIT if stakes.structure == "fixed_limit" else NO_LIMIT),
        ("ante_trimming_status", True),
        ("antes", _phh_order(antes, players)),
        ("blinds_or_straddles", _phh_order(blinds, players)),
    ]
    if stakes.structure == "fixed_limit":
        fields += [("small_bet", stakes.big_blind), ("big_bet", 2 * stakes.big_blind)]
    else:
        fields.append(("min_bet", stakes.big_blind))
    fields += [
        ("starting_stacks", stacks),
        ("actions", lines),
        ("hand", result.hand),
        ("seats", players),
    ]
    if table is not None:
        fields.append(("table", table))
    fields += [
        ("time", result.ts.strftime("%H:%M:%S")),
        ("time_zone", "UTC"),
        ("day", result.ts.day),
        ("month", result.ts.month),
        ("year", result.ts.year),
        ("_rake", result.rake),
        ("_result", result.result),
    ]
    notes = [
        f"# Hand {result.hand} of tablectl's journal, exported as PHH.",
        "# starting_stacks are not known to the table: a seat that went all in starts with what it",
        f"# put in, every other seat with {DEEP}; final minus starting stack is what it won minus",
        "# what it put in. Hole cards are unknown (????) except hands tabled face up at showdown.",
    ]
    if result.evidence_missing:
        notes.append(
            "# The table followed this hand with evidence missing (device events or dealer inputs "
            "lost): these are the actions it saw."
        )
    body = [
        f"{name} = [\n" + "".join(f"  {_toml(line)},\n" for line in lines) + "]"
        if name == "actions"
        else f"{name} = {_toml(value)}"
        for name, value in fields
    ]
    return "\n".join([*notes, *body]) + "\n"


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def voided_note(result: HandResult, alerts: Sequence[Alert]) -> str:
    """A voided hand (misdeal, fouled deck) as a plain-text note: it was never played."""
    lines = [
        f"Hand {result.hand}: voided ({result.result}) at {_iso(result.ts)}.",
        f"Button seat {result.button if result.button is not None else '-'}; seats dealt in: "
        + (" ".join(str(s) for s in result.seats) or "-"),
        "Not a played hand: no PHH file. Its alerts:",
    ]
    lines += [
        f"  {_iso(a.ts)} {a.code}{f' seat {a.seat}' if a.seat is not None else ''} {a.status}: {a.message}"
        for a in alerts
    ]
    if not alerts:
        lines.append("  (none)")
    return "\n".join(lines) + "\n"


def file_name(result: HandResult) -> str:
    """``hand-000042.phh`` for a played hand, ``hand-000042.voided.txt`` for a voided one."""
    suffix = "voided.txt" if result.result in ("misdeal", "fouled") else "phh"
    return f"hand-{result.hand:06d}.{suffix}"
