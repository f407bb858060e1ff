"""The demo's chips: a registry of tagged chips, the rack they come from, and making amounts.

Pure. A chip is a tag with a value (the contract's ``[chips] registry``, CSV ``uid,value``). Off
the table the chips are interchangeable (a player's stack, the dealer's rack, change made between
hands are all unread), so one :class:`Rack` holds them all. An amount is made up so that any
smaller amount is a subset of it (at least four 1s, and 1s and 5s worth at least 24 once 25s are
used): then an uncalled part can be handed back, and a pot split, with the very chips that lie
there, as a dealer does without making change in the middle of the table.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias

Structure: TypeAlias = Literal["no_limit", "pot_limit", "fixed_limit"]

#: Chip values (table units) and how many of each the demo's registry holds.
DENOMINATIONS: Final[tuple[int, ...]] = (100, 25, 5, 1)
DEFAULT_COUNTS: Final[Mapping[int, int]] = {1: 700, 5: 700, 25: 500, 100: 160}
#: Chip UIDs: a prefix no card of the example decks uses, then the value and a serial number.
UID_PREFIX: Final = "E007"


@dataclass(frozen=True, slots=True)
class BlindLevel:
    """One tournament level as the dealer plays it (``[[stakes.levels]]``)."""

    small_blind: int
    big_blind: int
    ante: int
    minutes: float


@dataclass(frozen=True, slots=True)
class TableStakes:
    """The game's money rules as the dealer plays them (the configuration's ``[stakes]``)."""

    structure: Structure = "no_limit"
    small_blind: int = 1
    big_blind: int = 2
    ante: int = 0
    rake_percent: float = 0.0
    rake_cap: int = 0
    buy_in: int = 200  # a player's stack when sitting down (and after a rebuy)
    #: A tournament's levels (empty: a cash game): each hand's blinds and ante are those of the
    #: level in force, by the clock, when it begins (:meth:`for_level`).
    levels: tuple[BlindLevel, ...] = ()

    def for_level(self, index: int | None) -> TableStakes:
        """These stakes with the blinds and ante of level ``index`` (None: as they are)."""
        if index is None or not self.levels:
            return self
        level = self.levels[index]
        return replace(self, small_blind=level.small_blind, big_blind=level.big_blind, ante=level.ante)

    def level_at(self, seconds: float) -> tuple[int, float | None]:
        """The level (index) in force ``seconds`` after the clock started, and the seconds it
        has left (None: the last level lasts to the end)."""
        elapsed = seconds
        for index, level in enumerate(self.levels):
            length = 60 * level.minutes
            if elapsed < length and index < len(self.levels) - 1:
                return index, length - elapsed
            elapsed -= length
        return len(self.levels) - 1, None

    def limit_bet(self, street: str) -> int:
        """Fixed limit: the small bet (preflop, flop) or the big bet (turn, river)."""
        return self.big_blind if street in ("preflop", "flop") else 2 * self.big_blind

    def rake_for(self, total: int, saw_flop: bool) -> int:
        """The house's payment from a hand's pots (none without a flop)."""
        if not saw_flop or self.rake_percent <= 0:
            return 0
        rake = int(total * self.rake_percent // 100)
        return min(rake, self.rake_cap) if self.rake_cap else rake


def chip_registry(counts: Mapping[int, int] = DEFAULT_COUNTS) -> dict[str, int]:
    """The demo's chips: UID -> value."""
    return {
        f"{UID_PREFIX}{value:04X}{serial:08X}": value
        for value in sorted(counts)
        for serial in range(counts[value])
    }


def registry_csv(chips: Mapping[str, int]) -> str:
    """The registry as the configuration's CSV (header ``uid,value``)."""
    return "uid,value\n" + "".join(f"{uid},{value}\n" for uid, value in chips.items())


