"""Pydantic models of every payload in the table contract (``docs/contract.md``).

Readers ignore unknown fields (the contract may be extended compatibly); writers never emit fields
outside these models. Validation errors are raised as :class:`PayloadError`, which names the topic.

Longer than the project's 450-line guide on purpose: it is the one schema for the wire, in one
module that reads top to bottom like the contract (events, statuses, inputs, commands, alerts,
state, hands), each model a few lines.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Final, Literal, Self, TypeAlias, TypeVar

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from contract.cards import Card, Uid, Zone
from contract.text import bounded

SCHEMA_VERSION: Final = 1
_T = TypeVar("_T")

# Bounds of every field (docs/contract.md, "Bounds"): wide enough for any real device, so that
# hostile input is refused at the edge and nothing downstream grows without limit.
#: Sequence numbers and sessions: 2^53 - 1, the largest integer every JSON reader keeps exact.
MAX_SEQ: Final = 2**53 - 1
#: Chips in one action or result amount.
MAX_AMOUNT: Final = 2**53 - 1
#: Schema versions a reader accepts (``v``); now 1.
MAX_VERSION: Final = 255
#: Antenna numbers (a 16-bit multiplexer address).
MAX_ANTENNA: Final = 65535
#: Cards a shuffler can count (several decks at most), and list sizes of its deck check.
MAX_COUNT: Final = 1024
MAX_CARD_LIST: Final = 256
#: Text fields: deck ids, fault codes, free texts (fault texts, status details: cut, not
#: rejected), alert texts.
MAX_DECK: Final = 64
MAX_CODE: Final = 64
MAX_TEXT: Final = 1024
MAX_MESSAGE: Final = 1000
#: A table's area (pit) and a dealer's badge: short labels.
MAX_AREA: Final = 64
MAX_DEALER: Final = 64
MAX_REMEDY_STEPS: Final = 16
#: Alerts listed in the retained state (the most severe and most recent; the rest are counted).
MAX_STATE_ALERTS: Final = 16
#: Earliest and latest time accepted in ``ts`` (a device without a clock may send 1970).
MIN_TS: Final = datetime(1970, 1, 1, tzinfo=UTC)
MAX_TS: Final = datetime(2200, 1, 1, tzinfo=UTC)
#: No control characters in identifiers from devices (deck ids, fault codes).
_PRINTABLE: Final = r"^[^\x00-\x1f\x7f]+$"


#: The Unix epoch in UTC, and as pydantic-core parses a ``Z`` time (its own zone object, shared by
#: every ``Z`` time it parses): :func:`_to_utc` converts by the time since it.
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_AS_PARSED: Final = TypeAdapter(AwareDatetime).validate_python("1970-01-01T00:00:00Z")


def _to_utc(value: datetime) -> datetime:
    # The same instant in UTC, as the epoch plus the time since it. For a ``Z`` time (every one a
    # device sends) the subtraction asks no zone for its offset, the two share one: a third of
    # ``astimezone``'s instructions (callgrind), for every event parsed; another offset is
    # subtracted as such. (A year 9999 time behind UTC, or a year 1 ahead, has no UTC datetime.)
    try:
        value = _EPOCH + (value - _EPOCH_AS_PARSED)
    except OverflowError:
        value = MAX_TS
    if not MIN_TS <= value < MAX_TS:
        raise ValueError(f"time must be from {MIN_TS.year} to {MAX_TS.year - 1}")
    return value


#: RFC 3339 time, always carried in UTC (``2026-11-29T23:59:18.120Z``).
Timestamp = Annotated[AwareDatetime, AfterValidator(_to_utc)]
Seat = Annotated[int, Field(ge=1, le=10)]


def _cut(limit: int) -> BeforeValidator:
    """Free text is cut to ``limit`` characters rather than rejected: a device's long message
    must not cost the event (our own drivers put exception texts there)."""
    return BeforeValidator(lambda value: value[:limit] if isinstance(value, str) else value)


#: A device's free text (fault text, status detail): at most ``MAX_TEXT`` characters, cut.
FreeText = Annotated[str, _cut(MAX_TEXT), Field(max_length=MAX_TEXT)]
Version = Annotated[int, Field(ge=1, le=MAX_VERSION, description="Schema version, now 1.")]
SeqNumber = Annotated[int, Field(ge=1, le=MAX_SEQ)]
DeckId = Annotated[str, Field(min_length=1, max_length=MAX_DECK, pattern=_PRINTABLE)]


class WireModel(BaseModel):
    """Base of every payload: immutable, unknown fields ignored, JSON in and out."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    def to_json(self) -> bytes:
        """The payload as compact UTF-8 JSON, as it goes on the wire."""
        return self.model_dump_json().encode()


