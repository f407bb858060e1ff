"""The floor's figures from its history: per table and hour, per dealer, per area (pit).

Hands dealt, alerts raised per 100 hands, and rake, over a time window. ``report`` reads the raw
counts from the store (``FloorStore.figures``) and shapes them here (pure): an alert counts in
the hour it was raised and, for the dealer, when it was raised during one of the dealer's hands;
a table's area is the one its newest controller status names (``[table] area``). Hands without a
dealer badge are the dealer ``null``'s; tables without an area, the area ``null``'s.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Final

from controller.floor.store import HOUR_MS, FloorStore, iso_ms

#: A key of the report's groups (a table id, a dealer's badge, an area) or none.
Key = str | None
NONE_LAST: Final = "\uffff"


def per_100(alerts: int, hands: int) -> float | None:
    return round(alerts * 100 / hands, 1) if hands else None


def _figures(hands: int, alerts: int, rake: int) -> dict[str, Any]:
    return {"hands": hands, "alerts": alerts, "alerts_per_100_hands": per_100(alerts, hands), "rake": rake}


def _order(key: Key) -> str:
    return NONE_LAST if key is None else key


def shape(
    figures: dict[str, list[tuple[Any, ...]]], areas: dict[str, str | None], since_ms: int, until_ms: int
) -> dict[str, Any]:
    """The report as JSON (see the module docstring) from ``FloorStore.figures`` and ``areas``."""
    hours: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    for table, hour, count, rake in figures["hands"]:
        cell = hours[str(table)][int(hour)]
        cell[0] += int(count)
        cell[2] += int(rake)
    for table, hour, count in figures["alerts"]:
        hours[str(table)][int(hour)][1] += int(count)
    tables = []
    by_area: dict[Key, list[int]] = defaultdict(lambda: [0, 0, 0])
    area_tables: dict[Key, list[str]] = defaultdict(list)
    for table in sorted(set(hours) | set(areas)):
        cells = hours.get(table, {})
        total = [sum(cell[i] for cell in cells.values()) for i in range(3)]
        area = areas.get(table)
        tables.append(
            {
                "table": table,
                "area": area,
                **_figures(*total),
                "hours": [
                    {"hour": iso_ms(hour * HOUR_MS), **_figures(*cells[hour])} for hour in sorted(cells)
                ],
            }
        )
        for i in range(3):
            by_area[area][i] += total[i]
        area_tables[area].append(table)
    dealer_alerts = {dealer: int(count) for dealer, count in figures["dealer_alerts"]}
    dealers = [
        {
            "dealer": dealer,
            **_figures(int(count), dealer_alerts.get(dealer, 0), int(rake)),
            "tables": int(seen),
        }
        for dealer, count, rake, seen in sorted(figures["dealers"], key=lambda row: _order(row[0]))
    ]
    grand = [sum(t[key] for t in tables) for key in ("hands", "alerts", "rake")]
    return {
        "since": iso_ms(since_ms),
        "until": iso_ms(until_ms),
        "total": _figures(*grand),
        "tables": tables,
        "dealers": dealers,
        "areas": [
            {"area": area, "tables": area_tables[area], **_figures(*by_area[area])}
            for area in sorted(by_area, key=_order)
        ],
    }


async def report(store: FloorStore, since_ms: int, until_ms: int) -> dict[str, Any]:
    """The report of ``[since_ms, until_ms)`` from ``store`` (StoreError)."""
    return shape(await store.figures(since_ms, until_ms), await store.areas(), since_ms, until_ms)


def report_text(report: dict[str, Any]) -> str:
    """The report for a terminal."""

    def row(name: str, figures: dict[str, Any]) -> str:
        rate = figures["alerts_per_100_hands"]
        return (
            f"  {name:<24} {figures['hands']:>7} {figures['alerts']:>7} "
            f"{'-' if rate is None else f'{rate:.1f}':>9} {figures['rake']:>9}\n"
        )

    head = f"  {'':<24} {'hands':>7} {'alerts':>7} {'/100 h':>9} {'rake':>9}\n"
    out = [f"floor report {report['since']} .. {report['until']}\n", head, row("all tables", report["total"])]
    out.append("per table:\n")
    out += [row(t["table"] + (f" ({t['area']})" if t["area"] else ""), t) for t in report["tables"]]
    out.append("per dealer:\n")
    out += [row(d["dealer"] or "(no badge)", d) for d in report["dealers"]]
    out.append("per area:\n")
    out += [row(a["area"] or "(no area)", a) for a in report["areas"]]
    return "".join(out)