def _greedy(amount: int) -> dict[int, int]:
    """Counts per value making ``amount`` with the fewest chips."""
    out: dict[int, int] = {}
    for value in DENOMINATIONS:
        out[value], amount = divmod(amount, value)
    return out


def _split(amount: int) -> dict[int, int]:
    """Counts per value making ``amount`` so that every smaller amount is a subset of it."""
    ones = amount % 5
    rest = amount - ones
    if rest >= 5:
        ones, rest = ones + 5, rest - 5
    fives = (rest % 25) // 5
    rest -= 5 * fives
    if rest >= 25:
        fives, rest = fives + 5, rest - 25
    quarters = (rest % 100) // 25
    rest -= 25 * quarters
    if rest >= 100:
        quarters, rest = quarters + 4, rest - 100
    return {1: ones, 5: fives, 25: quarters, 100: rest // 100}


class Rack:
    """The chips off the table, by value (stacks, the rack: the reader sees none of them)."""

    def __init__(self, chips: Mapping[str, int]) -> None:
        self.chips = dict(chips)
        # First in, first out: a chip just taken off the table is the last to come back, so
        # the reader has long reported it gone when it is bet again.
        self._free: dict[int, deque[str]] = {}
        for uid, value in sorted(chips.items()):
            self._free.setdefault(value, deque()).append(uid)
        #: The seat whose betting area or stack each chip last left the table from: put in that
        #: seat's stack again it is the player's own chips back, not new money (the engine
        #: remembers the same, docs/engine.md "The session").
        self.left_from: dict[str, int] = {}

    def take(self, amount: int, *, complete: bool = True, new_to: int | None = None) -> list[str]:
        """Chips worth ``amount`` (smaller values stand in when a value runs short);
        ``complete``: any smaller amount is a subset of them, else the fewest chips;
        ``new_to``: none that last left the table from that seat (new money for it)."""
        wanted = _split(amount) if complete else _greedy(amount)
        out: list[str] = []
        owed = 0
        for value in DENOMINATIONS:
            owed += wanted.get(value, 0) * value
            free = self._free.get(value, deque())
            skipped: list[str] = []
            while owed >= value and free:
                uid = free.popleft()
                if new_to is not None and self.left_from.get(uid) == new_to:
                    skipped.append(uid)
                    continue
                out.append(uid)
                owed -= value
            free.extendleft(reversed(skipped))
        if owed:
            self.give(out)
            raise RuntimeError(f"the rack cannot make {amount}: {owed} short")
        return out

    def give(self, uids: Iterable[str], *, seat: int | None = None) -> None:
        """Chips back off the table (``seat``: from that seat's betting area or stack)."""
        for uid in uids:
            self._free[self.chips[uid]].append(uid)
            if seat is not None:
                self.left_from[uid] = seat


def pick(chips: Mapping[str, int], uids: Sequence[str], amount: int) -> list[str] | None:
    """A subset of ``uids`` worth exactly ``amount`` (largest values first), or None."""
    by_value: dict[int, list[str]] = {}
    for uid in uids:
        by_value.setdefault(chips[uid], []).append(uid)
    values = sorted(by_value, reverse=True)

    def solve(index: int, owed: int) -> list[str] | None:
        if owed == 0:
            return []
        if index == len(values):
            return None
        value = values[index]
        have = by_value[value]
        for count in range(min(len(have), owed // value), -1, -1):
            rest = solve(index + 1, owed - count * value)
            if rest is not None:
                return have[:count] + rest
        return None

    return solve(0, amount)


def partition(
    chips: Mapping[str, int], uids: Sequence[str], amounts: Sequence[int]
) -> list[list[str]] | None:
    """Split ``uids`` into parts worth ``amounts`` (in order; the rest is left out), or None."""
    parts: list[list[str]] = []
    left = list(uids)
    for amount in amounts:
        part = pick(chips, left, amount)
        if part is None:
            return None
        taken = set(part)
        left = [uid for uid in left if uid not in taken]
        parts.append(part)
    return parts
