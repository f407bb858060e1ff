"""A tiny table script: dealer steps as text, rendered into the contract messages devices send.

One step per line, for example::

    sit 1 2 3 4        # seats occupied (seat sensor)
    button 1           # the dealer button sensor
    shuffle A          # shuffle_complete for deck A (``shuffle A fail count=51 missing=Ah``)
    blinds             # small and big blind posted for the current button
    new_hand           # keypad keys: new_hand, round, all_in, ack, misdeal, exposed 3, declare 3
    deal all           # two rounds, one card at a time, from the first seat left of the button
    deal 2 3:up 4=Ah   # one card each: face up, or a named card of the deck in use
    burn / flop / turn / river / board [=Ah] [up]   # ``burn again``: the card last taken back
    again seat:3       # the card last taken off the table comes back to a zone
    tag bet:2 E0FF01 on   # a tag of no registry read in a zone (``off``: no longer read)
    fold 3             # the seat's cards go to the muck
    move seat:3 burn   # a card moves: present in the new zone, then absent from the old one
    take board all     # cards leave the table (back to the stub)
    clear              # the hand is over: every card leaves the table
    action 3 bet 20    # an action feed input
    dealer B-17        # a dealer input: the dealer's badge (``level_start``: the level clock)
    input last_hands   # a key as an input (not the keypad): ``input new_hand``
    status rfid-1 offline 2 / fault shuffler jam / gap rfid-1 3 / bad rfid-1 {"x": 1}
    dup / repeat / crosstalk seat:3 seat:4 / flap seat:3   # reader noise
    show 3 4           # players table their hole cards face up
    wait 3             # 3 seconds pass (each message is otherwise 50 ms after the last)

Chips (with a chip registry, ``Table(chips=...)``): chips come from the player's side (off the
table) in the largest denominations that make the amount, and move like cards (present in the
new zone, then absent from the old one)::

    bet 3 25           # chips worth 25 into seat 3's betting area (``post`` is the same)
    sweep              # every betting area into the pot
    return 3 10        # chips worth 10 from seat 3's betting area back to the player (off the table)
    push 3 120         # chips worth 120 from the pot to seat 3's betting area
    rake 4             # chips worth 4 from the pot to the rake
    chips bet:3 pot 25 # chips worth 25 from one chip zone to another (``-`` is off the table)
    collect            # players take what lies in the betting areas, the house the rake
    return 3 10 late   # (``late`` after a move off the table: its absences wait for the next
    absences           #  ``absences``, as a reader reports a tag taken away only after its
                       #  sweeps without it, seconds later)

Card references (``ref``): ``seat:3`` (last card at seat 3), ``seat:3#0`` (its first),
``board`` / ``board#2``, ``burn``, ``muck``, ``aside``, or a card code of the deck in use.

:class:`Table` keeps track of where every card is so each step becomes the exact tag events a
reader would publish; it is pure (the deck order comes from a seeded ``random.Random``). Random
legal hands come from the virtual dealer (:mod:`testing.sessions`), not from this language.

Over the project's 450-line guide (test tooling, not production): it is the one interpreter of
this little language, a method per verb, and the language reads best defined in one place.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final, Literal, TypeAlias

from config.chips import ChipRegistry
from config.layout import standard_antennas
from config.registry import DeckRegistry
from contract.cards import ALL_CARDS, seat_zone
from contract.models import (
    KEY_NAMES,
    ActionInput,
    BlindEvent,
    ButtonEvent,
    DealerBadgeInput,
    FaultEvent,
    KeyEvent,
    KeyInput,
    LevelStartInput,
    SeatEvent,
    ShuffleCompleteEvent,
    ShufflingEvent,
    Status,
    TagEvent,
    WireModel,
)
from contract.topics import Topics

MessageKind: TypeAlias = Literal["event", "status", "input", "raw"]
READER: Final = "rfid-1"
SHUFFLER: Final = "shuffler"
SENSORS: Final = "sensors"
START: Final = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
KEY_ALIASES: Final = {"round": "round_complete", "declare": "declare_board"}
#: The antenna a zone's tags are reported on (the first one covering it, standard layout).
ANTENNA_OF: Final[dict[str, int]] = {
    zone: antenna for antenna, zone in sorted(standard_antennas(10).items(), reverse=True)
}
#: The antenna of each chip zone (standard layout with chip antennas).
CHIP_ANTENNA_OF: Final[dict[str, int]] = {
    zone: antenna for antenna, zone in standard_antennas(10, chips=True).items()
}
#: The zones off the seats, where the script keeps its cards.
TABLE_ZONES: Final = ("board", "burn", "muck", "aside")


class ScriptError(ValueError):
    """A script line that cannot be rendered; the message names the line."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message a device or the dealer console would publish.

    ``kind``: ``event`` (``dev/{device}/event``), ``status`` (``dev/{device}/status``), ``input``
    (``input``, device None) or ``raw`` (a malformed payload text for ``dev/{device}/event``).
    """

    kind: MessageKind
    device: str | None
    payload: WireModel | str

    def seq(self) -> int:
        """The ``seq`` of an event (0 for any other message)."""
        return getattr(self.payload, "seq", 0) if self.kind == "event" else 0

    def wire(self, topics: Topics, device: str = "") -> tuple[str, bytes]:
        """(topic, payload) as published at the table of ``topics`` (``device``: the id of a
        message that names none)."""
        payload = self.payload
        data = payload.encode() if isinstance(payload, str) else payload.to_json()
        if self.kind == "input":
            return topics.input, data
        if self.kind == "status":
            return topics.device_status(self.device or device), data
        return topics.device_event(self.device or device), data


@dataclass
class Table:
    """Where every card is, and the next sequence number of every device."""

    registry: DeckRegistry
    table_seats: int = 9
    seed: int = 0
    players: set[int] = field(default_factory=set)
    button: int | None = None
    deck: str = ""
    stubs: dict[str, list[str]] = field(default_factory=dict)
    shuffles: dict[str, int] = field(default_factory=dict)
    seats: dict[int, list[str]] = field(default_factory=dict)  # seat -> uids
    zones: dict[str, list[str]] = field(default_factory=dict)  # board/burn/muck/aside -> uids
    seq: dict[str, int] = field(default_factory=dict)
    sessions: dict[str, int] = field(default_factory=dict)
    clock: int = 0
    last_tag: TagEvent | None = None
    last_taken: str | None = None
    out: list[Message] = field(default_factory=list)
    chips: ChipRegistry | None = None
    chip_zones: dict[str, list[str]] = field(default_factory=dict)  # chip zone -> chip uids
    chip_pool: dict[int, list[str]] = field(default_factory=dict)  # value -> chips off the table
    #: Chips taken off the table whose absence the reader has not reported yet: (uid, zone).
    unreported: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        decks = sorted(self.registry.decks)
        if not self.deck:
            self.deck = decks[0]
        for deck in decks:
            self._reshuffle(deck)
        for zone in TABLE_ZONES:
            self.zones[zone] = []
        if self.chips is not None:
            for uid, value in sorted(self.chips.by_uid.items()):
                self.chip_pool.setdefault(value, []).append(uid)

    # -- helpers ---------------------------------------------------------------------------

    def _reshuffle(self, deck: str) -> None:
        count = self.shuffles.get(deck, 0) + 1
        self.shuffles[deck] = count
        order = list(ALL_CARDS)
        random.Random(f"{self.seed}-{deck}-{count}").shuffle(order)
        on_table = self._on_table()
        self.stubs[deck] = [c for c in order if self.registry.uid_of(deck, c) not in on_table]

    def _on_table(self) -> set[str]:
        uids = {u for cards in self.seats.values() for u in cards}
        uids.update(u for cards in self.zones.values() for u in cards)
        return uids

    def _ts(self) -> datetime:
        self.clock += 1
        return START + timedelta(milliseconds=50 * self.clock)

    def _next_seq(self, device: str) -> int:
        self.seq[device] = self.seq.get(device, 0) + 1
        return self.seq[device]

    def _event(self, device: str, event_type: type[WireModel], **fields: object) -> None:
        event = event_type(seq=self._next_seq(device), ts=self._ts(), **fields)
        if isinstance(event, TagEvent):
            self.last_tag = event
        self.out.append(Message("event", device, event))

    def _tag(self, uid: str, zone: str, present: bool, face_up: bool = False) -> None:
        antenna = ANTENNA_OF.get(zone) or CHIP_ANTENNA_OF.get(zone) or int(zone.split(":")[1])
        face = "up" if face_up else ("down" if present else None)
        self._event(READER, TagEvent, antenna=antenna, zone=zone, uid=uid, present=present, face=face)

    def _draw(self, named: str | None) -> str:
        """The UID of the next card of the deck in use (or of a named card, ``B:Ah`` another deck)."""
        deck = self.deck
        if named:
            if ":" in named:
                deck, named = named.split(":", 1)
            if named.startswith("uid"):
                return named[3:]
            try:
                uid = self.registry.uid_of(deck, named)
            except KeyError:
                raise ScriptError(f"card {named!r} is not in deck {deck!r}") from None
            stub = self.stubs.get(deck, [])
            if named in stub:
                stub.remove(named)
            return uid
        stub = self.stubs[deck]
        if not stub:
            raise ScriptError(f"deck {deck} has no cards left")
        return self.registry.uid_of(deck, stub.pop(0))

    def _place(self, uid: str, zone: str, face_up: bool = False) -> None:
        if zone.startswith("seat:"):
            self.seats.setdefault(int(zone[5:]), []).append(uid)
        else:
            self.zones[zone].append(uid)
        self._tag(uid, zone, True, face_up)

    def _remove(self, uid: str, zone: str) -> None:
        cards = self.seats.get(int(zone[5:]), []) if zone.startswith("seat:") else self.zones[zone]
        if uid in cards:
            cards.remove(uid)
        self._tag(uid, zone, False)

    def resolve(self, ref: str) -> tuple[str, str]:
        """A card reference -> (uid, zone it is in)."""
        name, _, index = ref.partition("#")
        if name.startswith("seat:"):
            cards = self.seats.get(int(name[5:]), [])
        elif name in self.zones:
            cards = self.zones[name]
        else:
            uid = self.registry.uid_of(self.deck, name)
            for zone_name, zone_cards in [
                *((seat_zone(s), c) for s, c in self.seats.items()),
                *self.zones.items(),
            ]:
                if uid in zone_cards:
                    return uid, zone_name
            raise ScriptError(f"card {ref} is not on the table")
        if not cards:
            raise ScriptError(f"no card in {name}")
        return cards[int(index) if index else -1], name

    def order(self) -> list[int]:
        """Players in dealing order: first seat left of the button, the button last."""
        button = self.button or 0
        return sorted(self.players, key=lambda s: (s - button - 1) % self.table_seats)

    def blind_seats(self) -> tuple[int, int]:
        order = self.order()
        if len(order) == 2:
            return order[1], order[0]  # heads-up: the button posts the small blind
        return order[0], order[1]

    # -- steps -----------------------------------------------------------------------------

    def run(self, line: str) -> list[Message]:
        """Render one script line; return the messages it produced."""
        start = len(self.out)
        text = line.strip()
        if text.startswith("#"):
            text = ""
        elif not text.startswith("bad "):
            text = text.split(" #", 1)[0]  # a comment; ``seat:3#0`` is a card reference
        words = text.split()
        if words:
            try:
                self._step(words)
            except (IndexError, ValueError, KeyError) as error:
                if isinstance(error, ScriptError):
                    raise ScriptError(f"{line!r}: {error}") from None
                raise ScriptError(f"{line!r}: {error!r}") from None
        return self.out[start:]

    def run_all(self, lines: str | list[str]) -> list[Message]:
        if isinstance(lines, str):
            lines = lines.splitlines()
        start = len(self.out)
        for line in lines:
            self.run(line)
        return self.out[start:]

    def _step(self, words: list[str]) -> None:
        verb, args = words[0], words[1:]
        if verb in ("sit", "leave"):
            for seat in args:
                self.players.add(int(seat)) if verb == "sit" else self.players.discard(int(seat))
                self._event(SENSORS, SeatEvent, seat=int(seat), occupied=verb == "sit")
        elif verb == "button":
            self.button = None if args[0] == "none" else int(args[0])
            self._event(SENSORS, ButtonEvent, seat=self.button)
        elif verb == "next_button":
            order = self.order()
            self.button = order[0]
            self._event(SENSORS, ButtonEvent, seat=self.button)
        elif verb == "blind":
            present = not (len(args) > 1 and args[1] == "off")
            self._event(SENSORS, BlindEvent, seat=int(args[0]), present=present)
        elif verb == "blinds":
            for blind_seat in self.blind_seats():
                self._event(SENSORS, BlindEvent, seat=blind_seat, present=True)
        elif verb == "shuffle":
            self._shuffle(args)
        elif verb == "use":
            self.deck = args[0]
        elif verb in KEY_NAMES or verb in KEY_ALIASES or verb == "key":
            if verb == "key":
                verb, args = args[0], args[1:]
            key = KEY_ALIASES.get(verb, verb)
            key_seat = int(args[0]) if args else None
            self._event(SENSORS, KeyEvent, key=key, seat=key_seat)
        elif verb == "deal":
            self._deal(args)
        elif verb in ("burn", "board"):
            if args and args[0] == "again":  # the card last taken off the table comes back
                if self.last_taken is None:
                    raise ScriptError("no card was taken off the table")
                self._place(self.last_taken, verb)
                return
            named = next((a[1:] for a in args if a.startswith("=")), None)
            self._place(self._draw(named), verb, face_up="up" in args)
        elif verb in ("flop", "turn", "river"):
            count = 3 if verb == "flop" else 1
            names = [a[1:] for a in args if a.startswith("=")]
            for i in range(count):
                self._place(self._draw(names[i] if i < len(names) else None), "board")
        elif verb in ("fold", "muck"):
            for uid in list(self.seats.get(int(args[0]), [])):
                self._place(uid, "muck")
                self._remove(uid, seat_zone(int(args[0])))
        elif verb == "move":
            uid, zone = self.resolve(args[0])
            self._place(uid, args[1], face_up=len(args) > 2 and args[2] == "up")
            self._remove(uid, zone)
        elif verb == "place":  # a card from the stub to a zone (``place aside =Ah``)
            named = args[1][1:] if len(args) > 1 and args[1].startswith("=") else None
            self._place(self._draw(named), args[0])
        elif verb == "again":  # the card last taken off the table comes back to a zone
            if self.last_taken is None:
                raise ScriptError("no card was taken off the table")
            self._place(self.last_taken, args[0])
        elif verb == "tag":  # a tag of no registry in a zone: ``tag bet:2 E0FFFF0001 on|off``
            self._tag(args[1], args[0], args[2] == "on")
        elif verb == "take":
            self._take(args)
        elif verb == "clear":
            for seat_no in sorted(self.seats):
                for uid in list(self.seats[seat_no]):
                    self._remove(uid, seat_zone(seat_no))
            for zone in TABLE_ZONES:
                for uid in list(self.zones[zone]):
                    self._remove(uid, zone)
        elif verb == "action":
            amount = int(args[2]) if len(args) > 2 else 0
            self.out.append(
                Message(
                    "input",
                    None,
                    ActionInput.model_validate(
                        {"ts": self._ts(), "seat": int(args[0]), "action": args[1], "amount": amount}
                    ),
                )
            )
        elif verb == "dealer":
            self.out.append(Message("input", None, DealerBadgeInput(ts=self._ts(), dealer=args[0])))
        elif verb == "level_start":
            self.out.append(Message("input", None, LevelStartInput(ts=self._ts())))
        elif verb == "input":
            key = KEY_ALIASES.get(args[0], args[0])
            key_seat = int(args[1]) if len(args) > 1 else None
            self.out.append(
                Message(
                    "input", None, KeyInput.model_validate({"ts": self._ts(), "key": key, "seat": key_seat})
                )
            )
        elif verb == "status":
            device, state = args[0], args[1]
            session = int(args[2]) if len(args) > 2 else self.sessions.get(device, 1)
            if session != self.sessions.get(device):
                self.seq[device] = 0
            self.sessions[device] = session
            self.out.append(
                Message(
                    "status",
                    device,
                    Status.model_validate({"state": state, "ts": self._ts(), "session": session}),
                )
            )
        elif verb == "fault":
            self._event(args[0], FaultEvent, code=args[1], text=" ".join(args[2:]))
        elif verb == "gap":
            self.seq[args[0]] = self.seq.get(args[0], 0) + int(args[1])
        elif verb == "bad":
            self.out.append(Message("raw", args[0], " ".join(args[1:])))
        elif verb in ("dup", "repeat"):
            self._noise(verb)
        elif verb == "crosstalk":
            uid, _ = self.resolve(args[0])
            self._tag(uid, args[1], True)
            self._tag(uid, args[1], False)
        elif verb == "flap":
            uid, zone = self.resolve(args[0])
            self._tag(uid, zone, False)
            self._tag(uid, zone, True)
        elif verb in ("bet", "post"):
            self._chips_move(None, f"bet:{int(args[0])}", int(args[1]))
        elif verb == "sweep":
            for zone in sorted(z for z in self.chip_zones if z.startswith("bet:")):
                self._chips_move(zone, "pot", None)
        elif verb == "return":
            self._chips_move(f"bet:{int(args[0])}", None, int(args[1]), late="late" in args)
        elif verb == "push":
            self._chips_move("pot", f"bet:{int(args[0])}", int(args[1]) if len(args) > 1 else None)
        elif verb == "rake":
            self._chips_move("pot", "rake", int(args[0]))
        elif verb == "chips":
            late = "late" in args
            args = [a for a in args if a != "late"]
            src = None if args[0] == "-" else args[0]
            dst = None if args[1] == "-" else args[1]
            self._chips_move(src, dst, int(args[2]) if len(args) > 2 else None, late=late)
        elif verb == "absences":
            for uid, zone in self.unreported:
                self._tag(uid, zone, False)
            self.unreported = []
        elif verb == "collect":
            for zone in sorted(z for z in self.chip_zones if z.startswith(("bet:", "rake", "stack:"))):
                self._chips_move(zone, None, None)
        elif verb == "wait":
            self.clock += round(float(args[0]) * 20)  # the clock counts 50 ms steps
        elif verb == "show":
            # players table their hole cards face up (showdown, all-in run-out)
            for seat in args:
                for uid in self.seats.get(int(seat), []):
                    self._tag(uid, seat_zone(int(seat)), True, face_up=True)
        else:
            raise ScriptError(f"unknown step {verb!r}")

    def _chips_move(
        self, src: str | None, dst: str | None, amount: int | None, *, late: bool = False
    ) -> None:
        """Chips worth ``amount`` (None: all of ``src``) from ``src`` to ``dst`` (None: the
        player's side, off the table; ``late``: their absence reported at ``absences``)."""
        if self.chips is None:
            raise ScriptError("chip steps need a chip registry")
        if src is None:
            if amount is None:
                raise ScriptError("an amount is needed for chips from off the table")
            uids = self._chips_from_pool(amount)
        else:
            held = self.chip_zones.get(src, [])
            uids = list(held) if amount is None else self._pick(held, amount, src)
        if late and (src is None or dst is not None):
            raise ScriptError("only chips taken off the table are reported absent late")
        self.move_chips(uids, src, dst, late=late)

    def take_chips(self, amount: int) -> list[str]:
        """Chips worth ``amount`` from the player's side (off the table), largest first; they
        stay off the table until :meth:`move_chips` puts them somewhere."""
        return self._chips_from_pool(amount)

    def move_chips(self, uids: list[str], src: str | None, dst: str | None, *, late: bool = False) -> None:
        """These chips from ``src`` to ``dst`` (None: off the table), each read present in the
        new zone, then absent from the old one (``late``: at the next ``absences`` step)."""
        assert self.chips is not None
        if src is not None:
            held = self.chip_zones.get(src, [])
            for uid in uids:
                held.remove(uid)
        for uid in uids:
            if dst is not None:
                self.chip_zones.setdefault(dst, []).append(uid)
                self._tag(uid, dst, True)
            if src is not None and late:
                self.unreported.append((uid, src))
            elif src is not None:
                self._tag(uid, src, False)
            if dst is None:
                self.chip_pool.setdefault(self.chips.by_uid[uid], []).insert(0, uid)
        if src is not None and not self.chip_zones.get(src):
            self.chip_zones.pop(src, None)

    def _chips_from_pool(self, amount: int) -> list[str]:
        assert self.chips is not None
        uids: list[str] = []
        left = amount
        for value in sorted(self.chip_pool, reverse=True):
            pool = self.chip_pool[value]
            while left >= value and pool:
                uids.append(pool.pop())
                left -= value
        if left:
            raise ScriptError(f"not enough chips off the table to make {amount}")
        return uids

    def _pick(self, held: list[str], amount: int, zone: str) -> list[str]:
        """Chips of ``held`` worth exactly ``amount``, largest first."""
        assert self.chips is not None
        values = self.chips.by_uid
        picked: list[str] = []
        left = amount
        for uid in sorted(held, key=lambda u: -values[u]):
            if values[uid] <= left:
                picked.append(uid)
                left -= values[uid]
        if left:
            raise ScriptError(f"the chips in {zone} cannot make exactly {amount}")
        return picked

    def _shuffle(self, args: list[str]) -> None:
        deck = args[0] if args and args[0] not in ("fail", "none") and "=" not in args[0] else None
        options = dict(a.split("=", 1) for a in args if "=" in a)
        ok = "fail" not in args
        if deck is not None:
            self._reshuffle(deck)
        self._event(SHUFFLER, ShufflingEvent, deck=deck)
        count = int(options.get("count", 52 if ok else 51))
        missing = [c for c in options.get("missing", "").split(",") if c]
        duplicates = [c for c in options.get("duplicates", "").split(",") if c]
        self._event(
            SHUFFLER,
            ShuffleCompleteEvent,
            deck=deck,
            count=count,
            ok=ok,
            missing=missing,
            duplicates=duplicates,
        )

    def _deal(self, args: list[str]) -> None:
        if args and args[0] in ("all", "round"):
            seats = self.order() * (2 if args[0] == "all" else 1)
            for seat in seats:
                self._place(self._draw(None), seat_zone(seat))
            return
        for arg in args:
            face_up = arg.endswith(":up")
            seat_text, _, named = arg.removesuffix(":up").partition("=")
            self._place(self._draw(named or None), seat_zone(int(seat_text)), face_up)

    def _take(self, args: list[str]) -> None:
        if len(args) > 1 and args[1] == "all":
            zone = args[0]
            cards = self.seats.get(int(zone[5:]), []) if zone.startswith("seat:") else self.zones[zone]
            for uid in list(cards):
                self._remove(uid, args[0])
            return
        uid, zone = self.resolve(args[0])
        self._remove(uid, zone)
        self.last_taken = uid

    def _noise(self, verb: str) -> None:
        last = self.last_tag
        if last is None:
            raise ScriptError("no tag event to repeat")
        if verb == "repeat":  # the same message delivered twice (same seq)
            self.out.append(Message("event", READER, last))
        else:  # the reader reports the same tag again (new seq)
            self._event(
                READER,
                TagEvent,
                antenna=last.antenna,
                zone=last.zone,
                uid=last.uid,
                present=last.present,
                face=last.face,
            )


def setup_lines(players: list[int], button: int, decks: list[str]) -> list[str]:
    """The usual start of a scenario: seats, decks shuffled, button, blinds."""
    lines = ["sit " + " ".join(str(p) for p in players)]
    lines += [f"shuffle {d}" for d in decks]
    lines += [f"button {button}", "blinds"]
    return lines
