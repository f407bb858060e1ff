"""Load the table configuration from TOML, with ``TABLECTL_`` environment overrides.

Environment variables win over the file: ``TABLECTL_MQTT__URL=mqtt://10.0.0.5:1883`` replaces
``[mqtt] url``; nested keys are joined with ``__``. Every error is one line naming the file, the line
and the key (or the environment variable), never a traceback.

Broker passwords may come from the file (``password``), from a file the configuration names
(``password_file``, read here, relative to the configuration) or from the environment
(``TABLECTL_MQTT__PASSWORD``); none is ever echoed in an error.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import SecretStr, ValidationError
from pydantic_core import ErrorDetails

from config.chips import ChipRegistry, load_chips
from config.environment import ENV_DELIMITER, ENV_PREFIX, validated
from config.errors import ConfigError, read_text
from config.models import Credentials, PlacedError, TableConfig
from config.registry import DeckRegistry, load_registry
from contract.cards import ZONE_PATTERN

_HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\s\"']+?)\s*\]\]?\s*(#.*)?$")
_KEY_RE = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")


def _locate(text: str, loc: tuple[str | int, ...]) -> int | None:
    """The 1-based line that best matches a validation location, or None.

    A light scan of the TOML: table headers, array-of-table counters and ``key =`` lines. It finds
    the deepest path element that exists in the file (a missing key points at its section).
    """
    best_line: int | None = None
    best_depth = -1
    section: tuple[str | int, ...] = ()
    counters: dict[tuple[str | int, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER_RE.match(line)
        if header:
            names: tuple[str | int, ...] = tuple(p.strip().strip("\"'") for p in header.group(2).split("."))
            if header.group(1) == "[[":
                index = counters.get(names, -1) + 1
                counters[names] = index
                section = (*names, index)
            else:
                # [devices.antennas] after [[devices]] belongs to the last devices entry.
                section = names
                for cut in range(len(names) - 1, 0, -1):
                    if names[:cut] in counters:
                        section = (*names[:cut], counters[names[:cut]], *names[cut:])
                        break
            path = section
        else:
            key = _KEY_RE.match(line)
            if not key:
                continue
            path = (*section, key.group(1).strip('"'))
        depth = 0
        for want, have in zip(loc, path, strict=False):
            if str(want) != str(have):
                break
            depth += 1
        if depth == len(path) and depth > best_depth:
            best_depth, best_line = depth, number
    return best_line


def _env_name(loc: tuple[str | int, ...]) -> str | None:
    name = ENV_PREFIX + ENV_DELIMITER.join(str(p) for p in loc).upper()
    for candidate in os.environ:
        if candidate.upper() == name:
            return candidate
    return None


def shown_key(loc: tuple[str | int, ...], device_ids: Sequence[str | None] = ()) -> str:
    """The key a person reads: ``devices.rfid-1.baudrate`` (the device by its id, not its place
    in the file), ``devices.2.port`` only for an entry without a usable id."""
    parts = [str(p) for p in loc]
    if len(loc) >= 2 and loc[0] == "devices" and isinstance(loc[1], int):
        index = loc[1]
        if 0 <= index < len(device_ids) and device_ids[index]:
            parts[1] = str(device_ids[index])
    return ".".join(parts) or "(top level)"


def describe_key(
    path: Path, text: str, loc: tuple[str | int, ...], what: str, device_ids: Sequence[str | None] = ()
) -> str:
    """``file:line: key: what``, or ``file: key: what (from environment variable X)``."""
    key = shown_key(loc, device_ids)
    env = _env_name(loc)
    if env is not None:
        return f"{path}: {key}: {what} (from environment variable {env})"
    line = _locate(text, loc)
    where = f"{path}:{line}" if line is not None else str(path)
    return f"{where}: {key}: {what}"


def _device_ids(data: dict[str, Any]) -> list[str | None]:
    """The ``id`` of each ``[[devices]]`` entry of the raw file (None where it has none)."""
    devices = data.get("devices")
    if not isinstance(devices, list):
        return []
    return [d.get("id") if isinstance(d, dict) and isinstance(d.get("id"), str) else None for d in devices]


def _seats(data: dict[str, Any]) -> int | None:
    table = data.get("table")
    seats = table.get("seats") if isinstance(table, dict) else None
    return seats if isinstance(seats, int) and not isinstance(seats, bool) else None


def _zone_problem(value: object, seats: int | None) -> str:
    """What is wrong with an antenna's zone, in words (never the regular expression)."""
    numbered = f"1..{seats}" if seats else "1..10"
    text = str(value)
    prefix, _, number = text.partition(":")
    if prefix in ("seat", "bet", "stack") and number.isdigit() and seats and int(number) > seats:
        return f"{text!r}: the table has {seats} seats ({prefix}:1 to {prefix}:{seats})"
    return (
        f"{text!r} is not a zone: seat:N, bet:N or stack:N (N = {numbered}), board, burn, muck, "
        "aside, pot or rake"
    )


