"""Pydantic models of the whole table configuration (TOML, with ``TABLECTL_`` env overrides)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final, Literal, TypeAlias
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SecretStr,
    Tag,
    model_validator,
)

from contract.cards import Zone, zone_bet_seat, zone_seat, zone_stack_seat
from contract.models import Profile
from contract.topics import DEFAULT_ROOT, check_segment


def _segment(what: str) -> AfterValidator:
    return AfterValidator(lambda value: check_segment(what, value))


TableId = Annotated[str, _segment("table id")]
DeviceId = Annotated[str, _segment("device id")]


Place: TypeAlias = tuple[str | int, ...]


class PlacedError(ValueError):
    """Whole-configuration checks that failed, each at one key (its place as pydantic spells
    places): the loader names every key and its line, not "(top level)"."""

    def __init__(self, problems: list[tuple[Place, str]]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


class Section(BaseModel):
    """A configuration section: unknown keys are errors (a typo must not pass silently)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TableSection(Section):
    id: TableId
    seats: int = Field(ge=2, le=10, description="Seats are numbered 1..seats, clockwise.")
    profile: Profile = "roberts"
    name: str | None = None
    area: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="The area (pit) of the card room the table is in: carried in the controller's "
        "status, the floor groups its tables by it.",
    )
    odd_chip: Literal["first_shown", "left_of_button"] = Field(
        default="first_shown",
        description="Split pots: seed 001 gives the odd chip to the first player to show (default); "
        "Robert's Rules, the WSOP and the TDA to the first seat left of the button.",
    )
    action_feed: bool = Field(
        default=False, description="True where an action feed publishes betting actions on input."
    )
    reaction_s: float = Field(
        default=2.0,
        ge=0,
        le=30,
        description="The dealer's reaction time in seconds: cards dealt this soon after a "
        "critical alert are part of the same mistake, not a remedy not followed.",
    )
    no_bet_shows_first: Literal["first_to_act", "last_to_check"] = Field(
        default="first_to_act",
        description="Showdown with no bet on the final round: seed 000 has the first seat left of "
        "the button show first (default); seed 001's house rule the last player to check.",
    )
    hole_card_off_s: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="A live hole card read by no antenna longer than this (seconds) is off the "
        "table (seed 000: cards stay on the table); players lift their cards to look at them.",
    )
    startup_grace_s: float = Field(
        default=5.0,
        ge=0,
        le=300,
        description="At a start of tablectl run, the seconds the devices get to come up: a device "
        "not yet heard from is not raised offline, and the lamp waits for the sensor board, until "
        "then (0: no grace).",
    )
    declared_devices_only: bool = Field(
        default=False,
        description="Refuse messages from a device id that [[devices]] does not declare (tablectl "
        "deploy renders true). False: any other device id is followed, its kind taken from the "
        "first event accepted from it in its session.",
    )
    gap_wait_s: float = Field(
        default=10.0,
        ge=1,
        le=600,
        description="Events a device's sequence (or its status seq) shows missing are asked for "
        "again; what has not come this many seconds (event time) after the gap showed is lost, "
        "told to the dealer naming the device and the seqs.",
    )
    max_absence_s: float | None = Field(
        default=None,
        gt=0,
        le=24 * 3600,
        description="The house's maximum absence (seconds): a seat with chips in its stack:N and "
        "no occupant longer than this raises absence_over_limit for the floor. Unset: not followed.",
    )


class TlsSection(Section):
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    insecure: bool = Field(default=False, description="Skip host name verification (tests only).")


class Credentials(Section):
    """A broker identity: ``username`` and a password given inline, from a file or the environment.

    The loader reads ``password_file`` (relative to the config file) into ``password``; neither is
    ever logged or printed.
    """

    username: str | None = None
    password: SecretStr | None = None
    password_file: Path | None = Field(
        default=None, description="A file holding the password (mode 0600), e.g. secrets/t1-controller."
    )

    @model_validator(mode="after")
    def _one_password(self) -> Credentials:
        if self.password is not None and self.password_file is not None:
            raise ValueError("give password or password_file, not both")
        return self


