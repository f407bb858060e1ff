"""The live terminal view of the demo (rich): the table, the alert feed with remedies, devices.

It shows only what any screen at the table may show: seat card *counts*, the board, burns, the
public alerts and device status. Hole cards are never drawn. A legend under the seats says what
the marks mean; the alert feed has one row per alert (its latest status) with its remedy; the
header's hand is the table box's (the engine's hand number), the hands played are counted apart;
cards are written as on the pages (``10♦``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from contract.models import Alert, PublicState, Status
from controller.demo.monitor import TableView
from controller.demo.summary import Tally

_SUITS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}
_RED = {"h", "d"}
_SEVERITY_STYLE = {"info": "cyan", "warning": "yellow", "critical": "bold red"}
_STATE_STYLE = {"online": "green", "offline": "red", "fault": "bold red"}


@dataclass(frozen=True)
class Header:
    table: str
    profile: str
    broker: str
    speed: float
    hands: int  # 0: until Ctrl-C


#: What the marks under the seats mean (shown under them).
LEGEND: Final = (
    "▮ a card at the seat (the count, never its face)   · seated, no card   — empty seat\n"
    "D button   ▶ to act   numbers under the seats: chips bet this round"
)


def card_text(card: str, symbols: bool = True) -> Text:
    """``10♦`` (the pages' notation: a ten is 10), red for hearts and diamonds."""
    rank, suit = card[0], card[1]
    shown = f"{'10' if rank == 'T' else rank}{_SUITS[suit]}" if symbols else card
    return Text(shown, style="red" if suit in _RED else "bold")


def _table_panel(state: PublicState | None, seats: int) -> Panel:
    grid = Table.grid(padding=(0, 2))
    if state is None:
        return Panel(Text("waiting for the engine's first state…", style="dim"), title="table")
    by_seat = {s.seat: s for s in state.seats}
    bets = {b.seat: b.amount for b in state.bets}
    row_seat, row_cards, row_bets = [], [], []
    for seat in range(1, seats + 1):
        info = by_seat.get(seat)
        label = Text(f"{seat}")
        if state.button == seat:
            label.append(" D", style="bold black on white")
        if state.to_act == seat:
            label = Text("▶ ", style="bold yellow") + label
        row_bets.append(Text(str(bets[seat]), style="bold") if bets.get(seat) else Text(""))
        if info is None or not info.occupied:
            label.stylize("dim")
            row_cards.append(Text("—", style="dim"))
        else:
            style = "bold green" if info.in_hand else ""
            label.stylize(style)
            row_cards.append(Text("▮" * info.cards if info.cards else "·", style=style or "dim"))
        row_seat.append(label)
    for _ in range(seats):
        grid.add_column(justify="center")
    grid.add_row(*row_seat)
    grid.add_row(*row_cards)
    if bets:
        grid.add_row(*row_bets)
    legend = Text(LEGEND, style="dim")
    board = Text("board ")
    for card in state.board:
        board.append_text(card_text(card))
        board.append(" ")
    if not state.board:
        board.append("—", style="dim")
    line = Text(
        f"hand {state.hand}   phase {state.phase}   deck {state.deck or '—'}   burns {state.burns}"
        + ("" if state.tracking else "   NOT TRACKING (reader offline)"),
    )
    return Panel(Group(grid, legend, Text(""), board, _money_line(state), line), title="table")


def _money_line(state: PublicState) -> Text:
    """The pots (main first, with who may win each), who acts and who shows first."""
    text = Text("pots ")
    for i, pot in enumerate(state.pots):
        name = "main" if i == 0 else f"side {i}"
        eligible = ",".join(str(s) for s in pot.eligible)
        text.append(f"{name} {pot.amount}", style="bold")
        text.append(f" (seats {eligible})   ")
    if not state.pots:
        text.append("—   ", style="dim")
    if state.to_act is not None:
        text.append(f"to act: seat {state.to_act}   ", style="yellow")
    if state.shows_first is not None:
        text.append(f"shows first: seat {state.shows_first}", style="cyan")
    return text


_STATUS_STYLE: Final = {"raised": "bold", "acknowledged": "yellow", "resolved": "dim"}


def latest_alerts(changes: Iterable[Alert]) -> list[tuple[Alert, tuple[str, ...]]]:
    """One entry per alert, newest change first: its latest change and its remedy (a later
    change, acknowledged or resolved, may carry none; the raised one's is kept)."""
    latest: dict[str, Alert] = {}
    remedies: dict[str, tuple[str, ...]] = {}
    for alert in changes:
        latest.pop(alert.id, None)  # the newest change goes to the end
        latest[alert.id] = alert
        if alert.remedy:
            remedies[alert.id] = tuple(alert.remedy)
    return [(alert, remedies.get(alert.id, ())) for alert in reversed(latest.values())]


def _alert_rows(alerts: Iterable[Alert], limit: int) -> Table:
    table = Table(expand=True, show_edge=False, pad_edge=False)
    table.add_column("hand", justify="right", width=5)
    table.add_column("code", no_wrap=True)
    table.add_column("seat", justify="right", width=4)
    table.add_column("status", width=12)
    table.add_column("message and remedy", ratio=1)
    for alert, remedy in latest_alerts(alerts)[:limit]:
        resolved = alert.status == "resolved"
        what = Text(alert.message, style="dim" if resolved else "")
        if remedy:
            what.append("\n→ " + "\n→ ".join(remedy), style="dim")
        table.add_row(
            str(alert.hand),
            Text(alert.code, style="dim" if resolved else _SEVERITY_STYLE.get(alert.severity, "")),
            str(alert.seat or ""),
            Text(alert.status, style=_STATUS_STYLE.get(alert.status, "")),
            what,
        )
    return table


def _devices(devices: dict[str, Status], controller: Status | None) -> Text:
    text = Text()
    entries = sorted(devices.items())
    if controller is not None:
        entries.insert(0, ("controller", controller))
    for name, status in entries:
        text.append(f"{name} ")
        text.append(status.state, style=_STATE_STYLE.get(status.state, ""))
        text.append(f" (session {status.session})   ")
    return text or Text("no device status yet", style="dim")


def render(view: TableView, tally: Tally, header: Header, seats: int) -> RenderableType:
    """The whole screen, from what the monitor saw and what the runner counted."""
    # The hand is the engine's (as in the table box); the hands the dealer has played apart.
    hand = f"hand {view.state.hand}, " if view.state is not None else ""
    played = f"{tally.hands}/{header.hands}" if header.hands else f"{tally.hands}"
    title = Text(
        f"tablectl demo — table {header.table}, profile {header.profile}, {hand}played {played}, "
        f"speed {header.speed:g}, broker {header.broker}   (Ctrl-C stops)",
        style="bold",
    )
    detected = sum(tally.detected.values())
    score = Text(
        f"mistakes injected {sum(tally.injected.values())}   detected {detected}   "
        f"missed {sum(tally.missed.values())}   false alarms {sum(tally.unexpected.values())}   "
        f"device alerts {sum(tally.other_alerts.values())}"
    )
    return Group(
        title,
        _table_panel(view.state, seats),
        Panel(_alert_rows(view.alerts, 8), title="alerts (newest first, each with its latest status)"),
        Panel(Group(_devices(view.devices, view.controller), score), title="devices and score"),
    )
