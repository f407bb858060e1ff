"""The demo table's configuration: one table, its simulated devices, a journal kept for the user."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Final

import config as config_package
from config.layout import CHIP_TABLE_ZONES, standard_antennas
from config.models import TableConfig, TableSection
from contract.cards import bet_zone, stack_zone
from contract.models import Profile
from simulators.dealer import DeviceIds
from simulators.dealer.chips import BlindLevel, Structure, TableStakes, chip_registry, registry_csv

#: The deck registry shipped with the example configuration (decks A and B, 104 tags).
EXAMPLE_REGISTRY: Final = Path(config_package.__file__).resolve().parent / "decks.example.csv"
#: The demo table's device ids: with chips a second reader covers the betting areas, the pot and
#: the rake, a third the players' stacks (each sweep stays short: a chip is reported within a
#: sweep of its reader's antennas).
DEVICE_IDS: Final = DeviceIds(chip_readers=("rfid-2", "rfid-3"))
#: The structures the demo cycles through when none is asked for: seeds 1, 4, 7... play no
#: limit, 2, 5, 8... pot limit, 3, 6, 9... fixed limit (so five seeds see every chip code).
STRUCTURES: Final[tuple[Structure, ...]] = ("fixed_limit", "no_limit", "pot_limit")
#: Reader hold time (ms) and the house limit for a hole card off the table (s), flat out and at
#: a real pace. Flat out the limit is short so that the dealer's mistake of holding a card off
#: the table is seen in about a second.
HOLD_MS: Final = {"fast": 25, "paced": 1000}
HOLE_CARD_OFF_S: Final = {"fast": 1.0, "paced": 10.0}
#: The dealer's reaction time (s, ``[table] reaction_s``): flat out the dealer acts within
#: milliseconds, so half a second still covers every card dealt "while the alert was on its
#: way"; the mistakes that must wait it out (dealing on after a misdeal, a fold left half done)
#: then wait half a second, not two.
REACTION_S: Final = {"fast": 0.5, "paced": 2.0}
#: The house's session rules at the demo table that reads chips (docs/engine.md, "The session"):
#: the most chips a seat may add between hands (half the buy-in), and the longest a seat may
#: stay empty with chips on its stack (s; flat out short, so that the dealer's mistake of a
#: player away too long is seen in a second and a half, as a card off the table is).
MAX_REBUY: Final = 100
MAX_ABSENCE_S: Final = {"fast": 1.0, "paced": 10.0}
#: The demo tournament's levels (``--tournament``): blinds and ante rising, each level this
#: many minutes long (flat out half a minute: 200 hands see three or four levels).
TOURNAMENT_LEVELS: Final[tuple[tuple[int, int, int], ...]] = (
    (1, 2, 0),
    (2, 4, 0),
    (3, 6, 1),
    (5, 10, 1),
    (10, 20, 2),
)
LEVEL_MINUTES: Final = {"fast": 0.5, "paced": 15.0}
#: How close to a level's end a hand waits for the next level (the dealer writes a hand's
#: script before carrying it out: its blinds must be those in force when ``new_hand`` is pressed).
LEVEL_GUARD_S: Final = {"fast": 3.0, "paced": 60.0}


def demo_stakes(
    seed: int, structure: Structure | None = None, *, tournament: bool = False, fast: bool = True
) -> TableStakes:
    """The demo's game: blinds 1/2, buy-in 200, a 5 % rake capped at 3; the structure from the
    seed unless given; an ante of 1 in every fourth seed's session. A ``tournament`` plays
    :data:`TOURNAMENT_LEVELS` by the clock instead (no rake)."""
    if tournament:
        minutes = LEVEL_MINUTES["fast" if fast else "paced"]
        return TableStakes(
            structure=structure or STRUCTURES[seed % len(STRUCTURES)],
            small_blind=1,
            big_blind=2,
            buy_in=200,
            levels=tuple(BlindLevel(sb, bb, ante, minutes) for sb, bb, ante in TOURNAMENT_LEVELS),
        )
    return TableStakes(
        structure=structure or STRUCTURES[seed % len(STRUCTURES)],
        small_blind=1,
        big_blind=2,
        ante=1 if seed % 4 == 0 else 0,
        rake_percent=5,
        rake_cap=3,
        buy_in=200,
    )


def _chip_readers(seats: int, workdir: Path, fast: bool) -> list[dict[str, object]]:
    """The readers under the betting areas, the pot and the rake, and under the players' stacks
    (a chip handed back to a player is read arriving in its stack: no wait for the reader to
    miss it in the betting area)."""
    # The pot first: a sweep is reported once the pot has read the chips and each betting area
    # has swept without them, soon after in the same sweep.
    table = [*CHIP_TABLE_ZONES, *(bet_zone(seat) for seat in range(1, seats + 1))]
    stacks = [stack_zone(seat) for seat in range(1, seats + 1)]
    # Flat out, the stacks' reader dwells longer: chips reach a stack seldom (a hand-back),
    # and every dwell of every reader costs the process the demo runs in. Its hold time is then
    # three of its sweeps (nobody waits for chips to leave a stack; a shorter one would only
    # be overruled by the missed sweeps, which the driver warns of).
    dwells = (1, 5) if fast else (20, 20)
    holds = (HOLD_MS["fast"], 3 * len(stacks) * dwells[1]) if fast else (HOLD_MS["paced"],) * 2
    return [
        {
            "id": device,
            "driver": "rfid",
            "port": str(workdir / f"{device}.pty"),
            "antennas": dict(enumerate(zones, start=1)),
            "hold_ms": max(50, hold),
            "dwell_ms": dwell,
        }
        for device, zones, dwell, hold in zip(
            DEVICE_IDS.chip_readers, (table, stacks), dwells, holds, strict=True
        )
    ]


def write_chip_registry(workdir: Path) -> tuple[Path, dict[str, int]]:
    """The demo's chip registry, written where the configuration points (``uid,value``)."""
    chips = chip_registry()
    path = workdir / "chips.csv"
    path.write_text(registry_csv(chips), encoding="utf-8")
    return path, chips


