"""An outside tester's harness for the game: whole hands as card reads and chip movements (or
``action`` inputs), hand-written contract JSON over a plain MQTT client to ``tablectl run``.

Written from the contract ("Chips, betting and hand results") only: no project models, no engine
script. The tester brings its own chip registry (``uid,value``, its own tag numbering) and
``[stakes]``, and its own device ids: cards may come from one reader and chips from another, with
no shuffler or sensor board at all. Every line of a hand is a moment of the table; the devices'
``ts`` advance by a realistic 0.2 to 1 s per line (chips of one line 20 ms apart).

Hand language, one step per line (``#`` starts a comment):

- ``seats 1 2`` occupancy sensors; ``button 1`` the button sensor; ``shuffled A`` a deck check
- ``key NAME [SEAT]`` a keypad key (``new_hand``, ``all_in 3``, ...)
- ``bet SEAT AMOUNT`` chips worth AMOUNT from the player's side into ``bet:SEAT`` (blinds and
  antes are bets before the deal), largest denominations first; from ``stack:SEAT`` where the
  hand reads stacks (``stack SEAT AMOUNT ...``: the chips of each amount put in the stack zone)
- ``deal 1=Ks 2=Qs ...`` hole cards face down to seats (``deck B`` for the other deck)
- ``fold SEAT`` both hole cards to the muck (``muck SEAT#I`` one of them); ``show SEAT ...``
  hole cards read face up
- ``burn`` the next card of the deck face down to the burn; ``board Ah Kd 2c`` cards face up
- ``sweep`` every betting area into ``pot``
- ``return SEAT AMOUNT`` chips from ``bet:SEAT`` back to the player's side (off the table)
- ``push SEAT AMOUNT|all`` chips from ``pot`` to ``bet:SEAT``; ``rake AMOUNT`` pot to ``rake``
- ``move FROM TO AMOUNT`` chips between chip zones (``-`` is off the table)
- ``foreign ZONE UID`` / ``unforeign ZONE UID`` a tag of no registry read / no longer read
- ``action SEAT NAME [AMOUNT]`` an ``action`` input (the table's action feed)
- ``collect`` the players take their betting areas (and stacks), the house its rake; ``clear``
  cards off
- ``pause S`` S more seconds pass on the devices' clocks
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.acceptance.harness import DECKS, STARTUP_S, WAIT_S, Tester, ToSend
from tests.conftest import EXAMPLE_REGISTRY
from tests.service.support import ServiceProcess

#: The tester's chips: tournament and cash denominations, largest first.
DENOMINATIONS = (5_000_000, 1_000_000, 100_000, 25_000, 5_000, 1_000, 500, 100, 25, 5, 1)
PER_VALUE = 120
#: Antennas of the tester's readers (any numbers: the zone is in the event).
CARD_ANTENNA = {"board": 30, "burn": 31, "muck": 32}
CHIP_ANTENNA = {"pot": 40, "rake": 41}


def chip_uid(value: int, index: int) -> str:
    """The tester's own tag numbering: ``C41B`` + value (9 hex digits) + index (3 hex digits)."""
    return f"C41B{value:09X}{index:03X}"


def chip_values() -> dict[str, int]:
    return {chip_uid(v, i): v for v in DENOMINATIONS for i in range(PER_VALUE)}


@dataclass
class Hand:
    """One televised hand (or a scenario of a dealer's mistake) and what must come of it."""

    name: str
    steps: str
    #: the alert changes, in order: ``code seat severity status`` (``-`` for no seat)
    expect: list[str] = field(default_factory=list)
    small_blind: int = 1
    big_blind: int = 2
    ante: int = 0
    structure: str = "no_limit"
    rake_percent: float = 0
    rake_cap: int = 0
    profile: str = "roberts"
    odd_chip: str = "first_shown"
    #: False: no ``[chips]`` (the betting comes as ``action`` inputs)
    chips: bool = True
    cards_reader: str = "reader-a"
    chips_reader: str = "chips-reader"
    keypad: str = "keypad"
    sensors: str = "sensor-board"
    shuffler: str = "shuffler"
    #: how many hand results to wait for
    hands: int = 1
    #: a chip moving is read gone from its old zone before it is read in the new one (in the
    #: dealer's hand) instead of after
    lift_first: bool = False
    #: every chip read present is reported twice (a reader's repeated inventory)
    twice: bool = False
    #: pushes go to the winner's stack zone instead of the betting area
    push_to: str = "bet"
    #: the reader covers the stacks: bets come from ``stack:N`` (see the ``stack`` step)
    from_stacks: bool = False

    def __str__(self) -> str:
        return self.name


