"""``tablectl deploy``'s files: modes, secrets kept or rotated, the configuration, unit and udev."""

from __future__ import annotations

import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from config.loader import load_table
from config.models import RfidReaderDevice, SensorBoardDevice, ShufflerDevice
from controller.cli import main as tablectl
from controller.deploy.passwords import check_password, hash_password
from tests.deploy.support import DEVICES, TABLE, deployment

USERS = [f"{TABLE}-controller", *(f"{TABLE}-dev-{d}" for d in DEVICES), f"{TABLE}-console", f"{TABLE}-floor"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_file_is_rendered_with_private_modes_and_no_secret_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with deployment(tmp_path, start=False) as table:
        out = table.out
        assert (
            tablectl(
                [
                    "deploy",
                    "--config",
                    str(table.source),
                    "--out",
                    str(out),
                    "--mosquitto-dir",
                    str(table.etc),
                ]
            )
            == 0
        )
        printed = capsys.readouterr()
        secrets = {user: table.secret(user) for user in USERS}
        for secret in secrets.values():
            assert secret not in printed.out + printed.err
        assert len(set(secrets.values())) == len(USERS)
        assert all(len(s) >= 40 for s in secrets.values())  # 256 bits, URL-safe base64
        assert mode(out) == 0o700
        for path in out.rglob("*"):
            if path.is_dir():
                assert mode(path) == 0o700, path
        for name in (
            "mosquitto/tablectl.passwd",
            *(f"tablectl/secrets/{u}" for u in USERS[:4]),
            f"secrets/{TABLE}-floor",
            f"secrets/{TABLE}-console",
        ):
            assert mode(out / name) == 0o600, name
        # The manifest says where each file goes, with owner and mode.
        rows = {
            line.split()[0]: line.split()[2:] for line in printed.out.splitlines()[1:] if "  ->  " in line
        }
        assert rows["mosquitto/tablectl.passwd"] == [f"{table.etc}/tablectl.passwd", "root:mosquitto", "0640"]
        assert rows[f"tablectl/secrets/{TABLE}-controller"] == [
            f"{table.source.parent}/secrets/{TABLE}-controller",
            "tablectl:tablectl",
            "0600",
        ]


def test_the_password_file_holds_mosquitto_hashes_of_the_secrets(tmp_path: Path) -> None:
    with deployment(tmp_path, start=False) as table:
        lines = (table.out / "mosquitto" / "tablectl.passwd").read_text().splitlines()
        entries = dict(line.split(":", 1) for line in lines)
        assert sorted(entries) == sorted(USERS)  # the bridge is a user of the floor broker only
        for user, hashed in entries.items():
            assert hashed.startswith("$7$101$")
            assert check_password(table.secret(user), hashed)
            assert not check_password(table.secret(user) + "x", hashed)


def test_our_hash_is_the_one_mosquitto_passwd_computes(tmp_path: Path) -> None:
    path = tmp_path / "passwd"
    path.write_text("alice:s3cret\n")
    subprocess.run(["mosquitto_passwd", "-U", str(path)], check=True, capture_output=True)
    hashed = path.read_text().strip().split(":", 1)[1]
    assert check_password("s3cret", hashed)
    salt_b64 = hashed.split("$")[3]
    import base64

    assert hash_password("s3cret", salt=base64.b64decode(salt_b64)) == hashed


def test_rendering_again_keeps_the_secrets_and_rotate_replaces_them(tmp_path: Path) -> None:
    with deployment(tmp_path, start=False) as table:
        first = {user: table.secret(user) for user in USERS}
        table.render()
        assert {user: table.secret(user) for user in USERS} == first
        table.extra_args = ["--rotate"]
        table.render()
        rotated = {user: table.secret(user) for user in USERS}
        assert all(rotated[user] != first[user] for user in USERS)


def test_the_rendered_configuration_keeps_the_file_and_adds_identities(tmp_path: Path) -> None:
    with deployment(tmp_path, start=False) as table:
        text = table.config.read_text()
        assert "# Table t1: the operator's file (this comment must survive deploy)." in text
        assert 'url = "mqtt://127.0.0.1:' in text
        assert "# the table PC's own broker" in text
        config, _ = load_table(table.config)
        assert config.mqtt.username == f"{TABLE}-controller"
        assert config.mqtt.password is not None
        assert config.mqtt.password.get_secret_value() == table.secret(f"{TABLE}-controller")
        for device in config.devices:
            own = config.device_mqtt(device)
            assert own.username == f"{TABLE}-dev-{device.id}"
            assert own.password is not None
            assert own.password.get_secret_value() == table.secret(f"{TABLE}-dev-{device.id}")
        shuffler, reader, board = config.devices
        assert isinstance(shuffler, ShufflerDevice)
        assert shuffler.port == "/dev/tablectl/shuffler"  # the udev rule's stable name
        assert isinstance(reader, RfidReaderDevice)
        assert reader.port == "/dev/tablectl/rfid-1"
        assert isinstance(board, SensorBoardDevice)
        data = tomllib.loads(text)
        assert data["devices"][1]["antennas"] == {"1": "seat:1", "2": "board"}
        assert "password" not in data["mqtt"]
        # The engine listens to the declared devices only (the broker lets no other publish).
        assert config.table.declared_devices_only
        assert data["table"]["declared_devices_only"] is True


def test_the_broker_keeps_a_thousand_messages_in_flight(tmp_path: Path) -> None:
    # The controller acknowledges a message once its journal record is durable: with mosquitto's
    # default of 20 in flight, a full disk or a slow fsync would stop every delivery to it; with
    # no limit, a reconnection behind a large backlog stalls the broker for seconds.
    with deployment(tmp_path, start=False) as table:
        lines = (table.out / "mosquitto" / "mosquitto.conf").read_text().splitlines()
        assert "max_inflight_messages 1000" in lines


def acl_blocks(text: str) -> dict[str, list[str]]:
    """The rules of each ``user`` of an ACL file."""
    blocks: dict[str, list[str]] = {}
    rules: list[str] = []
    for line in text.splitlines():
        if line.startswith("user "):
            rules = blocks.setdefault(line.removeprefix("user "), [])
        elif line.startswith("topic "):
            rules.append(line)
    return blocks


def test_acl_bridge_and_floor_files(tmp_path: Path) -> None:
    floor = (
        '\n[deploy.floor]\nurl = "mqtts://floor.cardroom.lan:8883"\n'
        'ca_file = "/etc/mosquitto/certs/floor-ca.crt"\n'
    )
    with deployment(tmp_path, start=False, extra=floor) as table:
        conf = (table.out / "mosquitto" / "mosquitto.conf").read_text()
        assert "allow_anonymous false" in conf
        assert "set_tcp_nodelay true" in conf
        assert "persistence true" in conf
        assert f"listener {table.port} 127.0.0.1" in conf
        assert "max_queued_messages 20000" in conf
        bridge_topics = [line for line in conf.splitlines() if line.startswith("topic ")]
        assert bridge_topics == [
            f"topic holdem/{TABLE}/{t} out {0 if t == 'state' else 1}"
            for t in ("alerts", "state", "hands", "controller/status")
        ]
        assert f"remote_password {table.secret(f'{TABLE}-bridge')}" in conf
        assert mode(table.out / "mosquitto" / "mosquitto.conf") == 0o600  # it holds a password
        floor_acl = (table.out / "floor" / f"tablectl-{TABLE}.acl").read_text()
        assert "/dev/" not in floor_acl
        assert "input" not in floor_acl  # no acknowledgement from the floor unless allowed
        acl = (table.out / "mosquitto" / "tablectl.acl").read_text()
        blocks = acl_blocks(acl)
        assert blocks[f"{TABLE}-dev-rfid-1"] == [
            f"topic write holdem/{TABLE}/dev/rfid-1/event",
            f"topic readwrite holdem/{TABLE}/dev/rfid-1/status",
            f"topic read holdem/{TABLE}/dev/rfid-1/cmd",
        ]
        assert not any("dev" in rule for rule in blocks[f"{TABLE}-floor"])
        assert f"topic write holdem/{TABLE}/input" not in blocks[f"{TABLE}-floor"]
        assert blocks[f"{TABLE}-controller"][0] == f"topic read holdem/{TABLE}/dev/#"
        # it reads back its own retained status: a second controller of the table refuses
        assert f"topic readwrite holdem/{TABLE}/controller/status" in blocks[f"{TABLE}-controller"]
        assert f"topic write holdem/{TABLE}/controller/status" not in blocks[f"{TABLE}-controller"]


def test_udev_rules_give_stable_names_and_group_access(tmp_path: Path) -> None:
    with deployment(tmp_path, start=False) as table:
        rules = (table.out / "udev" / f"70-tablectl-{TABLE}.rules").read_text()
        lines = [line for line in rules.splitlines() if line and not line.startswith("#")]
        assert lines == [
            'SUBSYSTEM=="tty", ATTRS{idVendor}=="0403", ATTRS{idProduct}=="6001", '
            'ATTRS{serial}=="FT4AB12C", SYMLINK+="tablectl/shuffler", GROUP="tablectl", MODE="0660"',
            'SUBSYSTEM=="tty", ATTRS{idVendor}=="1fc9", ATTRS{idProduct}=="0083", '
            'SYMLINK+="tablectl/rfid-1", GROUP="tablectl", MODE="0660"',
            'SUBSYSTEM=="usb", ENV{DEVTYPE}=="usb_device", ATTR{idVendor}=="1209", '
            'ATTR{idProduct}=="7ab1", ATTR{serial}=="SB-0042", SYMLINK+="tablectl/sensors", '
            'GROUP="tablectl", MODE="0660"',
        ]
        assert "no serial_number: a second adapter" in rules  # rfid-1 has none


def test_deploy_refuses_a_controller_that_does_not_use_the_local_broker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with deployment(tmp_path, start=False) as table:
        text = table.source.read_text().replace("mqtt://127.0.0.1:", "mqtts://broker.lan:")
        table.source.write_text(text)
        assert tablectl(["deploy", "--config", str(table.source), "--out", str(tmp_path / "o2")]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        assert "tablectl deploy renders the table PC's own broker" in err[0]


def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    """What ``verify`` checks: syntax and every key known to this systemd, the ExecStart binary
    exists and is executable, the ordering dependencies resolve. It does not check that the
    service user exists (that is an installation step of docs/deploy.md)."""
    with deployment(tmp_path, start=False) as table:
        table.extra_args = ["--executable", str(Path(sys.executable).parent / "tablectl")]
        table.render()
        unit = table.out / "systemd" / f"tablectl-{TABLE}.service"
        text = unit.read_text()
        for line in (
            "Type=notify",
            "WatchdogSec=10",
            "Restart=always",
            "User=tablectl",
            "ProtectSystem=strict",
            "NoNewPrivileges=yes",
            "After=mosquitto.service",
            f"ReadWritePaths={tmp_path / 'var'}",
        ):
            assert line in text.splitlines(), line
        assert sum(line.startswith("ReadWritePaths=") for line in text.splitlines()) == 1
        result = subprocess.run(
            ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        assert result.stderr.strip() == "", result.stderr  # no unknown key, no warning
        broken = unit.with_name("broken.service")
        broken.write_text(text.replace("Type=notify", "Type=notify\nWatchdogSecs=5"))
        warned = subprocess.run(
            ["systemd-analyze", "verify", str(broken)], capture_output=True, text=True, check=False
        )
        assert "Unknown key" in warned.stderr  # the check above would see a typo


def test_deploy_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        tablectl(["deploy", "--help"])
    assert done.value.code == 0
    assert "usage: tablectl deploy" in capsys.readouterr().out


def test_a_device_declared_by_id_and_kind_gets_its_identity_and_acl_but_no_udev_rule(
    tmp_path: Path,
) -> None:
    remote = '\n[[devices]]\nid = "rfid-2"\ndriver = "rfid"\nenabled = false\n'
    with deployment(tmp_path, start=False, extra=remote) as table:
        blocks = acl_blocks((table.out / "mosquitto" / "tablectl.acl").read_text())
        assert blocks[f"{TABLE}-dev-rfid-2"] == [
            f"topic write holdem/{TABLE}/dev/rfid-2/event",
            f"topic readwrite holdem/{TABLE}/dev/rfid-2/status",
            f"topic read holdem/{TABLE}/dev/rfid-2/cmd",
        ]
        assert table.secret(f"{TABLE}-dev-rfid-2")  # to copy to the PC its driver runs on
        rules = (table.out / "udev" / f"70-tablectl-{TABLE}.rules").read_text()
        assert "# rfid-2: declared, its driver runs elsewhere, no rule" in rules
        config, _ = load_table(table.config)
        assert config.device_kinds()["rfid-2"] == "rfid"
        assert [d.id for d in config.drivers()] == ["shuffler", "rfid-1", "sensors"]
        assert config.table.declared_devices_only