def _message(item: ErrorDetails, seats: int | None) -> str:
    """One validation error in words a person acts on."""
    loc = item["loc"]
    if item["type"] == "extra_forbidden":
        return "unknown key"
    if item["type"] == "missing":
        return "required key is missing"
    if item["type"] == "string_pattern_mismatch":
        pattern = str((item.get("ctx") or {}).get("pattern", ""))
        if pattern == ZONE_PATTERN:
            return _zone_problem(item.get("input"), seats)
        if pattern.startswith("^sim:"):
            return f"{item.get('input')!r}: give 'sim:PATH' (the simulated board's socket) or leave it out"
        return f"{item.get('input')!r} is not of the form this key takes (see config/table.example.toml)"
    what = item["msg"].removeprefix("Value error, ")
    secret = any("password" in str(p) for p in loc)  # a secret is never echoed
    if "input" in item and not isinstance(item["input"], dict | list) and not secret:
        what += f" (got {item['input']!r})"
    return what


def _describe(path: Path, text: str, data: dict[str, Any], error: ValidationError) -> list[str]:
    """Every validation error, one line each, naming the file, its line and the key."""
    ids = _device_ids(data)
    seats = _seats(data)
    lines: list[str] = []
    for item in error.errors(include_url=False):
        # Drop the union tag pydantic inserts for discriminated unions (devices.0.rfid.port).
        loc = tuple(p for p in item["loc"] if p not in ("shuffler", "rfid", "sensors", "declared"))
        placed = (item.get("ctx") or {}).get("error")
        found = placed.problems if isinstance(placed, PlacedError) else [(loc, _message(item, seats))]
        for where, what in found:
            line = describe_key(path, text, where, what, ids)
            if line not in lines:
                lines.append(line)
    return lines


def _resolve(base: Path, value: Path | None) -> Path | None:
    if value is None or value.is_absolute():
        return value
    return base / value


C = TypeVar("C", bound=Credentials)


def _read_password(path: Path, text: str, credentials: C, loc: tuple[str | int, ...]) -> C:
    """``credentials`` with ``password_file`` resolved and read into ``password``."""
    if credentials.password_file is None:
        return credentials
    file = credentials.password_file
    if not file.is_absolute():
        file = path.parent / file
    try:
        secret = file.read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as error:
        what = f"cannot read {file}: {error.strerror}"
        raise ConfigError(describe_key(path, text, (*loc, "password_file"), what)) from None
    except UnicodeDecodeError:
        what = f"{file} is not UTF-8 text"
        raise ConfigError(describe_key(path, text, (*loc, "password_file"), what)) from None
    if not secret or "\n" in secret:
        what = f"{file} must hold the password alone, on one line"
        raise ConfigError(describe_key(path, text, (*loc, "password_file"), what))
    return credentials.model_copy(update={"password_file": file, "password": SecretStr(secret)})


def load_config(path: Path | str) -> TableConfig:
    """Read, validate and resolve a table configuration file (paths relative to it)."""
    path = Path(path)
    text = read_text(path, "configuration")
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    try:
        config = validated(data)
    except ValidationError as error:
        raise ConfigError(*_describe(path, text, data, error)) from None
    base = path.parent
    decks = config.decks.model_copy(update={"registry": _resolve(base, config.decks.registry)})
    chips = (
        config.chips.model_copy(update={"registry": _resolve(base, config.chips.registry)})
        if config.chips is not None
        else None
    )
    journal_path = Path(str(config.journal.path).replace("{table}", config.table.id))
    journal = config.journal.model_copy(update={"path": _resolve(base, journal_path)})
    mqtt = _read_password(path, text, config.mqtt, ("mqtt",))
    devices = [
        device
        if device.mqtt is None
        else device.model_copy(
            update={"mqtt": _read_password(path, text, device.mqtt, ("devices", index, "mqtt"))}
        )
        for index, device in enumerate(config.devices)
    ]
    return config.model_copy(
        update={"decks": decks, "chips": chips, "journal": journal, "mqtt": mqtt, "devices": devices}
    )


def load_table(path: Path | str) -> tuple[TableConfig, DeckRegistry]:
    """The configuration and its validated deck registry (and, where ``[chips]`` names one, its
    chip registry checked against it: load it with :func:`table_chips`)."""
    config = load_config(path)
    registry = load_registry(config.decks.registry)
    table_chips(config, registry)
    return config, registry


def table_chips(config: TableConfig, registry: DeckRegistry) -> ChipRegistry | None:
    """The table's chip registry, or None for a table that reads no chips."""
    if config.chips is None:
        return None
    return load_chips(config.chips.registry, registry)
