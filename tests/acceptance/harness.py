"""An outside tester's harness: hand-written contract JSON, a plain MQTT client, ``tablectl run``.

Written from the contract (``docs/contract.md``) and the irregularity catalogue only: no
project models, no engine script. A scenario is a few lines of a tiny table language, played by
"devices" with ids of the tester's own, and the expected alert changes as
``"code seat severity status"`` lines (``-`` for no seat).

Table language, one step per line (``#`` starts a comment):

- ``seats 1 3 5`` occupancy sensor events; ``button 1`` (``button -`` lifted); ``blinds 3 5``
- ``shuffled A`` a passed deck check; ``shuffle_failed A`` a failed one (count 51, one missing)
- ``key NAME [SEAT]`` a keypad event; ``input NAME [SEAT]`` the same on the input topic
- ``deal 3 5 3:up 5:down 3:null 5=Kh`` the next card of the deck in play (or the card named) to
  each seat, face as given, else the scenario's face style; ``deck B`` switches the deck drawn from
- ``burn`` the next card to the burn; ``board N`` the next N cards face up to the board,
  ``board As Ks`` the cards named; ``remove ZONE[#I]`` a card (all by default) taken off the
  table; ``return ZONE[#I]`` the same, the card back in the stub to be dealt again
- ``again ZONE`` the card last removed lands in a zone; ``restack A`` deck A's cards are dealt
  again from the first (a hand reshuffle with no shuffler event)
- ``exposed SEAT#I`` the I-th card of the seat reported again face up
- ``move ZONE#I ZONE`` a card moves (present in the new zone, then absent from the old one)
- ``muck SEAT`` both hole cards of a seat go to the muck (a fold)
- ``foreign ZONE B:Kh`` a card of another deck lands in a zone; ``foreign ZONE uid:HEX`` a tag
- ``status DEVICE STATE`` a retained device status (``online`` again: a new session, seq from 1);
  ``blip DEVICE`` offline and online again in the same session; ``fault DEVICE CODE`` a fault event
- ``sweep`` every card on the table reported present again; ``lift ZONE#I`` a card unseen and
  seen again; ``ghost ZONE#I ZONE`` a card also read by another antenna for a moment (crosstalk)
- ``show 3 5`` players table their hole cards face up (showdown, all-in)
- ``echo ZONE#I ZONE`` / ``unecho ZONE#I ZONE`` crosstalk begins / ends; ``takeback ZONE#I ZONE``
  a card leaves its zone first and only then lands in the other one
- ``seq_gap DEVICE N`` the device's next N events are lost
- ``wait S`` S seconds pass on the devices' clocks (their ``ts``; nothing sleeps)
- ``forge DEVICE SEQ ZONE`` a forged tag event under the device's id with that seq (the next
  card to the zone), the device's own numbering unchanged; ``raw DEVICE TEXT`` the text itself
  as the payload of the device's event topic
- ``clear`` every card on the table leaves it
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiomqtt

from tests.conftest import EXAMPLE_REGISTRY
from tests.service.support import ServiceProcess

#: Antennas the tester's reader uses (any numbers will do: the zone is in the event).
ANTENNA = {"board": 20, "burn": 21, "muck": 22, "aside": 23}
QUIET_S = 0.4
WAIT_S = 8.0
STARTUP_S = 30.0


def read_decks(path: Path = EXAMPLE_REGISTRY) -> dict[str, list[tuple[str, str]]]:
    """Deck id -> [(uid, card)] in the registry's order."""
    decks: dict[str, list[tuple[str, str]]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            decks.setdefault(row["deck"], []).append((row["uid"], row["card"]))
    return decks


DECKS = read_decks()


def stamp(offset: float = 0.0) -> str:
    """Now (plus ``offset`` seconds) as the contract's RFC 3339 UTC time."""
    now = datetime.now(UTC) + timedelta(seconds=offset)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_config(directory: Path, broker_url: str, table: str, profile: str) -> Path:
    """A configuration with only [table], [mqtt] and [decks], as the acceptance tests use."""
    path = directory / f"{table}.toml"
    path.write_text(
        f'[table]\nid = "{table}"\nseats = 9\nprofile = "{profile}"\n\n'
        f'[mqtt]\nurl = "{broker_url}"\nroot = "holdem"\n\n'
        f'[decks]\nregistry = "{EXAMPLE_REGISTRY}"\n',
        encoding="utf-8",
    )
    return path


@dataclass
class Scenario:
    name: str
    steps: str
    expect: list[str]
    profile: str = "roberts"
    #: face of hole cards and burns when a step does not say: "null" or "down".
    face: str | None = None
    #: every present tag reported twice (a reader's repeated inventory)
    twice: bool = False
    reader: str = "reader"
    keypad: str = "keypad"
    sensors: str = "sensors"
    shuffler: str = "shuffler"
    #: a second reader for the board, burn, muck and aside antennas (None: one reader for all)
    table_reader: str | None = None
    #: face the reader reports for board cards ("up"; None for a reader that cannot tell)
    board_face: str | None = "up"
    #: the reader numbers its antennas from 0 (the contract only says "int")
    antenna_zero: bool = False
    #: publish at QoS 0 (a burst, nothing waits for the broker)
    qos: int = 1

    def __str__(self) -> str:
        return self.name


@dataclass
class ToSend:
    topic: str
    payload: dict[str, Any]
    retain: bool = False


@dataclass
class TableModel:
    """What the tester believes is on the table, to write the events a real table would cause."""

    scenario: Scenario
    root: str
    deck: str = "A"
    used: dict[str, set[str]] = field(default_factory=dict)
    zones: dict[str, list[str]] = field(default_factory=dict)
    seq: dict[str, int] = field(default_factory=dict)
    sessions: dict[str, int] = field(default_factory=dict)
    #: seconds the scenario's ``wait`` steps have added to the devices' clocks
    offset: float = 0.0

    # ---- messages ---------------------------------------------------------------------

    def event(self, device: str, kind: str, **fields: Any) -> ToSend:
        seq = self.seq.get(device, 0) + 1
        self.seq[device] = seq
        payload = {"v": 1, "seq": seq, "ts": stamp(self.offset), "type": kind, **fields}
        return ToSend(f"{self.root}/dev/{device}/event", payload)

    def tag(self, zone: str, uid: str, present: bool, face: str | None) -> Iterator[ToSend]:
        antenna = int(zone.split(":")[1]) if zone.startswith("seat:") else ANTENNA[zone]
        if self.scenario.antenna_zero:
            antenna = antenna - 1 if zone.startswith("seat:") else antenna - 10
        fields = {"antenna": antenna, "zone": zone, "uid": uid, "present": present, "face": face}
        reader = self.scenario.reader
        if self.scenario.table_reader is not None and not zone.startswith("seat:"):
            reader = self.scenario.table_reader
        yield self.event(reader, "tag", **fields)
        if present and self.scenario.twice:
            yield self.event(reader, "tag", **fields)

    def place(self, zone: str, uid: str, face: str | None) -> Iterator[ToSend]:
        self.zones.setdefault(zone, []).append(uid)
        yield from self.tag(zone, uid, True, face)

    last_removed: str = ""

    def __post_init__(self) -> None:
        # Cards a step names are kept out of the unnamed draws.
        named = re.findall(r"=([2-9TJQKA][shdc])\b", self.scenario.steps)
        named += re.findall(r"^\s*board ((?:[2-9TJQKA][shdc]\s*)+)$", self.scenario.steps, re.M)
        self.reserved = {card for group in named for card in group.split()}

    def draw(self, card: str | None = None) -> str:
        """The next unused card of the deck in play (registry order), or the card named."""
        used = self.used.setdefault(self.deck, set())
        uid = next(
            u
            for u, c in DECKS[self.deck]
            if u not in used and (c == card if card else c not in self.reserved)
        )
        used.add(uid)
        return uid

    def hidden_face(self, given: str | None = None) -> str | None:
        face = given if given is not None else self.scenario.face
        return None if face in (None, "null") else face

    def card_at(self, spec: str) -> tuple[str, str]:
        zone, _, index = spec.partition("#")
        zone = zone if not zone.isdigit() else f"seat:{zone}"
        return zone, self.zones[zone][int(index or 0)]

    # ---- steps ------------------------------------------------------------------------

    def step(self, line: str) -> Iterator[ToSend]:
        words = line.split()
        name, args = words[0], words[1:]
        sc = self.scenario
        seat: int | None
        face: str | None
        if name == "seats":
            for number in args:
                yield self.event(sc.sensors, "seat", seat=int(number), occupied=True)
        elif name == "leave":
            for number in args:
                yield self.event(sc.sensors, "seat", seat=int(number), occupied=False)
        elif name == "button":
            yield self.event(sc.sensors, "button", seat=None if args[0] == "-" else int(args[0]))
        elif name == "blinds":
            for number in args:
                yield self.event(sc.sensors, "blind", seat=int(number), present=True)
        elif name == "shuffled":
            self.used.pop(args[0], None)  # every card of that deck is back in it
            yield self.event(
                sc.shuffler,
                "shuffle_complete",
                deck=args[0],
                count=52,
                ok=True,
                missing=[],
                duplicates=[],
            )
        elif name == "shuffle_failed":
            yield self.event(
                sc.shuffler,
                "shuffle_complete",
                deck=args[0],
                count=51,
                ok=False,
                missing=["7h"],
                duplicates=[],
            )
        elif name == "key":
            seat = int(args[1]) if len(args) > 1 else None
            yield self.event(sc.keypad, "key", key=args[0], seat=seat)
        elif name == "input":
            seat = int(args[1]) if len(args) > 1 else None
            payload = {"v": 1, "ts": stamp(self.offset), "type": "key", "key": args[0], "seat": seat}
            yield ToSend(f"{self.root}/input", payload)
        elif name == "deck":
            self.deck = args[0]
        elif name == "deal":
            for spec in args:
                target, _, card = spec.partition("=")
                number, _, given = target.partition(":")
                uid = self.draw(card or None)
                yield from self.place(f"seat:{number}", uid, self.hidden_face(given or None))
        elif name == "burn":
            yield from self.place("burn", self.draw(), self.hidden_face())
        elif name == "board":
            named: list[str | None] = [None] * int(args[0]) if args[0].isdigit() else [*args]
            for code in named:
                yield from self.place("board", self.draw(code), self.scenario.board_face)
        elif name in ("remove", "return"):
            zone, _, which = args[0].partition("#")
            uids = self.zones.get(zone, [])
            for uid in list(uids) if which in ("", "all") else [uids[int(which)]]:
                uids.remove(uid)
                if name == "return":  # back in the stub: the next draws deal it again
                    self.used.get(self.deck, set()).discard(uid)
                self.last_removed = uid
                yield from self.tag(zone, uid, False, None)
        elif name == "again":  # the card last taken off the table lands in a zone
            face = self.scenario.board_face if args[0] == "board" else self.hidden_face()
            yield from self.place(args[0], self.last_removed, face)
        elif name == "restack":  # a hand reshuffle without the shuffler: same cards, same order
            self.used.pop(args[0], None)
        elif name == "exposed":
            zone, uid = self.card_at(args[0])
            yield from self.tag(zone, uid, True, "up")
        elif name == "move":
            zone, uid = self.card_at(args[0])
            target = args[1]
            face = self.scenario.board_face if target == "board" else self.hidden_face()
            yield from self.place(target, uid, face)
            self.zones[zone].remove(uid)
            yield from self.tag(zone, uid, False, None)
        elif name == "muck":
            zone = f"seat:{args[0]}"
            for uid in list(self.zones.get(zone, [])):
                yield from self.place("muck", uid, self.hidden_face())
                self.zones[zone].remove(uid)
                yield from self.tag(zone, uid, False, None)
        elif name == "foreign":
            zone = args[0]
            deck, _, what = args[1].partition(":")
            uid = what if deck == "uid" else next(u for u, c in DECKS[deck] if c == what)
            yield from self.place(zone, uid, "up" if zone == "board" else self.hidden_face())
        elif name == "status":
            device, state = args
            session = self.sessions.get(device, 1)
            if state == "online" and device in self.sessions:
                session += 1
                self.seq[device] = 0
            self.sessions[device] = session
            payload = {"state": state, "ts": stamp(self.offset), "session": session}
            yield ToSend(f"{self.root}/dev/{device}/status", payload, retain=True)
        elif name == "blip":  # offline and back within one session: seq goes on
            session = self.sessions.setdefault(args[0], 1)
            for state in ("offline", "online"):
                payload = {"state": state, "ts": stamp(self.offset), "session": session}
                yield ToSend(f"{self.root}/dev/{args[0]}/status", payload, retain=True)
        elif name == "fault":
            yield self.event(args[0], "fault", code=args[1], text=f"{args[1]} reported")
        elif name == "sweep":
            for zone, uids in self.zones.items():
                for uid in uids:
                    face = self.scenario.board_face if zone == "board" else self.hidden_face()
                    yield from self.tag(zone, uid, True, face)
        elif name == "lift":
            zone, uid = self.card_at(args[0])
            yield from self.tag(zone, uid, False, None)
            yield from self.tag(zone, uid, True, self.hidden_face())
        elif name == "ghost":
            zone, uid = self.card_at(args[0])
            yield from self.tag(args[1], uid, True, self.hidden_face())
            yield from self.tag(args[1], uid, False, None)
        elif name == "show":  # a player tables the hole cards face up
            for number in args:
                for uid in self.zones.get(f"seat:{number}", []):
                    yield from self.tag(f"seat:{number}", uid, True, "up")
        elif name == "echo":  # crosstalk left open: the other antenna lets go only later
            zone, uid = self.card_at(args[0])
            yield from self.tag(args[1], uid, True, self.hidden_face())
        elif name == "unecho":
            zone, uid = self.card_at(args[0])
            yield from self.tag(args[1], uid, False, None)
        elif name == "takeback":  # a card leaves its zone (back on the deck), then is placed again
            zone, uid = self.card_at(args[0])
            self.zones[zone].remove(uid)
            yield from self.tag(zone, uid, False, None)
            yield from self.place(args[1], uid, self.hidden_face())
        elif name == "forge":
            device, seq, zone = args[0], int(args[1]), args[2]
            fields = {"antenna": 1, "zone": zone, "uid": self.draw(), "present": True, "face": "down"}
            payload = {"v": 1, "seq": seq, "ts": stamp(self.offset), "type": "tag", **fields}
            yield ToSend(f"{self.root}/dev/{device}/event", payload)
        elif name == "raw":
            yield ToSend(f"{self.root}/dev/{args[0]}/event", {"raw": " ".join(args[1:])})
        elif name == "wait":
            self.offset += float(args[0])
        elif name == "seq_gap":
            self.seq[args[0]] = self.seq.get(args[0], 0) + int(args[1])
        elif name == "clear":
            for zone, uids in self.zones.items():
                for uid in uids:
                    yield from self.tag(zone, uid, False, None)
            self.zones.clear()
        else:
            raise ValueError(f"unknown step {line!r}")

    def messages(self) -> Iterator[ToSend]:
        for raw in self.scenario.steps.splitlines():
            line = _strip_comment(raw)
            if line:
                yield from self.step(line)


def _strip_comment(line: str) -> str:
    """Drop a trailing ``  # comment`` (a ``#`` right after a zone is a card index)."""
    head, sep, _ = line.partition(" #")
    return (head if sep else line).strip()


def alert_line(alert: dict[str, Any]) -> str:
    seat = "-" if alert.get("seat") is None else str(alert["seat"])
    return f"{alert['code']} {seat} {alert['severity']} {alert['status']}"


class Tester:
    """A plain MQTT client of the tester: publishes the table's events, records what comes back."""

    def __init__(self, port: int, table: str) -> None:
        self.root = f"holdem/{table}"
        self.client = aiomqtt.Client("127.0.0.1", port, identifier=f"acc-{os.getpid()}-{table}")
        self.alerts: list[dict[str, Any]] = []
        self.states: list[dict[str, Any]] = []
        self.statuses: list[str] = []
        self.last_message = 0.0
        self.changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Tester:
        await self.client.__aenter__()
        for suffix in ("alerts", "state", "controller/status"):
            await self.client.subscribe(f"{self.root}/{suffix}", qos=1)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self.client.__aexit__(None, None, None)

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        async for message in self.client.messages:
            assert isinstance(message.payload, bytes)
            data = json.loads(message.payload)
            topic = str(message.topic)
            self.last_message = loop.time()
            if topic.endswith("/alerts"):
                self.alerts.append(data)
            elif topic.endswith("/state"):
                self.states.append(data)
            else:
                self.statuses.append(data["state"])
            self.changed.set()

    async def until(self, condition: Callable[[], bool], within: float = WAIT_S) -> bool:
        """Wait (at most ``within`` s) for what the tester has received to meet ``condition``."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                while not condition():
                    self.changed.clear()
                    await self.changed.wait()
        return condition()

    async def online(self) -> None:
        # Start-up is not what is judged: six services starting at once on a loaded 2-core
        # machine (load average 10 and more) took 6 to 7 s to be online, close to WAIT_S; one
        # late start would fail the whole module.
        assert await self.until(lambda: "online" in self.statuses, STARTUP_S), "controller never online"

    async def play(self, messages: Iterator[ToSend], qos: int = 1) -> None:
        for out in messages:
            raw = out.payload.get("raw")
            data = raw if isinstance(raw, str) else json.dumps(out.payload)
            await self.client.publish(out.topic, data, qos=qos, retain=out.retain)

    async def settle(self, expect: int) -> None:
        """Wait for ``expect`` alert changes (or more), then for a quiet moment."""
        await self.until(lambda: len(self.alerts) >= expect)
        # Then quiet: QUIET_S without a message (every message restarts the wait).
        async with asyncio.timeout(WAIT_S):
            while True:
                self.changed.clear()
                try:
                    async with asyncio.timeout(QUIET_S):
                        await self.changed.wait()
                except TimeoutError:
                    return


@dataclass
class Outcome:
    """What a scenario's service published, and its log."""

    alerts: list[dict[str, Any]]
    states: list[dict[str, Any]]
    log: str

    def lines(self) -> list[str]:
        return [alert_line(a) for a in self.alerts]


async def run_scenario(scenario: Scenario, table: str, port: int, config: Path) -> Outcome:
    """Start ``tablectl run --config config`` for ``table``, play the scenario."""
    service = ServiceProcess(config, config.with_suffix(".log"))
    service.start()
    try:
        async with Tester(port, table) as tester:
            await tester.online()
            await tester.play(TableModel(scenario, tester.root).messages(), scenario.qos)
            await tester.settle(len(scenario.expect))
    finally:
        await asyncio.to_thread(service.stop)
    return Outcome(tester.alerts, tester.states, service.log)


def run_all(cases: dict[str, Scenario], port: int, directory: Path, parallel: int = 6) -> dict[str, Outcome]:
    """Every scenario against its own service and table id, ``parallel`` at a time."""

    configs: dict[str, Path] = {}
    for table, scenario in cases.items():
        # One directory per table: each service keeps its own journal (var/journal.jsonl).
        (directory / table).mkdir(parents=True)
        url = f"mqtt://127.0.0.1:{port}"
        configs[table] = write_config(directory / table, url, table, scenario.profile)

    async def main() -> dict[str, Outcome]:
        gate = asyncio.Semaphore(parallel)

        async def one(table: str, scenario: Scenario) -> tuple[str, Outcome]:
            async with gate:
                return table, await run_scenario(scenario, table, port, configs[table])

        done = await asyncio.gather(*(one(t, s) for t, s in cases.items()))
        return dict(done)

    return asyncio.run(main())
