"""Pydantic models of the whole table configuration (TOML, with ``TABLECTL_`` env overrides)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final, Literal, TypeAlias
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, model_validator

from contract.cards import Zone, zone_bet_seat, zone_seat, zone_stack_seat
from contract.models import Profile
from contract.topics import DEFAULT_ROOT, check_segment


def _segment(what: str) -> AfterValidator:
    return AfterValidator(lambda value: check_segment(what, value))


TableId = Annotated[str, _segment("table id")]
DeviceId = Annotated[str, _segment("device id")]


class Section(BaseModel):
    """A configuration section: unknown keys are errors (a typo must not pass silently)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TableSection(Section):
    id: TableId
    seats: int = Field(ge=2, le=10, description="Seats are numbered 1..seats, clockwise.")
    profile: Profile = "roberts"
    name: str | None = None
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


class TlsSection(Section):
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    insecure: bool = Field(default=False, description="Skip host name verification (tests only).")


class MqttSection(Section):
    url: str = "mqtt://127.0.0.1:1883"
    root: str = DEFAULT_ROOT
    username: str | None = None
    password: SecretStr | None = None
    client_id: str | None = None
    keepalive: int = Field(default=30, ge=5, le=3600)
    tls: TlsSection | None = None

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


class SerialDevice(DeviceBase):
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
        default=900, ge=50, le=10_000, description="A tag unseen this long (and for some sweeps) has left."
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


DeviceConfig: TypeAlias = Annotated[
    ShufflerDevice | RfidReaderDevice | SensorBoardDevice, Field(discriminator="driver")
]

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
        description="fsync once per batch of received records, before what they caused is "
        "published or they are acknowledged (crash safety over speed).",
    )


class DisplaySection(Section):
    suit_symbols: bool = True
    refresh_hz: float = Field(default=4.0, gt=0, le=60)
    alert_history: int = Field(default=12, ge=1, le=200)
    lamp: bool = Field(default=True, description="Drive the alert lamp from the active alerts.")
    buzzer_ms: int = Field(default=300, ge=0, le=10_000, description="Buzz on critical alerts.")


class LoggingSection(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"


class TableConfig(Section):
    """The whole table configuration."""

    table: TableSection
    mqtt: MqttSection = Field(default_factory=MqttSection)
    decks: DecksSection
    devices: list[DeviceConfig] = Field(default_factory=list)
    journal: JournalSection = Field(default_factory=JournalSection)
    display: DisplaySection = Field(default_factory=DisplaySection)
    logging: LoggingSection = Field(default_factory=LoggingSection)

    @model_validator(mode="after")
    def _check_devices(self) -> TableConfig:
        seen: set[str] = set()
        for device in self.devices:
            if device.id in seen:
                raise ValueError(f"device id {device.id!r} is used twice")
            seen.add(device.id)
            if isinstance(device, RfidReaderDevice):
                for antenna, zone in device.antennas.items():
                    seat = zone_seat(zone) or zone_bet_seat(zone) or zone_stack_seat(zone)
                    if seat is not None and seat > self.table.seats:
                        raise ValueError(
                            f"device {device.id!r} antenna {antenna} covers {zone} "
                            f"but the table has {self.table.seats} seats"
                        )
                    if antenna < 1:
                        raise ValueError(f"device {device.id!r}: antenna numbers start at 1")
        return self

    def device_kinds(self) -> dict[str, str]:
        """Device id -> its kind (``driver``) for every ``[[devices]]`` entry, enabled or not
        (a disabled entry names a device whose driver runs elsewhere)."""
        return {device.id: device.driver for device in self.devices}

    def device(self, device_id: str) -> DeviceConfig:
        for device in self.devices:
            if device.id == device_id:
                return device
        raise KeyError(device_id)