# --------------------------------------------------------------------------------------------
# Device events: {root}/{table}/dev/{device}/event
# --------------------------------------------------------------------------------------------


class EventBase(WireModel):
    """Fields common to every device event."""

    v: Version = SCHEMA_VERSION
    seq: SeqNumber = Field(description="Per device, +1 per event; restarts at 1 with each session.")
    ts: Timestamp = Field(description="When the device observed it (RFC 3339, UTC).")
    session: int | None = Field(
        default=None,
        ge=0,
        le=MAX_SEQ,
        description="Extension: the publisher's status session this event belongs to, so that "
        "repeats are known by (device, session, seq) and a new session needs no status first.",
    )


class TagEvent(EventBase):
    """RFID reader: a card tag arrived in (``present``) or left an antenna's field."""

    type: Literal["tag"] = "tag"
    antenna: int = Field(
        ge=0, le=MAX_ANTENNA, description="Antenna number as the reader counts them (0 allowed)."
    )
    zone: Zone
    uid: Uid
    present: bool
    face: Literal["up", "down"] | None = None


class ShufflingEvent(EventBase):
    """Shuffler started a shuffle."""

    type: Literal["shuffling"] = "shuffling"
    deck: DeckId | None = None


class ShuffleCompleteEvent(EventBase):
    """A shuffled deck is ready; ``ok`` is the deck check's verdict."""

    type: Literal["shuffle_complete"] = "shuffle_complete"
    deck: DeckId | None = None
    count: int = Field(ge=0, le=MAX_COUNT)
    ok: bool
    missing: list[Card] = Field(default_factory=list, max_length=MAX_CARD_LIST)
    duplicates: list[Card] = Field(default_factory=list, max_length=MAX_CARD_LIST)


class FaultEvent(EventBase):
    """Any device: a fault (``jam``, ``door_open``, ``crc_errors``, ...)."""

    type: Literal["fault"] = "fault"
    code: str = Field(min_length=1, max_length=MAX_CODE, pattern=_PRINTABLE)
    text: FreeText = ""


class ButtonEvent(EventBase):
    """Dealer button sensor: the seat the button is on, or None when lifted."""

    type: Literal["button"] = "button"
    seat: Seat | None


class BlindEvent(EventBase):
    """Blind zone sensor: chips present in a seat's blind zone or not."""

    type: Literal["blind"] = "blind"
    seat: Seat
    present: bool


class SeatEvent(EventBase):
    """Seat occupancy sensor."""

    type: Literal["seat"] = "seat"
    seat: Seat
    occupied: bool


KeyName: TypeAlias = Literal[
    "new_hand",
    "round_complete",
    "all_in",
    "exposed",
    "misdeal",
    "declare_board",
    "ack",
    "last_hands",
]
KEY_NAMES: Final[tuple[str, ...]] = (
    "new_hand",
    "round_complete",
    "all_in",
    "exposed",
    "misdeal",
    "declare_board",
    "ack",
    "last_hands",  # extension: the end of the game announced, the last three hands follow
)


AlertId = Annotated[str, Field(min_length=1, max_length=64)]
_ALERT_DESCRIPTION: Final = (
    "Extension: with key ack, acknowledge only this alert (its id); without it, ack acknowledges "
    "every active alert (of the seat, when a seat is given)."
)


def _absent(value: object) -> bool:
    return value is None


def _not_set(value: object) -> bool:
    return value is False


def _alert_only_with_ack(key: str, alert: str | None) -> None:
    if alert is not None and key != "ack":
        raise ValueError(f"alert is only meaningful with key 'ack', not {key!r}")


class KeyEvent(EventBase):
    """Dealer keypad: a key press, with the seat it concerns where the key needs one."""

    type: Literal["key"] = "key"
    key: KeyName
    seat: Seat | None = None
    # Only on the wire when given: key events and inputs without it stay what they were.
    alert: AlertId | None = Field(default=None, description=_ALERT_DESCRIPTION, exclude_if=_absent)

    @model_validator(mode="after")
    def _check_alert(self) -> KeyEvent:
        _alert_only_with_ack(self.key, self.alert)
        return self