def demo_config(
    *,
    seats: int,
    profile: Profile,
    broker_url: str,
    workdir: Path,
    table_id: str = "demo",
    fast: bool = True,
    display_listen: str | None = None,
    stakes: TableStakes | None = None,
    chips_registry: Path | None = None,
    journal_dir: Path | None = None,
) -> TableConfig:
    """The configuration of the demo table.

    ``fast`` (``--speed 0``) shortens the reader's sweep and hold time so that the system keeps up
    with a dealer who never pauses; at a real pace the example table's timings are used.
    ``display_listen`` (``host:port``) serves the dealer's display. With ``stakes`` and
    ``chips_registry`` the table reads chips (a betting area per seat, the pot, the rake, the
    players' stacks) and the engine follows the betting and the session's rules (the maximum
    rebuy, the longest absence; a tournament's levels). The journal goes to ``journal_dir``
    (default: ``workdir``).
    """
    pace = "fast" if fast else "paced"
    with_chips = stakes is not None and chips_registry is not None
    table: dict[str, object] = {
        "id": table_id,
        "seats": seats,
        "profile": profile,
        "name": "tablectl demo",
    }
    if "hole_card_off_s" in TableSection.model_fields:
        table["hole_card_off_s"] = HOLE_CARD_OFF_S[pace]
    table["reaction_s"] = REACTION_S[pace]
    if with_chips:
        table["max_absence_s"] = MAX_ABSENCE_S[pace]
    data: dict[str, object] = {
        "table": table,
        "mqtt": {
            "url": broker_url,
            # A fresh client id per run: no persistent session of an earlier demo is resumed.
            "client_id": f"tablectl-demo-{secrets.token_hex(4)}",
            "keepalive": 30,
        },
        "decks": {"registry": str(EXAMPLE_REGISTRY)},
        "journal": {"path": str((journal_dir or workdir) / "journal.jsonl"), "fsync": False},
        "display": {"alert_history": 12, "lamp": True, "buzzer_ms": 300, "listen": display_listen},
        "logging": {"level": "WARNING"},
        "devices": [
            {"id": DEVICE_IDS.shuffler, "driver": "shuffler", "port": str(workdir / "shuffler.pty")},
            {
                "id": DEVICE_IDS.reader,
                "driver": "rfid",
                "port": str(workdir / "rfid.pty"),
                "antennas": standard_antennas(seats),
                "hold_ms": HOLD_MS[pace],
                "dwell_ms": 1 if fast else 20,
            },
            *(_chip_readers(seats, workdir, fast) if with_chips else []),
            {
                "id": DEVICE_IDS.sensors,
                "driver": "sensors",
                "vendor_id": 0x1209,
                "product_id": 0x7AB1,
                "poll_ms": 2 if fast else 10,
            },
        ],
    }
    if with_chips and "stakes" in TableConfig.model_fields:
        assert stakes is not None
        data["chips"] = {"registry": str(chips_registry)}
        data["stakes"] = {
            "structure": stakes.structure,
            "small_blind": stakes.small_blind,
            "big_blind": stakes.big_blind,
            "ante": stakes.ante,
            "rake_percent": stakes.rake_percent,
            "rake_cap": stakes.rake_cap,
            "max_rebuy": MAX_REBUY,
            "levels": [
                {
                    "small_blind": lv.small_blind,
                    "big_blind": lv.big_blind,
                    "ante": lv.ante,
                    "minutes": lv.minutes,
                }
                for lv in stakes.levels
            ],
        }
    return TableConfig.model_validate(data)
