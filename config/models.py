"""Pydantic models of the whole table configuration (TOML, with ``TABLECTL_`` env overrides)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, TypeAlias
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


class TlsSection(Section):
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    insecure: bool = Field(default=False, description="Skip host name verification (tests only).")


MqttScheme: TypeAlias = Literal["mqtt", "mqtts", "embedded"]


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


class SerialDevice(DeviceBase):
    port: str = Field(
        description="Serial device path (/dev/ttyUSB0) or a pyserial URL (socket://host:port)."
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

    def device(self, device_id: str) -> DeviceConfig:
        for device in self.devices:
            if device.id == device_id:
                return device
        raise KeyError(device_id)