DeviceEvent: TypeAlias = Annotated[
    TagEvent
    | ShufflingEvent
    | ShuffleCompleteEvent
    | FaultEvent
    | ButtonEvent
    | BlindEvent
    | SeatEvent
    | KeyEvent,
    Field(discriminator="type"),
]
EVENT_TYPES: Final = (
    TagEvent,
    ShufflingEvent,
    ShuffleCompleteEvent,
    FaultEvent,
    ButtonEvent,
    BlindEvent,
    SeatEvent,
    KeyEvent,
)

# --------------------------------------------------------------------------------------------
# Status: {root}/{table}/dev/{device}/status and {root}/{table}/controller/status (retained)
# --------------------------------------------------------------------------------------------

StatusState: TypeAlias = Literal["online", "offline", "fault"]


class Status(WireModel):
    """Retained status of a device driver or of the controller; ``offline`` is also the last will."""

    v: Version = SCHEMA_VERSION
    state: StatusState
    ts: Timestamp
    session: int = Field(ge=0, le=MAX_SEQ, description="+1 at every (re)start of the publisher.")
    detail: FreeText | None = Field(default=None, description="Extension: why, for fault or offline.")
    seq: int | None = Field(
        default=None,
        ge=0,
        le=MAX_SEQ,
        description="Extension: the seq of the publisher's last event of this session when the "
        "status was published (0: none yet); every event up to it was published before it, so "
        "that events lost on the way show at once, also at the end of a session.",
    )
    # Only on the wire when given (a driver's status).
    answers: tuple[Literal["resend", "status"], ...] | None = Field(
        default=None,
        description="Extension (device status): the commands this driver answers whatever its "
        "device's state. With `status` in it, the controller asks the driver to say its status "
        "again after the broker was away, and holds what comes meanwhile until it has (at most "
        "[table] gap_wait_s); a publisher that does not say so is not waited for.",
        exclude_if=_absent,
    )
    # Only on the wire when given (a driver's answer to a `status` command).
    asked: Timestamp | None = Field(
        default=None,
        description="Extension (device status): the `ts` of the controller's `status` command "
        "this status answers; a status said for any other reason (a connection to the broker, a "
        "change) has none, so that a driver's status said again after the broker was away is "
        "never taken for an answer.",
        exclude_if=_absent,
    )
    # Only on the wire when given (the controller's status of a table configured with one).
    area: Annotated[str, Field(min_length=1, max_length=MAX_AREA)] | None = Field(
        default=None,
        description="Extension (controller/status): the area (pit) of the card room the table is "
        "in, from [table] area; the floor groups its tables by it.",
        exclude_if=_absent,
    )
    # Only on the wire when given (the controller's status).
    instance: Annotated[str, Field(pattern=r"^[0-9a-f]{1,32}$")] | None = Field(
        default=None,
        description="Extension (controller/status): the id of the controller's journal (random, "
        "kept with the journal); a controller that finds another one's online or fault status "
        "for its table refuses to start instead of taking its client id.",
        exclude_if=_absent,
    )


# --------------------------------------------------------------------------------------------
# Dealer inputs: {root}/{table}/input
# --------------------------------------------------------------------------------------------


#: The sender of dealer inputs (a console, a tablet): its own ``seq`` stream.
InputSource = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
_INPUT_SEQ_DESCRIPTION: Final = (
    "Extension: the sender's sequence number, +1 per input (per source), 1 again when the sender "
    "restarts; a gap is told to the dealer as lost inputs."
)
_INPUT_SOURCE_DESCRIPTION: Final = (
    "Extension: who sends the input (a console, a tablet): seq is counted per source."
)


class KeyInput(WireModel):
    """A keypad-equivalent input from a source that is not a sensor (tablet, console, test)."""

    v: Version = SCHEMA_VERSION
    ts: Timestamp
    type: Literal["key"] = "key"
    key: KeyName
    seat: Seat | None = None
    seq: int | None = Field(default=None, ge=1, le=MAX_SEQ, description=_INPUT_SEQ_DESCRIPTION)
    # Only on the wire when given: inputs without it stay what they were.
    source: InputSource | None = Field(
        default=None, description=_INPUT_SOURCE_DESCRIPTION, exclude_if=_absent
    )
    # Only on the wire when given: key events and inputs without it stay what they were.
    alert: AlertId | None = Field(default=None, description=_ALERT_DESCRIPTION, exclude_if=_absent)

    @model_validator(mode="after")
    def _check_alert(self) -> KeyInput:
        _alert_only_with_ack(self.key, self.alert)
        return self


