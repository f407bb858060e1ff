"""A table configuration written back as TOML (the standard library only reads TOML).

``tablectl simulate --write-config`` writes the configuration pointed at its simulators, and the
demo writes the configuration of its table next to its journal (so that ``tablectl history``
works on it). Either file must run the same table as the configuration it came from: every
section is written (``[chips]`` and ``[stakes]`` too), paths as absolute paths (the file may be
written anywhere), never a password (the service reads it from the environment or from the
``password_file`` the configuration names, which is kept).
"""

from __future__ import annotations

from typing import Any, Final

from config.models import TableConfig

#: The sections of a table's file in the order a person reads them (any other field of
#: :class:`TableConfig` follows, the devices last).
ORDER: Final = ("table", "mqtt", "decks", "chips", "stakes", "journal", "display", "logging", "deploy")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _table(lines: list[str], header: str, name: str, data: dict[str, Any]) -> None:
    lines.append(header)
    nested: list[tuple[str, dict[str, Any]]] = []
    arrays: list[tuple[str, list[dict[str, Any]]]] = []
    for key, value in data.items():
        if value is None:
            continue
        if isinstance(value, dict):
            nested.append((key, value))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            arrays.append((key, value))  # an array of tables: [[stakes.levels]]
        else:
            lines.append(f"{key} = {_value(value)}")
    for key, value in nested:
        # After [[devices]], [devices.antennas] belongs to the last device.
        _table(lines, f"[{name}.{key}]", f"{name}.{key}", value)
    for key, items in arrays:
        for item in items:
            _table(lines, f"[[{name}.{key}]]", f"{name}.{key}", item)
    lines.append("")


def render_toml(config: TableConfig, comment: str) -> str:
    """The configuration as TOML that :func:`config.loader.load_config` reads back to an equal
    configuration (``comment``: the first line, without its ``#``)."""
    data = config.model_dump(mode="json", exclude_none=True)
    data["decks"]["registry"] = str(config.decks.registry.resolve())
    if config.chips is not None:
        data["chips"]["registry"] = str(config.chips.registry.resolve())
    data["journal"]["path"] = str(config.journal.path.resolve())
    data["mqtt"].pop("password", None)
    for device in data.get("devices", []):
        if "mqtt" in device:
            device["mqtt"].pop("password", None)
    lines = [f"# {comment}", ""]
    sections = [*ORDER, *(name for name in data if name not in ORDER and name != "devices")]
    for section in sections:
        if isinstance(data.get(section), dict):
            _table(lines, f"[{section}]", section, data[section])
    for device in data.get("devices", []):
        _table(lines, "[[devices]]", "devices", device)
    return "\n".join(lines)
