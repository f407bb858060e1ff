"""Pydantic models of every payload in the table contract (``shared/spec/contract.md``).

Readers ignore unknown fields (the contract may be extended compatibly); writers never emit fields
outside these models. Validation errors are raised as :class:`PayloadError`, which names the topic.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Final, Literal, TypeAlias, TypeVar

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from contract.cards import Card, Uid, Zone

SCHEMA_VERSION: Final = 1
_T = TypeVar("_T")


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


#: RFC 3339 time, always carried in UTC (``2026-11-29T23:59:18.120Z``).
Timestamp = Annotated[AwareDatetime, AfterValidator(_to_utc)]
Seat = Annotated[int, Field(ge=1, le=10)]


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

    v: int = Field(default=SCHEMA_VERSION, ge=1, description="Schema version, now 1.")
    seq: int = Field(ge=1, description="Per device, +1 per event; restarts at 1 with each session.")
    ts: Timestamp = Field(description="When the device observed it (RFC 3339, UTC).")


class TagEvent(EventBase):
    """RFID reader: a card tag arrived in (``present``) or left an antenna's field."""

    type: Literal["tag"] = "tag"
    antenna: int = Field(ge=0, description="Antenna number as the reader counts them (0 allowed).")
    zone: Zone
    uid: Uid
    present: bool
    face: Literal["up", "down"] | None = None


class ShufflingEvent(EventBase):
    """Shuffler started a shuffle."""

    type: Literal["shuffling"] = "shuffling"
    deck: str | None = None


class ShuffleCompleteEvent(EventBase):
    """A shuffled deck is ready; ``ok`` is the deck check's verdict."""

    type: Literal["shuffle_complete"] = "shuffle_complete"
    deck: str | None = None
    count: int = Field(ge=0)
    ok: bool
    missing: list[Card] = Field(default_factory=list)
    duplicates: list[Card] = Field(default_factory=list)


class FaultEvent(EventBase):
    """Any device: a fault (``jam``, ``door_open``, ``crc_errors``, ...)."""

    type: Literal["fault"] = "fault"
    code: str = Field(min_length=1)
    text: str = ""


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
    "new_hand", "round_complete", "all_in", "exposed", "misdeal", "declare_board", "ack"
]
KEY_NAMES: Final[tuple[str, ...]] = (
    "new_hand",
    "round_complete",
    "all_in",
    "exposed",
    "misdeal",
    "declare_board",
    "ack",
)


AlertId = Annotated[str, Field(min_length=1, max_length=64)]
_ALERT_DESCRIPTION: Final = (
    "Extension: with key ack, acknowledge only this alert (its id); without it, ack acknowledges "
    "every active alert (of the seat, when a seat is given)."
)


def _absent(value: object) -> bool:
    return value is None


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

    v: int = Field(default=SCHEMA_VERSION, ge=1)
    state: StatusState
    ts: Timestamp
    session: int = Field(ge=0, description="+1 at every (re)start of the publisher.")
    detail: str | None = Field(default=None, description="Extension: why, for fault or offline.")


# --------------------------------------------------------------------------------------------
# Dealer inputs: {root}/{table}/input
# --------------------------------------------------------------------------------------------


class KeyInput(WireModel):
    """A keypad-equivalent input from a source that is not a sensor (tablet, console, test)."""

    v: int = Field(default=SCHEMA_VERSION, ge=1)
    ts: Timestamp
    type: Literal["key"] = "key"
    key: KeyName
    seat: Seat | None = None
    seq: int | None = Field(default=None, ge=1, description="Extension: optional sender sequence.")
    # Only on the wire when given: key events and inputs without it stay what they were.
    alert: AlertId | None = Field(default=None, description=_ALERT_DESCRIPTION, exclude_if=_absent)

    @model_validator(mode="after")
    def _check_alert(self) -> KeyInput:
        _alert_only_with_ack(self.key, self.alert)
        return self


ActionName: TypeAlias = Literal["fold", "check", "call", "bet", "raise", "all_in", "post"]


class ActionInput(WireModel):
    """A betting action from an action feed."""

    v: int = Field(default=SCHEMA_VERSION, ge=1)
    ts: Timestamp
    type: Literal["action"] = "action"
    seat: Seat
    action: ActionName
    amount: int = Field(default=0, ge=0, description="Chips put in by this action.")
    seq: int | None = Field(default=None, ge=1, description="Extension: optional sender sequence.")


DealerInput: TypeAlias = Annotated[KeyInput | ActionInput, Field(discriminator="type")]

# --------------------------------------------------------------------------------------------
# Alerts: {root}/{table}/alerts
# --------------------------------------------------------------------------------------------

Severity: TypeAlias = Literal["info", "warning", "critical"]
AlertStatus: TypeAlias = Literal["raised", "updated", "acknowledged", "resolved"]
Profile: TypeAlias = Literal["roberts", "tda"]