ActionName: TypeAlias = Literal["fold", "check", "call", "bet", "raise", "all_in", "post"]


class ActionInput(WireModel):
    """A betting action from an action feed."""

    v: Version = SCHEMA_VERSION
    ts: Timestamp
    type: Literal["action"] = "action"
    seat: Seat
    action: ActionName
    amount: int = Field(default=0, ge=0, le=MAX_AMOUNT, description="Chips put in by this action.")
    seq: int | None = Field(default=None, ge=1, le=MAX_SEQ, description=_INPUT_SEQ_DESCRIPTION)
    # Only on the wire when given: inputs without it stay what they were.
    source: InputSource | None = Field(
        default=None, description=_INPUT_SOURCE_DESCRIPTION, exclude_if=_absent
    )


class DealerBadgeInput(WireModel):
    """Extension: the dealer now at the table, by badge (a badge reader, the floor's console).

    The hands dealt from then on carry it in their result (``dealer``); a change while a hand
    is in progress takes effect when that hand ends (seed 000: the dealer cannot be changed
    during the game)."""

    v: Version = SCHEMA_VERSION
    ts: Timestamp
    type: Literal["dealer"] = "dealer"
    dealer: Annotated[str, Field(min_length=1, max_length=MAX_DEALER, pattern=r"^[A-Za-z0-9._:-]+$")]
    seq: int | None = Field(default=None, ge=1, le=MAX_SEQ, description=_INPUT_SEQ_DESCRIPTION)
    source: InputSource | None = Field(
        default=None, description=_INPUT_SOURCE_DESCRIPTION, exclude_if=_absent
    )


class LevelStartInput(WireModel):
    """Extension: a tournament's clock starts (again) at level 1 (``[stakes] levels``); without
    it the clock starts with the first hand."""

    v: Version = SCHEMA_VERSION
    ts: Timestamp
    type: Literal["level_start"] = "level_start"
    seq: int | None = Field(default=None, ge=1, le=MAX_SEQ, description=_INPUT_SEQ_DESCRIPTION)
    source: InputSource | None = Field(
        default=None, description=_INPUT_SOURCE_DESCRIPTION, exclude_if=_absent
    )


DealerInput: TypeAlias = Annotated[
    KeyInput | ActionInput | DealerBadgeInput | LevelStartInput, Field(discriminator="type")
]

# --------------------------------------------------------------------------------------------
# Alerts: {root}/{table}/alerts
# --------------------------------------------------------------------------------------------

Severity: TypeAlias = Literal["info", "warning", "critical"]
AlertStatus: TypeAlias = Literal["raised", "updated", "acknowledged", "resolved"]
Profile: TypeAlias = Literal["roberts", "tda"]


class Alert(WireModel):
    """One alert change. ``id`` is stable for the life of the alert; ``status`` says which change."""

    v: Version = SCHEMA_VERSION
    id: str = Field(min_length=1, max_length=64)
    ts: Timestamp
    hand: int = Field(ge=0, le=MAX_SEQ)
    code: str = Field(min_length=1, max_length=MAX_CODE)
    severity: Severity
    seat: Seat | None = None
    status: AlertStatus
    message: str = Field(max_length=MAX_MESSAGE)
    remedy: list[Annotated[str, Field(max_length=MAX_MESSAGE)]] = Field(
        default_factory=list, max_length=MAX_REMEDY_STEPS
    )
    rule: str = Field(default="", max_length=200)
    profile: Profile
    device: str | None = Field(
        default=None, max_length=64, description="Extension: the device a device alert is about."
    )


# --------------------------------------------------------------------------------------------
# Public state: {root}/{table}/state (retained). Never hole cards.
# --------------------------------------------------------------------------------------------

Phase: TypeAlias = Literal[
    "idle", "shuffled", "dealing", "preflop", "flop", "turn", "river", "showdown", "misdeal"
]


class SeatState(WireModel):
    """One seat in the public state: card *count* only, never card identities."""

    seat: Seat
    occupied: bool
    in_hand: bool
    cards: int = Field(ge=0, le=52)


