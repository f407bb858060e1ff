"""An :class:`~testing.oracle_hand.OracleHand` as the messages a table sends: card reads and chip
movements (:func:`chip_messages`), or card reads and ``action`` inputs (:func:`action_messages`).

Chips are rendered so that every later movement has exact change where a dealer takes it. The
chips put in, those that go back as uncalled and each pot share (and the rake) are all known
before the hand is rendered, so each put-in is made of chips that never straddle any of them: the
chips put in lie on one line in the order put in, the uncalled part is the tail of the seat's last
put-in of that round, the pot is what remains, and the shares take the pot from its start in the
order pushed. Every put-in is cut at those boundaries and each piece is paid in the largest
denominations. A dealer pushing a share then pushes exactly the pieces of that share.
"""

from __future__ import annotations

from dataclasses import dataclass

from config.chips import ChipRegistry
from config.registry import DeckRegistry
from testing.oracle_hand import TABLE_SEATS, OracleHand, Step
from testing.script import Message, Table

__all__ = ["action_messages", "chip_messages"]

_PUT_IN = frozenset({"post", "call", "bet", "raise", "all_in"})
_SHARES = frozenset({"push", "rake"})
_BOARD = {0: "flop", 3: "turn", 4: "river"}


def _setup(hand: OracleHand, table: Table) -> None:
    table.run("sit " + " ".join(map(str, hand.seats)))
    table.run("shuffle A")
    table.run(f"button {hand.button}")


def _cards(step: Step, table: Table, board: list[str]) -> None:
    """The card steps both renderings share."""
    if step.kind == "deal":
        table.run(f"deal {step.seat}={step.cards[0]}")
    elif step.kind == "burn":
        table.run(f"burn ={step.cards[0]}")
    elif step.kind == "board":
        table.run(f"{_BOARD[len(board)]} " + " ".join("=" + c for c in step.cards))
        board.extend(step.cards)
    elif step.kind == "show":
        table.run(f"show {step.seat}")
    elif step.kind in ("fold", "muck"):
        table.run(f"fold {step.seat}")  # the hand's cards to the muck


def action_messages(hand: OracleHand, registry: DeckRegistry, *, key: bool = True) -> list[Message]:
    """The hand as card reads and ``action`` inputs (no chips): the keypad's ``new_hand`` (none
    without ``key``: a table without a keypad, whose hand starts at the first card), the posts,
    the deal, every action including checks, folds (the input and the cards to the muck), the
    board, the hands shown, the table cleared."""
    table = Table(registry, table_seats=TABLE_SEATS)
    _setup(hand, table)
    if key:
        table.run("new_hand")
    board: list[str] = []
    for step in hand.steps:
        if step.kind in _PUT_IN or step.kind == "check":
            table.run(f"action {step.seat} {step.kind} {step.amount}")
        elif step.kind == "fold":
            table.run(f"action {step.seat} fold")
        _cards(step, table, board)
    table.run("clear")
    return table.out


@dataclass
class _Piece:
    uids: list[str]
    owner: int  # index of the push/rake step it goes to; -1: returned to the player