class Alert(WireModel):
    """One alert change. ``id`` is stable for the life of the alert; ``status`` says which change."""

    v: int = Field(default=SCHEMA_VERSION, ge=1)
    id: str = Field(min_length=1)
    ts: Timestamp
    hand: int = Field(ge=0)
    code: str = Field(min_length=1)
    severity: Severity
    seat: Seat | None = None
    status: AlertStatus
    message: str
    remedy: list[str] = Field(default_factory=list)
    rule: str = ""
    profile: Profile
    device: str | None = Field(default=None, description="Extension: the device a device alert is about.")


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
    cards: int = Field(ge=0)


class SeatAmount(WireModel):
    """Chips of one seat: a bet in front of it, a share of a pot, or what was pushed to it."""

    seat: Seat
    amount: int = Field(ge=0)


class PotState(WireModel):
    """A pot as of the last sweep: its chips and the seats that may win it (main pot first)."""

    amount: int = Field(ge=0)
    eligible: list[Seat] = Field(default_factory=list)


class PublicState(WireModel):
    """The public table state, safe for any screen: the board is public, hole cards never are."""

    v: int = Field(default=SCHEMA_VERSION, ge=1)
    ts: Timestamp
    hand: int = Field(ge=0)
    phase: Phase
    button: Seat | None = None
    seats: list[SeatState] = Field(default_factory=list)
    board: list[Card] = Field(default_factory=list)
    burns: int = Field(default=0, ge=0)
    deck: str | None = None
    alerts: list[Alert] = Field(default_factory=list)
    profile: Profile | None = Field(default=None, description="Extension: the rules profile.")
    tracking: bool = Field(
        default=True, description="Extension: false while a reader the hand depends on is offline."
    )
    to_act: Seat | None = Field(default=None, description="The seat expected to act next, or null.")
    bets: list[SeatAmount] = Field(
        default_factory=list, description="Chips in front of each seat in this betting round."
    )
    pots: list[PotState] = Field(
        default_factory=list, description="Main pot first, then side pots, as of the last sweep."
    )
    shows_first: Seat | None = Field(
        default=None, description="At showdown: the seat that must show first, or null."
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
    amount: int = Field(default=0, ge=0)


class PotResult(WireModel):
    """A pot at the end of the hand (after rake): who could win it, who won it, and the shares."""

    amount: int = Field(ge=0)
    eligible: list[Seat] = Field(default_factory=list)
    winners: list[Seat] = Field(default_factory=list)
    shares: list[SeatAmount] = Field(default_factory=list)


class ShownHand(WireModel):
    """A hand tabled face up at showdown, in the order shown; ``rank`` names its class."""

    seat: Seat
    cards: list[Card]
    rank: str = Field(description="One of RANK_NAMES: high_card, pair, ..., straight_flush.")


class HandResult(WireModel):
    """The result of a hand, published once when it ends. Hole cards only of hands tabled face up."""

    v: int = Field(default=SCHEMA_VERSION, ge=1)
    ts: Timestamp
    hand: int = Field(ge=0)
    button: Seat | None = None
    seats: list[Seat] = Field(default_factory=list, description="Seats dealt in.")
    board: list[Card] = Field(default_factory=list)
    result: HandOutcome
    actions: list[HandAction] = Field(default_factory=list)
    pots: list[PotResult] = Field(default_factory=list)
    rake: int = Field(default=0, ge=0)
    awarded: list[SeatAmount] = Field(
        default_factory=list, description="What the chips show was pushed to each seat."
    )
    showdown: list[ShownHand] = Field(default_factory=list)
    profile: Profile | None = Field(default=None, description="Extension: the rules profile.")


# --------------------------------------------------------------------------------------------
# Commands: {root}/{table}/dev/{device}/cmd (the project's own shape, discriminated on ``cmd``)
# --------------------------------------------------------------------------------------------


class CommandBase(WireModel):
    v: int = Field(default=SCHEMA_VERSION, ge=1)
    ts: Timestamp


class ShuffleCommand(CommandBase):
    """Shuffler: start shuffling the deck that is loaded (``deck`` names it, when known)."""

    cmd: Literal["shuffle"] = "shuffle"
    deck: str | None = None


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
    antennas: list[int] = Field(min_length=1)
    dwell_ms: int = Field(default=20, ge=1, le=1000)


DeviceCommand: TypeAlias = Annotated[
    ShuffleCommand | LampCommand | BuzzerCommand | SweepCommand, Field(discriminator="cmd")
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


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False):
        loc = ".".join(str(p) for p in item["loc"]) or "payload"
        parts.append(f"{loc}: {item['msg']}")
    return "; ".join(parts)


def _parse(adapter: TypeAdapter[_T], topic: str, payload: bytes | str) -> _T:
    try:
        return adapter.validate_json(payload)
    except ValidationError as error:
        raise PayloadError(topic, _describe(error)) from None


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