class SeatAmount(WireModel):
    """Chips of one seat: a bet in front of it, a share of a pot, or what was pushed to it."""

    seat: Seat
    amount: int = Field(ge=0, le=MAX_AMOUNT)


class PotState(WireModel):
    """A pot as of the last sweep: its chips and the seats that may win it (main pot first)."""

    amount: int = Field(ge=0, le=MAX_AMOUNT)
    eligible: list[Seat] = Field(default_factory=list, max_length=10)


class LevelState(WireModel):
    """A tournament level: its number (1 first), blinds, ante and when it ends."""

    level: int = Field(ge=1, le=100)
    small_blind: int = Field(ge=0, le=MAX_AMOUNT)
    big_blind: int = Field(ge=0, le=MAX_AMOUNT)
    ante: int = Field(default=0, ge=0, le=MAX_AMOUNT)
    ends: Timestamp | None = Field(
        default=None, description="When the level ends (event time); null: the last level."
    )


class SeatAway(WireModel):
    """A seat with chips in its stack and nobody in it."""

    seat: Seat
    since: Timestamp


class PublicState(WireModel):
    """The public table state, safe for any screen: the board is public, hole cards never are."""

    v: Version = SCHEMA_VERSION
    ts: Timestamp
    hand: int = Field(ge=0, le=MAX_SEQ)
    phase: Phase
    button: Seat | None = None
    seats: list[SeatState] = Field(default_factory=list, max_length=10)
    board: list[Card] = Field(default_factory=list, max_length=52)
    burns: int = Field(default=0, ge=0, le=52)
    deck: str | None = Field(default=None, max_length=MAX_DECK)
    alerts: list[Alert] = Field(default_factory=list, max_length=MAX_STATE_ALERTS)
    alerts_omitted: int = Field(
        default=0,
        ge=0,
        description="Extension: active alerts not listed in ``alerts`` (the least severe and "
        "oldest), so that the retained state stays small.",
    )
    profile: Profile | None = Field(default=None, description="Extension: the rules profile.")
    tracking: bool = Field(
        default=True, description="Extension: false while a reader the hand depends on is offline."
    )
    to_act: Seat | None = Field(default=None, description="The seat expected to act next, or null.")
    bets: list[SeatAmount] = Field(
        default_factory=list,
        max_length=10,
        description="Chips in front of each seat in this betting round.",
    )
    pots: list[PotState] = Field(
        default_factory=list,
        max_length=10,
        description="Main pot first, then side pots, as of the last sweep.",
    )
    shows_first: Seat | None = Field(
        default=None, description="At showdown: the seat that must show first, or null."
    )
    # The session (docs/rules.md, "The session"): only on the wire when known, so the states
    # of a table that follows none of it stay what they were.
    dealer: Annotated[str, Field(min_length=1, max_length=MAX_DEALER)] | None = Field(
        default=None,
        description="Extension: the badge of the dealer dealing (the last dealer input).",
        exclude_if=_absent,
    )
    hands_left: int | None = Field(
        default=None,
        ge=0,
        le=3,
        description="Extension: after the last_hands announcement, the hands that may still be "
        "dealt (3, 2, 1, 0).",
        exclude_if=_absent,
    )
    level: LevelState | None = Field(
        default=None,
        description="Extension: a tournament's level in force by the clock, and when it ends.",
        exclude_if=_absent,
    )
    away: list[SeatAway] | None = Field(
        default=None,
        max_length=10,
        description="Extension: seats with chips in their stack and no player, since when "
        "(where [table] max_absence_s is set).",
        exclude_if=_absent,
    )


# --------------------------------------------------------------------------------------------
# Hand results: {root}/{table}/hands (one message when a hand ends, not retained)
# --------------------------------------------------------------------------------------------

Street: TypeAlias = Literal["preflop", "flop", "turn", "river"]
HandOutcome: TypeAlias = Literal["showdown", "uncontested", "misdeal", "fouled"]
#: Names of hand ranks used in ``ShownHand.rank`` (best first is the last one).
RANK_NAMES: Final[tuple[str, ...]] = (
    "high_card",
    "pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
)


class HandAction(WireModel):
    """One betting action of a hand; ``amount`` is the chips that action put in."""

    street: Street
    seat: Seat
    action: ActionName
    amount: int = Field(default=0, ge=0, le=MAX_AMOUNT)