def chip_messages(
    hand: OracleHand, registry: DeckRegistry, chips: ChipRegistry, *, stacks: bool = False
) -> list[Message]:
    """The hand as card reads and chip movements. Chips come from the player's side (off the
    table) and the uncalled part goes back there; a seat whose last chips went in gets the
    dealer's ``all_in`` key (his announcement, which chips alone cannot show). With ``stacks``
    the reader covers the players' stacks too: each stack lies in ``stack:N`` before the deal,
    bets come from it and uncalled chips go back to it, and no key is pressed (an emptied stack
    is the all in)."""
    table = Table(registry, table_seats=TABLE_SEATS, chips=chips)
    _setup(hand, table)
    pieces = _pieces(hand.steps, table)
    side: dict[int, str | None] = dict.fromkeys(hand.seats)
    if stacks:
        _stacks(hand, table, pieces)
        side = {seat: f"stack:{seat}" for seat in hand.seats}
    board: list[str] = []
    put_no = 0
    last_put: dict[int, int] = {}  # seat -> its last put-in of the round
    pot_pieces: list[_Piece] = []
    for index, step in enumerate(hand.steps):
        if step.kind in _PUT_IN and step.amount:
            for piece in pieces[put_no]:
                table.move_chips(piece.uids, side[step.seat], f"bet:{step.seat}")
                pot_pieces.append(piece)
            last_put[step.seat] = put_no
            put_no += 1
            if step.kind == "all_in" and not stacks:
                table.run(f"all_in {step.seat}")
        elif step.kind == "return":
            for piece in pieces[last_put[step.seat]]:
                if piece.owner == -1:
                    table.move_chips(piece.uids, f"bet:{step.seat}", side[step.seat])
        elif step.kind == "sweep":
            table.run("sweep")
            last_put = {}
        elif step.kind in _SHARES:
            zone = "rake" if step.kind == "rake" else f"bet:{step.seat}"
            for piece in pot_pieces:
                if piece.owner == index:
                    table.move_chips(piece.uids, "pot", zone)
        _cards(step, table, board)
    table.run("collect")
    table.run("clear")
    return table.out


def _stacks(hand: OracleHand, table: Table, pieces: list[list[_Piece]]) -> None:
    """Each player's stack into ``stack:N``: the chips it will put in (in order), and the rest."""
    mine: dict[int, list[str]] = {seat: [] for seat in hand.seats}
    put_no = 0
    for step in hand.steps:
        if step.kind in _PUT_IN and step.amount:
            for piece in pieces[put_no]:
                mine[step.seat].extend(piece.uids)
            put_no += 1
    values = table.chips.by_uid if table.chips is not None else {}
    for seat, stack in hand.stacks:
        rest = stack - sum(values[uid] for uid in mine[seat])
        table.move_chips([*mine[seat], *(table.take_chips(rest) if rest else [])], None, f"stack:{seat}")


def _pieces(steps: tuple[Step, ...], table: Table) -> list[list[_Piece]]:
    """Each put-in's chips, in pieces that each go to one place at the end (see the module
    docstring)."""
    # the put-ins on one line, and the uncalled tail of some of them
    spans: list[tuple[int, int]] = []  # (amount, uncalled tail)
    last_put: dict[int, int] = {}
    for step in steps:
        if step.kind in _PUT_IN and step.amount:
            last_put[step.seat] = len(spans)
            spans.append((step.amount, 0))
        elif step.kind == "return":
            k = last_put[step.seat]
            amount, tail = spans[k]
            assert tail + step.amount <= amount, "the uncalled part is more than the last put-in"
            spans[k] = (amount, tail + step.amount)
        elif step.kind == "sweep":
            last_put = {}
    # the shares' boundaries on the pot (the put-ins without their uncalled tails)
    bounds: list[tuple[int, int]] = []  # (end on the pot, step index)
    end = 0
    for index, step in enumerate(steps):
        if step.kind in _SHARES and step.amount:
            end += step.amount
            bounds.append((end, index))
    out: list[list[_Piece]] = []
    at = 0  # position on the pot
    share = 0
    for amount, tail in spans:
        pieces: list[_Piece] = []
        left = amount - tail
        while left:
            while share < len(bounds) and bounds[share][0] <= at:
                share += 1
            assert share < len(bounds), "the pushes do not take the whole pot"
            size = min(left, bounds[share][0] - at)
            pieces.append(_Piece(table.take_chips(size), bounds[share][1]))
            at += size
            left -= size
        if tail:
            pieces.append(_Piece(table.take_chips(tail), -1))
        out.append(pieces)
    assert not bounds or at == bounds[-1][0], "the pushes are not the pot"
    return out