@dataclass
class HandTable:
    """What the tester believes is on the table, to write the events it causes."""

    hand: Hand
    root: str
    start: datetime
    seq: dict[str, int] = field(default_factory=dict)
    deck: str = "A"
    used: set[str] = field(default_factory=set)
    cards: dict[str, list[str]] = field(default_factory=dict)  # zone -> card uids
    chips: dict[str, list[str]] = field(default_factory=dict)  # zone -> chip uids
    pool: dict[int, list[str]] = field(default_factory=dict)  # value -> chips off the table
    clock: float = 0.0

    def __post_init__(self) -> None:
        self._named: set[str] = set()
        for uid, value in chip_values().items():
            self.pool.setdefault(value, []).append(uid)
        self.values = chip_values()
        self.pace = random.Random(self.hand.name)

    # ---- messages ---------------------------------------------------------------------

    def stamp(self) -> str:
        when = self.start + timedelta(seconds=self.clock)
        return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def event(self, device: str, kind: str, **fields: Any) -> ToSend:
        seq = self.seq.get(device, 0) + 1
        self.seq[device] = seq
        payload = {"v": 1, "seq": seq, "ts": self.stamp(), "type": kind, **fields}
        return ToSend(f"{self.root}/dev/{device}/event", payload)

    def tag(self, zone: str, uid: str, present: bool, face: str | None, *, chip: bool) -> ToSend:
        if chip:
            self.clock += 0.02
            device = self.hand.chips_reader
            kind, _, number = zone.partition(":")
            antenna = CHIP_ANTENNA.get(zone) or (10 + int(number) if kind == "bet" else 20 + int(number))
        else:
            device = self.hand.cards_reader
            antenna = CARD_ANTENNA.get(zone) or int(zone.split(":")[1])
        fields = {
            "antenna": antenna,
            "zone": zone,
            "uid": uid,
            "present": present,
            "face": face if present else None,
        }
        return self.event(device, "tag", **fields)

    # ---- cards ------------------------------------------------------------------------

    def card(self, code: str | None) -> str:
        reserved = set(self._named)
        uid = next(
            u
            for u, c in DECKS[self.deck]
            if u not in self.used and (c == code if code else c not in reserved)
        )
        self.used.add(uid)
        return uid

    def place(self, zone: str, uid: str, face: str | None) -> ToSend:
        self.cards.setdefault(zone, []).append(uid)
        return self.tag(zone, uid, True, face, chip=False)

    def leave(self, zone: str, uid: str) -> ToSend:
        self.cards[zone].remove(uid)
        return self.tag(zone, uid, False, None, chip=False)

    # ---- chips ------------------------------------------------------------------------

    def from_pool(self, amount: int) -> list[str]:
        uids: list[str] = []
        left = amount
        for value in DENOMINATIONS:
            while left >= value and self.pool[value]:
                uids.append(self.pool[value].pop())
                left -= value
        if left:
            raise ValueError(f"{self.hand.name}: no chips left to make {amount}")
        return uids

    def pick(self, zone: str, amount: int | None) -> list[str]:
        held = self.chips.get(zone, [])
        if amount is None:
            return list(held)
        picked: list[str] = []
        left = amount
        for uid in sorted(held, key=lambda u: -self.values[u]):
            if self.values[uid] <= left:
                picked.append(uid)
                left -= self.values[uid]
        if left:
            raise ValueError(f"{self.hand.name}: the chips in {zone} cannot make {amount}")
        return picked

    def move(self, src: str | None, dst: str | None, amount: int | None) -> Iterator[ToSend]:
        """Chips worth ``amount`` (None: all) from ``src`` to ``dst`` (None: the player's side):
        each read in its new zone, then no longer in its old one, as a reader reports a move."""
        uids = self.from_pool(amount or 0) if src is None else self.pick(src, amount)
        lift_first = self.hand.lift_first
        for uid in uids:
            if src is not None:
                self.chips[src].remove(uid)
                if lift_first:
                    yield self.tag(src, uid, False, None, chip=True)
            if dst is not None:
                self.chips.setdefault(dst, []).append(uid)
                yield self.tag(dst, uid, True, None, chip=True)
                if self.hand.twice:
                    yield self.tag(dst, uid, True, None, chip=True)
            if src is not None and not lift_first:
                yield self.tag(src, uid, False, None, chip=True)
            if dst is None:
                self.pool[self.values[uid]].append(uid)

    # ---- steps ------------------------------------------------------------------------

    def step(self, line: str) -> Iterator[ToSend]:
        words = line.split()
        name, args = words[0], words[1:]
        hand = self.hand
        if name == "seats":
            for number in args:
                yield self.event(hand.sensors, "seat", seat=int(number), occupied=True)
        elif name == "button":
            yield self.event(hand.sensors, "button", seat=int(args[0]))
        elif name == "shuffled":
            self.used = set()
            yield self.event(
                hand.shuffler, "shuffle_complete", deck=args[0], count=52, ok=True, missing=[], duplicates=[]
            )
        elif name == "key":
            key_seat = int(args[1]) if len(args) > 1 else None
            yield self.event(hand.keypad, "key", key=args[0], seat=key_seat)
        elif name == "deck":
            self.deck = args[0]
        elif name == "deal":
            for spec in args:
                number, _, code = spec.partition("=")
                yield self.place(f"seat:{number}", self.card(code or None), "down")
        elif name == "fold":
            zone = f"seat:{args[0]}"
            for uid in list(self.cards.get(zone, [])):
                yield self.place("muck", uid, "down")
                yield self.leave(zone, uid)
        elif name == "muck":  # one hole card to the muck: ``muck 3#0``
            number, _, index = args[0].partition("#")
            zone = f"seat:{number}"
            uid = self.cards[zone][int(index or 0)]
            yield self.place("muck", uid, "down")
            yield self.leave(zone, uid)
        elif name == "show":
            for number in args:
                for uid in self.cards.get(f"seat:{number}", []):
                    yield self.tag(f"seat:{number}", uid, True, "up", chip=False)
        elif name == "burn":
            yield self.place("burn", self.card(None), "down")
        elif name == "board":
            for code in args:
                yield self.place("board", self.card(code), "up")
        elif name == "stack":  # chips for each amount listed, into the seat's stack zone
            for piece in args[1:]:
                yield from self.move(None, f"stack:{args[0]}", int(piece))
        elif name == "bet":
            stack = f"stack:{args[0]}"
            src = stack if hand.from_stacks and self.chips.get(stack) else None
            yield from self.move(src, f"bet:{args[0]}", int(args[1]))
        elif name == "sweep":
            for zone in sorted(z for z in self.chips if z.startswith("bet:")):
                yield from self.move(zone, "pot", None)
        elif name == "return":
            back = f"stack:{args[0]}" if hand.from_stacks else None
            yield from self.move(f"bet:{args[0]}", back, int(args[1]))
        elif name == "push":
            to = f"{hand.push_to}:{args[0]}"
            yield from self.move("pot", to, None if args[1] == "all" else int(args[1]))
        elif name == "rake":
            yield from self.move("pot", "rake", int(args[0]))
        elif name == "move":
            src = None if args[0] == "-" else args[0]
            dst = None if args[1] == "-" else args[1]
            yield from self.move(src, dst, int(args[2]))
        elif name in ("foreign", "unforeign"):
            yield self.tag(args[0], args[1], name == "foreign", None, chip=True)
        elif name == "action":
            amount = int(args[2]) if len(args) > 2 else 0
            payload = {
                "v": 1,
                "ts": self.stamp(),
                "type": "action",
                "seat": int(args[0]),
                "action": args[1],
                "amount": amount,
            }
            yield ToSend(f"{self.root}/input", payload)
        elif name == "collect":
            for zone in sorted(z for z in self.chips if z.startswith(("bet:", "stack:", "rake"))):
                yield from self.move(zone, None, None)
        elif name == "clear":
            for zone in sorted(self.cards):
                for uid in list(self.cards[zone]):
                    yield self.leave(zone, uid)
        elif name == "pause":
            self.clock += float(args[0])
        else:
            raise ValueError(f"{hand.name}: unknown step {line!r}")

    def messages(self) -> Iterator[ToSend]:
        lines = [line.split(" #", 1)[0].strip() for line in self.hand.steps.splitlines()]
        lines = [line for line in lines if line and not line.startswith("#")]
        self._named = {
            w.partition("=")[2] for line in lines if line.startswith("deal") for w in line.split()[1:]
        }
        self._named |= {w for line in lines if line.startswith("board") for w in line.split()[1:]}
        for line in lines:
            self.clock += round(self.pace.uniform(0.2, 1.0), 3)  # the dealer's and players' pace
            yield from self.step(line)