class MqttSection(Credentials):
    """The broker the controller (and, by default, the drivers) connect to."""

    url: str = "mqtt://127.0.0.1:1883"
    root: str = DEFAULT_ROOT
    client_id: str | None = None
    keepalive: int = Field(default=30, ge=5, le=3600)
    tls: TlsSection | None = None
    allow_insecure: bool = Field(
        default=False,
        description="Run even though the broker is reachable from the network without TLS and "
        "credentials (tablectl run refuses that otherwise).",
    )

    @model_validator(mode="after")
    def _check_url(self) -> MqttSection:
        if self.url == "embedded":
            return self
        parts = urlsplit(self.url)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise ValueError(f"url {self.url!r}: scheme must be mqtt://, mqtts:// or 'embedded'")
        if not parts.hostname:
            raise ValueError(f"url {self.url!r} has no host")
        try:
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            raise ValueError(f"url {self.url!r} has a bad port") from None
        for part in self.root.split("/"):
            check_segment("topic root", part)
        return self

    @property
    def embedded(self) -> bool:
        return self.url == "embedded"

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "127.0.0.1"

    @property
    def port(self) -> int:
        parts = urlsplit(self.url)
        return parts.port or (8883 if parts.scheme == "mqtts" else 1883)

    @property
    def use_tls(self) -> bool:
        return urlsplit(self.url).scheme == "mqtts" or self.tls is not None


class DecksSection(Section):
    registry: Path = Field(description="CSV with header uid,deck,card; relative to the config file.")


class ChipsSection(Section):
    registry: Path = Field(description="CSV with header uid,value; relative to the config file.")


class LevelSection(Section):
    """One tournament level: its blinds, ante and length."""

    small_blind: int = Field(ge=1, le=10_000_000)
    big_blind: int = Field(ge=1, le=10_000_000)
    ante: int = Field(default=0, ge=0, le=10_000_000)
    minutes: float = Field(gt=0, le=24 * 60, description="How long the level lasts.")


def _level_text(level: LevelSection) -> str:
    return f"{level.small_blind}/{level.big_blind}" + (f" ante {level.ante}" if level.ante else "")


def _blind_problems(place: Place, small: int, big: int) -> list[tuple[Place, str]]:
    """Seeds 000 and 003: the big blind is at least the small blind and at most twice it."""
    if big < small:
        return [
            (
                (*place, "big_blind"),
                f"big_blind {big} is below small_blind {small}: the big blind is at least the small blind",
            )
        ]
    if big > 2 * small:
        return [
            (
                (*place, "big_blind"),
                f"big_blind {big} is more than twice small_blind {small}: "
                "the big blind is at most twice the small blind",
            )
        ]
    return []


class StakesSection(Section):
    """The game's money rules: the engine follows the betting once this section is present."""

    structure: Literal["no_limit", "pot_limit", "fixed_limit"] = "no_limit"
    small_blind: int = Field(default=1, ge=0, le=10_000_000)
    big_blind: int = Field(default=2, ge=1, le=10_000_000)
    ante: int = Field(default=0, ge=0, le=10_000_000, description="Each player, before the deal.")
    rake_percent: float = Field(default=0, ge=0, le=100, description="Of each hand seeing a flop; 0 = none.")
    rake_cap: int = Field(default=0, ge=0, le=10_000_000, description="Most taken; 0 = no cap.")
    straddle: bool = Field(
        default=True,
        description="2 x big blind by the third seat left of the "
        "button (3+ players, not fixed limit) is a straddle, not a wrong blind.",
    )
    min_buy_in: int = Field(
        default=0,
        ge=0,
        le=10_000_000,
        description="The session's minimum initial buy-in (seed 000), checked where stack:N zones "
        "are read; 0 = none.",
    )
    max_rebuy: int = Field(
        default=0,
        ge=0,
        le=10_000_000,
        description="The most chips a seat may add between hands (house regulation), checked where "
        "stack:N zones are read; 0 = no limit.",
    )
    levels: list[LevelSection] = Field(
        default_factory=list,
        max_length=100,
        description="Tournament: the blind levels in order ([[stakes.levels]]); each hand's blinds "
        "and ante are those of the level in force when it begins. Empty: a cash game.",
    )

    @model_validator(mode="after")
    def _check_blinds(self) -> StakesSection:
        problems = _blind_problems(("stakes",), self.small_blind, self.big_blind)
        for index, level in enumerate(self.levels):
            place: Place = ("stakes", "levels", index)
            problems += _blind_problems(place, level.small_blind, level.big_blind)
            if index == 0:
                continue
            before = self.levels[index - 1]
            was = (before.small_blind, before.big_blind, before.ante)
            now = (level.small_blind, level.big_blind, level.ante)
            if any(n < w for n, w in zip(now, was, strict=True)) or now == was:
                problems.append(
                    (
                        (*place, "big_blind"),
                        f"level {index + 1} ({_level_text(level)}) does not rise above level {index} "
                        f"({_level_text(before)}): a tournament's levels only go up",
                    )
                )
        if problems:
            raise PlacedError(problems)
        return self