class PotResult(WireModel):
    """A pot at the end of the hand (after rake): who could win it, who won it, and the shares."""

    amount: int = Field(ge=0, le=MAX_AMOUNT)
    eligible: list[Seat] = Field(default_factory=list, max_length=10)
    winners: list[Seat] = Field(default_factory=list, max_length=10)
    shares: list[SeatAmount] = Field(default_factory=list, max_length=10)


class ShownHand(WireModel):
    """A hand tabled face up at showdown, in the order shown; ``rank`` names its class."""

    seat: Seat
    cards: list[Card] = Field(max_length=7)
    rank: str = Field(max_length=32, description="One of RANK_NAMES: high_card, pair, ..., straight_flush.")


class HandResult(WireModel):
    """The result of a hand, published once when it ends. Hole cards only of hands tabled face up."""

    v: Version = SCHEMA_VERSION
    ts: Timestamp
    hand: int = Field(ge=0, le=MAX_SEQ)
    button: Seat | None = None
    seats: list[Seat] = Field(default_factory=list, max_length=10, description="Seats dealt in.")
    board: list[Card] = Field(default_factory=list, max_length=52)
    result: HandOutcome
    actions: list[HandAction] = Field(default_factory=list, max_length=4096)
    pots: list[PotResult] = Field(default_factory=list, max_length=10)
    rake: int = Field(default=0, ge=0, le=MAX_AMOUNT)
    awarded: list[SeatAmount] = Field(
        default_factory=list,
        max_length=10,
        description="What the chips show was pushed to each seat.",
    )
    showdown: list[ShownHand] = Field(default_factory=list, max_length=10)
    profile: Profile | None = Field(default=None, description="Extension: the rules profile.")
    # Only on the wire when known: results without it stay what they were.
    dealer: Annotated[str, Field(min_length=1, max_length=MAX_DEALER)] | None = Field(
        default=None,
        description="Extension: the badge of the dealer who dealt the hand, when known.",
        exclude_if=_absent,
    )
    # Only on the wire when true: results of hands followed with all their evidence stay what
    # they were.
    evidence_missing: bool = Field(
        default=False,
        description="Extension: true when the hand was followed with evidence missing (device "
        "events or dealer inputs lost on the way): the result is what the evidence showed.",
        exclude_if=_not_set,
    )


# --------------------------------------------------------------------------------------------
# Commands: {root}/{table}/dev/{device}/cmd (the project's own shape, discriminated on ``cmd``)
# --------------------------------------------------------------------------------------------


class CommandBase(WireModel):
    v: Version = SCHEMA_VERSION
    ts: Timestamp


class ShuffleCommand(CommandBase):
    """Shuffler: start shuffling the deck that is loaded (``deck`` names it, when known)."""

    cmd: Literal["shuffle"] = "shuffle"
    deck: DeckId | None = None


LampColour: TypeAlias = Literal["off", "green", "amber", "red", "blue", "white"]


class LampCommand(CommandBase):
    """Sensor board: set the alert lamp."""

    cmd: Literal["lamp"] = "lamp"
    colour: LampColour
    blink: bool = False


class BuzzerCommand(CommandBase):
    """Sensor board: sound the buzzer for ``duration_ms`` (0 silences it)."""

    cmd: Literal["buzzer"] = "buzzer"
    duration_ms: int = Field(ge=0, le=10_000)


class SweepCommand(CommandBase):
    """RFID reader: set the antenna sweep (which antennas, and the dwell per antenna)."""

    cmd: Literal["sweep"] = "sweep"
    antennas: list[Annotated[int, Field(ge=0, le=MAX_ANTENNA)]] = Field(min_length=1, max_length=1024)
    dwell_ms: int = Field(default=20, ge=1, le=1000)


#: The most events one ``resend`` asks for (the engine remembers 1,024 seqs behind a device's
#: highest, and a driver keeps about as many).
MAX_RESEND: Final = 1024


class ResendCommand(CommandBase):
    """Any driver: publish again the events ``from_seq`` to ``to_seq`` of ``session`` that it
    still holds, unchanged (same ``seq``, ``ts`` and payload); the controller asks when it sees a
    gap in a device's sequence."""

    cmd: Literal["resend"] = "resend"
    session: int = Field(ge=0, le=MAX_SEQ)
    from_seq: SeqNumber
    to_seq: SeqNumber

    @model_validator(mode="after")
    def _a_range(self) -> Self:
        if self.to_seq < self.from_seq:
            raise ValueError("to_seq must not be below from_seq")
        if self.to_seq - self.from_seq >= MAX_RESEND:
            raise ValueError(f"at most {MAX_RESEND} events per resend")
        return self