# ---- the service ------------------------------------------------------------------------


def write_config(directory: Path, broker_url: str, table: str, hand: Hand) -> Path:
    """``[table]``, ``[mqtt]``, ``[decks]``, ``[stakes]`` and (with chips) ``[chips]``."""
    text = (
        f'[table]\nid = "{table}"\nseats = 10\nprofile = "{hand.profile}"\n'
        f'odd_chip = "{hand.odd_chip}"\n\n'
        f'[mqtt]\nurl = "{broker_url}"\nroot = "holdem"\n\n'
        f'[decks]\nregistry = "{EXAMPLE_REGISTRY}"\n\n'
        f'[stakes]\nstructure = "{hand.structure}"\nsmall_blind = {hand.small_blind}\n'
        f"big_blind = {hand.big_blind}\nante = {hand.ante}\nrake_percent = {hand.rake_percent}\n"
        f"rake_cap = {hand.rake_cap}\n"
    )
    if hand.chips:
        registry = directory / "chips.csv"
        rows = ["uid,value", *(f"{uid},{value}" for uid, value in chip_values().items())]
        registry.write_text("\n".join(rows) + "\n", encoding="utf-8")
        text += '\n[chips]\nregistry = "chips.csv"\n'
    path = directory / f"{table}.toml"
    path.write_text(text, encoding="utf-8")
    return path