class DeviceBase(Section):
    id: DeviceId
    enabled: bool = True
    resend_buffer: int = Field(
        default=1024,
        ge=1,
        le=100_000,
        description="Events the driver keeps to send again when the controller asks (a gap "
        "after a broker crash). The engine takes a late event up to 1,024 behind a device's "
        "latest, so more does not help it.",
    )
    mqtt: Credentials | None = Field(
        default=None,
        description="The driver's own broker identity (so that the broker's ACL confines it to its "
        "own topics); default: the [mqtt] identity.",
    )


class UsbIdentity(Section):
    """Where a device sits on USB: the udev rule of ``tablectl deploy`` matches these."""

    vendor_id: int | None = Field(default=None, ge=0, le=0xFFFF)
    product_id: int | None = Field(default=None, ge=0, le=0xFFFF)
    serial_number: str | None = None


class SerialDevice(DeviceBase, UsbIdentity):
    """A device on a serial line; the USB identity is that of its USB-serial adapter (optional)."""

    port: str = Field(
        description="Serial device path (/dev/ttyUSB0) or transport URL (serial:///dev/ttyUSB0, "
        "socket://host:port, nullmodem:NAME for a simulator in the same process)."
    )
    baudrate: int = Field(default=115200, gt=0)
    reconnect_max_s: float = Field(default=10.0, gt=0, description="Backoff ceiling when unplugged.")


class ShufflerDevice(SerialDevice):
    driver: Literal["shuffler"]


class RfidReaderDevice(SerialDevice):
    driver: Literal["rfid"]
    antennas: dict[int, Zone] = Field(description="Antenna number -> zone it covers.")
    hold_ms: int = Field(
        default=900, ge=10, le=10_000, description="A tag unseen this long (and for some sweeps) has left."
    )
    dwell_ms: int = Field(default=20, ge=1, le=1000, description="Time per antenna in the sweep.")
    fault_crc_errors: int = Field(
        default=10, ge=1, description="Corrupt frames within fault_window_s that raise a fault."
    )
    fault_window_s: float = Field(default=5.0, gt=0)


class SensorBoardDevice(DeviceBase):
    driver: Literal["sensors"]
    vendor_id: int = Field(ge=0, le=0xFFFF)
    product_id: int = Field(ge=0, le=0xFFFF)
    serial_number: str | None = None
    poll_ms: int = Field(default=10, ge=1, le=1000)
    reconnect_max_s: float = Field(default=10.0, gt=0)
    backend: str | None = Field(
        default=None,
        pattern=r"^sim:.+$",
        description="None: real hardware through libusb; 'sim:PATH': the simulated board served "
        "on the unix socket PATH (tablectl simulate).",
    )


#: The kinds of device, as ``driver`` names them.
DeviceKind: TypeAlias = Literal["shuffler", "rfid", "sensors"]


class DeclaredDevice(DeviceBase):
    """A device whose driver runs elsewhere, declared by id and kind alone (``enabled = false``
    and no port): the engine takes from it only the events of its kind, and with
    ``[table] declared_devices_only`` it is one of the devices the table takes messages from."""

    driver: DeviceKind
    enabled: Literal[False] = Field(
        description="A declared device has no driver here: false (a driver of this PC needs its "
        "port, antennas or USB identity)."
    )


#: The keys only a device with a driver on this PC has: an entry with none of them and
#: ``enabled = false`` is a declaration.
_DRIVER_KEYS: Final = frozenset(
    {"port", "antennas", "vendor_id", "product_id", "serial_number", "backend", "baudrate"}
)


def _device_tag(value: object) -> str | None:
    """The union member of a ``[[devices]]`` entry: its driver, or ``declared``."""
    if isinstance(value, BaseModel):
        return "declared" if isinstance(value, DeclaredDevice) else getattr(value, "driver", None)
    if not isinstance(value, dict):
        return None
    if value.get("enabled") is False and not _DRIVER_KEYS & set(value):
        return "declared"
    driver = value.get("driver")
    return driver if isinstance(driver, str) else None


