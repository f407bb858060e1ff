"""``tablectl config check`` as a new user meets it: every error, in words, at its key and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from config.check import check
from tests.config.test_config import tablectl
from tests.conftest import EXAMPLE_CONFIG


def example(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    """The example configuration with its registries, each ``(old, new)`` edit made once."""
    for name in ("decks.example.csv", "chips.example.csv"):
        shutil.copy(EXAMPLE_CONFIG.parent / name, tmp_path / name)
    text = EXAMPLE_CONFIG.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def refused(path: Path) -> list[str]:
    """What ``tablectl config check`` prints on standard error, refusing the file (exit 1)."""
    result = tablectl("config", "check", str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    return result.stderr.strip().splitlines()


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(text))


def test_the_example_is_ok_with_no_warning(tmp_path: Path) -> None:
    path = example(tmp_path)
    result = tablectl("config", "check", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith(f"{path}: ok: table t1, 9 seats")
    assert "; start-up grace 5 s; devices shuffler (shuffler)" in result.stdout


def test_the_start_up_grace_is_checked_and_named(tmp_path: Path) -> None:
    path = example(tmp_path, ("startup_grace_s = 5.0", "startup_grace_s = 12"))
    assert "; start-up grace 12 s; devices " in check(path).summary
    path = example(tmp_path, ("startup_grace_s = 5.0", "startup_grace_s = -1"))
    [error] = refused(path)
    assert error == (
        f"error: {path}:{line_of(path, 'startup_grace_s')}: table.startup_grace_s: "
        "Input should be greater than or equal to 0 (got -1)"
    )


def test_every_error_is_shown_each_on_its_line_with_the_device_by_its_id(tmp_path: Path) -> None:
    path = example(
        tmp_path,
        ("baudrate = 115200", "baudrate = -5"),  # the shuffler's
        ('9 = "seat:9"', '9 = "seat:12"'),
        ("poll_ms = 10", "poll_ms = 0"),
    )
    errors = refused(path)
    assert errors == [
        f"error: {path}:{line_of(path, 'baudrate = -5')}: devices.shuffler.baudrate: "
        "Input should be greater than 0 (got -5)",
        f"error: {path}:{line_of(path, '9 = ')}: devices.rfid-1.antennas.9: 'seat:12': "
        "the table has 9 seats (seat:1 to seat:9)",
        f"error: {path}:{line_of(path, 'poll_ms = 0')}: devices.sensors.poll_ms: "
        "Input should be greater than or equal to 1 (got 0)",
    ]
    assert not [line for line in errors if "more error" in line]


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        ("seat:12", "'seat:12': the table has 9 seats (seat:1 to seat:9)"),
        ("bet:11", "'bet:11': the table has 9 seats (bet:1 to bet:9)"),
        (
            "seat9",
            "'seat9' is not a zone: seat:N, bet:N or stack:N (N = 1..9), board, burn, muck, "
            "aside, pot or rake",
        ),
        ("seat:10", "device 'rfid-1' antenna 9 covers seat:10 but the table has 9 seats"),
    ],
)
def test_a_wrong_zone_is_said_in_words_never_as_a_regular_expression(
    tmp_path: Path, zone: str, expected: str
) -> None:
    path = example(tmp_path, ('9 = "seat:9"', f'9 = "{zone}"'))
    report = check(path)
    assert report.errors == [f"{path}:{line_of(path, '9 = ')}: devices.rfid-1.antennas.9: {expected}"]
    assert not any("^" in line or "[1-9]" in line for line in report.errors)


def test_a_seat_without_an_antenna_is_an_error_and_a_seat_with_two_a_warning(tmp_path: Path) -> None:
    path = example(tmp_path, ('2 = "seat:2"', '2 = "seat:1"'))
    assert refused(path) == [
        f"error: {path}:{line_of(path, '[devices.antennas]')}: devices.rfid-1.antennas: "
        "no antenna covers seat:2: the cards dealt to seat 2 are never read",
        f"warning: {path}:{line_of(path, '2 = ')}: devices.rfid-1.antennas.2: 2 antennas cover "
        "seat:1 (rfid-1 antenna 1, rfid-1 antenna 2): is one of them meant for another zone?",
    ]


def test_two_board_antennas_are_the_standard_layout_and_a_missing_pot_a_warning(tmp_path: Path) -> None:
    path = example(tmp_path, ('24 = "pot"', '24 = "aside"'))
    report = check(path)
    assert report.ok
    assert report.warnings == [
        f"{path}:{line_of(path, '[devices.antennas]')}: devices.rfid-1.antennas: no antenna covers pot"
    ]


def test_a_duplicate_device_id_is_named_at_its_line(tmp_path: Path) -> None:
    path = example(tmp_path, ('id = "sensors"', 'id = "shuffler"'))
    second = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line == 'id = "shuffler"'][1]
    assert check(path).errors == [f"{path}:{second}: devices.shuffler.id: device id 'shuffler' is used twice"]


REMOTE_READER = '\n[[devices]]\nid = "rfid-2"\ndriver = "rfid"\nenabled = false\n'


def test_a_device_whose_driver_runs_elsewhere_is_declared_by_id_and_kind(tmp_path: Path) -> None:
    path = example(
        tmp_path,
        ("gap_wait_s = 10.0", "gap_wait_s = 10.0\n# (declared below)"),
        ("# What tablectl deploy renders", REMOTE_READER + "\n# What tablectl deploy renders"),
        ("declared_devices_only = false", "declared_devices_only = true"),
    )
    result = tablectl("config", "check", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith(
        "devices shuffler (shuffler), rfid-1 (rfid), sensors (sensors), rfid-2 (rfid, declared), no others"
    )


def test_a_declared_device_needs_a_kind_and_a_driver_here_its_port(tmp_path: Path) -> None:
    path = example(
        tmp_path,
        (
            "# What tablectl deploy renders",
            '\n[[devices]]\nid = "rfid-2"\ndriver = "reader"\nenabled = false\n'
            '\n[[devices]]\nid = "rfid-3"\ndriver = "rfid"\n\n# What tablectl deploy renders',
        ),
    )
    errors = refused(path)
    assert any("devices.rfid-2.driver: Input should be 'shuffler', 'rfid' or 'sensors'" in e for e in errors)
    assert any("devices.rfid-3.port: required key is missing" in e for e in errors)


def test_declared_devices_only_without_a_declared_device_is_an_error_at_its_key(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    shutil.copy(EXAMPLE_CONFIG.parent / "decks.example.csv", tmp_path / "decks.example.csv")
    path.write_text(
        '[table]\nid = "t1"\nseats = 9\ndeclared_devices_only = true\n\n'
        '[decks]\nregistry = "decks.example.csv"\n'
    )
    [error] = refused(path)
    assert error.startswith(f"error: {path}:4: table.declared_devices_only: declared_devices_only = true")