class HandTester(Tester):
    """The harness's MQTT tester, also reading the ``hands`` topic."""

    def __init__(self, port: int, table: str) -> None:
        super().__init__(port, table)
        self.hands: list[dict[str, Any]] = []

    async def __aenter__(self) -> HandTester:
        await super().__aenter__()
        await self.client.subscribe(f"{self.root}/hands", qos=1)
        return self

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        async for message in self.client.messages:
            assert isinstance(message.payload, bytes)
            data = json.loads(message.payload)
            topic = str(message.topic)
            self.last_message = loop.time()
            if topic.endswith("/hands"):
                self.hands.append(data)
            elif topic.endswith("/alerts"):
                self.alerts.append(data)
            elif topic.endswith("/state"):
                self.states.append(data)
            else:
                self.statuses.append(data["state"])
            self.changed.set()


@dataclass
class Played:
    """What the service published for one hand."""

    alerts: list[dict[str, Any]]
    hands: list[dict[str, Any]]
    states: list[dict[str, Any]]
    log: str

    def lines(self) -> list[str]:
        out = []
        for alert in self.alerts:
            seat = "-" if alert.get("seat") is None else str(alert["seat"])
            out.append(f"{alert['code']} {seat} {alert['severity']} {alert['status']}")
        return out


async def play_hand(hand: Hand, table: str, port: int, config: Path) -> Played:
    service = ServiceProcess(config, config.with_suffix(".log"))
    service.start()
    try:
        async with HandTester(port, table) as tester:
            assert await tester.until(lambda: "online" in tester.statuses, STARTUP_S), "never online"
            start = datetime.now(UTC)
            for out in HandTable(hand, tester.root, start).messages():
                await tester.client.publish(out.topic, json.dumps(out.payload), qos=1)
            await tester.until(
                lambda: len(tester.hands) >= hand.hands and len(tester.alerts) >= len(hand.expect), WAIT_S
            )
            await tester.settle(len(hand.expect))
    finally:
        await asyncio.to_thread(service.stop)
    return Played(tester.alerts, tester.hands, tester.states, service.log)


def play_all(hands: dict[str, Hand], port: int, directory: Path, parallel: int = 4) -> dict[str, Played]:
    """Every hand against its own service and table id, ``parallel`` at a time."""
    configs: dict[str, Path] = {}
    for table, hand in hands.items():
        (directory / table).mkdir(parents=True)
        configs[table] = write_config(directory / table, f"mqtt://127.0.0.1:{port}", table, hand)

    async def main() -> dict[str, Played]:
        gate = asyncio.Semaphore(parallel)

        async def one(table: str, hand: Hand) -> tuple[str, Played]:
            async with gate:
                return table, await play_hand(hand, table, port, configs[table])

        return dict(await asyncio.gather(*(one(t, h) for t, h in hands.items())))

    return asyncio.run(main())