class StatusCommand(CommandBase):
    """Any driver: publish the status again, naming the seq of its last event so far (after the
    events given to publish before it). The controller asks after the broker was away: a broker
    restarted without its sessions drops what drivers publish before the controller is
    subscribed again, and the retained status it hands over then names the seq of the last
    event before that moment only."""

    cmd: Literal["status"] = "status"


DeviceCommand: TypeAlias = Annotated[
    ShuffleCommand | LampCommand | BuzzerCommand | SweepCommand | ResendCommand | StatusCommand,
    Field(discriminator="cmd"),
]

# --------------------------------------------------------------------------------------------
# Parsing with errors that name the place
# --------------------------------------------------------------------------------------------


class PayloadError(ValueError):
    """A payload that does not match the contract; the message names the topic and the field."""

    def __init__(self, topic: str, detail: str) -> None:
        super().__init__(f"{topic}: {detail}")
        self.topic = topic
        self.detail = detail


EVENT_ADAPTER: Final[TypeAdapter[DeviceEvent]] = TypeAdapter(DeviceEvent)
INPUT_ADAPTER: Final[TypeAdapter[DealerInput]] = TypeAdapter(DealerInput)
COMMAND_ADAPTER: Final[TypeAdapter[DeviceCommand]] = TypeAdapter(DeviceCommand)


def describe(error: ValidationError) -> str:
    """The validation errors, naming the fields: never the rejected text itself (it could be
    anything a publisher wrote), escaped and bounded (:func:`contract.text.bounded`). What
    :class:`PayloadError` says; a caller that validates with an adapter's ``validator`` itself
    (the service's intake: a flood of bad payloads) builds it only when it shows it."""
    parts = []
    for item in error.errors(include_url=False)[:3]:
        loc = ".".join(str(p) for p in item["loc"]) or "payload"
        if item["type"] in ("union_tag_invalid", "union_tag_not_found"):
            msg = "unknown or missing type"  # pydantic's text quotes the rejected tag
        else:
            msg = item["msg"]
        parts.append(f"{bounded(loc, 60)}: {bounded(msg, 100)}")
    more = error.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _parse(adapter: TypeAdapter[_T], topic: str, payload: bytes | str) -> _T:
    try:
        # the adapter's validator itself: TypeAdapter.validate_json's wrapper cost about a quarter
        # of the validation (1.3 of 5.6 us for an event)
        return adapter.validator.validate_json(payload)  # type: ignore[no-any-return]
    except ValidationError as error:
        raise PayloadError(topic, describe(error)) from None


def parse_event(topic: str, payload: bytes | str) -> DeviceEvent:
    """Validate a device event payload; raise :class:`PayloadError` naming ``topic``."""
    return _parse(EVENT_ADAPTER, topic, payload)


def parse_input(topic: str, payload: bytes | str) -> DealerInput:
    """Validate a dealer input payload."""
    return _parse(INPUT_ADAPTER, topic, payload)


def parse_command(topic: str, payload: bytes | str) -> DeviceCommand:
    """Validate a device command payload."""
    return _parse(COMMAND_ADAPTER, topic, payload)


STATUS_ADAPTER: Final[TypeAdapter[Status]] = TypeAdapter(Status)
ALERT_ADAPTER: Final[TypeAdapter[Alert]] = TypeAdapter(Alert)
STATE_ADAPTER: Final[TypeAdapter[PublicState]] = TypeAdapter(PublicState)
HAND_ADAPTER: Final[TypeAdapter[HandResult]] = TypeAdapter(HandResult)


def parse_status(topic: str, payload: bytes | str) -> Status:
    """Validate a device or controller status payload."""
    return _parse(STATUS_ADAPTER, topic, payload)


def parse_alert(topic: str, payload: bytes | str) -> Alert:
    """Validate an alert payload."""
    return _parse(ALERT_ADAPTER, topic, payload)


def parse_state(topic: str, payload: bytes | str) -> PublicState:
    """Validate a public state payload."""
    return _parse(STATE_ADAPTER, topic, payload)


def parse_hand(topic: str, payload: bytes | str) -> HandResult:
    """Validate a hand result payload."""
    return _parse(HAND_ADAPTER, topic, payload)