DeviceConfig: TypeAlias = Annotated[
    Annotated[ShufflerDevice, Tag("shuffler")]
    | Annotated[RfidReaderDevice, Tag("rfid")]
    | Annotated[SensorBoardDevice, Tag("sensors")]
    | Annotated[DeclaredDevice, Tag("declared")],
    Discriminator(
        _device_tag,
        custom_error_type="device_driver",
        custom_error_message="driver must be one of 'shuffler', 'rfid', 'sensors' (a declared "
        "device, enabled = false without a port: its kind)",
    ),
]
#: The devices whose driver runs on this PC.
DriverConfig: TypeAlias = ShufflerDevice | RfidReaderDevice | SensorBoardDevice

#: The event types each kind of device (``driver``) can produce: a device named in
#: ``[[devices]]`` that publishes another type is refused (its credentials must not let it
#: pass for another kind of device).
DRIVER_EVENTS: Final[dict[str, frozenset[str]]] = {
    "rfid": frozenset({"tag", "fault"}),
    "shuffler": frozenset({"shuffling", "shuffle_complete", "fault"}),
    "sensors": frozenset({"seat", "button", "blind", "key", "fault"}),
}


class JournalSection(Section):
    path: Path = Field(
        default=Path("var/journal-{table}.jsonl"),
        description="Append-only record of every message the controller received and sent; "
        "{table} stands for the table id, so tables configured side by side keep apart.",
    )
    fsync: bool = Field(
        default=True,
        description="Records are fsynced (in groups, by a thread) before the messages they hold are "
        "acknowledged to the broker: safe against power cuts.",
    )
    segment_mb: float = Field(
        default=64, gt=0, description="Close the active segment and start a new one beyond this size."
    )
    retain_days: float = Field(
        default=0,
        ge=0,
        description="Remove closed segments older than this many days (0: keep them forever). "
        "Set it to what the regulator requires.",
    )
    checkpoint_every: int = Field(
        default=1000,
        ge=1,
        description="Checkpoint the engine state every this many records (and at every hand's "
        "end): a restart replays at most about this many.",
    )
    backlog: int = Field(
        default=100_000,
        ge=0,
        description="Records held in memory while the journal cannot be written; beyond, records "
        "are lost (a gap the journal declares once it is written again).",
    )
    fsync_delay_ms: float = Field(
        default=0,
        ge=0,
        description="Testing only: sleep this long before every fsync (a slow disk, for the "
        "benchmarks). Never set it on a table.",
    )


def parse_listen(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:8080`` for IPv6; port 0: any free port) -> (host, port)."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise ValueError("expected host:port, e.g. 127.0.0.1:8080")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError("expected host:port with a port within 0..65535")
    if not host or any(c.isspace() or c in "/[]" for c in host):
        raise ValueError(f"expected host:port, and {host!r} is no host name or address")
    return host, int(port_text)


def _check_listen(text: str | None) -> str | None:
    if text is not None:
        parse_listen(text)
    return text


class DisplaySection(Section):
    listen: Annotated[str | None, AfterValidator(_check_listen)] = Field(
        default=None,
        description="host:port of the dealer's display (web page) served by the controller; port 0 "
        "picks a free port (the log says which). Unset: no display, the web stack is not loaded.",
    )
    suit_symbols: bool = True
    refresh_hz: float = Field(default=4.0, gt=0, le=60)
    alert_history: int = Field(default=12, ge=1, le=200)
    lamp: bool = Field(default=True, description="Drive the alert lamp from the active alerts.")
    buzzer_ms: int = Field(default=300, ge=0, le=10_000, description="Buzz on critical alerts.")

    @property
    def listen_address(self) -> tuple[str, int] | None:
        return parse_listen(self.listen) if self.listen is not None else None


