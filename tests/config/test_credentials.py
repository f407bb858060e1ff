"""Broker credentials from files and the environment, per-device identities, exposure warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.errors import ConfigError
from config.exposure import broker_findings, is_loopback, refusal
from config.loader import load_config
from controller.cli import main as tablectl
from tests.conftest import EXAMPLE_REGISTRY

SECRET = "s3cret-Value-that-must-never-show"

BASE = f"""\
[table]
id = "t3"
seats = 6

[mqtt]
url = "URL"

[decks]
registry = "{EXAMPLE_REGISTRY}"
"""


def write(tmp_path: Path, text: str, url: str = "mqtt://127.0.0.1:1883") -> Path:
    path = tmp_path / "t3.toml"
    path.write_text(text.replace("URL", url))
    return path


def secret_file(tmp_path: Path, name: str, value: str = SECRET, mode: int = 0o600) -> Path:
    folder = tmp_path / "secrets"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(value + "\n")
    path.chmod(mode)
    return path


def test_password_file_is_read_relative_to_the_config(tmp_path: Path) -> None:
    secret_file(tmp_path, "t3-controller")
    text = BASE.replace(
        'url = "URL"', 'url = "URL"\nusername = "t3-controller"\npassword_file = "secrets/t3-controller"'
    )
    config = load_config(write(tmp_path, text))
    assert config.mqtt.password is not None
    assert config.mqtt.password.get_secret_value() == SECRET
    assert config.mqtt.password_file == tmp_path / "secrets" / "t3-controller"
    assert SECRET not in repr(config)
    assert SECRET not in str(config.model_dump())


def test_password_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLECTL_MQTT__USERNAME", "t3-controller")
    monkeypatch.setenv("TABLECTL_MQTT__PASSWORD", SECRET)
    config = load_config(write(tmp_path, BASE))
    assert config.mqtt.password is not None
    assert config.mqtt.password.get_secret_value() == SECRET


def test_unreadable_password_file_names_file_line_and_key(tmp_path: Path) -> None:
    text = BASE.replace('url = "URL"', 'url = "URL"\npassword_file = "secrets/none"')
    with pytest.raises(ConfigError, match=r"t3.toml:7: mqtt.password_file: cannot read .*secrets/none"):
        load_config(write(tmp_path, text))


def test_password_and_password_file_together_are_refused_without_echoing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret_file(tmp_path, "c")
    text = BASE.replace('url = "URL"', 'url = "URL"\npassword_file = "secrets/c"')
    monkeypatch.setenv("TABLECTL_MQTT__PASSWORD", SECRET)
    with pytest.raises(ConfigError, match="password or password_file, not both") as caught:
        load_config(write(tmp_path, text))
    assert SECRET not in str(caught.value)


def test_a_bad_password_value_is_not_echoed(tmp_path: Path) -> None:
    text = BASE.replace('url = "URL"', 'url = "URL"\npassword = 12345678')
    with pytest.raises(ConfigError, match=r"t3.toml:7: mqtt.password:") as caught:
        load_config(write(tmp_path, text))
    assert "12345678" not in str(caught.value)


def test_each_device_connects_with_its_own_identity(tmp_path: Path) -> None:
    secret_file(tmp_path, "t3-dev-shuffler", "shuffler-secret")
    text = BASE + (
        '\n[[devices]]\nid = "shuffler"\ndriver = "shuffler"\nport = "/dev/tablectl/shuffler"\n'
        'vendor_id = 0x0403\nproduct_id = 0x6001\nserial_number = "FT1"\n'
        '[devices.mqtt]\nusername = "t3-dev-shuffler"\npassword_file = "secrets/t3-dev-shuffler"\n'
        '\n[[devices]]\nid = "sensors"\ndriver = "sensors"\nvendor_id = 0x1209\nproduct_id = 0x7AB1\n'
    )
    config = load_config(write(tmp_path, text))
    shuffler, sensors = config.drivers()
    own = config.device_mqtt(shuffler)
    assert own.username == "t3-dev-shuffler"
    assert own.password is not None
    assert own.password.get_secret_value() == "shuffler-secret"
    assert own.url == config.mqtt.url
    assert config.device_mqtt(sensors) is config.mqtt
    assert (shuffler.vendor_id, shuffler.product_id, shuffler.serial_number) == (0x403, 0x6001, "FT1")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.3.2.1", True),
        ("::1", True),
        ("localhost", True),
        ("10.0.0.5", False),
        ("broker.cardroom.lan", False),
        ("0.0.0.0", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_plain_or_anonymous_broker_on_the_network_is_refused_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, BASE, url="mqtt://10.1.2.3:1883")
    config = load_config(path)
    assert [f.what.split()[0] for f in broker_findings(config)] == ["plain-text", "anonymous"]
    line = refusal(path, config)
    assert line is not None
    assert line.startswith(f"{path}:6: mqtt.url: plain-text broker mqtt://10.1.2.3:1883")
    assert "allow_insecure" in line
    # tablectl run stops at once with that line (exit 1), before any connection attempt.
    assert tablectl(["run", "--config", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"error: {path}:6: mqtt.url: plain-text")
    # config check refuses what run refuses, in the same words, and names both problems.
    assert tablectl(["config", "check", str(path)]) == 1
    out = capsys.readouterr()
    errors = out.err.strip().splitlines()
    assert errors[0] == f"error: {line}"
    assert len(errors) == 2
    assert all(e.startswith(f"error: {path}:6: mqtt.url:") for e in errors)
    assert all(e.endswith("if the house accepts it)") for e in errors)
    assert "ok" not in out.out
    # With allow_insecure both run and config check accept it: the problems stay warnings.
    allowed = write(
        tmp_path, BASE.replace('url = "URL"', 'url = "URL"\nallow_insecure = true'), url="mqtt://0.0.0.0:1883"
    )
    assert tablectl(["config", "check", str(allowed)]) == 0
    warnings = capsys.readouterr().err.strip().splitlines()
    assert len(warnings) == 2
    assert all(w.startswith(f"warning: {allowed}:6: mqtt.url:") for w in warnings)


def test_tls_with_credentials_or_an_explicit_allow_runs(tmp_path: Path) -> None:
    secret_file(tmp_path, "c")
    secure = BASE.replace('url = "URL"', 'url = "URL"\nusername = "c"\npassword_file = "secrets/c"')
    path = write(tmp_path, secure, url="mqtts://broker.cardroom.lan:8883")
    assert refusal(path, load_config(path)) is None
    allowed = BASE.replace('url = "URL"', 'url = "URL"\nallow_insecure = true')
    path = write(tmp_path, allowed, url="mqtt://10.1.2.3:1883")
    assert refusal(path, load_config(path)) is None
    assert broker_findings(load_config(path))  # still warned about by config check


def test_loopback_and_embedded_brokers_are_not_flagged(tmp_path: Path) -> None:
    assert broker_findings(load_config(write(tmp_path, BASE))) == []
    assert broker_findings(load_config(write(tmp_path, BASE, url="embedded"))) == []


def test_config_check_warns_about_shared_identities_and_open_secret_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret_file(tmp_path, "c", mode=0o644)
    text = BASE.replace('url = "URL"', 'url = "URL"\nusername = "c"\npassword_file = "secrets/c"') + (
        '\n[[devices]]\nid = "shuffler"\ndriver = "shuffler"\nport = "/dev/ttyUSB0"\n'
    )
    path = write(tmp_path, text)
    assert tablectl(["config", "check", str(path)]) == 0
    warnings = capsys.readouterr().err
    assert "devices.shuffler.id: device shuffler connects as c, the controller" in warnings
    assert "mqtt.password_file: " in warnings
    assert "readable by others (mode 0644" in warnings
    assert SECRET not in warnings
