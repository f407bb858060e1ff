"""Configuration and deck registry: the example passes, each kind of mistake is named precisely."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.errors import ConfigError
from config.layout import standard_antennas
from config.loader import load_config, load_table
from config.models import RfidReaderDevice, SensorBoardDevice, ShufflerDevice
from config.registry import load_registry
from tests.conftest import EXAMPLE_CONFIG, EXAMPLE_REGISTRY

MINIMAL = """\
[table]
id = "t7"
seats = 6

[mqtt]
url = "mqtt://127.0.0.1:1883"

[decks]
registry = "decks.csv"
"""


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *args], capture_output=True, text=True, check=False
    )


def write_config(tmp_path: Path, text: str, registry: str | None = None) -> Path:
    (tmp_path / "decks.csv").write_text(registry or EXAMPLE_REGISTRY.read_text())
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_example_config_is_complete_and_valid() -> None:
    config, registry = load_table(EXAMPLE_CONFIG)
    assert config.table.seats == 9
    assert config.table.profile == "roberts"
    kinds = [type(device) for device in config.devices]
    assert kinds == [ShufflerDevice, RfidReaderDevice, SensorBoardDevice]
    reader = config.devices[1]
    assert isinstance(reader, RfidReaderDevice)
    assert len(reader.antennas) == 25
    assert {reader.antennas[n] for n in range(1, 10)} == {f"seat:{n}" for n in range(1, 10)}
    assert {"board", "burn", "muck", "aside"} <= set(reader.antennas.values())
    # The chip antennas: a betting area per seat, the pot and the rake, as in the standard layout.
    assert {reader.antennas[n] for n in range(15, 24)} == {f"bet:{n}" for n in range(1, 10)}
    assert reader.antennas == standard_antennas(9, chips=True)
    assert registry.deck_ids == ["A", "B"]
    assert config.decks.registry == EXAMPLE_REGISTRY


def test_cli_config_check_accepts_the_example() -> None:
    result = tablectl("config", "check", str(EXAMPLE_CONFIG))
    assert result.returncode == 0, result.stderr
    assert "ok" in result.stdout


def test_minimal_engine_only_config(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, MINIMAL))
    assert config.devices == []
    assert config.table.profile == "roberts"
    assert config.mqtt.root == "holdem"
    assert config.mqtt.port == 1883
    assert config.journal.path == tmp_path / "var" / "journal-t7.jsonl"


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLECTL_MQTT__URL", "mqtt://10.9.8.7:1999")
    monkeypatch.setenv("TABLECTL_TABLE__PROFILE", "tda")
    config = load_config(write_config(tmp_path, MINIMAL))
    assert (config.mqtt.host, config.mqtt.port) == ("10.9.8.7", 1999)
    assert config.table.profile == "tda"
    assert config.table.id == "t7"


def test_pydantic_settings_is_imported_only_for_an_override(tmp_path: Path) -> None:
    """A start without TABLECTL_ variables does without pydantic-settings' imports (issue 20,
    point 1); with one, the override applies."""
    path = write_config(tmp_path, MINIMAL)
    code = (
        "import sys; from config.loader import load_config; config = load_config(sys.argv[1]); "
        "print(config.table.profile, 'pydantic_settings' in sys.modules)"
    )
    plain = {k: v for k, v in os.environ.items() if not k.upper().startswith("TABLECTL_")}
    for env, expected in (
        (plain, "roberts False"),
        ({**plain, "TABLECTL_TABLE__PROFILE": "tda"}, "tda True"),
    ):
        result = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, check=False
        )
        assert result.stdout.strip() == expected, result.stderr


@pytest.mark.parametrize("override", [False, True])
def test_sections_match_whatever_their_case_with_or_without_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, override: bool
) -> None:
    for name in list(os.environ):
        if name.upper().startswith("TABLECTL_"):
            monkeypatch.delenv(name)
    if override:
        monkeypatch.setenv("TABLECTL_TABLE__PROFILE", "tda")
    config = load_config(write_config(tmp_path, MINIMAL.replace("[table]", "[Table]")))
    assert config.table.id == "t7"
    assert config.table.profile == ("tda" if override else "roberts")


def test_bad_environment_value_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLECTL_TABLE__SEATS", "eleven")
    with pytest.raises(ConfigError, match="TABLECTL_TABLE__SEATS"):
        load_config(write_config(tmp_path, MINIMAL))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (('url = "mqtt', 'ulr = "mqtt'), r"table.toml:6: mqtt.ulr: unknown key"),
        (("seats = 6", "seats = 12"), r"table.toml:3: table.seats: .*less than or equal to 10"),
        (('id = "t7"', 'id = "t/7"'), r"table.toml:2: table.id: .*table id"),
        (('url = "mqtt://127.0.0.1:1883"', 'url = "http://x"'), r"table.toml:\d: mqtt: .*scheme"),
        (('[decks]\nregistry = "decks.csv"\n', "[decks]\n"), r"table.toml:8: decks.registry: required"),
        (("seats = 6", 'seats = 6\nprofile = "house"'), r"table.toml:4: table.profile:"),
        (
            ('registry = "decks.csv"\n', 'registry = "decks.csv"\n\n[stakes]\nstraddle = "maybe"\n'),
            r"table.toml:12: stakes.straddle:",
        ),
    ],
)
def test_config_errors_name_file_line_and_key(tmp_path: Path, change: tuple[str, str], expected: str) -> None:
    path = write_config(tmp_path, MINIMAL.replace(*change))
    with pytest.raises(ConfigError, match=expected):
        load_config(path)
    result = tablectl("config", "check", str(path))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("listen", "expected"),
    [
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        ("0.0.0.0:0", ("0.0.0.0", 0)),
        ("[::1]:9000", ("::1", 9000)),
        ("display.local:80", ("display.local", 80)),
    ],
)
def test_display_listen_address(tmp_path: Path, listen: str, expected: tuple[str, int]) -> None:
    config = load_config(write_config(tmp_path, MINIMAL + f'\n[display]\nlisten = "{listen}"\n'))
    assert config.display.listen_address == expected


@pytest.mark.parametrize("listen", ["8080", ":8080", "127.0.0.1:http", "127.0.0.1:70000", "a b:1"])
def test_a_bad_display_listen_address_names_the_key(tmp_path: Path, listen: str) -> None:
    path = write_config(tmp_path, MINIMAL + f'\n[display]\nlisten = "{listen}"\n')
    with pytest.raises(ConfigError, match=r"table.toml:12: display.listen: expected host:port"):
        load_config(path)


def test_no_display_by_default(tmp_path: Path) -> None:
    assert load_config(write_config(tmp_path, MINIMAL)).display.listen_address is None


def test_device_errors_point_into_the_array_of_tables(tmp_path: Path) -> None:
    text = MINIMAL + (
        '\n[[devices]]\nid = "shuffler"\ndriver = "shuffler"\nport = "/dev/ttyUSB0"\n'
        '\n[[devices]]\nid = "rfid-1"\ndriver = "rfid"\nport = "/dev/ttyACM0"\nhold_mss = 3\n'
        '[devices.antennas]\n1 = "seat:1"\n'
    )
    with pytest.raises(ConfigError, match=r"table.toml:20: devices.rfid-1.hold_mss: unknown key"):
        load_config(write_config(tmp_path, text))


def test_antenna_beyond_the_table_seats_is_rejected(tmp_path: Path) -> None:
    text = MINIMAL + (
        '\n[[devices]]\nid = "rfid-1"\ndriver = "rfid"\nport = "/dev/ttyACM0"\n'
        '[devices.antennas]\n1 = "seat:9"\n'
    )
    with pytest.raises(ConfigError, match="covers seat:9 but the table has 6 seats"):
        load_config(write_config(tmp_path, text))


def test_toml_syntax_error_names_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"table.toml: not valid TOML: .*line 3"):
        load_config(write_config(tmp_path, MINIMAL.replace("seats = 6", "seats = ")))


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    result = tablectl("config", "check", str(tmp_path / "nope.toml"))
    assert result.returncode == 1
    assert "nope.toml: cannot read configuration" in result.stderr


def registry_with(tmp_path: Path, edit: tuple[int, str]) -> Path:
    lines = EXAMPLE_REGISTRY.read_text().splitlines()
    index, row = edit
    lines[index] = row
    path = tmp_path / "decks.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_registry_duplicate_card_is_named(tmp_path: Path) -> None:
    lines = EXAMPLE_REGISTRY.read_text().splitlines()
    uid = lines[2].split(",")[0]
    path = registry_with(tmp_path, (2, f"{uid},A,As"))  # line 3 repeats line 2's card
    with pytest.raises(ConfigError, match=r"decks.csv:3: card As of deck 'A' already on line 2"):
        load_registry(path)
    config = write_config(tmp_path, MINIMAL, registry=path.read_text())
    result = tablectl("config", "check", str(config))
    assert result.returncode == 1
    assert "decks.csv:3: card As" in result.stderr


def test_registry_unknown_card_code_is_named(tmp_path: Path) -> None:
    lines = EXAMPLE_REGISTRY.read_text().splitlines()
    uid = lines[5].split(",")[0]
    path = registry_with(tmp_path, (5, f"{uid},A,1x"))
    with pytest.raises(ConfigError, match=r"decks.csv:6: card '1x' is not a card code"):
        load_registry(path)
    config = write_config(tmp_path, MINIMAL, registry=path.read_text())
    result = tablectl("config", "check", str(config))
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1


def test_registry_duplicate_uid_across_decks(tmp_path: Path) -> None:
    lines = EXAMPLE_REGISTRY.read_text().splitlines()
    uid_a = lines[1].split(",")[0]
    b_row = lines[60].split(",")
    path = registry_with(tmp_path, (60, f"{uid_a},{b_row[1]},{b_row[2]}"))
    with pytest.raises(ConfigError, match=r"decks.csv:61: uid .* already used on line 2"):
        load_registry(path)


def test_registry_short_deck_and_bad_header(tmp_path: Path) -> None:
    lines = EXAMPLE_REGISTRY.read_text().splitlines()
    short = tmp_path / "short.csv"
    short.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ConfigError, match=r"deck 'B' has 51 cards, not 52; missing 2c"):
        load_registry(short)
    header = tmp_path / "header.csv"
    header.write_text("id,deck,card\n" + "\n".join(lines[1:]) + "\n")
    with pytest.raises(ConfigError, match=r"header.csv:1: header must be 'uid,deck,card'"):
        load_registry(header)


def test_cli_subcommands_have_help() -> None:
    for args in (
        ["--help"],
        ["run", "--help"],
        ["demo", "--help"],
        ["simulate", "--help"],
        ["floor", "--help"],
        ["config", "check", "--help"],
        ["asyncapi", "--help"],
    ):
        result = tablectl(*args)
        assert result.returncode == 0, (args, result.stderr)
        assert "usage: tablectl" in result.stdout


def test_the_straddle_is_allowed_unless_the_house_says_not(tmp_path: Path) -> None:
    from engine.api import EngineSettings

    for line, allowed in (("", True), ("straddle = false\n", False), ("straddle = true\n", True)):
        text = MINIMAL + "\n[stakes]\nbig_blind = 2\n" + line
        config = load_config(write_config(tmp_path, text))
        assert config.stakes is not None
        assert config.stakes.straddle is allowed
        settings = EngineSettings.from_config(config, load_registry(tmp_path / "decks.csv"))
        assert settings.stakes is not None
        assert settings.stakes.straddle is allowed