class LoggingSection(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"


def _absolute(value: Path) -> Path:
    if not value.is_absolute():
        raise ValueError(f"{value}: give the absolute path the file has on the table PC")
    return value


TargetPath = Annotated[Path, AfterValidator(_absolute)]


class LanListenerSection(Section):
    """A TLS-only listener of the table PC's broker on the card room's network (floor tools)."""

    port: int = Field(default=8883, ge=1, le=65535)
    bind: str = Field(default="0.0.0.0", description="Address of the LAN interface.")  # noqa: S104
    cert_file: TargetPath = Field(description="The table PC's server certificate (PEM).")
    key_file: TargetPath
    client_ca_file: TargetPath | None = Field(
        default=None, description="When given, clients must also present a certificate of this CA."
    )


class FloorBridgeSection(Section):
    """The bridge from the table PC's broker to the floor broker (public topics only, TLS)."""

    url: str = Field(
        description="mqtts://host:port of the floor broker; several, comma separated: the nodes of "
        "one cluster (the bridge takes them in turn when one is lost)."
    )
    ca_file: TargetPath = Field(description="The CA that signed the floor broker's certificate.")
    cert_file: TargetPath | None = None
    key_file: TargetPath | None = None
    allow_input: bool = Field(
        default=False,
        description="Carry the floor's dealer inputs (acknowledgements) in to the table.",
    )

    @model_validator(mode="after")
    def _check(self) -> FloorBridgeSection:
        for url in self.urls:
            parts = urlsplit(url)
            if parts.scheme != "mqtts" or not parts.hostname:
                raise ValueError(f"url {url!r}: the floor is reached over TLS only (mqtts://host:port)")
            try:
                parts.port  # noqa: B018 - raises on a bad port
            except ValueError:
                raise ValueError(f"url {url!r} has a bad port") from None
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together")
        return self

    @property
    def urls(self) -> list[str]:
        return [url.strip() for url in self.url.split(",") if url.strip()] or [self.url]

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """(host, port) of each node, in the order given."""
        return [(urlsplit(url).hostname or "", urlsplit(url).port or 8883) for url in self.urls]

    @property
    def host(self) -> str:
        return self.addresses[0][0]

    @property
    def port(self) -> int:
        return self.addresses[0][1]


class DeploySection(Section):
    """What ``tablectl deploy`` renders for the table PC beyond the table itself."""

    user: str = Field(default="tablectl", pattern=r"^[a-z_][a-z0-9_-]*$", description="Service user.")
    watchdog_s: int = Field(
        default=10, ge=2, le=600, description="systemd restarts the service when its loop stalls this long."
    )
    lan: LanListenerSection | None = None
    floor: FloorBridgeSection | None = None


class TableConfig(Section):
    """The whole table configuration."""

    table: TableSection
    mqtt: MqttSection = Field(default_factory=MqttSection)
    decks: DecksSection
    chips: ChipsSection | None = None
    stakes: StakesSection | None = None
    devices: list[DeviceConfig] = Field(default_factory=list)
    journal: JournalSection = Field(default_factory=JournalSection)
    display: DisplaySection = Field(default_factory=DisplaySection)
    logging: LoggingSection = Field(default_factory=LoggingSection)
    deploy: DeploySection = Field(default_factory=DeploySection)

    @model_validator(mode="after")
    def _check_devices(self) -> TableConfig:
        problems: list[tuple[Place, str]] = []
        seen: set[str] = set()
        for index, device in enumerate(self.devices):
            if device.id in seen:
                problems.append((("devices", index, "id"), f"device id {device.id!r} is used twice"))
            seen.add(device.id)
            if isinstance(device, RfidReaderDevice):
                for antenna, zone in device.antennas.items():
                    place = ("devices", index, "antennas", antenna)
                    seat = zone_seat(zone) or zone_bet_seat(zone) or zone_stack_seat(zone)
                    if seat is not None and seat > self.table.seats:
                        problems.append(
                            (
                                place,
                                f"device {device.id!r} antenna {antenna} covers {zone} "
                                f"but the table has {self.table.seats} seats",
                            )
                        )
                    if antenna < 1:
                        problems.append((place, f"device {device.id!r}: antenna numbers start at 1"))
        if self.table.declared_devices_only and not self.devices:
            problems.append(
                (
                    ("table", "declared_devices_only"),
                    "declared_devices_only = true but [[devices]] declares no device: every device's "
                    "messages would be refused (declare each, by id and driver, with enabled = false "
                    "where its driver runs elsewhere)",
                )
            )
        if problems:
            raise PlacedError(problems)
        return self

    def device_kinds(self) -> dict[str, str]:
        """Device id -> its kind (``driver``) for every ``[[devices]]`` entry, enabled or not
        (a disabled entry names a device whose driver runs elsewhere)."""
        return {device.id: device.driver for device in self.devices}

    def drivers(self) -> list[DriverConfig]:
        """The enabled devices whose driver runs on this PC (not the declared ones)."""
        return [d for d in self.devices if d.enabled and not isinstance(d, DeclaredDevice)]

    def device_mqtt(self, device: DeviceConfig) -> MqttSection:
        """The broker settings of a driver: ``[mqtt]`` with the device's own identity, if any."""
        if device.mqtt is None:
            return self.mqtt
        own = device.mqtt
        return self.mqtt.model_copy(
            update={
                "username": own.username,
                "password": own.password,
                "password_file": own.password_file,
            }
        )

    def device(self, device_id: str) -> DeviceConfig:
        for device in self.devices:
            if device.id == device_id:
                return device
        raise KeyError(device_id)
