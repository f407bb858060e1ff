"""The table's configuration as the table PC runs it: the source text plus broker identities.

The operator's file keeps its comments and layout: only these keys are set (or added), by
targeted edits of the text, and the result is parsed back and compared before it is written:

- ``[mqtt] username`` and ``password_file`` (``secrets/{table}-controller``); an inline
  ``password`` is removed;
- ``[devices.mqtt] username`` and ``password_file`` for every device (``secrets/{table}-dev-{id}``);
- ``port = "/dev/tablectl/{id}"`` for a serial device that has a udev rule (its stable name);
- ``[table] declared_devices_only = true`` when ``[[devices]]`` declares any: the broker lets
  only those identities publish device topics, and the engine then listens to no other id.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.models import SerialDevice, TableConfig
from controller.deploy.artefacts import DeployError
from controller.deploy.identities import Identity
from controller.deploy.udev import stable_name

_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\s\"']+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")

#: A path to a table: ``("mqtt",)``, ``("devices", 2)``, ``("devices", 2, "mqtt")``.
TablePath = tuple[str | int, ...]


@dataclass(frozen=True)
class _Block:
    path: TablePath
    start: int  # the header line (-1: the root table, before any header)
    end: int  # exclusive: the next header


def _blocks(lines: list[str]) -> list[_Block]:
    found: list[_Block] = []
    counters: dict[tuple[str, ...], int] = {}
    path: TablePath = ()
    start = -1
    for number, line in enumerate(lines):
        header = _HEADER.match(line)
        if not header:
            continue
        found.append(_Block(path, start, number))
        names = tuple(p.strip().strip("\"'") for p in header.group(2).split("."))
        if header.group(1) == "[[":
            counters[names] = counters.get(names, -1) + 1
            path = (*names, counters[names])
        else:
            path = names
            # [devices.mqtt] after [[devices]] belongs to the last devices entry.
            for cut in range(len(names) - 1, 0, -1):
                if names[:cut] in counters:
                    path = (*names[:cut], counters[names[:cut]], *names[cut:])
                    break
        start = number
    found.append(_Block(path, start, len(lines)))
    return found


def _last_content_line(lines: list[str], block: _Block) -> int:
    """The last line of the block that is neither blank nor a comment (or the header)."""
    for number in range(block.end - 1, block.start, -1):
        text = lines[number].strip()
        if text and not text.startswith("#"):
            return number
    return block.start


def _value(value: str | bool) -> str:
    # a JSON string is a TOML basic string, and JSON's true and false are TOML's
    return json.dumps(value, ensure_ascii=False)


def set_keys(text: str, path: TablePath, values: Mapping[str, str | bool | None]) -> str:
    """``text`` with the keys of the table at ``path`` set (None: removed); the table is added
    when missing (a sub-table of an array entry goes at the end of that entry)."""
    lines = text.splitlines()
    blocks = _blocks(lines)
    block = next((b for b in blocks if b.path == path and b.start >= 0), None)
    if block is None:
        body = [f"{k} = {_value(v)}" for k, v in values.items() if v is not None]
        names = [str(p) for p in path if isinstance(p, str)]
        header = f"[{'.'.join(names)}]"
        parent = next((b for b in blocks if path[:-1] and b.path == path[:-1]), None)
        if parent is None:
            lines += ["", header, *body]
        else:
            # The end of the parent entry: its last sub-table's content, before the next entry.
            related = [b for b in blocks if b.path[: len(parent.path)] == parent.path]
            at = max(_last_content_line(lines, b) for b in related) + 1
            lines[at:at] = ["", header, *body]
        return "\n".join(lines) + "\n"
    pending = dict(values)
    removed: list[int] = []
    for number in range(block.start + 1, block.end):
        key = _KEY.match(lines[number])
        if not key:
            continue
        name = key.group(1).strip('"')
        if name in pending:
            value = pending.pop(name)
            if value is None:
                removed.append(number)
            else:
                lines[number] = f"{name} = {_value(value)}"
    added = [f"{k} = {_value(v)}" for k, v in pending.items() if v is not None]
    at = _last_content_line(lines, block) + 1
    lines[at:at] = added
    for number in sorted(removed, reverse=True):
        del lines[number]
    return "\n".join(lines) + "\n"


def _lookup(data: Any, path: TablePath) -> Any:
    for part in path:
        data = data[part]
    return data


def table_config_text(
    source: Path, config: TableConfig, found: list[Identity], rule_devices: Set[str]
) -> str:
    """The source configuration with the broker identities (and stable device names) set."""
    text = source.read_text(encoding="utf-8")
    by_role = {(i.role, i.device): i.name for i in found}
    edits: list[tuple[TablePath, dict[str, str | bool | None]]] = []
    controller = by_role[("controller", None)]
    edits.append(
        (("mqtt",), {"username": controller, "password_file": f"secrets/{controller}", "password": None})
    )
    for index, device in enumerate(config.devices):
        name = by_role[("device", device.id)]
        edits.append(
            (
                ("devices", index, "mqtt"),
                {"username": name, "password_file": f"secrets/{name}", "password": None},
            )
        )
        if isinstance(device, SerialDevice) and device.id in rule_devices:
            edits.append((("devices", index), {"port": str(stable_name(device))}))
    if config.devices:
        edits.append((("table",), {"declared_devices_only": True}))
    for path, values in edits:
        text = set_keys(text, path, values)
    header = (
        f"# Rendered by tablectl deploy from {source}: broker identities and stable device names\n"
        "# set. Edit the source and render again rather than this copy.\n"
    )
    text = header + text
    try:
        data = tomllib.loads(text)
        for path, values in edits:
            table = _lookup(data, path)
            for key, value in values.items():
                if table.get(key) != value:
                    raise KeyError(key)
    except (tomllib.TOMLDecodeError, KeyError, IndexError, TypeError) as error:
        raise DeployError(
            f"{source}: could not add the broker credentials to this file's layout ({error}); write "
            "[mqtt] and [devices.mqtt] username/password_file as plain tables and render again"
        ) from None
    return text
